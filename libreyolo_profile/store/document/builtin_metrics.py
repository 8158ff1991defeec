"""The metrics of a LibreYOLO built-in profile (store/document/builtin.py) and why the others are null.

Only what the built-in profiler measured by our definitions is carried over; each figure it gets wrong
(its CPU host overhead, its launch count on a CPU, its op times) stays null with the reason said.
"""

from __future__ import annotations

import math

from libreyolo_profile.metric_catalog import FROM_THE_DOCUMENT, METRICS, share_of
from libreyolo_profile.store.document.headline import drop_thin_percentiles


def number(value) -> float | None:
    """A finite JSON number as a float; anything else (a bool, a string, NaN, null) as None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def phase_wall_ms(raw: dict, kind: str) -> dict[str, float | None]:
    """Per-step host wall time per phase: infer from the stage means, train from the phase table."""
    if kind == "infer":
        return {stage: number(ms) for stage, ms in (raw.get("stages_ms") or {}).items()}
    return {p.get("phase"): number(p.get("wall_ms_per_step")) for p in raw.get("phases") or []}


def builtin_metrics(raw: dict, kind: str, on_cpu: bool, steps: int | None) -> tuple[dict, dict]:
    """(metrics, null reasons). Only figures the built-in profiler measured by our definitions."""
    m: dict = {name: None for name in METRICS if name not in FROM_THE_DOCUMENT}  # the document adds those
    reasons: dict = {}
    config = raw.get("config") or {}
    window = raw.get("window") or {}
    m["steps"] = steps
    m["window_ms"] = number(window.get("wall_ms")) or None
    m["step_ms"] = number(raw.get("step_ms"))
    m["throughput_img_s"] = number(raw.get("img_per_s"))
    if m["throughput_img_s"]:
        m["ms_per_img"] = 1000.0 / m["throughput_img_s"]
    m["images_per_step"] = number(config.get("batch"))
    m["ops_per_step"] = number((raw.get("metrics") or {}).get("ops_per_step"))
    walls = phase_wall_ms(raw, kind)
    if kind == "infer":
        _infer_figures(raw, walls, m, reasons)
    else:
        _train_figures(raw, walls, m)
    # a share of the step is of the mean call latency in an inference profile (sql/metrics.sql: step_ms)
    _shares(m, (number((raw.get("latency") or {}).get("mean_ms")) if kind == "infer" else None) or m["step_ms"])
    if not on_cpu:
        _gpu_figures(raw, m, reasons)
    else:
        _cpu_reasons(reasons)
    reasons["profiler_overhead_pct"] = "the built-in profiler does not time the work without the profiler"
    _unrecorded_reasons(m, reasons)
    return m, reasons


def _infer_figures(raw: dict, walls: dict, m: dict, reasons: dict) -> None:
    """Latency percentiles (those too few calls stand behind dropped, with why) and the stage means."""
    latency = raw.get("latency") or {}
    for q in ("p50", "p90", "p99"):
        m[f"latency_{q}_ms"] = number(latency.get(f"{q}_ms"))
    calls = latency.get("n") if isinstance(latency.get("n"), int) else None
    for name, why in drop_thin_percentiles(m, calls).items():  # its p99 of 10 calls is its slowest call
        reasons[name] = f"{why}; the built-in profiler reported {number(latency.get(name.split('_')[1] + '_ms'))} ms"
    for stage in ("preprocess", "forward", "postprocess"):
        m[f"{stage}_ms"] = walls.get(stage)


def _train_figures(raw: dict, walls: dict, m: dict) -> None:
    """Dataload and host-to-device copy time, and the built-in profiler's own dataload share."""
    m["dataload_ms"] = number(raw.get("dataload_ms"))
    frac = number(raw.get("dataload_frac"))
    m["dataload_pct"] = 100.0 * frac if frac is not None else None
    m["to_device_ms"] = walls.get("to_device")


def _shares(m: dict, whole_ms: float | None) -> None:
    """Each share of the step (or call) the built-in profiler does not report itself, from its part as
    sql/metrics.sql defines it: <figure>_pct = <figure>_ms ÷ the step's time (the shares whose whole
    sql/metric_catalog.sql names as the step or the call)."""
    if not whole_ms:
        return
    for name in METRICS:
        part = m.get(name.removesuffix("_pct") + "_ms")
        if share_of(name) in ("% of step", "% of call") and m.get(name) is None and part is not None:
            m[name] = 100.0 * part / whole_ms


def _gpu_figures(raw: dict, m: dict, reasons: dict) -> None:
    """Its GPU figures are measured, by definitions close to ours (see the mark); its host overhead is not ours."""
    util = number(raw.get("gpu_util_raw"))
    m["gpu_util_pct"] = 100.0 * util if util is not None else None
    m["gpu_busy_ms"] = number(raw.get("gpu_busy_ms_per_step"))
    m["tensorcore_pct"] = number(raw.get("tensorcore_pct"))
    m["memcpy_ms"] = number(raw.get("memcpy_ms_per_step"))
    m["peak_vram_mb"] = m["peak_mem_mb"] = number(raw.get("peak_vram_mb"))
    m["kernels_per_step"] = number(raw.get("kernels_per_step"))
    m["launches_per_step"] = number(raw.get("launches_per_step"))
    for name in ("peak_vram_mb", "peak_mem_mb"):
        if m[name] is None:
            reasons[name] = "the built-in profiler recorded no peak device memory"
    reasons["host_overhead_ms"] = reasons["host_overhead_pct"] = (
        "the built-in profiler's host overhead is step − GPU busy − dataload, which counts sync waits and "
        "device work in flight; it is not device idle time waiting for the host, so it is not carried over"
    )
    reasons["sync_ms"] = reasons["sync_pct"] = "the built-in profiler does not record synchronizing calls"
    reasons["per_launch_host_us"] = "needs sync time, which the built-in profiler does not record"
    reasons["launch_api_us"] = reasons["kernel_gap_us"] = (
        "the built-in profiler keeps no per-launch or per-stream kernel timing"
    )


def _cpu_reasons(reasons: dict) -> None:
    """On a CPU it reports the whole step as host overhead and 0 launches: those stay null, and why."""
    text = (
        "the built-in profiler reports the whole step as host overhead on a CPU and records no leaf-op "
        "time, so CPU overhead cannot be told from work"
    )
    for name in ("host_overhead_ms", "host_overhead_pct", "leaf_busy_pct", "per_launch_host_us"):
        reasons[name] = text
    reasons["launches_per_step"] = (
        "on a CPU a launch is a dispatched leaf op; the built-in profiler reports 0 and keeps no leaf-op count"
    )
    reasons["peak_mem_mb"] = "the built-in profiler records no host memory peak"


def _unrecorded_reasons(m: dict, reasons: dict) -> None:
    """Why the window's figures are null when the built-in profile does not record them."""
    if m["steps"] is None:
        reasons["steps"] = "the built-in profile names no measured window"
    if m["window_ms"] is None:
        reasons["window_ms"] = "the built-in profile records no window wall time"
    if m["images_per_step"] is None:
        for name in ("images_per_step", "throughput_img_s", "ms_per_img"):
            reasons.setdefault(name, "the built-in profile records no batch size")
