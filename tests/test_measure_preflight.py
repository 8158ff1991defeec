"""What `infer` and `run` refuse before torch is imported (#52, measure/preflight.py): a --weights typo, a GPU
asked for where there is none, a dataset that is nowhere. Through the real CLI in a fresh interpreter, timed,
with Python's own import log proving torch was never imported; and the checks' rules on their own, including
that a machine showing a GPU driver is never refused."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from libreyolo_profile.errors import UsageError
from libreyolo_profile.measure import preflight
from tests.conftest import run_cli

REPO = Path(__file__).resolve().parents[1]
FIXTURE_YAML = REPO / "fixtures" / "synth3.yaml"
# a fresh interpreter's start and the CLI's imports on a loaded 2-core machine stay well under this; the
# import of torch and LibreYOLO the checks now come before took 25-66 s there
FAST_S = 8.0


def refused_fast(tmp_path, *args: str, env: dict | None = None):
    """The CLI's exit code, its stderr without the import log, and whether it imported torch."""
    start = time.perf_counter()
    result = run_cli(
        *args,
        "--project",
        str(tmp_path / "p"),
        cwd=tmp_path,
        env={"PYTHONPROFILEIMPORTTIME": "1", **(env or {})},
        subprocess=True,
        timeout=120,
    )
    elapsed = time.perf_counter() - start
    imports = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    said = [line for line in result.stderr.splitlines() if not line.startswith("import time:")]
    torch_imported = any(line.rsplit("|", 1)[-1].strip() == "torch" for line in imports)
    assert imports, "the import log is missing: the check that torch stayed out proves nothing"
    assert not (tmp_path / "p").exists(), "refused before the workspace is made"
    return result.returncode, said, torch_imported, elapsed


@pytest.mark.parametrize(
    "args, needle",
    [
        (["infer", "--weights", "x.pt", "--device", "cpu"], "--weights x.pt: no such file"),
        (["infer", "no/such/image.jpg", "--device", "cpu"], "source no/such/image.jpg: no such file"),
        (["run", str(FIXTURE_YAML), "--weights", "model_typo.pt", "--device", "cpu"], "no such file"),
        (["run", "no_such_dataset_xyz.yaml", "--device", "cpu"], "dataset no_such_dataset_xyz.yaml: no such YAML"),
    ],
)
def test_a_typo_is_refused_in_one_line_before_torch(tmp_path, args, needle):
    code, said, torch_imported, elapsed = refused_fast(tmp_path, *args)
    assert code == 2 and len(said) == 1 and needle in said[0], said
    assert not torch_imported
    assert elapsed < FAST_S, elapsed


@pytest.mark.parametrize("device", ["0", "cuda", "cuda:1"])
def test_a_gpu_hidden_by_cuda_visible_devices_is_refused_before_torch(tmp_path, device):
    """CUDA_VISIBLE_DEVICES='' hides every GPU on any machine, this one or a GPU one alike."""
    code, said, torch_imported, elapsed = refused_fast(
        tmp_path, "infer", "--device", device, env={"CUDA_VISIBLE_DEVICES": ""}
    )
    assert code == 2 and len(said) == 1 and "--device cpu" in said[0] and "CUDA_VISIBLE_DEVICES" in said[0], said
    assert not torch_imported and elapsed < FAST_S


def test_no_gpu_here_is_refused_before_torch(tmp_path):
    if preflight.why_no_gpu() is None:
        pytest.skip("this machine may have a GPU: torch decides, after its import")
    code, said, torch_imported, elapsed = refused_fast(tmp_path, "run", str(FIXTURE_YAML), "--device", "0,1")
    assert code == 2 and len(said) == 1 and "--device 0,1 asks for CUDA" in said[0], said
    assert not torch_imported and elapsed < FAST_S


def test_the_torch_build_is_read_without_importing_it():
    import torch

    assert preflight.torch_gpu_build() is bool(torch.version.cuda or getattr(torch.version, "hip", None))


def test_a_machine_showing_a_gpu_driver_is_never_refused(monkeypatch, tmp_path):
    driver = tmp_path / "nvidia0"
    driver.write_text("")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(preflight, "GPU_EVIDENCE", (str(tmp_path / "nvidia*"),))
    monkeypatch.setattr(preflight, "torch_gpu_build", lambda: True)
    for spec in ("0", "cuda", "cuda:3"):
        preflight.check_device(spec)  # no raise: torch decides
    monkeypatch.setattr(preflight, "torch_gpu_build", lambda: None)  # a torch/version.py it cannot read
    preflight.check_device("0")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-5c0a2f6e")  # a UUID selects a device
    preflight.check_device("0")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    with pytest.raises(UsageError, match="hides every GPU"):
        preflight.check_device("0")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.setattr(preflight, "GPU_EVIDENCE", (str(tmp_path / "absent*"),))
    with pytest.raises(UsageError, match="no GPU driver"):
        preflight.check_device("cuda:0")
    for spec in ("cpu", "auto", "mps", "gpu"):  # not a CUDA request: left to common.resolve_device's words
        preflight.check_device(spec)


def test_names_a_family_claims_and_files_that_exist_pass(tmp_path, monkeypatch):
    prefixes = preflight.family_prefixes()
    assert {"LibreYOLO9", "LibreYOLOX"} <= set(prefixes)
    for name in ("LibreYOLO9t.pt", "LibreYOLOXs.pt", "LibreYOLO9", "librertdetrr18.pt"):
        preflight.check_weights(name, "t")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "mine.pt").write_bytes(b"")
    (tmp_path / "export.onnx").write_bytes(b"")
    preflight.check_weights("mine.pt", "t")  # ./weights/<name>, as adapter.build_model looks
    preflight.check_weights("export.onnx", "t")
    with pytest.raises(UsageError, match="no such file"):
        preflight.check_weights("yolov8n.pt", "t")
    with pytest.raises(UsageError, match="--size is s"):
        preflight.check_weights("LibreYOLO9m.pt", "s")


def test_datasets_libreyolo_finds_pass(tmp_path, monkeypatch):
    preflight.check_dataset(str(FIXTURE_YAML))
    monkeypatch.chdir(tmp_path)
    for builtin in ("coco128", "coco128.yaml", "coco8"):
        preflight.check_dataset(builtin)
    (tmp_path / "local.yaml").write_text("train: images\n")
    preflight.check_dataset("local")  # LibreYOLO adds .yaml in the cwd
    with pytest.raises(UsageError, match="coco128"):  # the message lists the built-in names
        preflight.check_dataset("cocco128")
