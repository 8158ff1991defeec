"""The trace we write opens cleanly in Perfetto UI and chrome://tracing: strict JSON, and the complete
('X') events of each thread nest or are disjoint (libreyolo_profile/store/decode/trace_check.py)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli  # the shared conftest also gives every test its own cache

from libreyolo_profile.store.decode.trace_check import check_events, check_trace


def x(name: str, ts: float, dur: float, tid: int = 1, pid: int = 1) -> dict:
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid}


def test_nested_disjoint_and_touching_events_pass():
    events = [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
        x("step", 0, 100),
        x("forward", 0, 60),
        x("conv", 10, 20),
        x("relu", 30, 30),  # ends with its parent
        x("backward", 60, 40),
        x("same", 70, 10),
        x("same", 70, 10),  # identical twins nest
        x("next step", 100, 5),
        {"ph": "i", "name": "mark", "ts": 50, "pid": 1, "tid": 1, "s": "t"},
    ]
    result = check_events(events)
    assert result.ok, result.as_dict()
    assert result.complete_events == 8 and result.threads == 1


def test_partial_overlap_on_one_thread_is_found():
    events = [x("outer", 0, 100), x("inner", 10, 20), x("straddles", 90, 20), x("after", 200, 1)]
    result = check_events(events)
    assert not result.ok
    assert result.partial_overlap_count == 1
    found = result.partial_overlaps[0]
    assert (found["outer"], found["inner"], found["overhang_ns"]) == ("outer", "straddles", 10_000)


def test_the_same_intervals_on_different_threads_do_not_interact():
    assert check_events([x("a", 0, 100, tid=1), x("b", 90, 20, tid=2)]).ok
    assert check_events([x("a", 0, 100, pid=1), x("b", 90, 20, pid=2)]).ok


def test_overlap_is_judged_in_perfettos_nanoseconds():
    # Perfetto reads int64(µs * 1000): an end 0.4 ns past the parent's truncates onto it (nested), 2 ns does not
    assert check_events([x("a", 1000.0, 10.0), x("b", 1005.0, 5.0004)]).ok
    assert not check_events([x("a", 1000.0, 10.0), x("b", 1005.0, 5.002)]).ok


def test_malformed_events_are_reported():
    result = check_events(
        [
            {"ph": "X", "name": "no dur", "ts": 1, "pid": 1, "tid": 1},
            {"ph": "X", "name": "negative", "ts": 1, "dur": -1, "pid": 1, "tid": 1},
            {"ph": "X", "name": "no ts", "dur": 1, "pid": 1, "tid": 1},
            {"name": "no ph"},
            "not an object",
        ]
    )
    assert not result.ok and len(result.problems) == 5


def test_nan_and_gzip(tmp_path):
    bad = tmp_path / "nan.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "name": "a", "ts": NaN, "dur": 1, "pid": 1, "tid": 1}]}')
    result = check_trace(bad)
    assert not result.ok and "NaN" in result.problems[0]
    good = tmp_path / "good.json.gz"
    good.write_bytes(gzip.compress(json.dumps({"traceEvents": [x("a", 0, 10), x("b", 1, 2)]}).encode()))
    assert check_trace(good).ok
    listed = tmp_path / "array.json"  # the JSON Array Format both viewers also accept
    listed.write_text(json.dumps([x("a", 0, 10), x("b", 5, 10)]))
    assert check_trace(listed).partial_overlap_count == 1


def test_command_line_exit_code(tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps({"traceEvents": [x("a", 0, 10)]}))
    bad.write_text(json.dumps({"traceEvents": [x("a", 0, 10), x("b", 5, 10)]}))
    for path, code in ((good, 0), (bad, 1)):
        result = subprocess.run(
            [sys.executable, "-m", "libreyolo_profile.store.decode.trace_check", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == code, result.stderr
        assert json.loads(result.stdout)["ok"] is (code == 0)


def test_torch_profiler_cpu_trace_with_record_function_is_clean(tmp_path):
    """What torch's export_chrome_trace writes for the kind of capture our writers make on a CPU."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile, record_function

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Conv2d(8, 8, 3))
    image = torch.randn(1, 3, 32, 32)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True) as prof:
        for _ in range(3):
            with record_function("## preprocess ##"):
                batch = image * 2
            with record_function("## forward ##"):
                out = model(batch)
            with record_function("## postprocess ##"):
                out.sum().item()
            prof.step()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    result = check_trace(path)
    assert result.ok, result.as_dict()
    assert result.complete_events > 30  # ops, annotations and ProfilerStep ranges were all checked


def test_real_traces_clean_and_not(trace):
    """The checker on real GPU traces: a clean one passes; a nanosecond-resolution DDP trace whose µs
    floats lost precision at epoch magnitude carries genuine partial overlaps, and they are found."""
    assert check_trace(trace("v100_resnet50_workers0")).ok
    noisy = check_trace(trace("v100_resnet_ddp_ns_resolution"))
    assert noisy.partial_overlap_count > 0 and not noisy.problems
    assert all(o["overhang_ns"] > 0 for o in noisy.partial_overlaps)


@pytest.mark.slow
def test_measured_profile_trace_opens_cleanly(tmp_path):
    """The trace `infer` writes (torch's export of our capture) has no partial overlaps."""
    result = run_cli(  # forked from the worker's warm parent: the entry `python -m libreyolo_profile` runs
        "infer", "--device", "cpu", "--imgsz", "64", "--warmup", "1", "--runs", "3", "--no-overhead",
        "--project", str(tmp_path / "runs"), "--json",
        cwd=tmp_path, timeout=240,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    written = tmp_path / "runs" / "infer" / "profile_trace.json"
    check = check_trace(written)
    assert check.ok, check.as_dict()
    assert check.complete_events > 1000  # a LibreYOLO forward is thousands of ops
    names = {e.get("name") for e in json.loads(written.read_text())["traceEvents"]}
    assert any(str(n).startswith("ProfilerStep#") for n in names)


def _tensorboard_plugin_complaints(trace: Path) -> list[str] | None:
    """What the TensorBoard plugin's parser logs about a trace's ranges ("ranges on the same thread should not
    intersect", one line each); None where the plugin is not installed."""
    import logging

    try:
        from torch_tb_profiler import utils as tb_utils
        from torch_tb_profiler.profiler.data import RunProfileData
    except ImportError:
        return None
    said: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: said.append(record.getMessage())
    logger = tb_utils.get_logger()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        RunProfileData.parse("worker0", None, str(trace), str(trace.parent / "tb_cache"))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return [line for line in said if "intersect" in line]


@pytest.mark.slow
def test_measured_run_trace_opens_cleanly_with_its_module_ranges(tmp_path):
    """The trace `run` writes: its backward module ranges cross autograd's own ranges on the thread that ran them
    (87 partial overlaps in a run trace before), so they sit on lanes of their own beside it (measure/modules.py)
    and every thread's ranges nest; the modules reader still reads them, backward included."""
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "synth3.yaml"
    result = run_cli(
        "run", str(fixture), "--device", "cpu", "--batch", "2", "--imgsz", "64", "--steps", "2", "--warmup", "1",
        "--workers", "0", "--no-overhead", "--no-report", "--project", str(tmp_path / "runs"), "--json",
        cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    written = tmp_path / "runs" / "train" / "profile_trace.json"
    check = check_trace(written)
    assert check.ok, check.as_dict()
    events = json.loads(written.read_text())["traceEvents"]
    backward = [e for e in events if e.get("ph") == "X" and str(e.get("name")).startswith("module backward: ")]
    assert backward and all(e["tid"] >= 10**12 for e in backward)  # on their lanes
    lanes = {e["tid"] for e in backward}
    named = {e["tid"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    assert lanes <= named  # each lane says whose it is
    modules = json.loads(run_cli("modules", str(tmp_path / "runs" / "train" / "profile.json"), "--json").stdout)
    assert {r["phase"] for r in modules["modules"]} == {"forward", "backward"}
    complaints = _tensorboard_plugin_complaints(written)
    if complaints is not None:
        assert complaints == []
