"""The trace we write opens cleanly in Perfetto UI and chrome://tracing: strict JSON, and the complete
('X') events of each thread nest or are disjoint (libreyolo_profile/store/decode/trace_check.py)."""

from __future__ import annotations

import functools
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_module, run_cli  # the shared conftest also gives every test its own cache

from libreyolo_profile.store.decode.trace_check import check_events, check_trace, read_trace


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


def test_real_traces_clean_and_not(traces_dir):
    """The checker on real GPU traces: a clean one passes; a nanosecond-resolution DDP trace whose µs
    floats lost precision at epoch magnitude carries genuine partial overlaps, and they are found. The raw
    files only: the `trace` fixture would have the product analyse both traces first, which the checker
    never reads."""

    def raw(name: str) -> Path:
        path = traces_dir / f"{name}.json.gz"
        if not path.is_file():
            pytest.fail(f"missing shared trace {path}")
        return path

    assert check_trace(raw("v100_resnet50_workers0")).ok
    noisy = check_trace(raw("v100_resnet_ddp_ns_resolution"))
    assert noisy.partial_overlap_count > 0 and not noisy.problems
    assert all(o["overhang_ns"] > 0 for o in noisy.partial_overlaps)


def _measured_trace(tmp_path_factory, *args: str) -> Path:
    """The trace a measurement (`infer` or `run`) writes, in a folder and reader cache of its own (a module's
    fixture runs before the test's private cache is set)."""
    folder = tmp_path_factory.mktemp(args[0])
    result = run_cli(  # forked from the worker's warm parent: the entry `python -m libreyolo_profile` runs
        *args, "--device", "cpu", "--no-overhead", "--project", str(folder / "runs"), "--json",
        cwd=folder, env={"XDG_CACHE_HOME": str(folder / "cache")}, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return folder / "runs" / ("infer" if args[0] == "infer" else "train") / "profile_trace.json"


@functools.cache
def measured_events(path: Path) -> list:
    """A measured trace's events, parsed once for the checks that read it (strict JSON, as check_trace reads
    it: a NaN or Infinity fails the parse)."""
    return read_trace(path)["traceEvents"]


@pytest.fixture(scope="module")
def infer_trace(tmp_path_factory) -> Path:
    return _measured_trace(tmp_path_factory, "infer", "--imgsz", "64", "--warmup", "1", "--runs", "1")


@pytest.fixture(scope="module")
def run_trace(tmp_path_factory) -> Path:
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "synth3.yaml"
    return _measured_trace(
        tmp_path_factory, "run", str(fixture), "--batch", "2", "--imgsz", "64", "--steps", "1", "--warmup", "1",
        "--workers", "0", "--no-report",
    )  # fmt: skip


@pytest.mark.slow
def test_measured_profile_trace_opens_cleanly(infer_trace):
    """The trace `infer` writes (torch's export of our capture) has no partial overlaps."""
    events = measured_events(infer_trace)  # what check_trace reads: read_trace, then check_events
    check = check_events(events)
    assert check.ok, check.as_dict()
    assert check.complete_events > 1000  # a LibreYOLO forward is thousands of ops (one call measured: ~5,500)
    names = {e.get("name") for e in events}
    assert any(str(n).startswith("ProfilerStep#") for n in names)


@pytest.mark.slow
def test_measured_run_trace_opens_cleanly_with_its_module_ranges(run_trace):
    """The trace `run` writes: its backward module ranges cross autograd's own ranges on the thread that ran them
    (87 partial overlaps in a run trace before), so they sit on lanes of their own beside it (measure/modules.py)
    and every thread's ranges nest; the modules reader still reads them, backward included."""
    events = measured_events(run_trace)  # what check_trace reads: read_trace, then check_events
    check = check_events(events)
    assert check.ok, check.as_dict()
    backward = [e for e in events if e.get("ph") == "X" and str(e.get("name")).startswith("module backward: ")]
    assert backward and all(e["tid"] >= 10**12 for e in backward)  # on their lanes
    lanes = {e["tid"] for e in backward}
    named = {e["tid"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    assert lanes <= named  # each lane says whose it is
    modules = json.loads(run_cli("modules", str(run_trace.parent / "profile.json"), "--json").stdout)
    assert {r["phase"] for r in modules["modules"]} == {"forward", "backward"}


def tensorboard_plugin_warnings(trace: Path, cache: Path) -> list[str]:
    """What the TensorBoard plugin (torch-tb-profiler) logs at warning level or above while its loader reads a
    trace: RunProfileData.parse, then the RunGenerator that builds the pages, as its loader runs them. It logs
    each range that crosses another on its thread ("ranges on the same thread should not intersect") and
    each event it fails to parse, and goes on; an exception is a trace it cannot read at all."""
    import logging

    require_module("torch_tb_profiler", "test")
    from torch_tb_profiler import utils as tb_utils
    from torch_tb_profiler.profiler.data import RunProfileData
    from torch_tb_profiler.profiler.run_generator import RunGenerator

    said: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: said.append(f"{record.levelname}: {record.getMessage()}")
    logger = tb_utils.get_logger()  # its own logger: it may not propagate to the root one
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        data = RunProfileData.parse("worker0", None, str(trace), str(cache))
        RunGenerator("worker0", None, data).generate_run_profile()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return said


@pytest.mark.slow
@pytest.mark.parametrize("written", ["infer_trace", "run_trace"])
def test_tensorboard_plugin_reads_our_traces_without_a_warning(written, request, tmp_path):
    """The TensorBoard plugin's loader reads the traces `infer` and `run` write without a warning (the same
    `run` trace of 2 steps with its backward module ranges put back on their thread gave 58 "should not
    intersect"; the 1-step trace measured here holds the same ranges)."""
    assert tensorboard_plugin_warnings(request.getfixturevalue(written), tmp_path) == []
