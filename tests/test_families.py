"""`infer` and `run` on LibreYOLO detection families other than LibreYOLO9, on the CPU with random
weights, as a user runs them (a subprocess in an empty cwd, offline), and every reader on each profile.

Independent references: parameter counts from LibreYOLO's own model classes built in this process;
FLOPs of a convolution-only family recomputed from its Conv2d layers' shapes with forward hooks;
the optimizer from the family trainer's own config class.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli, run_measurement

REPO = Path(__file__).resolve().parents[1]
FIXTURE_YAML = REPO / "fixtures" / "synth3.yaml"
IMGSZ = 96

pytestmark = pytest.mark.slow

# weights name -> (display family, LibreYOLO family id, size)
INFER_FAMILIES = {
    "LibreYOLOXn.pt": ("LibreYOLOX", "yolox", "n"),
    "LibreRTMDett.pt": ("LibreRTMDet", "rtmdet", "t"),
    "LibrePICODETs.pt": ("LibrePICODET", "picodet", "s"),
    "LibreYOLO3t.pt": ("LibreYOLO3", "yolo3", "t"),
}
RUN_FAMILIES = {
    "LibreYOLOXn.pt": ("LibreYOLOX", "yolox", "n"),
    "LibreRTMDett.pt": ("LibreRTMDet", "rtmdet", "t"),
}


def _env(home: Path, **extra: str) -> dict:
    env = dict(os.environ)
    env.update(HOME=str(home), LIBREYOLO_PROFILE_OFFLINE="1", PYTHONPATH=str(REPO), COLUMNS="200", **extra)
    env.pop("LIBREYOLO_DATASETS_DIR", None)
    return env


def cli(
    cwd: Path, home: Path, *args: str, env: dict | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    return run_measurement(*args, cwd=cwd, env=env or _env(home), timeout=timeout)


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    root = tmp_path_factory.mktemp("families")
    (root / "cwd").mkdir()
    (root / "home").mkdir()
    return root / "cwd", root / "home"


@pytest.fixture(scope="module")
def infer_profiles(place) -> dict[str, Path]:
    cwd, home = place
    out = {}
    for weights in INFER_FAMILIES:
        r = cli(
            cwd,
            home,
            "infer",
            "--weights",
            weights,
            "--device",
            "cpu",
            "--imgsz",
            str(IMGSZ),
            "--warmup",
            "1",
            "--runs",
            "1",  # one call profiled: what is checked is the family's model, phases and readers, not the timing
            "--no-report",
            "--no-overhead",
            "--project",
            f"profiles/infer-{Path(weights).stem}",
        )
        assert r.returncode == 0, f"{weights}: {r.stderr[-2000:]}"
        out[weights] = cwd / "profiles" / f"infer-{Path(weights).stem}" / "infer" / "profile.json"
    return out


@pytest.fixture(scope="module")
def run_profiles(place) -> dict[str, Path]:
    cwd, home = place
    out = {}
    for weights in RUN_FAMILIES:
        r = cli(
            cwd,
            home,
            "run",
            str(FIXTURE_YAML),
            "--weights",
            weights,
            "--device",
            "cpu",
            "--batch",
            "2",
            "--imgsz",
            str(IMGSZ),
            "--steps",
            "1",  # one step profiled: what is checked is the family's trainer, phases and readers, not the timing
            "--warmup",
            "1",
            "--workers",
            "0",
            "--no-report",
            "--no-overhead",
            "--project",
            f"profiles/run-{Path(weights).stem}",
        )
        assert r.returncode == 0, f"{weights}: {r.stderr[-2000:]}"
        out[weights] = cwd / "profiles" / f"run-{Path(weights).stem}" / "train" / "profile.json"
    return out


def libreyolo_class(family_id: str):
    from libreyolo.models import BaseModel

    return next(c for c in BaseModel._registry if c.FAMILY == family_id)


def libreyolo_parameters(family_id: str, size: str, nb_classes: int = 80) -> int:
    import torch

    torch.manual_seed(0)
    wrapper = libreyolo_class(family_id)(None, size=size, device="cpu")  # LibreYOLO's own constructor defaults
    if nb_classes != wrapper.nb_classes:
        wrapper._rebuild_for_new_classes(nb_classes)
    return sum(p.numel() for p in wrapper.model.parameters())


def conv_flops_by_hooks(family_id: str, size: str, imgsz: int) -> int:
    """2 × multiply-accumulates of every Conv2d, from the layer shapes seen in one forward."""
    import torch

    wrapper = libreyolo_class(family_id)._from_scratch(size=size, device="cpu", seed=0)
    wrapper.model.eval()
    total = 0

    def hook(module, inputs, output):
        nonlocal total
        k_h, k_w = module.kernel_size
        per_output = (module.in_channels // module.groups) * k_h * k_w
        total += 2 * output.numel() * per_output

    handles = [m.register_forward_hook(hook) for m in wrapper.model.modules() if isinstance(m, torch.nn.Conv2d)]
    with torch.no_grad():
        wrapper.model(torch.zeros(1, 3, imgsz, imgsz))
    for h in handles:
        h.remove()
    return total


def phases_in_trace(trace: Path) -> set[str]:
    events = json.loads(trace.read_text())["traceEvents"]
    return {e["name"] for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("## ")}


def reader(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    """A reader command, answered in this process (the conftest's runner: the same entry point, environment,
    cwd and captured streams as a subprocess, without a process per reader)."""
    return run_cli(*args, cwd=cwd, env=_env(home))


def every_reader(cwd: Path, home: Path, profile: Path) -> None:
    for name in ("summary", "phases", "kernels", "ops"):
        r = reader(cwd, home, name, str(profile), "--json")
        assert r.returncode == 0, f"{name} {profile}: {r.stderr}"
        json.loads(r.stdout)
    r = reader(cwd, home, "get", str(profile), "step_ms")
    assert r.returncode == 0 and float(r.stdout) > 0, r.stderr
    r = reader(cwd, home, "report", str(profile), "--out", str(profile.parent / "report.html"))
    assert r.returncode == 0, r.stderr
    assert "<html" in (profile.parent / "report.html").read_text()[:2000].lower()


def test_infer_families(place, infer_profiles):
    cwd, home = place
    for weights, profile in infer_profiles.items():
        family, family_id, size = INFER_FAMILIES[weights]
        doc = json.loads(profile.read_text())
        model = doc["model"]
        assert (model["family"], model["family_id"], model["size"]) == (family, family_id, size)
        assert (model["format"], model["runtime"]) == ("pytorch", "torch")
        assert model["parameter_count"] == libreyolo_parameters(family_id, size)
        assert model["input_shape"][-2:] == [IMGSZ, IMGSZ]
        assert isinstance(model["flops"], int) and model["flops"] > 0
        # never a LibreYOLO9 profile under another name: the random-weights mark names this family
        assert (
            f"{family}-{size}" in doc["marks"]["random_weights"] and "LibreYOLO9" not in doc["marks"]["random_weights"]
        )
        assert phases_in_trace(profile.parent / "profile_trace.json") == {
            "## preprocess ##",
            "## forward ##",
            "## postprocess ##",
        }
        every_reader(cwd, home, profile)
        summary = reader(cwd, home, "summary", str(profile))
        assert f"{family}-{size}" in summary.stdout and "GFLOPs/image" in summary.stdout


def test_flops_match_conv_layers(infer_profiles):
    """YOLOX is convolutions only: FlopCounterMode's count equals 2·MACs of its Conv2d layers."""
    doc = json.loads(infer_profiles["LibreYOLOXn.pt"].read_text())
    assert doc["model"]["flops"] == conv_flops_by_hooks("yolox", "n", IMGSZ)


def test_run_families(place, run_profiles):
    cwd, home = place
    for weights, profile in run_profiles.items():
        family, family_id, size = RUN_FAMILIES[weights]
        doc = json.loads(profile.read_text())
        model, settings = doc["model"], doc["settings"]
        trainer_cls = __import__(f"libreyolo.models.{family_id}.trainer", fromlist=["x"])
        expected_trainer = next(
            c
            for c in vars(trainer_cls).values()
            if isinstance(c, type)
            and c.__module__ == trainer_cls.__name__
            and getattr(c, "get_model_family", None)
            and c.get_model_family(None) == family_id
        )
        assert (model["family"], model["size"], model["trainer"]) == (family, size, expected_trainer.__name__)
        assert model["nb_classes"] == 3 and model["parameter_count"] == libreyolo_parameters(family_id, size, 3)
        assert settings["aux_weight"] is None  # only LibreYOLO9's train() attaches the PGI branch
        config = expected_trainer._config_class()()
        assert settings["optimizer"]["name"].lower() == str(config.optimizer).lower()
        assert phases_in_trace(profile.parent / "profile_trace.json") == {
            "## dataload ##",
            "## to_device ##",
            "## forward ##",
            "## backward ##",
            "## optimizer ##",
        }
        every_reader(cwd, home, profile)


def test_query_across_families(place, infer_profiles, run_profiles):
    cwd, home = place
    r = reader(
        cwd,
        home,
        "query",
        "SELECT kind, model_family, model_size, parameter_count FROM profiles ORDER BY kind, model_family",
        "profiles",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    rows = {
        (row["kind"], row["model_family"], row["model_size"], row["parameter_count"]) for row in json.loads(r.stdout)
    }
    for weights, profile in infer_profiles.items():
        family, _, size = INFER_FAMILIES[weights]
        doc = json.loads(profile.read_text())
        assert ("infer", family, size, doc["model"]["parameter_count"]) in rows
    for weights, profile in run_profiles.items():
        family, _, size = RUN_FAMILIES[weights]
        assert ("train", family, size, json.loads(profile.read_text())["model"]["parameter_count"]) in rows


@pytest.mark.parametrize(
    "args, needle",
    [
        (("infer", "--weights", "LibreSSD300.pt", "--imgsz", "96"), "cannot be profiled at --imgsz 96"),
        (
            (
                "run",
                str(FIXTURE_YAML),
                "--weights",
                "LibreDFINEn.pt",
                "--batch",
                "2",
                "--imgsz",
                "96",
                "--steps",
                "1",
                "--warmup",
                "0",
                "--workers",
                "0",
            ),
            "runs its own epoch loop",
        ),
        (
            (
                "run",
                str(FIXTURE_YAML),
                "--weights",
                "LibreYOLO3t.pt",
                "--batch",
                "2",
                "--imgsz",
                "96",
                "--steps",
                "1",
                "--warmup",
                "0",
                "--workers",
                "0",
            ),
            "has no trainer",
        ),
        (("infer", "--weights", "NotAModel7x.pt"), "not a LibreYOLO detection weights name"),
    ],
)
def test_family_that_cannot_be_profiled_exits_2(tmp_path, args, needle):
    home = tmp_path / "home"
    home.mkdir()
    r = cli(tmp_path, home, *args, "--device", "cpu", "--project", "out")
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out" / "infer").exists() and not (tmp_path / "out" / "train").exists()
