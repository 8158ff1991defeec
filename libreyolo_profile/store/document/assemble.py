"""Assemble the self-contained profile document (profile.json) from analysed trials."""

from __future__ import annotations

import math
import statistics
import uuid
from datetime import datetime, timezone

from libreyolo_profile import __version__
from libreyolo_profile.store.document.verdict import THRESHOLDS, decide
from libreyolo_profile.metric_catalog import METRICS
from libreyolo_profile.store.document.capture import TrialCapture
from libreyolo_profile.store.schema import PROFILE_SCHEMA, REPEAT_SCHEMA, SCHEMA_VERSION, TABLES_VERSION

# Internal columns of sql/metrics.sql that are inputs to others, not `get` fields.
DAMAGE_MARK = "trace_damaged"  # what reading the trace repaired, left out or recovered; repeated on every read
DURATIONS_MARK = "durations_unusable"

_INTERNAL = {"kind", "window_source", "images_per_step_source", "busiest_device", "step_host_ms",
             "peak_reserved_mb", "peak_host_mem_mb", "device_malloc_calls", "negative_duration_events"}


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def trial_metrics(analysis: dict, capture: TrialCapture | None) -> dict:
    """The metrics of one trial: the trace's, plus what only the measurement could know."""
    m = {k: _clean(v) for k, v in analysis["metrics"].items()}
    on_gpu = m.get("gpu_util_pct") is not None
    if capture is not None:
        if capture.peak_vram_mb is not None:
            m["peak_vram_mb"] = capture.peak_vram_mb
        if capture.peak_reserved_mb is not None:
            m["peak_reserved_mb"] = capture.peak_reserved_mb
        m["profiler_overhead_pct"] = capture.profiler_overhead_pct
    else:
        m["profiler_overhead_pct"] = None
    if capture is not None and capture.peak_mem_mb is not None:
        m["peak_mem_mb"] = capture.peak_mem_mb
    else:
        m["peak_mem_mb"] = m.get("peak_vram_mb") if on_gpu else m.get("peak_host_mem_mb")
    if not on_gpu and not m.get("launches_per_step"):
        # No leaf op inside the steps: CPU overhead cannot be told from work.
        m["host_overhead_ms"] = m["host_overhead_pct"] = m["per_launch_host_us"] = m["leaf_busy_pct"] = None
    return m


def thrashing_evidence(m: dict, capture: TrialCapture | None, device_total_mb: float | None) -> str | None:
    retries = capture.num_alloc_retries if capture else None
    if retries:
        return f"{retries} allocator retries (num_alloc_retries) inside the measured steps"
    reserved, total = m.get("peak_reserved_mb"), device_total_mb
    if m.get("device_malloc_calls") and reserved and total:
        share = 100.0 * reserved / total
        if share >= THRESHOLDS["reserved_of_device_pct"]:
            return (f"{m['device_malloc_calls']} device malloc/free calls inside the measured steps with "
                    f"{share:.1f}% of device memory reserved")
    return None


def _null_reasons(m: dict, analysis: dict) -> dict:
    reasons = {}
    if m.get("images_per_step") is None:
        text = ("images per step unknown: the trace records no input shapes (record_shapes was off) and no batch "
                "size was given")
        for name in ("throughput_img_s", "ms_per_img", "images_per_step"):
            reasons[name] = text
    if m.get("gpu_util_pct") is not None:
        if m.get("peak_vram_mb") is None:
            reasons["peak_vram_mb"] = reasons["peak_mem_mb"] = \
                "the trace has no allocator events for the device (profile_memory was off)"
        if m.get("kernel_gap_us") is None:
            reasons["kernel_gap_us"] = "no kernel was queued behind another on one stream in the measured steps"
        if m.get("launch_api_us") is None:
            reasons["launch_api_us"] = "no kernel-launch API call was recorded inside the measured steps"
    else:
        if m.get("peak_mem_mb") is None:
            reasons["peak_mem_mb"] = "the trace has no host allocator events (profile_memory was off)"
        if m.get("host_overhead_ms") is None:
            reasons["host_overhead_ms"] = reasons["host_overhead_pct"] = reasons["per_launch_host_us"] = \
                reasons["leaf_busy_pct"] = "the trace records no framework ops inside its steps"
    if m.get("profiler_overhead_pct") is None:
        reasons["profiler_overhead_pct"] = ("not measured: a foreign trace carries no unprofiled timing"
                                            if analysis.get("foreign") else "skipped (--no-overhead)")
    return reasons


def _unusable_durations(analysis: dict) -> str | None:
    """Why no time in the trace can be trusted, when none of its duration events has a usable
    duration (they all read as 0: every share, utilization and step time would be made up)."""
    total, usable = analysis.get("duration_events"), analysis.get("usable_durations")
    if not total or usable:
        return None
    return (f"none of the trace's {total:,} duration events has a usable duration (each is negative, NaN, zero or "
            "missing): step times, utilization and shares cannot be computed")


def _repeat_stats(trials: list[dict]) -> dict:
    stats = {}
    for name in METRICS:
        values = [t.get(name) for t in trials]
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if not numbers or len(numbers) != len(values):
            continue
        stats[name] = {"mean": statistics.fmean(numbers),
                       "std": statistics.stdev(numbers) if len(numbers) > 1 else None,
                       "n": len(numbers), "values": numbers}
    return stats


def build_document(analyses: list[dict], captures: list[TrialCapture | None], *, source: dict,
                   command: list[str] | None = None, settings: dict | None = None,
                   environment: dict | None = None, model: dict | None = None,
                   marks: dict | None = None, device_type: str | None = None) -> dict:
    last = analyses[-1]
    kind = last["kind"]
    per_trial = [trial_metrics(a, c) for a, c in zip(analyses, captures)]
    on_gpu = per_trial[-1].get("gpu_util_pct") is not None
    device_type = device_type or ("gpu" if on_gpu else "cpu")
    total_mb = next((d.get("total_mb") for d in last["devices"]), None)
    if captures[-1] is not None and captures[-1].device_total_mb:
        total_mb = captures[-1].device_total_mb

    # The profile's scalars: the mean over trials (the last trial's value for non-numbers).
    metrics = dict(per_trial[-1])
    repeat = _repeat_stats(per_trial) if len(per_trial) > 1 else {}
    for name, stat in repeat.items():
        metrics[name] = stat["mean"]
    thrashing = None
    for m, c in zip(per_trial, captures):
        thrashing = thrashing or thrashing_evidence(m, c, total_mb)
    unusable = _unusable_durations(last)
    verdict = decide(metrics, kind, on_gpu, thrashing, unusable)

    all_marks = dict(marks or {})
    if last.get("damage"):
        all_marks[DAMAGE_MARK] = "the trace was damaged: " + "; ".join(last["damage"])
    if unusable:
        all_marks[DURATIONS_MARK] = unusable
    if device_type == "cpu":
        all_marks["cpu_profile"] = ("CPU profile: GPU figures (utilization, Tensor Cores, VRAM, kernels) do not "
                                    "apply; see `ops` for where the time goes")
    steps = metrics.get("steps") or 0
    if steps < THRESHOLDS["tiny_steps"] or (metrics.get("window_ms") or 0) < THRESHOLDS["tiny_window_ms"]:
        all_marks["tiny_window"] = (f"tiny window: {steps} measured steps over {metrics.get('window_ms') or 0:.1f} ms "
                                    f"(fewer than {THRESHOLDS['tiny_steps']} steps or under "
                                    f"{THRESHOLDS['tiny_window_ms']:.0f} ms): figures are noisy")
    if thrashing:
        all_marks["thrashing"] = f"device memory was thrashing ({thrashing}): utilization and throughput cannot be trusted"
    if last["kind_inferred"]:
        all_marks["kind_inferred"] = (f"kind inferred as {kind}: the trace "
                                      + ("holds autograd backward work" if kind == "train" else "holds no backward work"))
    if not last["phases_annotated"]:
        all_marks["phases_inferred"] = ("phases inferred from PyTorch's own marks (DataLoader, Optimizer, autograd, "
                                        "host-to-device copies); the rest of each step counts as forward")
    if not str(metrics.get("window_source", "")).startswith("ProfilerStep"):
        all_marks["window_fallback"] = f"window: {metrics.get('window_source')}"

    public = {k: v for k, v in metrics.items() if k not in _INTERNAL}
    public["bound"] = verdict["bound"]
    public["bound_reason"] = verdict["reason"]
    public["thrashing"] = bool(thrashing)
    doc = {
        "schema": PROFILE_SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "tables_version": TABLES_VERSION,
        "generation": uuid.uuid4().hex,
        "kind": kind,
        "kind_inferred": last["kind_inferred"],
        "device_type": device_type,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "producer": f"libreyolo-profile {__version__}",
        "source": source,
        "command": command,
        "settings": settings or {},
        "environment": environment or {},
        "model": model or {},
        "window": {"steps": metrics.get("steps"), "wall_ms": metrics.get("window_ms"),
                   "source": metrics.get("window_source"),
                   "images_per_step_source": metrics.get("images_per_step_source")},
        "rank": last["rank"],
        "world_size": last["world_size"],
        "devices": last["devices"],
        "metrics": public,
        "null_reasons": {},
        "verdict": verdict,
        "thresholds": THRESHOLDS,
        "marks": all_marks,
        "trials": [{k: v for k, v in t.items() if k in METRICS} for t in per_trial],
        "repeat": repeat,
        "extra": [c.extra for c in captures if c is not None and c.extra] or None,
        "tables": last["tables"],
    }
    doc["null_reasons"] = _null_reasons(public, {"foreign": source.get("type") != "measured"})
    rss = [c.extra.get("peak_rss_mb") for c in captures if c is not None and c.extra.get("peak_rss_mb")]
    if public.get("peak_mem_mb") is None and rss and "peak_mem_mb" in doc["null_reasons"]:
        # not the allocator's peak, but the nearest honest figure: say what it is, keep the metric null
        doc["null_reasons"]["peak_mem_mb"] += f"; the process's peak RSS was {max(rss):.0f} MiB (extra.peak_rss_mb)"
    return doc


def repeat_document(doc: dict) -> dict:
    """profile_repeat.json: the profile plus, per metric, mean, std, n and the trial values."""
    return {**doc, "schema": REPEAT_SCHEMA}
