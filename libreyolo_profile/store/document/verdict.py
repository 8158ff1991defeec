"""The bottleneck verdict (SPEC §5, §11): decided from the per-step blame (sql/blame.sql) where the
profile has one — the verdict whose causes hold the most of the steps' wall time wins, and its reason
quotes that share in % and ms. Profiles without a blame (built-in imports) keep SPEC §5's ordered rules
(threshold_verdict.py, where every threshold lives in THRESHOLDS)."""

from __future__ import annotations

from libreyolo_profile.metric_catalog import measured_unit
from libreyolo_profile.store.document.threshold_verdict import THRESHOLDS, cpu_rule, gpu_rule, host_rule, verdict
from libreyolo_profile.store.document.threshold_verdict import fmt as _f

# Blame cause → the verdict it supports (sql/blame.sql defines the causes). Several causes may support
# one verdict (allocator and module loading are both a cold start); their shares add up.
GPU_BLAME_BOUNDS = {
    "gemm_conv": "gpu-compute",
    "attention": "gpu-compute",
    "device_other": "gpu-compute",
    "memory_bound": "gpu-memory",
    "communication": "communication",
    "memcpy_memset": "transfer",
    "sync_bubble": "sync",
    "launching": "host-launch",
    "dataload": "dataloader",
    "cpu_work": "host-cpu",
    "python": "host-cpu",
    "preprocess": "preprocess",
    "allocator": "cold-start",
    "module_loading": "cold-start",
    "startup": "cold-start",
    "unexplained_idle": "idle-window",
}
CPU_BLAME_BOUNDS = {
    "cpu_gemm_conv": "cpu-compute",
    "cpu_other_ops": "cpu-compute",
    "framework_overhead": "cpu-overhead",
    "cpu_communication": "communication",
    "dataload": "dataloader",
    "python": "cpu-overhead",
    "unexplained_idle": "idle-window",
}
# What each cause means, for the reason.
CAUSE_WORDS = {
    "gemm_conv": "device busy in GEMM/convolution kernels",
    "attention": "device busy in attention kernels",
    "device_other": "device busy in other kernels",
    "memory_bound": "device busy in elementwise/layout/norm/reduce/optimizer kernels",
    "communication": "device busy in collectives no compute overlapped",
    "memcpy_memset": "device busy in copies/memsets no kernel overlapped",
    "sync_bubble": "device idle while the host blocked in a sync or a copy with pageable memory",
    "launching": "device idle while the host was busy launching work",
    "dataload": "device idle while the step waited for data",
    "cpu_work": "device idle while the host ran ops or runtime calls that launch nothing",
    "python": "host running recorded Python (frames or host ranges) between ops",
    "preprocess": "device idle while the host preprocessed the input (before the call's first launch)",
    "startup": "device idle while the host created streams, events, contexts or library handles",
    "allocator": "device idle while the host was in cudaMalloc/cudaFree",
    "module_loading": "device idle while the host loaded modules (lazy loading on a kernel's first launch)",
    "unexplained_idle": "nothing at all recorded on any host thread or the device",
    "cpu_gemm_conv": "CPU executing conv/matmul ops",
    "cpu_other_ops": "CPU executing other ops",
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


def decide(m: dict, kind: str, on_gpu: bool, thrashing: str | None, unusable: str | None = None) -> dict:
    """The verdict for one profile's metrics: {bound, reason, next_step, evidence}. `unusable`: why
    the trace's times cannot be trusted at all (then no rule can judge them)."""
    if unusable:
        return verdict(
            m,
            "unknown",
            unusable,
            "profile again: the trace's durations were lost or corrupted "
            "(a killed or buggy profiler, or a tool that rewrote the trace)",
            "step_ms",
        )
    if thrashing:
        return verdict(
            m,
            "memory-pressure",
            f"device memory thrashed in the window: {thrashing}",
            "lower --batch or --imgsz until the allocator stops retrying; utilization and throughput "
            "measured under thrashing cannot be trusted",
            "peak_vram_mb",
        )
    blame = blame_shares(m, on_gpu)
    if blame:
        return _from_blame(m, kind, on_gpu, blame)
    # no blame (a built-in import): SPEC §5's threshold rules on its metrics (threshold_verdict.py)
    return host_rule(m, kind) or (gpu_rule(m) if on_gpu else cpu_rule(m))


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
    # the ms of a share are of the blame's own (profiled) step, never the headline's unprofiled one
    bound, step_ms = ranked[0], m.get("blame_step_ms") or m.get("profiled_step_ms") or m.get("step_ms")

    holders = blame_holders(m)
    unit = measured_unit(kind)

    def quoted(causes: list[str]) -> str:
        causes = [c for c in causes if blame[c] >= 0.05] or causes[:1]  # a share that rounds to 0.0% says nothing
        return " + ".join(
            f"{c} {_f(blame[c])}% ({_ms(blame[c], step_ms)} ms: {CAUSE_WORDS[c]}{_held_by(holders.get(c), unit)})"
            for c in causes
        )

    lead = (
        # the blame's device causes over the profiled steps: a whole of its own, not gpu_util_pct's window
        f"device work holds {_f(device_busy)}% of each profiled {unit} (blame_device_busy_pct, under "
        f"{THRESHOLDS['gpu_util_pct']:.0f}%), and the largest cause of its idle time is "
        if idle_first
        else f"the largest share of each profiled {unit}'s wall time is "
    )
    reason = (
        lead + quoted(by_bound[bound]) + (f" of a {_f(step_ms, 2)} ms profiled {unit}" if step_ms is not None else "")
    )
    if len(ranked) > 1:
        runner_up = ranked[1]
        shown = [c for c in by_bound[runner_up] if blame[c] >= 0.05] or by_bound[runner_up][:1]
        reason += f"; next {runner_up}: {' + '.join(f'{c} {_f(blame[c])}%' for c in shown)}"
    evidence = [f"blame_{c}_pct" for causes in (by_bound[b] for b in ranked[:2]) for c in causes]
    next_step, finding = _next_step(m, bound, by_bound[bound], blame, step_ms, holders, unit)
    figures = {name: m.get(name) for name in (*evidence, "step_ms", "blame_step_ms", "gpu_util_pct") if name in m}
    if on_gpu:
        figures["blame_device_busy_pct"] = device_busy
    if finding:
        figures["advice_rule"] = finding["rule"]
        figures["advice_evidence"] = finding["evidence"]
        figures["advice_saving_ms"] = finding["saving_ms"]
    # how it was decided lives here and in the docs, not in the sentence the terminal shows
    return {"bound": bound, "reason": reason, "next_step": next_step, "evidence": figures, "method": BLAME_METHOD}


BLAME_METHOD = (
    "decided from the per-step blame (sql/blame.sql) of the profiled steps: the verdict whose causes take the "
    f"most time wins; below {THRESHOLDS['gpu_util_pct']:.0f}% device-busy, among the causes of device idle time"
)


def advice_findings(m: dict) -> list[dict]:
    """The advice rules this profile's evidence fired (sql/advice.sql), largest saving first."""
    raw = m.get("advice")
    if isinstance(raw, str):
        import json

        raw = json.loads(raw)
    return raw if isinstance(raw, list) else []


def _next_step(
    m: dict, bound: str, causes: list[str], blame: dict, step_ms, holders: dict, unit: str = "step"
) -> tuple[str, dict | None]:
    """The verdict's next step from this profile's evidence: the fired advice rule of its bound with the
    largest saving (its trigger and the saving quoted), else the bound's advice with what triggered it —
    the blamed causes and what held them."""
    fired = [f for f in advice_findings(m) if bound in f["bounds"].split(",")]
    if fired:
        f = fired[0]
        saving = (
            ""
            if f["saving_ms"] is None
            else f"; projected saving at most {f['saving_ms']:.2f} ms per profiled {unit} "
            f"({_f(f['saving_pct'])}% of it: {f.get('saving_basis') or f'the time that work held the {unit}'})"
        )
        return f"{f['advice']} — because {f['evidence']}{saving}", f
    top = max(causes, key=blame.get)
    held = holders.get(top)
    trigger = f"{top} {_f(blame[top])}% of the profiled {unit} ({_ms(blame[top], step_ms)} ms)"
    if held and held.get("name"):
        trigger += f", most of it in `{held['name']}` ({held['ms_per_step']:.2f} ms per {unit})"
    return f"{BLAME_ADVICE[bound]} — because {trigger}", None


def blame_holders(m: dict) -> dict[str, dict]:
    """cause → {name, ms_per_step, of_cause_pct}: what held most of a host cause's time (sql/blame.sql
    blame_holders, through the blame_holders metric column); empty where the profile has none."""
    raw = m.get("blame_holders")
    if isinstance(raw, str):
        import json

        raw = json.loads(raw)
    return raw if isinstance(raw, dict) else {}


def _held_by(holder: dict | None, unit: str = "step") -> str:
    if not holder or not holder.get("name"):
        return ""
    return (
        f"; most of it in `{holder['name']}`, {holder['ms_per_step']:.2f} ms per {unit} "
        f"({_f(holder['of_cause_pct'])}% of the cause)"
    )


def _ms(share: float, step_ms) -> str:
    return "n/a" if step_ms is None else f"{share * step_ms / 100:.2f}"
