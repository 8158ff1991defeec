"""SPEC §5's ordered threshold rules: the verdict of a profile without a per-step blame (a built-in
import, whose metrics are all it has), and THRESHOLDS, every threshold a verdict or a mark uses. A profile
with a blame is judged by it instead (verdict.py)."""

from __future__ import annotations

THRESHOLDS = {
    "dataload_pct": 20.0,  # dataloader-bound at ≥ 20% of the step waiting for data
    "to_device_pct": 15.0,  # transfer-bound at ≥ 15% of the step copying to the device
    "sync_pct": 25.0,  # sync-bound at ≥ 25% of the step blocked in synchronizing calls
    "communication_pct": 30.0,  # communication-bound at ≥ 30% of GPU time in collectives
    "gpu_util_pct": 80.0,  # GPU-bound at or above, host-launch-bound below
    "gemm_pct": 50.0,  # GEMM-dominated: compute-bound rather than memory-bound
    "stage_pct": 40.0,  # an inference stage dominates at ≥ 40% of the latency
    "leaf_busy_pct": 80.0,  # cpu-compute when leaf ops fill ≥ 80% of the step
    "tiny_steps": 10,  # fewer measured steps/calls than this is a tiny window
    "tiny_window_ms": 100.0,  # so is a window shorter than this
    "reserved_of_device_pct": 95.0,  # with device mallocs in the window: thrashing
    "noisy_other_cpu_pct": 25.0,  # noisy when other processes used ≥ 25% of all CPUs while measuring
    "noisy_steal_pct": 5.0,  # or the hypervisor stole ≥ 5% of CPU time
    "noisy_cv_pct": 20.0,  # or identical inference calls varied by ≥ 20% (coefficient of variation)
}


def fmt(value, digits=1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def verdict(m: dict, bound: str, reason: str, next_step: str, *evidence: str) -> dict:
    return {"bound": bound, "reason": reason, "next_step": next_step, "evidence": {n: m.get(n) for n in evidence}}


def host_rule(m: dict, kind: str) -> dict | None:
    """The threshold rules of what the host waits for: data, copies, syncs, collectives, an inference stage."""
    t = THRESHOLDS
    if kind == "train" and (m.get("dataload_pct") or 0) >= t["dataload_pct"]:
        return verdict(
            m,
            "dataloader",
            f"waiting for data takes {fmt(m['dataload_pct'])}% of each step "
            f"({fmt(m.get('dataload_ms'), 2)} of {fmt(m['step_ms'], 2)} ms; threshold {t['dataload_pct']:.0f}%)",
            "raise --workers, enable pin_memory/persistent workers, or make augmentation cheaper",
            "dataload_pct",
            "dataload_ms",
            "step_ms",
        )
    if kind == "train" and (m.get("to_device_pct") or 0) >= t["to_device_pct"]:
        return verdict(
            m,
            "transfer",
            f"copying batches to the device takes {fmt(m['to_device_pct'])}% of each step "
            f"({fmt(m.get('to_device_ms'), 2)} ms; threshold {t['to_device_pct']:.0f}%)",
            "use pinned memory with non_blocking copies, or move augmentation onto the device",
            "to_device_pct",
            "to_device_ms",
            "step_ms",
        )
    if (m.get("sync_pct") or 0) >= t["sync_pct"]:
        return verdict(
            m,
            "sync",
            f"the host is blocked in synchronizing calls for {fmt(m['sync_pct'])}% of each step "
            f"({fmt(m.get('sync_ms'), 2)} ms; threshold {t['sync_pct']:.0f}%)",
            "remove .item()/.cpu()/print of device tensors inside the step, or defer them",
            "sync_pct",
            "sync_ms",
            "step_ms",
        )
    if (m.get("communication_pct") or 0) >= t["communication_pct"]:
        return verdict(
            m,
            "communication",
            f"collectives take {fmt(m['communication_pct'])}% of kernel time "
            f"(communication_pct; memcpy/memset excluded; threshold {t['communication_pct']:.0f}%)",
            "overlap communication with backward (bucket sizes), or reduce what is exchanged",
            "communication_pct",
            "gpu_util_pct",
        )
    return stage_rule(m) if kind == "infer" else None


def stage_rule(m: dict) -> dict | None:
    """An inference stage around the forward pass that dominates the call's latency."""
    t = THRESHOLDS
    for stage in ("preprocess", "postprocess"):
        share = m.get(f"{stage}_pct")
        if share is not None and share >= t["stage_pct"]:
            hint = (
                "decode and letterbox fewer pixels (smaller --imgsz), or batch preprocessing"
                if stage == "preprocess"
                else "raise --conf or lower --max-det so NMS sees fewer candidates"
            )
            return verdict(
                m,
                stage,
                f"{stage} takes {fmt(share)}% of each call's latency "
                f"({fmt(m.get(f'{stage}_ms'), 2)} of {fmt(m['step_ms'], 2)} ms; threshold {t['stage_pct']:.0f}%)",
                hint,
                f"{stage}_pct",
                f"{stage}_ms",
                "step_ms",
            )
    return None


def gpu_rule(m: dict) -> dict:
    """The threshold rules of a GPU profile: busy in GEMMs, busy in memory-bound work, or waiting for the host."""
    t = THRESHOLDS
    util = m.get("gpu_util_pct") or 0.0
    if util >= t["gpu_util_pct"]:
        if (m.get("gemm_pct") or 0) >= t["gemm_pct"]:
            return verdict(
                m,
                "gpu-compute",
                f"the GPU is busy {fmt(util)}% of the window and GEMM/conv kernels take "
                f"{fmt(m.get('gemm_pct'))}% of kernel time (gemm_pct; on Tensor Cores "
                f"{fmt(m.get('tensorcore_pct'))}% of kernel time)",
                "use AMP (bf16/fp16) so GEMMs run on Tensor Cores, channels_last, or a smaller model/--imgsz",
                "gpu_util_pct",
                "gemm_pct",
                "tensorcore_pct",
            )
        return verdict(
            m,
            "gpu-memory",
            f"the GPU is busy {fmt(util)}% of the window but elementwise/layout/norm kernels "
            f"take {fmt(m.get('memory_bound_pct'))}% of kernel time (memory_bound_pct; GEMM only "
            f"{fmt(m.get('gemm_pct'))}%)",
            "fuse elementwise ops (torch.compile), avoid layout copies (channels_last), use fused optimizers",
            "gpu_util_pct",
            "memory_bound_pct",
            "gemm_pct",
        )
    return verdict(
        m,
        "host-launch",
        f"the GPU is busy only {fmt(util)}% of the window (threshold {t['gpu_util_pct']:.0f}%): "
        f"it waited {fmt(m.get('host_overhead_ms'), 2)} ms per step for the host, which issued "
        f"{fmt(m.get('launches_per_step'), 0)} launches at {fmt(m.get('per_launch_host_us'))} µs each "
        f"and was blocked in sync only {fmt(m.get('sync_pct'))}% of the step",
        "launch fewer, larger kernels: bigger --batch, CUDA graphs, torch.compile, fused optimizers",
        "gpu_util_pct",
        "host_overhead_ms",
        "launches_per_step",
        "per_launch_host_us",
        "sync_pct",
    )


def cpu_rule(m: dict) -> dict:
    """The threshold rules of a CPU profile: the ops' arithmetic, or the framework around them."""
    t = THRESHOLDS
    leaf = m.get("leaf_busy_pct")
    if leaf is not None and leaf >= t["leaf_busy_pct"]:
        return verdict(
            m,
            "cpu-compute",
            f"leaf ops execute {fmt(leaf)}% of each step on the CPU "
            f"(threshold {t['leaf_busy_pct']:.0f}%): the arithmetic itself is the cost",
            "use a smaller model or --imgsz, more threads, or a GPU",
            "leaf_busy_pct",
            "step_ms",
        )
    if leaf is None:
        return verdict(
            m,
            "unknown",
            "the trace records no framework ops inside its steps, so neither CPU compute "
            "nor overhead can be told apart",
            "profile with CPU activity recorded",
            "step_ms",
        )
    return verdict(
        m,
        "cpu-overhead",
        f"leaf ops execute only {fmt(leaf)}% of each step on the CPU; "
        f"{fmt(m.get('host_overhead_ms'), 2)} ms per step ({fmt(m.get('host_overhead_pct'))}%) is framework "
        f"and Python time around {fmt(m.get('launches_per_step'), 0)} dispatched ops",
        "batch more work per op (larger --batch), torch.compile, or fewer small ops",
        "leaf_busy_pct",
        "host_overhead_ms",
        "launches_per_step",
    )
