"""The headline of a measured profile: step time, throughput, latency percentiles and the stage split,
from the calls timed WITHOUT the profiler; and the evidence that the machine was noisy meanwhile.

A profile we measured carries, per trial, the same work timed without the profiler (capture.py
`UnprofiledTiming`, blocks interleaved with the profiled window on the same inputs). Those calls
define the headline, so a profile's step time is what the work costs when nobody watches; the trace
(sql/metrics.sql) supplies the attribution: shares, kernels, ops, blame. A foreign trace, or a
profile measured with --no-overhead, has only the trace: its headline is the trace's, and
`timing.headline` says so.

Each figure here has the meaning METRICS gives it (metric_catalog.py); percentiles interpolate
linearly between order statistics, as DuckDB's quantile_cont does in sql/metrics.sql.
"""

from __future__ import annotations

import math
import statistics

from libreyolo_profile.metric_catalog import PERCENTILE_MIN_CALLS
from libreyolo_profile.store.document.capture import TrialCapture, UnprofiledTiming

INFER_STAGES = ("preprocess", "forward", "postprocess")
TRAIN_STAGES = ("dataload", "to_device")


def quantile_cont(values: list[float], q: float) -> float:
    """The q-quantile with linear interpolation between the two nearest order statistics."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def unprofiled_metrics(kind: str, timing: UnprofiledTiming) -> dict:
    """The headline metrics of one trial, from its unprofiled calls."""
    calls = timing.call_ms
    wall_s = sum(timing.block_wall_ms) / 1000.0
    images = timing.images_per_call * len(calls)
    m: dict = {}
    if kind == "infer":
        m["step_ms"] = statistics.fmean(calls)
        for name, q in (("latency_p50_ms", 0.50), ("latency_p90_ms", 0.90), ("latency_p99_ms", 0.99)):
            m[name] = quantile_cont(calls, q)
        stages = INFER_STAGES
    else:
        m["step_ms"] = sum(timing.block_wall_ms) / len(calls)  # the block ends when the device is done
        stages = TRAIN_STAGES
    m["throughput_img_s"] = images / wall_s if wall_s > 0 else None
    m["ms_per_img"] = 1000.0 / m["throughput_img_s"] if m["throughput_img_s"] else None
    for stage in stages:
        values = timing.stage_ms.get(stage) or []
        if len(values) == len(calls):
            m[f"{stage}_ms"] = statistics.fmean(values)
            m[f"{stage}_pct"] = 100.0 * m[f"{stage}_ms"] / m["step_ms"] if m["step_ms"] else None
    m["timing_cv_pct"] = (100.0 * statistics.stdev(calls) / statistics.fmean(calls)
                          if len(calls) > 1 and statistics.fmean(calls) > 0 else None)
    return m


def apply_headline(m: dict, capture: TrialCapture | None) -> None:
    """Overwrite the trace's headline figures of one trial with its unprofiled ones, and pair the two
    for profiler_overhead_pct. Without unprofiled calls the trace's figures stay the headline."""
    kind = m.get("kind")
    profiled = capture.profiled_step_ms if capture is not None else None
    m["profiled_step_ms"] = profiled if profiled is not None else m.get("step_ms")
    m["profiler_overhead_pct"] = None
    m["timing_cv_pct"] = None
    m["other_cpu_pct"] = (capture.machine or {}).get("other_cpu_pct") if capture is not None else None
    if capture is None or capture.unprofiled is None or not capture.unprofiled.call_ms:
        return
    m.update(unprofiled_metrics(kind, capture.unprofiled))
    if profiled is not None and m.get("step_ms"):
        m["profiler_overhead_pct"] = 100.0 * (profiled - m["step_ms"]) / m["step_ms"]


def calls_behind_percentiles(capture: TrialCapture | None, trace_steps) -> int | None:
    """How many calls the trial's latency percentiles are computed from."""
    if capture is not None and capture.unprofiled is not None and capture.unprofiled.call_ms:
        return len(capture.unprofiled.call_ms)
    return trace_steps if isinstance(trace_steps, int) else None


def drop_thin_percentiles(m: dict, calls: int | None) -> dict:
    """Null every percentile with too few calls behind it; returns {metric: why} for those nulled."""
    reasons = {}
    for name, minimum in PERCENTILE_MIN_CALLS.items():
        if m.get(name) is None or calls is None or calls >= minimum:
            continue
        m[name] = None
        reasons[name] = (f"{name.split('_')[1]} needs at least {minimum} calls to mean anything; this trial timed "
                         f"{calls} (raise --runs)")
    return reasons


def timing_record(kind: str, captures: list) -> dict:
    """profile.json's `timing`: where the headline came from and how the overhead was measured."""
    measured = [c for c in captures if c is not None]
    unprofiled = [c.unprofiled for c in measured if c.unprofiled is not None]
    if not measured:
        return {"headline": "trace", "why": "a foreign trace carries only profiled work",
                "overhead_method": None}
    if not unprofiled:
        return {"headline": "trace", "why": "measured with --no-overhead: no unprofiled calls were timed",
                "overhead_method": None, "processes": [c.process for c in measured],
                "machine": [c.machine for c in measured]}
    first = unprofiled[0]
    unit = "calls" if kind == "infer" else "steps"
    pair = ("mean call time" if kind == "infer" else "wall time per step, each block ending when the device is done")
    places = list(dict.fromkeys(u.where for u in unprofiled))  # trials alternate sides in `run`
    return {
        "headline": "unprofiled",
        "unprofiled_calls_per_trial": [len(u.call_ms) for u in unprofiled],
        "where": places[0] if len(places) == 1 else places,
        "clock": first.clock,
        "stage_clock": "host perf_counter around each phase of the unprofiled calls",
        "overhead_method": (f"profiler_overhead_pct = (profiled_step_ms − step_ms) ÷ step_ms, each the {pair}: of the "
                            f"profiled {unit}, and of the same {unit} without the profiler ({'; '.join(places)}); "
                            "can be negative within timing noise"),
        "processes": [c.process for c in measured],
        "machine": [c.machine for c in measured],
    }


def noise_evidence(kind: str, captures: list, per_trial: list[dict], thresholds: dict) -> list[str]:
    """Why the measurement was noisy, one sentence per finding with its figures (empty: it was not)."""
    found = []
    many = len(captures) > 1
    for index, (capture, m) in enumerate(zip(captures, per_trial), 1):
        if capture is None:
            continue
        where = f" (trial {index})" if many else ""
        machine = capture.machine or {}
        other, steal = machine.get("other_cpu_pct"), machine.get("steal_pct")
        if other is not None and other >= thresholds["noisy_other_cpu_pct"]:
            found.append(f"other processes used {other:.0f}% of the machine's {machine.get('cpu_count')} CPUs while "
                         f"it measured{where} (load average {machine.get('loadavg_1m_end')})")
        if steal is not None and steal >= thresholds["noisy_steal_pct"]:
            found.append(f"the hypervisor stole {steal:.1f}% of CPU time{where}")
        for side in ("start", "end"):
            gpu = (machine.get("gpu") or {}).get(side) or {}
            slowing = [r for r in gpu.get("throttle_reasons", []) if r in SLOWING_THROTTLES]
            if slowing:
                found.append(f"the GPU was throttled ({', '.join(slowing)}; SM clock {gpu.get('sm_clock_mhz')} of "
                             f"{gpu.get('sm_clock_max_mhz')} MHz) at the {side}{where}")
                break
        cv = m.get("timing_cv_pct")
        if kind == "infer" and cv is not None and cv >= thresholds["noisy_cv_pct"]:
            found.append(f"the unprofiled calls' times varied by {cv:.0f}% (coefficient of variation){where}")
    return found


# NVML throttle reasons that slow the work against the card's own rules (measure/noise.py records them)
SLOWING_THROTTLES = frozenset({"software power cap", "hardware slowdown", "software thermal slowdown",
                               "hardware thermal slowdown", "hardware power brake slowdown"})
