"""Names, units and meanings of the scalar metrics `get` answers (SPEC §4).

Their values are defined once, in sql/metrics.sql; this is the catalogue readers print and
the reasons a metric can be null. Plain data: `get` imports it without DuckDB or pyarrow.

A new metric touches exactly two places:
  1. sql/metrics.sql: one column of its result (its definition, with a comment);
  2. METRICS below: one line (unit, kinds, device, meaning).
tests/test_metric_catalog.py keeps the two in step. A metric the trace cannot give (the measurement or
the verdict adds it) goes in FROM_OUTSIDE_THE_TRACE instead of sql/metrics.sql; an input the SQL needs
for another figure but `get` does not answer goes in INTERNAL_COLUMNS.
"""

from __future__ import annotations

ANY, GPU = "any", "gpu"
BOTH, TRAIN, INFER = ("train", "infer"), ("train",), ("infer",)

# name -> (unit, kinds it applies to, device it needs, meaning)
METRICS: dict[str, tuple[str, tuple[str, ...], str, str]] = {
    "step_ms": (
        "ms",
        BOTH,
        ANY,
        "train: first step start → the host's end of the last step, ÷ steps (one step: until the device is done; the drain after the last step is drain_ms); infer: mean call latency. Measured profiles: the calls timed without the profiler; traces: the profiled window",
    ),
    "throughput_img_s": (
        "img/s",
        BOTH,
        ANY,
        "images per step ÷ step seconds (measured profiles: of the unprofiled calls)",
    ),
    "ms_per_img": ("ms", BOTH, ANY, "1000 ÷ throughput"),
    "latency_p50_ms": ("ms", INFER, ANY, "median per-call latency"),
    "latency_p90_ms": ("ms", INFER, ANY, "90th percentile per-call latency"),
    "latency_p99_ms": ("ms", INFER, ANY, "99th percentile per-call latency"),
    "preprocess_ms": ("ms", INFER, ANY, "mean preprocess time per call"),
    "preprocess_pct": ("%", INFER, ANY, "preprocess share of the mean latency"),
    "forward_ms": ("ms", INFER, ANY, "mean forward time per call"),
    "forward_pct": ("%", INFER, ANY, "forward share of the mean latency"),
    "postprocess_ms": ("ms", INFER, ANY, "mean postprocess (NMS) time per call"),
    "postprocess_pct": ("%", INFER, ANY, "postprocess share of the mean latency"),
    "gpu_util_pct": ("%", BOTH, GPU, "|union of kernel intervals| ÷ window wall time (busiest device)"),
    "gpu_busy_ms": ("ms", BOTH, GPU, "device busy time per step (busiest device)"),
    "tensorcore_pct": ("%", BOTH, GPU, "Tensor Core kernel time ÷ all kernel time, by kernel name (a heuristic)"),
    "gemm_pct": (
        "%",
        BOTH,
        GPU,
        "GEMM/convolution share of kernel time (attention kernels, their own category, are not in it)",
    ),
    "memory_bound_pct": ("%", BOTH, GPU, "elementwise, layout, norm, reduce and embedding-lookup share of kernel time"),
    "communication_pct": ("%", BOTH, GPU, "collective (nccl/rccl) share of kernel time"),
    "memcpy_ms": ("ms", BOTH, GPU, "device copy time per step (not kernel time)"),
    "peak_vram_mb": ("MiB", BOTH, GPU, "peak allocated device memory in the window"),
    "peak_mem_mb": ("MiB", BOTH, ANY, "peak allocated memory on the profiled device (host allocator on CPU)"),
    "memory_level": (
        "",
        BOTH,
        ANY,
        "absolute: the peaks are allocator totals; profiled: the host's totals, which count only blocks allocated while the profiler recorded; relative: the trace records Bytes only, so they are the rise above the window's start (at least that much)",
    ),
    "steady_malloc_calls_per_step": (
        "count",
        BOTH,
        GPU,
        "cudaMalloc/cudaFree-like calls per steady-state step (measured steps after the first)",
    ),
    "launches_per_step": ("count", BOTH, ANY, "runtime launch calls per step (CPU: dispatched leaf ops)"),
    "kernels_per_step": ("count", BOTH, GPU, "device kernels executed per step"),
    "ops_per_step": ("count", BOTH, ANY, "framework ops recorded per step"),
    "host_overhead_ms": (
        "ms",
        BOTH,
        ANY,
        "per step, device idle in compute phases waiting for the host (CPU: compute-phase time outside the ops that execute work)",
    ),
    "host_overhead_pct": ("%", BOTH, ANY, "host overhead ÷ step time"),
    "leaf_busy_pct": (
        "%",
        BOTH,
        "cpu",
        "self time of the ops that execute work (leaf ops, and ops spending most of their time in themselves) ÷ step time (CPU profiles)",
    ),
    "sync_ms": ("ms", BOTH, GPU, "per step, host time blocked in synchronizing calls"),
    "sync_pct": ("%", BOTH, GPU, "sync time ÷ step time"),
    "per_launch_host_us": (
        "µs",
        BOTH,
        ANY,
        "host time per launch: (step host wall − sync) ÷ launches (CPU: framework time ÷ leaf ops)",
    ),
    "launch_api_us": ("µs", BOTH, GPU, "mean duration of a kernel-launch API call"),
    "steady_launch_us": (
        "µs",
        BOTH,
        GPU,
        "steady-state launch cost: median kernel-launch call in the steps, each kernel's first (cold) launch left out",
    ),
    "kernel_gap_us": ("µs", BOTH, GPU, "median idle gap between queued consecutive kernels on one stream"),
    "drain_ms": (
        "ms",
        BOTH,
        ANY,
        "the device's end-of-window drain: how long it ran the last step's work after the host finished that step (not in a multi-step step_ms when the device kept up with the host)",
    ),
    "blame_step_ms": (
        "ms",
        BOTH,
        ANY,
        "the blame's mean step wall time (blame table step_ms): what every blame share is of",
    ),
    "host_work_ms": (
        "ms",
        BOTH,
        GPU,
        "the host's recorded work per step that does not wait on the device (syncs, blocking copies, polls left out; every thread, sql/blame.sql blame_host_floor): the host's side of the critical path",
    ),
    "host_work_without_launches": (
        "",
        BOTH,
        GPU,
        "JSON {kernel category: host_work_ms with that category's launch calls left out}: what-if's host floor",
    ),
    "dataload_ms": ("ms", TRAIN, ANY, "per step, time waiting for the next batch"),
    "dataload_pct": ("%", TRAIN, ANY, "dataload share of the step"),
    "to_device_ms": ("ms", TRAIN, ANY, "per step, time copying the batch to the device"),
    "to_device_pct": ("%", TRAIN, ANY, "to_device share of the step"),
    "blame_gemm_conv_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device busy with GEMM/convolution kernels (sql/blame.sql)",
    ),
    "blame_attention_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device busy with attention kernels (fmha, flash …) (sql/blame.sql)",
    ),
    "blame_memory_bound_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device busy with elementwise, layout, norm, reduce and optimizer kernels (sql/blame.sql)",
    ),
    "blame_device_other_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device busy with other kernels (nms/sort, unnamed) (sql/blame.sql)",
    ),
    "blame_communication_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device busy with collectives (nccl/rccl) no compute overlapped (sql/blame.sql)",
    ),
    "blame_memcpy_memset_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device busy with copies or memsets no kernel overlapped (sql/blame.sql)",
    ),
    "blame_sync_bubble_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device idle while the host blocked in a sync or a copy with pageable memory on either side (sql/blame.sql)",
    ),
    "blame_startup_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device idle while the host created streams, events, contexts or library handles (sql/blame.sql)",
    ),
    "blame_module_loading_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device idle while the host loaded modules (lazy loading in a kernel's first launch) (sql/blame.sql)",
    ),
    "blame_allocator_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device idle while the host was in cudaMalloc/cudaFree (sql/blame.sql)",
    ),
    "blame_launching_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device idle while the host launched work (launch calls, dispatch of ops that launch) (sql/blame.sql)",
    ),
    "blame_preprocess_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device idle in a ## preprocess ## range or, inference, in host work before the call's first launch (sql/blame.sql)",
    ),
    "blame_cpu_work_pct": (
        "%",
        BOTH,
        GPU,
        "share of step wall time: device idle while the host ran ops or runtime calls that launch nothing (sql/blame.sql)",
    ),
    "blame_cpu_gemm_conv_pct": (
        "%",
        BOTH,
        "cpu",
        "share of step wall time: CPU executing GEMM/convolution ops (sql/blame.sql)",
    ),
    "blame_cpu_other_ops_pct": ("%", BOTH, "cpu", "share of step wall time: CPU executing other ops (sql/blame.sql)"),
    "blame_cpu_communication_pct": (
        "%",
        BOTH,
        "cpu",
        "share of step wall time: CPU executing collective ops (gloo, c10d …), often on another thread (sql/blame.sql)",
    ),
    "blame_framework_overhead_pct": (
        "%",
        BOTH,
        "cpu",
        "share of step wall time: CPU inside ops that do not execute work themselves (framework and dispatch) (sql/blame.sql)",
    ),
    "blame_dataload_pct": (
        "%",
        BOTH,
        ANY,
        "share of step wall time: device idle (CPU: any time) inside a dataload range, waiting for data (sql/blame.sql)",
    ),
    "blame_python_pct": (
        "%",
        BOTH,
        ANY,
        "share of step wall time: device idle (CPU: no op), host in a recorded Python frame or host range between ops: the model's Python (sql/blame.sql)",
    ),
    "blame_unexplained_idle_pct": (
        "%",
        BOTH,
        ANY,
        "share of step wall time: nothing at all recorded on any host thread or the device (sql/blame.sql)",
    ),
    "profiled_step_ms": (
        "ms",
        BOTH,
        ANY,
        "the profiled calls' mean host time (infer; the first also pays the profiler's start-up) or the profiled "
        "window's wall ÷ steps (train): the profiled side of profiler_overhead_pct",
    ),
    "profiler_overhead_pct": (
        "%",
        BOTH,
        ANY,
        "(profiled_step_ms − step_ms) ÷ step_ms: how much slower the same work ran under the profiler",
    ),
    "timing_cv_pct": ("%", BOTH, ANY, "coefficient of variation of the unprofiled calls' (steps') times"),
    "other_cpu_pct": (
        "%",
        BOTH,
        ANY,
        "CPU time other processes used while it measured, as a share of all the machine's CPUs",
    ),
    "steps": ("count", BOTH, ANY, "measured steps (train) or calls (infer) in the window"),
    "window_ms": ("ms", BOTH, ANY, "measured window wall time"),
    "images_per_step": ("count", BOTH, ANY, "images one step or call consumed"),
    "gemm_conv_peak_pct": (
        "%",
        BOTH,
        ANY,
        "FLOP-weighted mean of achieved ÷ peak TFLOP/s over GEMM and convolution op calls (sql/roofline.sql; CPU: the measured peak)",
    ),
    "sol_step_ms": (
        "ms",
        BOTH,
        ANY,
        "speed-of-light step time: Σ roofline times (max(FLOPs ÷ peak, bytes ÷ bandwidth)) of the costed op calls per step; ops without a cost model add nothing",
    ),
    "sol_step_pct": ("%", BOTH, ANY, "sol_step_ms ÷ the profiled window's step time"),
    "roofline_coverage_pct": (
        "%",
        BOTH,
        ANY,
        "share of the op calls' device time that has a roofline (a cost model and a roof)",
    ),
    "bound": ("", BOTH, ANY, "the bottleneck verdict"),
    "bound_reason": ("", BOTH, ANY, "why, with the numbers"),
    "thrashing": ("", BOTH, ANY, "true when the window ran under device-memory pressure"),
}


# Columns of sql/metrics.sql's result that are inputs to other figures (the verdict, thrashing, the
# window), not `get` fields: the document keeps them out of `metrics`.
INTERNAL_COLUMNS = frozenset(
    {
        "kind",
        "window_source",
        "images_per_step_source",
        "busiest_device",
        "step_host_ms",
        "peak_reserved_mb",
        "peak_host_mem_mb",
        "device_malloc_calls",
        "steady_malloc_steps",
        "negative_duration_events",
        "on_gpu",
        "roofline_null_reason",
        "empty_steps",
        "blame_holders",
        "advice",
        "empty_steps_ms",
    }
)

# Metrics no trace holds: the measurement adds the unprofiled timing behind profiler_overhead_pct,
# timing_cv_pct and other_cpu_pct (store/document/headline.py; profiled_step_ms pairs with it), the
# document adds the verdict and the thrashing flag (store/document/assemble.py, verdict.py).
FROM_OUTSIDE_THE_TRACE = frozenset(
    {
        "profiler_overhead_pct",
        "profiled_step_ms",
        "timing_cv_pct",
        "other_cpu_pct",
        "bound",
        "bound_reason",
        "thrashing",
    }
)

# The headline of a measured profile: the figures it takes from the calls timed without the profiler
# (store/document/headline.py, unprofiled_metrics; tests/test_provenance.py keeps the two in step).
# Every other figure of such a profile, and every figure of an imported trace, is the profiled trace's.
UNPROFILED_HEADLINE = frozenset(
    {
        "step_ms",
        "throughput_img_s",
        "ms_per_img",
        "latency_p50_ms",
        "latency_p90_ms",
        "latency_p99_ms",
        "timing_cv_pct",
        *(
            f"{stage}_{unit}"
            for stage in ("preprocess", "forward", "postprocess", "dataload", "to_device")
            for unit in ("ms", "pct")
        ),
    }
)

# A percentile from fewer calls than this is null, with the reason (store/document/headline.py): a p99 of
# 30 calls is just the slowest call.
PERCENTILE_MIN_CALLS: dict[str, int] = {"latency_p90_ms": 20, "latency_p99_ms": 100}


def measured_unit(kind: str | None) -> str:
    """What one measured step of a profile of this kind is called on screen: an inference profile's is a call."""
    return "call" if kind == "infer" else "step"


def is_cpu_profile(doc: dict) -> bool:
    """A profile of work on the CPU, where GPU figures do not apply: the one test every reader uses."""
    return doc.get("device_type") == "cpu"


# The figures a relative memory level (memory_level = relative: a trace of `[memory]` Bytes only) qualifies.
RELATIVE_PEAKS = ("peak_vram_mb", "peak_mem_mb")


def metric_note(name: str, doc: dict) -> str | None:
    """What a printed value needs said beside it: a peak that is not the allocator's whole total."""
    metrics = doc.get("metrics", {})
    value, level = metrics.get(name), metrics.get("memory_level")
    if name not in RELATIVE_PEAKS or value is None:
        return None
    shown = f"{value:,.1f}" if abs(value) >= 1 or value == 0 else f"{value:.3g}"
    if level == "relative":
        return (
            f"relative: at least {shown} MiB above the window's start (the trace's [memory] "
            "events carry Bytes only, no allocator totals)"
        )
    if level == "profiled":
        return (
            f"at least {shown} MiB: the host allocator's total counts only the blocks allocated "
            "while the profiler recorded memory"
        )
    return None


def null_reason(name: str, doc: dict) -> str:
    """Why a metric is null in this profile, in one sentence."""
    unit, kinds, device, _ = METRICS.get(name, ("", BOTH, ANY, ""))
    if doc.get("kind") not in kinds:
        return f"{name} applies to {' and '.join(kinds)} profiles; this is a {doc.get('kind')} profile"
    if device == GPU and is_cpu_profile(doc):
        return "CPU profile: no device kernels were recorded, so GPU figures cannot be measured"
    reasons = doc.get("null_reasons", {})
    if name in reasons:
        return reasons[name]
    return "not measured in this profile"


# The metrics that are not numbers: the column type each lands in (the `profiles` view, the head check).
TEXT_METRICS = frozenset({"bound", "bound_reason", "memory_level", "host_work_without_launches"})
BOOLEAN_METRICS = frozenset({"thrashing"})


def metric_sql_type(name: str) -> str:
    """BOOLEAN, VARCHAR or DOUBLE: the one definition of a metric's type."""
    return "BOOLEAN" if name in BOOLEAN_METRICS else "VARCHAR" if name in TEXT_METRICS else "DOUBLE"
