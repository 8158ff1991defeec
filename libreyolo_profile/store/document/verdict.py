"""The bottleneck verdict (SPEC §5, §11): decided from the per-step blame (sql/blame.sql) where the
profile has one — the verdict whose causes hold the most of the steps' wall time wins, and its reason
quotes that share in % and ms. Profiles without a blame (built-in imports) keep SPEC §5's ordered rules.
Every threshold lives in THRESHOLDS."""

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

# Blame cause → the verdict it supports (sql/blame.sql defines the causes). Several causes may support
# one verdict (allocator and module loading are both a cold start); their shares add up.
GPU_BLAME_BOUNDS = {
    "gemm_conv": "gpu-compute", "attention": "gpu-compute", "device_other": "gpu-compute",
    "memory_bound": "gpu-memory", "communication": "communication", "memcpy_memset": "transfer",
    "sync_bubble": "sync", "launching": "host-launch", "dataload": "dataloader",
    "cpu_work": "host-cpu", "allocator": "cold-start", "module_loading": "cold-start",
    "unexplained_idle": "idle-window",
}
CPU_BLAME_BOUNDS = {
    "cpu_gemm_conv": "cpu-compute", "cpu_other_ops": "cpu-compute", "framework_overhead": "cpu-overhead",
    "cpu_communication": "communication", "dataload": "dataloader", "unexplained_idle": "idle-window",
}
# What each cause means, for the reason.
CAUSE_WORDS = {
    "gemm_conv": "device busy in GEMM/convolution kernels", "attention": "device busy in attention kernels",
    "device_other": "device busy in other kernels", "memory_bound": "device busy in elementwise/layout/norm/"
    "reduce/optimizer kernels", "communication": "device busy in collectives no compute overlapped",
    "memcpy_memset": "device busy in copies/memsets no kernel overlapped",
    "sync_bubble": "device idle while the host blocked in a sync or a blocking copy to pageable memory",
    "launching": "device idle while the host was busy launching work",
    "dataload": "device idle while the step waited for data",
    "cpu_work": "device idle while the host ran CPU work that launches nothing (preprocessing, Python, CPU ops)",
    "allocator": "device idle while the host was in cudaMalloc/cudaFree",
    "module_loading": "device idle while the host loaded modules (lazy loading on a kernel's first launch)",
    "unexplained_idle": "nothing recorded on the device or the host",
    "cpu_gemm_conv": "CPU executing conv/matmul ops", "cpu_other_ops": "CPU executing other ops",
    "framework_overhead": "framework and Python overhead around the ops",
    "cpu_communication": "collectives on the host",
}
BLAME_ADVICE = {
    "gpu-compute": "use AMP (bf16/fp16) so GEMMs run on Tensor Cores, channels_last, or a smaller model/--imgsz",
    "gpu-memory": "fuse elementwise ops (torch.compile), avoid layout copies (channels_last), use fused optimizers",
    "communication": "overlap communication with compute (bucket sizes), or reduce what is exchanged",
    "transfer": "use pinned memory with non_blocking copies, or keep the data on the device",
    "sync": "remove .item()/.cpu()/.to('cpu') and prints of device tensors inside the step (copies to pageable "
            "memory block too), or defer them to the end of the step",
    "host-launch": "launch fewer, larger kernels: bigger --batch, CUDA graphs, torch.compile, fused optimizers",
    "dataloader": "raise --workers, enable pin_memory/persistent workers, or make decoding/augmentation cheaper",
    "host-cpu": "move the CPU work out of the step or onto the device (preprocess on the GPU, fewer Python ops)",
    "preprocess": "decode and letterbox fewer pixels (smaller --imgsz), or batch preprocessing",
    "postprocess": "raise --conf or lower --max-det so NMS sees fewer candidates",
    "cold-start": "warm up first (more --warmup iterations, so modules load and the allocator caches before the "
                  "window), then profile more steps: a cold start is not the steady state",
    "idle-window": "profile more steps of steady-state work (more --warmup, a window around the real work): most "
                   "of this window records nothing on the device or the host",
    "cpu-compute": "use a smaller model or --imgsz, more threads, or a GPU",
    "cpu-overhead": "batch more work per op (larger --batch), torch.compile, or fewer small ops",
}


def _f(value, digits=1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def decide(m: dict, kind: str, on_gpu: bool, thrashing: str | None, unusable: str | None = None) -> dict:
    """The verdict for one profile's metrics: {bound, reason, next_step, evidence}. `unusable`: why
    the trace's times cannot be trusted at all (then no rule can judge them)."""
    t = THRESHOLDS

    def verdict(bound, reason, next_step, *evidence):
        return {"bound": bound, "reason": reason, "next_step": next_step,
                "evidence": {name: m.get(name) for name in evidence}}

    if unusable:
        return verdict("unknown", unusable, "profile again: the trace's durations were lost or corrupted "
                       "(a killed or buggy profiler, or a tool that rewrote the trace)", "step_ms")
    if thrashing:
        return verdict("memory-pressure", f"device memory thrashed in the window: {thrashing}",
                       "lower --batch or --imgsz until the allocator stops retrying; utilization and throughput "
                       "measured under thrashing cannot be trusted", "peak_vram_mb")
    blame = blame_shares(m, on_gpu)
    if blame:
        return _from_blame(m, kind, on_gpu, blame)
    if kind == "train" and (m.get("dataload_pct") or 0) >= t["dataload_pct"]:
        return verdict("dataloader", f"waiting for data takes {_f(m['dataload_pct'])}% of each step "
                       f"({_f(m.get('dataload_ms'), 2)} of {_f(m['step_ms'], 2)} ms; threshold {t['dataload_pct']:.0f}%)",
                       "raise --workers, enable pin_memory/persistent workers, or make augmentation cheaper",
                       "dataload_pct", "dataload_ms", "step_ms")
    if kind == "train" and (m.get("to_device_pct") or 0) >= t["to_device_pct"]:
        return verdict("transfer", f"copying batches to the device takes {_f(m['to_device_pct'])}% of each step "
                       f"({_f(m.get('to_device_ms'), 2)} ms; threshold {t['to_device_pct']:.0f}%)",
                       "use pinned memory with non_blocking copies, or move augmentation onto the device",
                       "to_device_pct", "to_device_ms", "step_ms")
    if (m.get("sync_pct") or 0) >= t["sync_pct"]:
        return verdict("sync", f"the host is blocked in synchronizing calls for {_f(m['sync_pct'])}% of each step "
                       f"({_f(m.get('sync_ms'), 2)} ms; threshold {t['sync_pct']:.0f}%)",
                       "remove .item()/.cpu()/print of device tensors inside the step, or defer them",
                       "sync_pct", "sync_ms", "step_ms")
    if (m.get("communication_pct") or 0) >= t["communication_pct"]:
        return verdict("communication", f"collectives take {_f(m['communication_pct'])}% of kernel time "
                       f"(communication_pct; memcpy/memset excluded; threshold {t['communication_pct']:.0f}%)",
                       "overlap communication with backward (bucket sizes), or reduce what is exchanged",
                       "communication_pct", "gpu_util_pct")
    if kind == "infer":
        for stage in ("preprocess", "postprocess"):
            share = m.get(f"{stage}_pct")
            if share is not None and share >= t["stage_pct"]:
                hint = ("decode and letterbox fewer pixels (smaller --imgsz), or batch preprocessing"
                        if stage == "preprocess" else
                        "raise --conf or lower --max-det so NMS sees fewer candidates")
                return verdict(stage, f"{stage} takes {_f(share)}% of each call's latency "
                               f"({_f(m.get(f'{stage}_ms'), 2)} of {_f(m['step_ms'], 2)} ms; threshold {t['stage_pct']:.0f}%)",
                               hint, f"{stage}_pct", f"{stage}_ms", "step_ms")
    if on_gpu:
        util = m.get("gpu_util_pct") or 0.0
        if util >= t["gpu_util_pct"]:
            if (m.get("gemm_pct") or 0) >= t["gemm_pct"]:
                return verdict("gpu-compute", f"the GPU is busy {_f(util)}% of the window and GEMM/conv kernels take "
                               f"{_f(m.get('gemm_pct'))}% of kernel time (gemm_pct; on Tensor Cores "
                               f"{_f(m.get('tensorcore_pct'))}% of kernel time)",
                               "use AMP (bf16/fp16) so GEMMs run on Tensor Cores, channels_last, or a smaller model/--imgsz",
                               "gpu_util_pct", "gemm_pct", "tensorcore_pct")
            return verdict("gpu-memory", f"the GPU is busy {_f(util)}% of the window but elementwise/layout/norm kernels "
                           f"take {_f(m.get('memory_bound_pct'))}% of kernel time (memory_bound_pct; GEMM only "
                           f"{_f(m.get('gemm_pct'))}%)",
                           "fuse elementwise ops (torch.compile), avoid layout copies (channels_last), use fused optimizers",
                           "gpu_util_pct", "memory_bound_pct", "gemm_pct")
        return verdict("host-launch", f"the GPU is busy only {_f(util)}% of the window (threshold {t['gpu_util_pct']:.0f}%): "
                       f"it waited {_f(m.get('host_overhead_ms'), 2)} ms per step for the host, which issued "
                       f"{_f(m.get('launches_per_step'), 0)} launches at {_f(m.get('per_launch_host_us'))} µs each "
                       f"and was blocked in sync only {_f(m.get('sync_pct'))}% of the step",
                       "launch fewer, larger kernels: bigger --batch, CUDA graphs, torch.compile, fused optimizers",
                       "gpu_util_pct", "host_overhead_ms", "launches_per_step", "per_launch_host_us", "sync_pct")
    leaf = m.get("leaf_busy_pct")
    if leaf is not None and leaf >= t["leaf_busy_pct"]:
        return verdict("cpu-compute", f"leaf ops execute {_f(leaf)}% of each step on the CPU "
                       f"(threshold {t['leaf_busy_pct']:.0f}%): the arithmetic itself is the cost",
                       "use a smaller model or --imgsz, more threads, or a GPU", "leaf_busy_pct", "step_ms")
    if leaf is None:
        return verdict("unknown", "the trace records no framework ops inside its steps, so neither CPU compute "
                       "nor overhead can be told apart", "profile with CPU activity recorded", "step_ms")
    return verdict("cpu-overhead", f"leaf ops execute only {_f(leaf)}% of each step on the CPU; "
                   f"{_f(m.get('host_overhead_ms'), 2)} ms per step ({_f(m.get('host_overhead_pct'))}%) is framework "
                   f"and Python time around {_f(m.get('launches_per_step'), 0)} dispatched ops",
                   "batch more work per op (larger --batch), torch.compile, or fewer small ops",
                   "leaf_busy_pct", "host_overhead_ms", "launches_per_step")


def blame_shares(m: dict, on_gpu: bool) -> dict[str, float]:
    """cause → its share of the steps' wall time, %, for the causes with time; empty where the profile
    has no blame (built-in imports write an empty blame table, so every blame metric is null or 0)."""
    causes = GPU_BLAME_BOUNDS if on_gpu else CPU_BLAME_BOUNDS
    shares = {cause: m.get(f"blame_{cause}_pct") for cause in causes}
    return {cause: share for cause, share in shares.items() if share}


DEVICE_CAUSES = ("gemm_conv", "attention", "memory_bound", "device_other", "communication", "memcpy_memset")
DEVICE_WORK_BOUNDS = {"gpu-compute", "gpu-memory"}  # the device's own kernels: the bottleneck only when it is busy
DIRECT_BOUNDS = {"host-launch", "gpu-compute", "gpu-memory", "cpu-compute", "cpu-overhead"}  # what-if models these


def blame_bottleneck(m: dict, kind: str, on_gpu: bool, bound: str) -> tuple[float | None, float | None]:
    """For what-if: (the blame share of the verdict's causes, the device-busy share), % of the step;
    (None, None) without a blame. The first is None for a verdict what-if models directly."""
    blame = blame_shares(m, on_gpu)
    if not blame:
        return None, None
    device = sum(blame.get(c, 0.0) for c in DEVICE_CAUSES)
    if bound in DIRECT_BOUNDS:
        return None, device
    return sum(s for c, s in blame.items() if _blame_bound(c, kind, on_gpu, m) == bound), device


def _blame_bound(cause: str, kind: str, on_gpu: bool, m: dict) -> str:
    bound = (GPU_BLAME_BOUNDS if on_gpu else CPU_BLAME_BOUNDS)[cause]
    if bound == "host-cpu" and kind == "infer":
        # the host's CPU work in an inference call is its pre/postprocessing when a stage dominates
        for stage in ("preprocess", "postprocess"):
            if (m.get(f"{stage}_pct") or 0) >= THRESHOLDS["stage_pct"]:
                return stage
    return bound


def _from_blame(m: dict, kind: str, on_gpu: bool, blame: dict[str, float]) -> dict:
    """The verdict whose causes hold the largest share of the steps' wall time (SPEC §11)."""
    by_bound: dict[str, list[str]] = {}
    for cause in sorted(blame, key=blame.get, reverse=True):
        by_bound.setdefault(_blame_bound(cause, kind, on_gpu, m), []).append(cause)
    total = {bound: sum(blame[c] for c in causes) for bound, causes in by_bound.items()}
    ranked = sorted(total, key=total.get, reverse=True)
    device_busy = sum(blame.get(c, 0.0) for c in DEVICE_CAUSES)
    idle_ranked = [b for b in ranked if b not in DEVICE_WORK_BOUNDS]
    idle_first = on_gpu and device_busy < THRESHOLDS["gpu_util_pct"] and bool(idle_ranked)
    if idle_first:
        # Below the utilization threshold the device's own kernels are not what holds the step back: they
        # would run as they do on a busy device. The verdict names why the device sat idle (SPEC §5's
        # "< 80% util" branch), and the compute share stays in the reason as the runner-up.
        ranked = idle_ranked + [b for b in ranked if b in DEVICE_WORK_BOUNDS]
    bound, step_ms = ranked[0], m.get("step_ms")

    def quoted(causes: list[str]) -> str:
        causes = [c for c in causes if blame[c] >= 0.05] or causes[:1]  # a share that rounds to 0.0% says nothing
        return " + ".join(f"{c} {_f(blame[c])}% ({_ms(blame[c], step_ms)} ms: {CAUSE_WORDS[c]})" for c in causes)

    lead = (f"the device is busy {_f(device_busy)}% of each step (under {THRESHOLDS['gpu_util_pct']:.0f}%), and the "
            "largest cause of its idle time is " if idle_first else "the largest share of each step's wall time is ")
    reason = (lead + quoted(by_bound[bound])
              + (f" of a {_f(step_ms, 2)} ms step" if step_ms is not None else ""))
    if len(ranked) > 1:
        runner_up = ranked[1]
        shown = [c for c in by_bound[runner_up] if blame[c] >= 0.05] or by_bound[runner_up][:1]
        reason += f"; next {runner_up}: {' + '.join(f'{c} {_f(blame[c])}%' for c in shown)}"
    if on_gpu and m.get("gpu_util_pct") is not None:
        reason += f"; GPU busy {_f(m['gpu_util_pct'])}% of the window"
    reason += (" (decided from the per-step blame, sql/blame.sql: the verdict whose causes take the most time wins; "
               f"below {THRESHOLDS['gpu_util_pct']:.0f}% device-busy, among the causes of device idle time)")
    evidence = [f"blame_{c}_pct" for causes in (by_bound[b] for b in ranked[:2]) for c in causes]
    return {"bound": bound, "reason": reason, "next_step": BLAME_ADVICE[bound],
            "evidence": {name: m.get(name) for name in (*evidence, "step_ms", "gpu_util_pct") if name in m}}


def _ms(share: float, step_ms) -> str:
    return "n/a" if step_ms is None else f"{share * step_ms / 100:.2f}"
