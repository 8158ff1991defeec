"""The window's edges do not bend the headline (issue 24, item 5): a ProfilerStep with nothing inside is
not a step (dropped, with a mark), the device's drain after the last of several steps is reported beside
step_ms instead of folded into it (a reason's ms figures are of the blame table's own step length, on every
trace: tests/test_corpus.py). Expected values come from hand-derived synthetic traces and from the raw events
of the shared traces."""

from __future__ import annotations

import bisect
import functools
import gzip
import itertools
import json
import re

import pytest

from libreyolo_profile.vocabulary import thresholds
from tests.conftest import cli_json, require_traces, trace_files, trace_id
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
    return list(_raw_reading(path)[0])


def _steps_of(events: list) -> list[tuple[float, float, bool]]:
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

    def holds_a_start(ts: float, dur: float) -> bool:  # a start t with ts <= t < ts + dur: the first t >= ts
        first = bisect.bisect_left(starts, ts)
        return first < len(starts) and starts[first] < ts + dur

    return [(ts, dur, holds_a_start(ts, dur)) for ts, dur in sorted(marks)]


@functools.cache
def _raw_reading(path) -> tuple[list[tuple[float, float, bool]], dict | None]:
    """(_profiler_steps, closing_tail) of one trace from one parse of its raw events (exact: floats as
    Decimal, which float() turns into the float json would have parsed), once per trace for the tests of this
    file that read it (the parse was most of each reference's cost; the results are small, the events are not
    kept)."""
    from decimal import Decimal

    with gzip.open(path) if str(path).endswith(".gz") else open(path) as handle:
        events = json.load(handle, parse_float=Decimal)
    events = events["traceEvents"] if isinstance(events, dict) else events
    return _steps_of(events), _closing_tail_of(events)


def test_mi250_reads_its_one_real_step():
    path = require_traces() / "mi250_rocm_minitoy.json.gz"
    steps = _profiler_steps(path)
    real = [s for s in steps if s[2]]
    assert len(steps) == 2 and len(real) == 1  # ProfilerStep#2 (49 µs) holds nothing
    m = _metrics(path)
    assert m["steps"] == 1
    # the 9.29 ms ProfilerStep#1 closes on 37 µs that record nothing (0.4% of it: the step's own closing overhead)
    assert m["step_ms"] == pytest.approx(9.29, abs=0.01)
    assert m["drain_unrecorded_ms"] == closing_tail(path)["tail_ns"] == 0
    assert m["step_ms"] >= real[0][1] / 1000 - 1e-9  # the step, its drain included (one step)


def test_cutlass_step_is_the_stopwatch_around_its_steps():
    path = require_traces() / "a100_cutlass_adam_rank0.json.gz"
    steps = _profiler_steps(path)
    reference = closing_tail(path)
    span_ms = (reference["work_end_ns"] - reference["first_start_ns"]) / 1e6  # the last step ends with its work
    m = _metrics(path)
    assert m["steps"] == len(steps) == 5
    assert m["step_ms"] == pytest.approx(span_ms / 5, rel=1e-6)
    assert m["step_ms"] <= max(dur for _, dur, _ in steps) / 1000
    assert m["drain_ms"] > 0
    # the window: the host's span, then the device's drain after it; the unrecorded tail is beside both
    assert m["window_ms"] == pytest.approx(span_ms + m["drain_ms"] - m["drain_unrecorded_ms"], rel=1e-6)


# --- the closing stretch that records nothing but a wait (issue 50, item 5) --------------------------


def test_a_closing_stretch_of_nothing_but_the_synchronize_is_drain_beside_the_step(tmp_path):
    # steps 1 [0,100) and 2 [100,300): each step's work ends with its autograd op at start + 55, then step 1
    # records nothing for 45 µs until step 2 starts, while step 2 records nothing until the closing
    # cudaDeviceSynchronize [290,292): its 145 µs closing stretch is 100 µs more than every step has, the profiler
    # stopping. Step 2 ends at 300 - 100 = 200: step_ms = 200 µs ÷ 2 = 0.1 ms; the 100 µs are drain, beside it
    # (the device finished at 150, before the host: no device drain)
    events = _step(0, 1) + _step(100, 2)
    events[5] = annotation("ProfilerStep#2", 100, 200)
    events += [runtime("cudaDeviceSynchronize", 290, 2)]
    path = write_trace(tmp_path / "t.json", events, [A100])
    m = _metrics(path)
    assert m["steps"] == 2
    assert m["step_ms"] == approx(0.1)
    assert m["drain_unrecorded_ms"] == approx(0.1) and m["drain_ms"] == approx(0.1)
    assert m["window_ms"] == approx(0.2)
    doc = cli_json("summary", str(path))
    assert [s["step_ms"] for s in doc["blame"]["steps"]] == [approx(0.1), approx(0.1)]
    # the tail is no part of the step: its unexplained time is step 1's, the [110,120) gap and the 45 µs close
    assert [s["causes"]["unexplained_idle"] for s in doc["blame"]["steps"]] == [approx(0.055), approx(0.055)]
    assert "0.10 ms" in doc["marks"]["unrecorded_tail"]  # 100 µs, far above 5% of the 100 µs step


def test_a_closing_stretch_under_five_percent_of_the_step_is_its_own_overhead(tmp_path):
    # one step [0,100): its work ends with the autograd op at 55 and the GEMM [20,50), then 45 µs of nothing: 45 µs
    # is 82% of the 55 µs it would leave, so it is cut; a step [0,1000) whose work (aten::mm [0,980)) ends 20 µs
    # before its end keeps them: 20 µs is 2% of the 980 µs it would leave (drain_unrecorded_pct 5%)
    # (closed by the closing cudaDeviceSynchronize [98,100): with no closing wait the stretch is the step's own)
    cut = _metrics(write_trace(tmp_path / "cut.json", _step(0, 1) + [runtime("cudaDeviceSynchronize", 98, 2)], [A100]))
    assert _metrics(write_trace(tmp_path / "no_wait.json", _step(0, 1), [A100]))["drain_unrecorded_ms"] == 0
    assert cut["drain_unrecorded_ms"] == approx(0.045) and cut["step_ms"] == approx(0.055)
    kept = [
        annotation("ProfilerStep#1", 0, 1000),
        op("aten::mm", 0, 980),
        op("autograd::engine::evaluate_function: X", 1, 5),
    ]
    m = _metrics(write_trace(tmp_path / "kept.json", kept, [A100]))
    assert m["drain_unrecorded_ms"] == 0 and m["step_ms"] == approx(1.0)


def test_a_closing_synchronize_the_device_is_still_running_under_stays_in_the_step(tmp_path):
    # step 2's GEMM runs [120,290) while the host waits in cudaDeviceSynchronize [150,290): the wait holds the
    # device's work, not nothing; nothing is cut (the step ends at 200, the device's drain after it as before)
    events = _step(0, 1) + _step(100, 2, kernel_us=170) + [runtime("cudaDeviceSynchronize", 150, 140)]
    m = _metrics(write_trace(tmp_path / "t.json", events, [A100]))
    assert m["drain_unrecorded_ms"] == approx(0.0)
    assert m["drain_ms"] == approx(0.09)  # the GEMM's end at 290 after the step's end at 200


def closing_tail(path) -> dict | None:
    """The last ProfilerStep's (of those with work, where any has) closing stretch with nothing recorded but a
    wait, beyond the longest such stretch of the other steps, from the raw events in plain Python: a step's
    recorded work ends with its last host op, Python frame, host range (ProfilerStep excepted), runtime call other
    than a synchronize or an event/stream query, or device work overlapping it, clipped to the step. Times in
    integer ns (exact decimal µs). None without a usable step."""
    reference = _raw_reading(path)[1]
    return None if reference is None else dict(reference)


def _closing_tail_of(events: list) -> dict | None:
    """closing_tail over the trace's events as parsed (floats as Decimal)."""
    from decimal import Decimal

    def ns(value) -> int | None:  # exact: a JSON integer or Decimal as parsed, a string as its decimal text
        try:
            if type(value) is Decimal:  # the usual case first
                return int(value * 1000)
            if isinstance(value, bool):
                return None
            if isinstance(value, int):
                return value * 1000
            return int((value if isinstance(value, Decimal) else Decimal(str(value))) * 1000)
        except (ArithmeticError, ValueError):
            return None

    device = {"kernel", "mtia_ccp_events", "gpu_memcpy", "memcpy", "gpu_memset", "memset"}
    runtime_cats = {
        "cuda_runtime",
        "runtime",
        "cuda_driver",
        "hip_runtime",
        "hip_driver",
        "privateuse1_runtime",
        "privateuse1_driver",
        "xpu_runtime",
        "xpu_driver",
        "mtia_runtime",
        "hpu_op",
    }
    host_cats = {"python_function", "user_annotation", "cpu_op", "operator"}
    wait = re.compile(r"(?i)(synchronize|^(cu|cuda|hip)(event|stream)query$)")
    steps, work, host_starts, host_records = [], [], [], []
    host_ops = {"python_function", "cpu_op", "operator"}
    for e in events:
        if not isinstance(e, dict) or "ts" not in e:
            continue
        ts = ns(e["ts"])
        if ts is None:
            continue
        cat, name = str(e.get("cat") or "").lower(), str(e.get("name") or "")
        dur = max(ns(e.get("dur", 0)) or 0, 0)
        complete = e.get("ph") == "X"
        if complete and name.startswith("ProfilerStep#") and cat != "gpu_user_annotation":
            if dur > 0:
                steps.append((ts, ts + dur))
            continue
        runtime_call = cat in runtime_cats
        waits = runtime_call and wait.search(name) is not None
        if cat in device or (runtime_call and not waits):
            work.append((ts, ts + dur))
        elif complete and cat in host_cats:
            work.append((ts, ts + dur))
        if runtime_call or (complete and cat in host_ops):
            host_starts.append(ts)
        if runtime_call or (complete and cat in host_cats):  # (ts, its end, is not a wait)
            host_records.append((ts, ts + dur, not waits))
    # a step inside which no host work starts is dropped, unless no step has any (then all are kept)
    host_starts.sort()

    def has_host_work(step: tuple[int, int]) -> bool:  # a host start in [start, end)
        first = bisect.bisect_left(host_starts, step[0])
        return first < len(host_starts) and host_starts[first] < step[1]

    steps = sorted(set(s for s in steps if has_host_work(s)) or set(steps))
    if not steps:
        return None

    # the latest end of the work that starts before each point: bisect over the starts (a scan of every piece of
    # work for every step made this reference quadratic, minutes on a trace with thousands of steps)
    work.sort()
    work_starts, latest_end = [s for s, _ in work], list(itertools.accumulate((e for _, e in work), max))

    def closing(start: int, end: int) -> int:  # from the step's last recorded work (clipped to it) to its end
        before = bisect.bisect_left(work_starts, end)  # work starting before the step's end
        last = latest_end[before - 1] if before else start  # it overlaps the step exactly when it ends past start
        return end - max(start, min(end, last))

    start, end = steps[-1]
    # only what exceeds every other step's closing stretch: what each step has at its close stays in it; and an
    # excess under drain_unrecorded_pct of the step it leaves is the step's own closing overhead
    others = max((closing(*step) for step in steps[:-1]), default=0)
    excess = max(closing(start, end) - others, 0)
    # and only where the host's next record after the step's last work is the closing wait (lasting to within
    # `others` of the step's end, or starting past it): another record, or none (the trace ends), leaves it in the step
    after = sorted(r for r in host_records if r[0] >= end - closing(start, end))
    if not after or after[0][2] or after[0][1] < end - others:  # no wait next, or one the step goes on long after
        excess = 0
    tail = excess if excess * 100 >= thresholds()["drain_unrecorded_pct"] * (end - excess - start) else 0
    return {
        "first_start_ns": steps[0][0],
        "start_ns": start,
        "recorded_end_ns": end,
        "work_end_ns": end - tail,
        "tail_ns": tail,
        "steps": len(steps),
    }


@pytest.mark.parametrize("path", trace_files(), ids=trace_id)
def test_every_trace_closing_tail_matches_the_raw_events(path):
    """On every shared trace: the unrecorded tail is the plain-Python one, the blame of each step still sums to
    that step, and the last step's blame ends where its recorded work (or its device work) ended, never in the
    tail."""
    reference = closing_tail(path)
    m = _metrics(path)
    doc = cli_json("summary", str(path))
    for step in doc["blame"]["steps"]:
        assert sum(step["causes"].values()) == pytest.approx(step["step_ms"], abs=1e-6 * len(step["causes"]) + 1e-9)
    if reference is None or doc["window"]["source"] != "ProfilerStep ranges":
        assert m["drain_unrecorded_ms"] == 0
        return
    assert m["drain_unrecorded_ms"] == pytest.approx(reference["tail_ns"] / 1e6, abs=2e-6)
    assert m["drain_ms"] >= m["drain_unrecorded_ms"] - 1e-9
    last = doc["blame"]["steps"][-1]
    assert (
        last["step_ms"]
        <= (reference["recorded_end_ns"] - reference["start_ns"]) / 1e6
        - m["drain_unrecorded_ms"]
        + (m["drain_ms"] - m["drain_unrecorded_ms"])
        + 1e-6
    )
    if reference["tail_ns"] / 1e6 >= 0.05 * m["blame_step_ms"]:
        assert "unrecorded_tail" in doc["marks"]
