"""An independent per-step blame over the raw trace events: plain Python over json/gzip, written from
the rules in sql/blame.sql's header without any product code or SQL, for tests/test_blame.py.

The rules, restated: a step runs from its ProfilerStep's host start to the later of its host end and
the end of the device work launched inside it, never past the next step's start. Each instant of it
takes the cause of the highest-priority (lowest number) interval covering it; no interval: unexplained.
"""

from __future__ import annotations

import bisect
import gzip
import json
import re
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

PRIORITY = {"gemm_conv": 1, "attention": 2, "memory_bound": 3, "device_other": 4, "communication": 5,
            "memcpy_memset": 6, "sync_bubble": 10, "module_loading": 11, "allocator": 12, "dataload": 13,
            "launching": 14, "cpu_work": 15, "cpu_gemm_conv": 21, "cpu_other_ops": 22, "cpu_communication": 23,
            "framework_overhead": 24}
UNEXPLAINED = "unexplained_idle"

# CUDA / HIP runtime and driver API names, by what the call does to the host
KERNEL_LAUNCHES = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel",
                   "cudaLaunchCooperativeKernelMultiDevice", "cuLaunchKernel", "cuLaunchKernelEx",
                   "cuLaunchCooperativeKernel", "hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel",
                   "hipExtModuleLaunchKernel", "hipLaunchCooperativeKernel", "hipHccModuleLaunchKernel"}
OTHER_LAUNCHES = {"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch",
                  "cudaMemsetAsync", "cuMemsetD8Async", "cuMemsetD32Async", "hipMemsetAsync", "hipMemsetD32Async"}
ASYNC_COPIES = {"cudaMemcpyAsync", "cudaMemcpy2DAsync", "cudaMemcpyPeerAsync", "cuMemcpyAsync", "cuMemcpyHtoDAsync_v2",
                "cuMemcpyDtoHAsync_v2", "hipMemcpyAsync", "hipMemcpy2DAsync", "hipMemcpyPeerAsync"}
LAUNCHES = KERNEL_LAUNCHES | OTHER_LAUNCHES | ASYNC_COPIES
BLOCKING = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpy2D",
            "cudaMemcpyPeer", "cudaMemset", "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
            "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2", "hipDeviceSynchronize", "hipStreamSynchronize",
            "hipEventSynchronize", "hipMemcpy", "hipMemcpyWithStream", "hipMemset"}
ALLOCATOR = {"cudaMalloc", "cudaMallocAsync", "cuMemAlloc_v2", "hipMalloc", "hipExtMallocWithFlags",
             "cudaFree", "cudaFreeAsync", "cuMemFree_v2", "hipFree"}
RUNTIME_CATS = {"cuda_runtime", "runtime", "cuda_driver", "hip_runtime", "hip_driver", "privateuse1_runtime",
                "xpu_runtime", "mtia_runtime"}

# kernel name → blame group, first match wins (the order of the category rules: collectives, optimizer,
# sort, GEMM engines, norm, layout, other GEMM names, reduce, elementwise)
_KERNEL_GROUPS = [
    ("communication", r"(nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv)"),
    ("memory_bound", r"(multi_tensor_apply|fused_?adam|adamw?_|fused_?sgd|sgd_?kernel|lamb_|_foreach_)"),
    ("device_other", r"(nms|radix_?sort|sort_?kernel|segmented_?sort|devicesort|bitonic|topk|mbtopk|gathertopk)"),
    ("gemm", r"(gemm|xmma|nvjet|wgmma|cutlass|fprop|dgrad|wgrad|implicit_?convolve|winograd|scudnn|cijk_|fmha|flash_)"),
    ("memory_bound", r"(batch_?norm|layer_?norm|group_?norm|instance_?norm|rms_?norm|bn_fw|bn_bw|welford|cudnn::bn_|normalization)"),
    ("memory_bound", r"(nchwtonhwc|nhwctonchw|transpose|permute|catarray|cat_?kernel|direct_copy|copy_?kernel|_copy|copy_|im2col"
                     r"|col2im|vol2col|reflection_?pad|replication_?pad|constant_?pad|pad_?kernel|converttensor|unfold|index_?select"
                     r"|indexselect|index_?put|gather_?kernel|scatter_?kernel|scatter_gather)"),
    ("gemm", r"(gemm|gemv|conv|cutlass|xmma|nvjet|wgmma|gmma|hmma|h884|s884|h1688|s1688|i8816|16816|161616|fprop|dgrad"
             r"|wgrad|winograd|fft|implicit_?convolve|cask_cudnn|scudnn|cudnn|cublas|cijk_|fmha|flash|attention|bmm|matmul"
             r"|dot_?kernel|splitkreduce)"),
    ("memory_bound", r"(reduce|pool|softmax|argmax|argmin|cross_?entropy|nll_?loss|cumsum|cumprod|_sum_|_mean_|norm_?kernel)"),
    ("memory_bound", r"(elementwise|vectorized|unrolled|pointwise|functor|activation|relu|silu|sigmoid|gelu|tanh|_add|_mul"
                     r"|_div|fill|where|clamp|dropout|threshold|distribution|triton_poi|triton_)"),
]
_KERNEL_GROUPS = [(group, re.compile(pattern, re.IGNORECASE)) for group, pattern in _KERNEL_GROUPS]
_ATTENTION = re.compile(r"(fmha|flash|attention|attn|sdpa)", re.IGNORECASE)
_TO_PAGEABLE = re.compile(r"->\s*pageable", re.IGNORECASE)
_LOADING = re.compile(r"(module|culibrary|getfunc)", re.IGNORECASE)
_CPU_COLLECTIVE = re.compile(r"(gloo|c10d|nccl|all_?reduce|all_?gather|reduce_?scatter|broadcast|barrier"
                             r"|record_param_comms|alltoall)", re.IGNORECASE)
_CPU_GEMM = re.compile(r"(conv|mm|matmul|linear|einsum)", re.IGNORECASE)
_PHASE_MARK = re.compile(r"^##\s*([A-Za-z_]+)\s*##$")
_ANNOTATION_NAMES = re.compile(r"^(ProfilerStep#|enumerate\(DataLoader\)#|Optimizer\..*#)|^##.*##$")
LOADING_LAUNCH_NS = 1_000_000


def kernel_group(name: str) -> str:
    group = next((g for g, pattern in _KERNEL_GROUPS if pattern.search(name)), "device_other")
    if group == "gemm":
        return "attention" if _ATTENTION.search(name) else "gemm_conv"
    return group


def _ns(value) -> int:
    return int((Decimal(str(value)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _kind(e: dict) -> str:
    cat, name = (e.get("cat") or "").lower(), e.get("name") or ""
    if cat == "kernel":
        return "kernel"
    if cat in ("gpu_memcpy", "memcpy", "gpu_memset", "memset"):
        return "copy"
    if cat in RUNTIME_CATS:
        return "runtime"
    if name == "[memory]" or e.get("ph") != "X":
        return "other"
    if cat == "user_annotation" or (cat in ("cpu_op", "operator") and _ANNOTATION_NAMES.search(name)):
        return "annotation"
    return "op" if cat in ("cpu_op", "operator") else "other"


def load_events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        raw = json.load(handle, parse_float=Decimal)["traceEvents"]
    timed = [e for e in raw if isinstance(e, dict) and e.get("ts") is not None]
    origin = min(_ns(e["ts"]) for e in timed)
    events = []
    for e in timed:
        args = e.get("args") or {}
        correlation = args.get("correlation")
        events.append({"kind": _kind(e), "name": e.get("name") or "", "pid": e.get("pid"), "tid": e.get("tid"),
                       "ts": _ns(e["ts"]) - origin, "dur": max(_ns(e.get("dur", 0) or 0), 0),
                       "correlation": int(correlation) if correlation not in (None, "") else None})
    return events


def _steps(events: list[dict]) -> list[tuple[int, int]]:
    marked = sorted({(e["ts"], e["dur"]) for e in events
                     if e["kind"] == "annotation" and e["name"].startswith("ProfilerStep#")})
    if marked:
        return [(ts, ts + dur) for ts, dur in marked]
    device = [e for e in events if e["kind"] in ("kernel", "copy")]
    host = [e for e in events if e["kind"] in ("op", "annotation", "runtime")]
    span = device or host
    return [(min(e["ts"] for e in span), max(e["ts"] + e["dur"] for e in span))]


def _op_executes(ops: list[dict]) -> dict[int, bool]:
    """Per op (by id), whether it spends at least half its time in itself (leaves always do)."""
    child_ns: dict[int, int] = defaultdict(int)
    has_child: set[int] = set()
    by_thread = defaultdict(list)
    for o in ops:
        by_thread[(o["pid"], o["tid"])].append(o)
    for thread_ops in by_thread.values():
        stack: list[dict] = []
        for o in sorted(thread_ops, key=lambda o: (o["ts"], -o["dur"])):
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= o["ts"]:  # ended before this one began
                stack.pop()
            if stack:
                child_ns[id(stack[-1])] += o["dur"]
                has_child.add(id(stack[-1]))
            stack.append(o)
    return {id(o): id(o) not in has_child or 2 * (o["dur"] - child_ns[id(o)]) >= o["dur"] for o in ops}


def blame(path: Path) -> dict[int, dict]:
    """{step: {"wall_ns": int, "causes": {cause: ns}}} for the trace at `path`."""
    events = load_events(path)
    steps = _steps(events)
    runtime = [e for e in events if e["kind"] == "runtime"]
    device = [e for e in events if e["kind"] in ("kernel", "copy")]
    ops = [e for e in events if e["kind"] == "op"]
    on_gpu = bool(device)

    launch_ts: dict[int, int] = {}
    for r in runtime:
        if r["correlation"]:
            launch_ts[r["correlation"]] = min(launch_ts.get(r["correlation"], r["ts"]), r["ts"])

    def step_of(t: int | None) -> int | None:
        if t is None:
            return None
        return next((n for n, (s, e) in enumerate(steps, 1) if s <= t < e), None)

    windows = {}
    for n, (start, host_end) in enumerate(steps, 1):
        ends = [d["ts"] + d["dur"] for d in device if step_of(launch_ts.get(d["correlation"])) == n]
        work_end = max([host_end, *ends])
        next_start = steps[n][0] if n < len(steps) else work_end
        windows[n] = (start, max(start, min(work_end, next_start)))

    intervals: list[tuple[int, int, str]] = []
    phases = []
    for e in events:
        if e["kind"] != "annotation":
            continue
        mark = _PHASE_MARK.match(e["name"])
        phase = mark.group(1).lower() if mark else ("dataload" if e["name"].startswith("enumerate(DataLoader)#") else None)
        if phase == "dataload" or (on_gpu and phase in ("preprocess", "postprocess")):
            phases.append((e["ts"], e["ts"] + e["dur"], "dataload" if phase == "dataload" else "cpu_work"))
    intervals += phases
    launches_by_thread = defaultdict(list)
    for r in runtime:
        if r["name"] in LAUNCHES:
            launches_by_thread[(r["pid"], r["tid"])].append(r["ts"])
    for times in launches_by_thread.values():
        times.sort()

    def launches_inside(o: dict) -> int:
        times = launches_by_thread.get((o["pid"], o["tid"]), [])
        return bisect.bisect_left(times, o["ts"] + o["dur"]) - bisect.bisect_left(times, o["ts"])

    if on_gpu:
        pageable = {d["correlation"] for d in device if d["correlation"] is not None and _TO_PAGEABLE.search(d["name"])}
        first_runs: dict[str, tuple[int, int]] = {}
        for d in device:
            if d["kind"] == "kernel" and d["correlation"] in launch_ts:
                candidate = (launch_ts[d["correlation"]], d["correlation"])
                first_runs[d["name"]] = min(first_runs.get(d["name"], candidate), candidate)
        first_launches = {c for _, c in first_runs.values()}
        for d in device:
            cause = "memcpy_memset" if d["kind"] == "copy" else kernel_group(d["name"])
            intervals.append((d["ts"], d["ts"] + d["dur"], cause))
        for r in runtime:
            if r["name"] in BLOCKING or (r["name"] in ASYNC_COPIES and r["correlation"] in pageable):
                cause = "sync_bubble"
            elif _LOADING.search(r["name"]) or (r["name"] in KERNEL_LAUNCHES and r["dur"] >= LOADING_LAUNCH_NS
                                                and r["correlation"] in first_launches):
                cause = "module_loading"
            elif r["name"] in ALLOCATOR:
                cause = "allocator"
            elif r["name"] in LAUNCHES:
                cause = "launching"
            else:
                cause = "cpu_work"
            intervals.append((r["ts"], r["ts"] + r["dur"], cause))
        for o in ops:
            intervals.append((o["ts"], o["ts"] + o["dur"], "launching" if launches_inside(o) else "cpu_work"))
    else:
        executes = _op_executes(ops)
        for o in ops:
            if not executes[id(o)]:
                cause = "framework_overhead"
            elif _CPU_COLLECTIVE.search(o["name"]):
                cause = "cpu_communication"
            elif _CPU_GEMM.search(o["name"]):
                cause = "cpu_gemm_conv"
            else:
                cause = "cpu_other_ops"
            intervals.append((o["ts"], o["ts"] + o["dur"], cause))
        intervals += [(e["ts"], e["ts"] + e["dur"], "cpu_communication") for e in events
                      if e["kind"] == "annotation" and _CPU_COLLECTIVE.search(e["name"])]
    return {n: _sweep(start, end, intervals) for n, (start, end) in windows.items()}


def _sweep(start: int, end: int, intervals: list[tuple[int, int, str]]) -> dict:
    """Walk the step's instants in time order, keeping how many intervals of each priority are open."""
    edges = []
    for s, e, cause in intervals:
        s, e = max(s, start), min(e, end)
        if e > s:
            edges += [(s, 1, PRIORITY[cause]), (e, -1, PRIORITY[cause])]
    edges.sort()
    open_count: dict[int, int] = defaultdict(int)
    name_of = {p: c for c, p in PRIORITY.items()}
    causes: dict[str, int] = defaultdict(int)
    at = start
    for t, delta, priority in [*edges, (end, 0, 0)]:
        if t > at:
            active = [p for p, count in open_count.items() if count > 0]
            causes[name_of[min(active)] if active else UNEXPLAINED] += t - at
            at = t
        open_count[priority] += delta
    return {"wall_ns": end - start, "causes": dict(causes)}
