"""The window's edges do not bend the headline (issue 24, item 5): a ProfilerStep with nothing inside is
not a step (dropped, with a mark), the device's drain after the last of several steps is reported beside
step_ms instead of folded into it (a reason's ms figures are of the blame table's own step length, on every
trace: tests/test_corpus.py). Expected values come from hand-derived synthetic traces and from the raw events
of the shared traces."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.conftest import cli_json, require_traces
from tests.synthetic_traces import A100, GEMM_TENSORCORE, annotation, kernel, op, runtime, write_trace


def approx(value):
    return pytest.approx(value, rel=1e-9, abs=1e-12)


def _metrics(path) -> dict:
    return {name: entry["value"] for name, entry in cli_json("get", str(path)).items()}


def _step(start: int, correlation: int, kernel_at: int = 20, kernel_us: int = 30) -> list[dict]:
    """A 100 µs training step: an aten::mm [start, start+10) launching a GEMM that runs `kernel_us` from
    start+kernel_at, and an autograd op (a training profile: step_ms is the window's, not a call latency)."""
    return [
        annotation(f"ProfilerStep#{correlation}", start, 100),
        op("aten::mm", start, 10),
        op("autograd::engine::evaluate_function: MmBackward0", start + 50, 5),
        runtime("cudaLaunchKernel", start + 2, 2, correlation),
        kernel(GEMM_TENSORCORE, start + kernel_at, kernel_us, correlation),
    ]


def test_an_empty_closing_step_is_dropped_with_a_mark(tmp_path):
    # steps 1 [0,100) and 2 [100,200) with work; ProfilerStep#3 [200,205) holds nothing: dropped.
    # GEMMs [20,50) and [190,220): busy 60 of the host's 200 µs span, the device kept up. 2 steps;
    # step_ms = 0 → the host's end of step 2 (200 µs) ÷ 2 = 0.1 ms; the 20 µs after it are the drain, beside it
    path = write_trace(
        tmp_path / "t.json", _step(0, 1) + _step(100, 2, kernel_at=90) + [annotation("ProfilerStep#3", 200, 5)], [A100]
    )
    m = _metrics(path)
    assert m["steps"] == 2
    assert m["step_ms"] == approx(0.1)
    assert m["drain_ms"] == approx(0.02)
    doc = cli_json("summary", str(path))
    assert "empty_steps" in doc["marks"] and "1 ProfilerStep" in doc["marks"]["empty_steps"]
    assert [s["step"] for s in doc["blame"]["steps"]] == [1, 2]
    assert sum(s["step_ms"] for s in doc["blame"]["steps"]) == approx(0.2)  # the blame sums to steps × step_ms


def test_a_device_that_did_not_keep_up_keeps_its_lag_in_the_steps(tmp_path):
    # GEMMs [20,120) and [120,220): busy 200 µs of the host's 200 µs span, so the 20 µs after the host's end are
    # the device's lag, not a drain: step_ms = the window 220 µs ÷ 2 = 0.11 ms
    m = _metrics(write_trace(tmp_path / "t.json", _step(0, 1, kernel_us=100) + _step(100, 2, kernel_us=100), [A100]))
    assert m["step_ms"] == approx(0.11) and m["drain_ms"] == approx(0.02)


def test_a_single_step_keeps_its_drain(tmp_path):
    # one step [0,100): nothing follows to hide the drain, so its wall runs to the GEMM's end at 120
    m = _metrics(write_trace(tmp_path / "t.json", _step(0, 1, kernel_at=90), [A100]))
    assert m["step_ms"] == approx(0.12) and m["drain_ms"] == approx(0.02)


def test_ddp_device_bound_steps_read_the_device_pace():
    """v100_resnet_ddp_ns_resolution: the host runs ahead (its ProfilerSteps 35, 72, then ~95 ms) while the
    device is busy ~94 ms a step: device-bound, so step_ms is the window ÷ steps, not the host's 78.9 ms."""
    path = require_traces() / "v100_resnet_ddp_ns_resolution.json.gz"
    m = _metrics(path)
    assert (
        m["gpu_busy_ms"]
        > (_profiler_steps(path)[-1][0] + _profiler_steps(path)[-1][1] - _profiler_steps(path)[0][0])
        / 1000
        / m["steps"]
    )
    assert m["step_ms"] == pytest.approx(m["window_ms"] / m["steps"], rel=1e-9)


# --- the shared traces, against their raw events ----------------------------------------------------


def _profiler_steps(path) -> list[tuple[float, float, bool]]:
    """(ts µs, dur µs, anything starts inside) per ProfilerStep of the raw trace."""
    events = json.load(gzip.open(path))["traceEvents"]
    starts = sorted(
        float(e["ts"])
        for e in events
        if e.get("ph") == "X"
        and e.get("cat") in ("cpu_op", "cuda_runtime", "cuda_driver", "python_function", "hip_runtime")
    )
    marks = {
        (float(e["ts"]), float(e["dur"]))
        for e in events
        if e.get("ph") == "X"
        and str(e.get("name", "")).startswith("ProfilerStep#")
        and e.get("cat") == "user_annotation"
    }
    return [(ts, dur, any(ts <= t < ts + dur for t in starts)) for ts, dur in sorted(marks)]


def test_mi250_reads_its_one_real_step():
    path = require_traces() / "mi250_rocm_minitoy.json.gz"
    steps = _profiler_steps(path)
    real = [s for s in steps if s[2]]
    assert len(steps) == 2 and len(real) == 1  # ProfilerStep#2 (49 µs) holds nothing
    m = _metrics(path)
    assert m["steps"] == 1
    assert m["step_ms"] == pytest.approx(9.29, abs=0.01)
    assert m["step_ms"] >= real[0][1] / 1000 - 1e-9  # the step, its drain included (one step)


def test_cutlass_step_is_the_stopwatch_around_its_steps():
    path = require_traces() / "a100_cutlass_adam_rank0.json.gz"
    steps = _profiler_steps(path)
    span_ms = (steps[-1][0] + steps[-1][1] - steps[0][0]) / 1000
    m = _metrics(path)
    assert m["steps"] == len(steps) == 5
    assert m["step_ms"] == pytest.approx(span_ms / 5, rel=1e-6)
    assert m["step_ms"] <= max(dur for _, dur, _ in steps) / 1000
    assert m["drain_ms"] > 0
    assert m["window_ms"] == pytest.approx(span_ms + m["drain_ms"], rel=1e-6)
