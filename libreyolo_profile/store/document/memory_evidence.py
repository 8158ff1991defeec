"""What the profile says about device memory beyond the figures: the evidence behind the thrashing
mark, and why a peak is null or only relative. The figures come from sql/memory.sql (through
sql/metrics.sql) and the measurement's allocator counters; this only judges and words them."""

from __future__ import annotations

from libreyolo_profile.store.document.capture import TrialCapture
from libreyolo_profile.vocabulary import thresholds


def thrashing_evidence(m: dict, capture: TrialCapture | None, device_total_mb: float | None) -> str | None:
    """Why the window ran under device-memory pressure, quoting the figures, or None. Either the
    allocator had to free its cache and retry (num_alloc_retries, which only a measurement reads), or
    the cache sat near the device's total while steady-state steps kept calling cudaMalloc/cudaFree
    (a warm caching allocator calls neither)."""
    retries = capture.num_alloc_retries if capture else None
    if retries:
        return f"{retries} allocator retries (num_alloc_retries) inside the profiled window"
    reserved, total = m.get("peak_reserved_mb"), device_total_mb
    steady = (m.get("steps") or 0) - 1
    calling = m.get("steady_malloc_steps") or 0
    if not (reserved and total and steady >= 1 and calling >= min(2, steady)):
        return None
    share = 100.0 * reserved / total
    if share < thresholds()["reserved_of_device_pct"]:
        return None
    per_step = m.get("steady_malloc_calls_per_step") or 0.0
    return (
        f"{per_step:.1f} cudaMalloc/cudaFree calls per steady-state step, in {calling} of {steady} steady-state "
        f"steps, with {reserved:,.0f} of the device's {total:,.0f} MiB reserved ({share:.1f}%)"
    )


def peak_null_reasons(m: dict) -> dict:
    """Why peak_vram_mb / peak_mem_mb are null, from what the trace does hold: never 'profile_memory
    was off' when it has allocator events (of the host only, say)."""
    reasons = {}
    host_events = m.get("peak_host_mem_mb") is not None
    if m.get("on_gpu"):
        if m.get("peak_vram_mb") is None:
            reasons["peak_vram_mb"] = reasons["peak_mem_mb"] = (
                "the trace's allocator events are the host's only: none for the device"
                if host_events
                else "the trace has no allocator events (profile_memory was off)"
            )
    elif m.get("peak_mem_mb") is None:
        reasons["peak_mem_mb"] = "the trace has no host allocator events (profile_memory was off)"
    return reasons
