"""`infer` on exports of LibreYOLO9-t (random weights, made here with LibreYOLO's own exporter):
ONNX Runtime, OpenVINO and TorchScript, beside the PyTorch model they came from.

The runtime's per-node times must reach the ops table: recomputed here in plain Python from the raw
events of the kept trace, and placed in the forward phase. `compare` of the PyTorch profile against
its ONNX Runtime export must say what differs. A missing runtime exits 2 naming the extra.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli, run_measurement

REPO = Path(__file__).resolve().parents[1]
IMGSZ = 64
FORMATS = {
    "onnx": ("onnxruntime", "onnxruntime::"),
    "openvino": ("openvino", "openvino::"),
    "torchscript": ("torch.jit", "aten::"),
}

pytestmark = pytest.mark.slow


def _env(home: Path) -> dict:
    env = dict(os.environ)
    env.update(HOME=str(home), LIBREYOLO_PROFILE_OFFLINE="1", PYTHONPATH=str(REPO), COLUMNS="200")
    return env


def cli(cwd: Path, home: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_measurement(*args, cwd=cwd, env=env or _env(home))


def reader(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    """A reader command, answered in this process (the conftest's runner: the same entry point, environment,
    cwd and captured streams as a subprocess, without a process per reader)."""
    return run_cli(*args, cwd=cwd, env=_env(home))


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    root = tmp_path_factory.mktemp("exports")
    for sub in ("cwd", "home", "exports"):
        (root / sub).mkdir()
    return root


@pytest.fixture(scope="module")
def exports(place) -> dict[str, Path]:
    """LibreYOLO9-t (seed 0) exported by LibreYOLO at IMGSZ to each format."""
    for runtime, extra in (("onnxruntime", "onnx"), ("openvino", "openvino")):
        try:
            __import__(runtime)
        except ImportError:
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail(f'CI=true but {runtime} is missing: pip install ".[{extra}]"')
            pytest.skip(f'{runtime} not installed (pip install ".[{extra}]")')
    import libreyolo

    wrapper = libreyolo.LibreYOLO9._from_scratch(size="t", device="cpu", seed=0)
    wrapper.model.eval()
    suffix = {"onnx": ".onnx", "openvino": "_openvino", "torchscript": ".torchscript"}
    return {
        fmt: Path(wrapper.export(format=fmt, imgsz=IMGSZ, output_path=str(place / "exports" / f"y9t{suffix[fmt]}")))
        for fmt in FORMATS
    }


@pytest.fixture(scope="module")
def profiles(place, exports) -> dict[str, Path]:
    cwd, home = place / "cwd", place / "home"
    out = {}
    for fmt, weights in [("pytorch", "LibreYOLO9t.pt"), *exports.items()]:
        r = cli(
            cwd,
            home,
            "infer",
            "--weights",
            str(weights),
            "--device",
            "cpu",
            "--imgsz",
            str(IMGSZ),
            "--warmup",
            "1",
            "--runs",
            "3",
            "--no-report",
            "--no-overhead",
            "--project",
            f"profiles/{fmt}",
        )
        assert r.returncode == 0, f"{fmt}: {r.stderr[-2000:]}"
        out[fmt] = cwd / "profiles" / fmt / "infer" / "profile.json"
    return out


def window_op_ms(trace: Path, prefix: str) -> dict[str, float]:
    """Per op name with `prefix`: the summed duration (ms) of its events inside ProfilerStep ranges,
    straight from the raw trace."""
    events = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("ph") == "X"]
    steps = [
        (float(e["ts"]), float(e["ts"]) + float(e["dur"]))
        for e in events
        if str(e.get("name", "")).startswith("ProfilerStep#")
    ]
    totals: dict[str, float] = {}
    for e in events:
        name = str(e.get("name", ""))
        if e.get("cat") == "cpu_op" and name.startswith(prefix):
            if any(s <= float(e["ts"]) <= t for s, t in steps):
                totals[name] = totals.get(name, 0.0) + float(e["dur"]) / 1000.0
    return totals


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_infer_export(place, profiles, fmt):
    cwd, home = place / "cwd", place / "home"
    profile = profiles[fmt]
    doc = json.loads(profile.read_text())
    model = doc["model"]
    runtime, prefix = FORMATS[fmt]
    assert (model["family"], model["size"], model["format"], model["runtime"]) == ("LibreYOLO9", "t", fmt, runtime)
    assert model["execution_provider"]
    assert model["input_shape"] == [1, 3, IMGSZ, IMGSZ] and doc["settings"]["imgsz"] == IMGSZ
    if fmt != "torchscript":
        assert model["flops"] is None and model["flops_null_reason"]
    trace = profile.parent / "profile_trace.json"
    names = {e.get("name") for e in json.loads(trace.read_text())["traceEvents"]}
    assert {"## preprocess ##", "## forward ##", "## postprocess ##"} <= names
    # the runtime's own per-node times are the ops table's rows, in the forward phase
    expected = window_op_ms(trace, prefix)
    assert expected, f"no {prefix} ops in the trace"
    r = reader(cwd, home, "ops", str(profile), "--json", "--top", "1000")
    assert r.returncode == 0, r.stderr
    rows = [row for row in json.loads(r.stdout)["ops"] if row["name"].startswith(prefix)]
    got = {row["name"]: row["total_ms_per_step"] for row in rows}
    assert got.keys() == expected.keys()
    for name, ms in expected.items():
        assert got[name] == pytest.approx(ms / 3, rel=1e-6, abs=1e-6), name  # 3 measured calls
    if fmt == "onnx":
        assert {row["phases"] for row in rows} == {"forward"}
        assert "CPUExecutionProvider" in model["ops_source"] and model["execution_provider"] == "CPUExecutionProvider"
    for name in ("summary", "phases", "kernels"):
        r = reader(cwd, home, name, str(profile), "--json")
        assert r.returncode == 0, f"{name}: {r.stderr}"
        json.loads(r.stdout)
    r = reader(cwd, home, "get", str(profile), "step_ms")
    assert r.returncode == 0 and float(r.stdout) > 0
    r = reader(cwd, home, "report", str(profile), "--out", str(profile.parent / "report.html"))
    assert r.returncode == 0, r.stderr
    assert f"{fmt} via {runtime}" in (profile.parent / "report.html").read_text() or fmt == "pytorch"


def test_compare_pytorch_with_onnx_export(place, profiles):
    cwd, home = place / "cwd", place / "home"
    r = reader(cwd, home, "compare", str(profiles["pytorch"]), str(profiles["onnx"]))
    assert r.returncode == 0, r.stderr
    assert "model differs: format pytorch → onnx; runtime torch → onnxruntime" in r.stdout
    r = reader(cwd, home, "compare", str(profiles["pytorch"]), str(profiles["onnx"]), "--json")
    assert r.returncode == 0, r.stderr
    differs = json.loads(r.stdout)["model_differs"]
    assert differs["format"] == ["pytorch", "onnx"] and differs["runtime"] == ["torch", "onnxruntime"]


def test_query_sees_every_format(place, profiles):
    cwd, home = place / "cwd", place / "home"
    r = reader(
        cwd, home, "query", "SELECT count(*) AS n, count(DISTINCT profile) AS p FROM profiles", "profiles", "--json"
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[0]["p"] == len(profiles)


@pytest.mark.parametrize("fmt, module, extra", [("onnx", "onnxruntime", "onnx"), ("openvino", "openvino", "openvino")])
def test_missing_runtime_names_the_extra(place, exports, tmp_path, fmt, module, extra):
    """With the runtime unimportable (a stub that raises ImportError first on the path), exit 2. The stub
    sits in the working directory, which `python -m` puts first on sys.path: the command's environment
    stays the suite's, so it is forked from the warm parent instead of started afresh."""
    stub = tmp_path / module
    stub.mkdir()
    (stub / "__init__.py").write_text("raise ImportError('blocked by the test')\n")
    home = tmp_path / "home"
    home.mkdir()
    r = cli(
        tmp_path,
        home,
        "infer",
        "--weights",
        str(exports[fmt]),
        "--device",
        "cpu",
        "--imgsz",
        str(IMGSZ),
        "--project",
        "out",
    )
    assert r.returncode == 2, r.stderr
    assert f'pip install "libreyolo-profile[{extra}]"' in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out" / "infer").exists()
