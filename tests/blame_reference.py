"""An independent per-step blame over the raw trace events: plain Python over json/gzip, written from
the rules in sql/blame.sql's header without any product code or SQL, for tests/test_blame.py.

The rules, restated: a step runs from its ProfilerStep's host start to the later of its host end and
the end of the device work launched inside it, never past the next step's start; with several steps the
last one ends with its host end, less a closing stretch of nothing but waits beyond what the other steps have at
their close. A ProfilerStep inside which nothing starts is no step. Each instant of it
takes the cause of the highest-priority (lowest number) interval covering it; no interval: unexplained.
"""

from __future__ import annotations

import bisect
import functools
import gzip
import json
import math
import re
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from libreyolo_profile.store.decode.events import ROOFLINE_SHAPED_OPS  # which op names keep their shapes

PRIORITY = {
    "gemm_conv": 1,
    "attention": 2,
    "memory_bound": 3,
    "device_other": 4,
    "communication": 5,
    "memcpy_memset": 6,
    "sync_bubble": 10,
    "startup": 11,
    "module_loading": 12,
    "allocator": 13,
    "dataload": 14,
    "launching": 15,
    "preprocess": 16,
    "cpu_work": 17,
    "cpu_gemm_conv": 21,
    "cpu_other_ops": 22,
    "cpu_communication": 23,
    "framework_overhead": 24,
    "python": 25,
}
UNEXPLAINED = "unexplained_idle"

# CUDA / HIP runtime and driver API names, by what the call does to the host
KERNEL_LAUNCHES = {
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cudaLaunchCooperativeKernel",
    "cudaLaunchCooperativeKernelMultiDevice",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cuLaunchCooperativeKernel",
    "hipLaunchKernel",
    "hipExtLaunchKernel",
    "hipModuleLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipLaunchCooperativeKernel",
    "hipHccModuleLaunchKernel",
}
OTHER_LAUNCHES = {
    "cudaGraphLaunch",
    "cuGraphLaunch",
    "hipGraphLaunch",
    "cudaMemsetAsync",
    "cuMemsetD8Async",
    "cuMemsetD32Async",
    "hipMemsetAsync",
    "hipMemsetD32Async",
}
ASYNC_COPIES = {
    "cudaMemcpyAsync",
    "cudaMemcpy2DAsync",
    "cudaMemcpyPeerAsync",
    "cuMemcpyAsync",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "hipMemcpyAsync",
    "hipMemcpy2DAsync",
    "hipMemcpyPeerAsync",
}
LAUNCHES = KERNEL_LAUNCHES | OTHER_LAUNCHES | ASYNC_COPIES
BLOCKING = {
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cudaMemcpy",
    "cudaMemcpy2D",
    "cudaMemcpyPeer",
    "cudaMemset",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuEventSynchronize",
    "cuMemcpyDtoH_v2",
    "cuMemcpyHtoD_v2",
    "hipDeviceSynchronize",
    "hipStreamSynchronize",
    "hipEventSynchronize",
    "hipMemcpy",
    "hipMemcpyWithStream",
    "hipMemset",
}
ALLOCATOR = {
    "cudaMalloc",
    "cudaMallocAsync",
    "cuMemAlloc_v2",
    "hipMalloc",
    "hipExtMallocWithFlags",
    "cudaFree",
    "cudaFreeAsync",
    "cuMemFree_v2",
    "hipFree",
}
RUNTIME_CATS = {
    "cuda_runtime",
    "runtime",
    "cuda_driver",
    "hip_runtime",
    "hip_driver",
    "privateuse1_runtime",
    "xpu_runtime",
    "mtia_runtime",
}

# kernel name → blame group, first match wins (the order of the category rules): rules on the kernel's own
# function name first (quantize/rotary/bucketize elementwise, permute/reshape_and_cache layout, MoE finalize
# reduce, embedding lookups), then on the name stripped of its namespaces: collectives, optimizer, sort,
# attention, GEMM engines, norm, layout, other GEMM names, reduce, elementwise
_OWN_GROUPS = [
    ("memory_bound", r"(rotary|rope_|quantize|dequant|bucketize|_cast|convert_fp8|scaled_fp8)"),
    ("memory_bound", r"(permute|reshape_and_cache|jagged|transpose|concat)"),
    ("memory_bound", r"(finalize|topk_?gating|moe_?sum)"),
    ("memory_bound", r"(embedding|tbe_|bounds_check_indices|linearize_index|embedding_bag)"),
]
_KERNEL_GROUPS = [
    ("communication", r"(nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv)"),
    ("memory_bound", r"(multi_tensor_apply|fused_?adam|adamw?_|fused_?sgd|sgd_?kernel|lamb_|_foreach_)"),
    ("device_other", r"(nms|radix_?sort|sort_?kernel|segmented_?sort|devicesort|bitonic|topk|mbtopk|gathertopk)"),
    (
        "attention",
        r"(fmha|flash_?fwd|flash_?bwd|flash_?attn|flashattn|flash_?decod|attention|_attn_|sdpa"
        r"|(^|[^a-z0-9_])kernel_mha([^a-z0-9_]|$)|xqa|mha_|mla_|batchprefill|batchdecode|paged_?kv|ragged_?kv)",
    ),
    ("gemm", r"(gemm|xmma|nvjet|wgmma|cutlass|fprop|dgrad|wgrad|implicit_?convolve|winograd|scudnn|cijk_)"),
    (
        "memory_bound",
        r"(batch_?norm|layer_?norm|group_?norm|instance_?norm|rms_?norm|bn_fw|bn_bw|welford|normalization)",
    ),
    (
        "memory_bound",
        r"(nchwtonhwc|nhwctonchw|transpose|permute|catarray|cat_?kernel|direct_copy|copy_?kernel|_copy|copy_|im2col"
        r"|col2im|vol2col|reflection_?pad|replication_?pad|constant_?pad|pad_?kernel|converttensor|unfold|index_?select"
        r"|indexselect|index_?put|gather_?kernel|scatter_?kernel|scatter_gather)",
    ),
    (
        "gemm",
        r"(gemm|gemv|conv|cutlass|xmma|nvjet|wgmma|gmma|hmma|h884|s884|h1688|s1688|i8816|16816|161616|fprop|dgrad"
        r"|wgrad|winograd|fft|implicit_?convolve|cask_cudnn|scudnn|cudnn|cublas|cijk_|bmm|matmul"
        r"|dot_?kernel|splitkreduce)",
    ),
    ("gemm", r"(mfma|xdl|tcgen05)"),
    (
        "memory_bound",
        r"(reduce|pool|softmax|argmax|argmin|cross_?entropy|nll_?loss|cumsum|cumprod|_sum_|_mean_|norm_?kernel"
        r"|devicescan)",
    ),
    (
        "memory_bound",
        r"(elementwise|vectorized|unrolled|pointwise|functor|activation|relu|silu|sigmoid|gelu|tanh|_add|_mul"
        r"|_div|fill|where|clamp|dropout|threshold|distribution|triton_poi|triton_)",
    ),
]
_OWN_GROUPS = [(group, re.compile(pattern, re.IGNORECASE)) for group, pattern in _OWN_GROUPS]
_KERNEL_GROUPS = [(group, re.compile(pattern, re.IGNORECASE)) for group, pattern in _KERNEL_GROUPS]
_LEADING_NAMESPACES = re.compile(r"^\s*(void\s+)?((\(anonymous namespace\)|[A-Za-z_][A-Za-z0-9_]*)::)*")
_GEMM_LIBRARY = re.compile(r"^\s*(void\s+)?(cutlass|cute|cudnn|cublas(lt)?)::")
_ATTENTION = re.compile(r"(fmha|flash|attention|attn|sdpa)", re.IGNORECASE)
_PAGEABLE = re.compile(r"pageable", re.IGNORECASE)  # either side of the copy
_POLL = re.compile(r"^(cu|cuda|hip)(Event|Stream)Query$", re.IGNORECASE)  # a loop of them waits on the device
_STARTUP = re.compile(
    r"(streamcreate|eventcreate|ctxcreate|ctxsetcurrent|deviceprimaryctx|create_?handle"
    r"|(cublas|cublaslt|cudnn|cusparse|cufft|curand|nccl|miopen|rocblas|hipblas(lt)?)create"
    r"|cudasetdevice|hipsetdevice|cuinit|hipinit|comminit)",
    re.IGNORECASE,
)
_GRADIENT_SYNC = re.compile(r"(DistributedDataParallel|[Rr]educer::|allreduce_hook|_ddp_)")
_ALL_REDUCE = re.compile(r"all_?reduce", re.IGNORECASE)
# loading device code; a launch through a module (hipModuleLaunchKernel) is a launch, checked before this
_LOADING = re.compile(
    r"(module(load|getfunction|getglobal|unload)|culibrary|librarygetkernel|getfunc|registerfatbinary|registerfunction)",
    re.IGNORECASE,
)
_CPU_COLLECTIVE = re.compile(
    r"(gloo|c10d|nccl|all_?reduce|all_?gather|reduce_?scatter|broadcast|barrier"
    r"|record_param_comms|alltoall)",
    re.IGNORECASE,
)
_CPU_GEMM = re.compile(r"(conv|mm|matmul|linear|einsum)", re.IGNORECASE)
_PHASE_MARK = re.compile(r"^##\s*([A-Za-z_]+)\s*##$")
_ANNOTATION_NAMES = re.compile(
    r"^(ProfilerStep#|enumerate\(DataLoader\)#|Optimizer\..*#|module forward: |module backward: )|^##.*##$"
)
LOADING_LAUNCH_NS = 1_000_000
# a CPU op whose inputs hold no more elements than this spends its time in dispatch (sql/verdict_thresholds.sql)
DISPATCH_ELEMENTS = 1024


@functools.cache  # a trace launches the same few hundred names thousands of times, some of them kilobytes long
def kernel_group(name: str) -> str:
    # the function's own namespaces go (a GEMM library's stay); template arguments stay
    stripped = name if _GEMM_LIBRARY.match(name) else _LEADING_NAMESPACES.sub("", name, count=1)
    own = re.match(r"\s*([^<(\s]*)", _LEADING_NAMESPACES.sub("", name, count=1)).group(1)
    group = next((g for g, pattern in _OWN_GROUPS if pattern.search(own)), None) or next(
        (g for g, pattern in _KERNEL_GROUPS if pattern.search(stripped)), "device_other"
    )
    if group == "gemm":
        return "attention" if _ATTENTION.search(name) else "gemm_conv"
    return group


class _Ns(int):
    """A JSON number written with a fraction or an exponent (µs), already read as exact integer ns."""


def _literal_ns(text: str) -> _Ns:
    """json's parse_float: the number's literal µs as exact ns, half away from zero, in integer arithmetic (the
    literal's digits, never a float: a µs timestamp has ~16 significant digits, a float ~15.9). The trace's
    other fractional numbers (args) come out scaled too; only ts and dur are read."""
    if "e" in text or "E" in text:  # json hands over only literals with a fraction or an exponent
        return _Ns((Decimal(text) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    whole, _, fraction = text.partition(".")
    ns = int(whole + (fraction + "000")[:3])
    if fraction[3:4] >= "5":  # the first dropped digit decides: half or more goes away from zero
        ns += -1 if whole.startswith("-") else 1
    return _Ns(ns)


def _ns(value) -> int:
    """A time field in µs (as load_events reads the JSON) as integer ns."""
    if type(value) is _Ns:
        return int(value)
    if type(value) is int:
        return value * 1000
    return int((Decimal(str(value)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))  # text, a float


# the autograd profiler before Kineto writes no category: its lanes are its processes' names
LEGACY_LANES = {"CPU functions": "op", "CUDA functions": "kernel", "NPU functions": "kernel"}


def _kind(e: dict) -> str:
    cat, name = (e.get("cat") or "").lower(), e.get("name") or ""
    if not cat and e.get("ph") == "X" and LEGACY_LANES.get(e.get("pid")):
        return LEGACY_LANES[e.get("pid")]
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
    if cat == "python_function":
        return "python"
    return "op" if cat in ("cpu_op", "operator") else "other"


# The references are slow by design (plain Python over every event) and several tests ask them about the
# same shared trace: each answer is kept for the worker's session; callers only read what they get.
@functools.lru_cache(maxsize=1)
def load_events(path: Path) -> list[dict]:
    """The trace's timed events, their times in exact integer ns from the earliest; those of kind "other"
    (memory records, flows, instants, metadata), which no rule reads, only count for that origin."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        doc = json.load(handle, parse_float=_literal_ns)
    raw = doc["traceEvents"] if isinstance(doc, dict) else doc  # a JSON list: the pre-Kineto format
    timed = [e for e in raw if isinstance(e, dict) and e.get("ts") is not None]
    origin = min(_ns(e["ts"]) for e in timed)
    events = []
    for e in timed:
        kind = _kind(e)
        if kind == "other":
            continue
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        correlation = args.get("correlation")
        legacy = not e.get("cat") and LEGACY_LANES.get(e.get("pid")) == "kernel"
        device = e.get("tid") if legacy else args.get("device", e.get("pid"))
        events.append(
            {
                "kind": kind,
                "name": e.get("name") or "",
                "pid": e.get("pid"),
                "tid": e.get("tid"),
                "device": str(device),
                "ts": _ns(e["ts"]) - origin,
                "dur": max(_ns(e.get("dur", 0) or 0), 0),
                "correlation": int(correlation) if correlation not in (None, "") else None,
                "dims": args.get("Input Dims"),
                "legacy": legacy,
            }
        )
    return _innermost_legacy_ranges(events)


def _innermost_legacy_ranges(events: list[dict]) -> list[dict]:
    """A legacy device range (an op's CUDA events) that holds another on its device is its callees' time
    again: only the innermost are device work. Of two identical ranges, the later written stays."""
    legacy = [i for i, e in enumerate(events) if e["legacy"]]
    held = set()
    for i in legacy:
        o = events[i]
        for j in legacy:
            inner = events[j]
            if j == i or inner["device"] != o["device"]:
                continue
            inside = inner["ts"] >= o["ts"] and inner["ts"] + inner["dur"] <= o["ts"] + o["dur"]
            if inside and (inner["ts"] > o["ts"] or inner["dur"] < o["dur"] or j > i):
                held.add(i)
                break
    return [e for i, e in enumerate(events) if i not in held]


def _steps(events: list[dict]) -> list[tuple[int, int]]:
    marked = sorted(
        {(e["ts"], e["dur"]) for e in events if e["kind"] == "annotation" and e["name"].startswith("ProfilerStep#")}
    )
    # one without a usable duration (read as 0 long) is broken, no step; one inside which no op, runtime call or
    # Python frame starts (on any thread) is no step either, unless every step is empty and none broken
    broken = any(dur == 0 for _, dur in marked)
    marked = [(ts, dur) for ts, dur in marked if dur > 0]
    starts = sorted(e["ts"] for e in events if e["kind"] in ("op", "runtime", "python"))
    worked = [(ts, dur) for ts, dur in marked if bisect.bisect_left(starts, ts + dur) > bisect.bisect_left(starts, ts)]
    marked = worked or ([] if broken else marked)
    if marked:
        return _without_closing_tail(events, [(ts, ts + dur) for ts, dur in marked])
    device = [e for e in events if e["kind"] in ("kernel", "copy")]
    host = [e for e in events if e["kind"] in ("op", "annotation", "runtime")]
    span = device or host
    return [(min(e["ts"] for e in span), max(e["ts"] + e["dur"] for e in span))]


DRAIN_UNRECORDED_PCT = 5.0
_WAITS = re.compile(r"(?i)(synchronize|^(cu|cuda|hip)(event|stream)query$)")


def _without_closing_tail(events: list[dict], steps: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The last step's closing stretch (from its last recorded work to its end: ops, Python frames, host ranges
    but ProfilerStep, device work, runtime calls but synchronizes and event/stream queries) beyond the longest
    closing stretch of the other steps (all of it, with one step) is the profiler stopping, where it is at least
    DRAIN_UNRECORDED_PCT of the step it leaves: the step ends that much earlier."""
    work = sorted(
        (e["ts"], e["ts"] + e["dur"])
        for e in events
        if e["kind"] in ("op", "python", "kernel", "copy")
        or (e["kind"] == "annotation" and not e["name"].startswith("ProfilerStep#"))
        or (e["kind"] == "runtime" and not _WAITS.search(e["name"]))
    )
    starts, reach = [s for s, _ in work], []
    for _, end in work:  # the latest end of the work started so far
        reach.append(max(end, reach[-1]) if reach else end)

    def closing(start: int, end: int) -> int:
        started = bisect.bisect_left(starts, end)  # the work that started before the step's end
        last = reach[started - 1] if started else start
        return end - max(start, min(end, last))

    others = max((closing(*step) for step in steps[:-1]), default=0)
    excess = max(closing(*steps[-1]) - others, 0)
    start, end = steps[-1]
    # only where the host's next record after the last work is the closing wait (a synchronize or poll lasting to
    # within `others` of the step's end, or starting past it); another record, or the trace's end, leaves it in
    # the step
    since = end - closing(start, end)
    host = sorted(
        (e["ts"], not (e["kind"] == "runtime" and _WAITS.search(e["name"]) and e["ts"] + e["dur"] >= end - others))
        for e in events
        if e["ts"] >= since
        and (
            e["kind"] in ("op", "python", "runtime")
            or (e["kind"] == "annotation" and not e["name"].startswith("ProfilerStep#"))
        )
    )
    if not host or host[0][1]:
        excess = 0
    # under 5% of the step it would leave (sql/verdict_thresholds.sql drain_unrecorded_pct) it is the step's own
    tail = excess if excess * 100 >= DRAIN_UNRECORDED_PCT * (end - excess - start) else 0
    return steps[:-1] + [(start, end - tail)]


def _tiny(o: dict) -> bool:
    """Whether an op's recorded inputs hold at most DISPATCH_ELEMENTS elements (a `[]` counts one). The trace's
    shapes are read only for the ops the roofline models, as the product keeps them."""
    dims = o["dims"]
    if o["name"] not in ROOFLINE_SHAPED_OPS or not isinstance(dims, list) or not dims:
        return False
    if not all(isinstance(d, list) and all(isinstance(n, int) for n in d) for d in dims):
        return False  # a tensor list's dims, or a shape not read as integers
    return sum(math.prod(d) if d else 1 for d in dims) <= DISPATCH_ELEMENTS


def _op_executes(ops: list[dict]) -> tuple[dict[int, bool], dict[int, bool]]:
    """Per op (by id), whether it spends at least half its time in itself (leaves always do), and whether it
    or an op enclosing it on its thread is tiny (its time is dispatch)."""
    child_ns: dict[int, int] = defaultdict(int)
    has_child: set[int] = set()
    dispatch: dict[int, bool] = {}
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
            dispatch[id(o)] = _tiny(o) or (bool(stack) and dispatch[id(stack[-1])])
            stack.append(o)
    executes = {id(o): id(o) not in has_child or 2 * (o["dur"] - child_ns[id(o)]) >= o["dur"] for o in ops}
    return executes, dispatch


@functools.cache
def step_windows(path: Path) -> dict[int, tuple[int, int]]:
    """{step: (start_ns, end_ns)}: each step's wall time as the blame takes it."""
    return _windows(load_events(path))


def _windows(events: list[dict]) -> dict[int, tuple[int, int]]:
    steps = _steps(events)
    runtime = [e for e in events if e["kind"] == "runtime"]
    device = [e for e in events if e["kind"] in ("kernel", "copy")]
    launch_ts: dict[int, int] = {}
    for r in runtime:
        if r["correlation"]:
            launch_ts[r["correlation"]] = min(launch_ts.get(r["correlation"], r["ts"]), r["ts"])

    def step_of(t: int | None) -> int | None:
        if t is None:
            return None
        return next((n for n, (s, e) in enumerate(steps, 1) if s <= t < e), None)

    ends, window, by_device = _measured_window(steps, device, step_of, launch_ts)
    # the device kept up unless, on its busiest device, the kernels inside the window cover the host's span
    device_bound = max((union_ns(v) for v in by_device.values()), default=0) >= steps[-1][1] - steps[0][0]
    windows = {}
    for n, (start, host_end) in enumerate(steps, 1):
        work_end = ends[n]
        # the last of several steps ends with the host when the device kept up: the drain after it is no step's
        next_start = steps[n][0] if n < len(steps) else (host_end if len(steps) > 1 and not device_bound else work_end)
        windows[n] = (start, max(start, min(work_end, next_start)))
    return windows


def _waits(r: dict, pageable: set, copy_end: dict) -> bool:
    """Whether a runtime call held the host waiting on the device: a sync, a poll, a copy call that blocked."""
    waited = r["correlation"] in copy_end and r["ts"] + r["dur"] >= copy_end[r["correlation"]]
    return (
        r["name"] in BLOCKING
        or bool(_POLL.match(r["name"]))
        or (r["name"] in ASYNC_COPIES and (r["correlation"] in pageable or waited))
    )


@functools.cache
def blame(path: Path) -> dict[int, dict]:
    """{step: {"wall_ns": int, "causes": {cause: ns}}} for the trace at `path`."""
    events = load_events(path)
    runtime = [e for e in events if e["kind"] == "runtime"]
    device = [e for e in events if e["kind"] in ("kernel", "copy")]
    ops = [e for e in events if e["kind"] == "op"]
    on_gpu = bool(device)
    windows = step_windows(path)

    launch_ts: dict[int, int] = {}
    for r in runtime:
        if r["correlation"]:
            launch_ts[r["correlation"]] = min(launch_ts.get(r["correlation"], r["ts"]), r["ts"])

    intervals: list[tuple[int, int, str]] = []
    phases = []
    for e in events:
        if e["kind"] != "annotation":
            continue
        mark = _PHASE_MARK.match(e["name"])
        phase = (
            mark.group(1).lower() if mark else ("dataload" if e["name"].startswith("enumerate(DataLoader)#") else None)
        )
        if phase == "dataload" or (on_gpu and phase in ("preprocess", "postprocess")):
            phases.append(
                (
                    e["ts"],
                    e["ts"] + e["dur"],
                    {"dataload": "dataload", "preprocess": "preprocess"}.get(phase, "cpu_work"),
                )
            )
    intervals += phases
    # the model's Python: recorded frames and host ranges (not the step, not a DataLoader call), both profiles
    python = [
        (e["ts"], e["ts"] + e["dur"], "python")
        for e in events
        if e["kind"] == "python"
        or (e["kind"] == "annotation" and not e["name"].startswith(("ProfilerStep#", "enumerate(DataLoader)#")))
    ]
    intervals += python
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
        pageable = {d["correlation"] for d in device if d["correlation"] is not None and _PAGEABLE.search(d["name"])}
        # a copy call blocks too when it returned only once its copy had finished on the device
        copy_end = {d["correlation"]: d["ts"] + d["dur"] for d in device if d["kind"] == "copy" and d["correlation"]}
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
            if _waits(r, pageable, copy_end):
                cause = "sync_bubble"
            elif _STARTUP.search(r["name"]) and r["name"] not in LAUNCHES | ALLOCATOR:
                cause = "startup"
            elif (_LOADING.search(r["name"]) and r["name"] not in LAUNCHES | ALLOCATOR) or (
                r["name"] in KERNEL_LAUNCHES and r["dur"] >= LOADING_LAUNCH_NS and r["correlation"] in first_launches
            ):
                cause = "module_loading"
            elif r["name"] in ALLOCATOR:
                cause = "allocator"
            elif r["name"] in LAUNCHES:
                cause = "launching"
            else:
                cause = "cpu_work"
            intervals.append((r["ts"], r["ts"] + r["dur"], cause))
        host_work = [(o["ts"], o["ts"] + o["dur"], "launching" if launches_inside(o) else "cpu_work") for o in ops]
        intervals += host_work
        if _is_inference(events, ops):
            # each call's host work (ops that launch nothing, Python) before its first launch: preprocessing
            launch_times = sorted(r["ts"] for r in runtime if r["name"] in LAUNCHES)
            for start, end in windows.values():
                first = next((t for t in launch_times[bisect.bisect_left(launch_times, start) :] if t < end), None)
                if first is None:
                    continue
                intervals += [
                    (max(s, start), min(e, first), "preprocess")
                    for s, e, c in host_work + python
                    if c in ("cpu_work", "python") and s < first and e > start
                ]
    else:
        executes, dispatch = _op_executes(ops)
        for o in ops:
            if not executes[id(o)] or dispatch[id(o)]:
                cause = "framework_overhead"
            elif _CPU_COLLECTIVE.search(o["name"]):
                cause = "cpu_communication"
            elif _CPU_GEMM.search(o["name"]):
                cause = "cpu_gemm_conv"
            else:
                cause = "cpu_other_ops"
            intervals.append((o["ts"], o["ts"] + o["dur"], cause))
        intervals += [
            (e["ts"], e["ts"] + e["dur"], "cpu_communication")
            for e in events
            if e["kind"] == "annotation" and _CPU_COLLECTIVE.search(e["name"])
        ]
    return {n: _sweep(start, end, intervals) for n, (start, end) in windows.items()}


def _measured_window(steps, device, step_of, launch_ts, kinds=("kernel",)) -> tuple[dict, tuple[int, int], dict]:
    """Each step's work end (host end or the end of the device work launched in it), the measured window
    (first step start → the later of the last host end and every step's work end) and, per device, every
    execution of `kinds` (kernels; "copy": memcpys and memsets) inside it clipped to it as (start, end)."""
    ends = {n: host_end for n, (_, host_end) in enumerate(steps, 1)}
    for d in device:  # each execution's launch step found once (not once per step)
        n = step_of(launch_ts.get(d["correlation"]))
        if n is not None:
            ends[n] = max(ends[n], d["ts"] + d["dur"])
    window = (steps[0][0], max(steps[-1][1], *ends.values()))
    by_device = defaultdict(list)
    for d in device:
        if d["kind"] in kinds and d["ts"] < window[1] and d["ts"] + d["dur"] > window[0]:
            by_device[d["device"]].append((max(d["ts"], window[0]), min(d["ts"] + d["dur"], window[1])))
    return ends, window, by_device


def window_kernel_ns(path: Path, kinds=("kernel",)) -> dict[str, int]:
    """{device: ns}: the kernel time inside the measured window, every execution clipped to it (launched in
    a step or not): the whole the headline's kernel figures and every table's device time must add up to.
    kinds=("kernel", "copy"): every execution's time, kernels, memcpys and memsets (the roofline's whole)."""
    events = load_events(path)
    steps = _steps(events)
    device = [e for e in events if e["kind"] in ("kernel", "copy")]
    launch_ts: dict[int, int] = {}
    for r in events:
        if r["kind"] == "runtime" and r["correlation"]:
            launch_ts[r["correlation"]] = min(launch_ts.get(r["correlation"], r["ts"]), r["ts"])

    def step_of(t: int | None) -> int | None:
        return None if t is None else next((n for n, (s, e) in enumerate(steps, 1) if s <= t < e), None)

    _, _, by_device = _measured_window(steps, device, step_of, launch_ts, kinds)
    return {dev: sum(e - s for s, e in spans) for dev, spans in by_device.items()}


def union_ns(intervals: list[tuple[int, int]]) -> int:
    total, reached = 0, None
    for s, e in sorted(intervals):
        if reached is None or s > reached:
            total, reached = total + (e - s), e
        elif e > reached:
            total, reached = total + (e - reached), e
    return total


@functools.cache
def steps_and_device_work(path: Path) -> tuple[list[tuple[int, int]], list[tuple[int, int, str]]]:
    """The steps' blame windows (ns) and every kernel, copy and memset as (start, end, name)."""
    events = load_events(path)
    walls = blame(path)
    starts = _steps(events)
    windows = [(start, start + walls[n]["wall_ns"]) for n, (start, _) in enumerate(starts, 1)]
    device = [(e["ts"], e["ts"] + e["dur"], e["name"]) for e in events if e["kind"] in ("kernel", "copy")]
    return windows, device


def _is_inference(events: list[dict], ops: list[dict]) -> bool:
    """No backward op, no DDP reducer, no all_reduce on a thread that does not run the steps."""
    if any(o["name"].startswith("autograd::engine::evaluate_function:") or "Backward" in o["name"] for o in ops):
        return False
    step_threads = {
        (e["pid"], e["tid"]) for e in events if e["kind"] == "annotation" and e["name"].startswith("ProfilerStep#")
    }
    named = [e for e in events if e["kind"] in ("op", "annotation")]
    return not any(
        _GRADIENT_SYNC.search(e["name"])
        or (step_threads and _ALL_REDUCE.search(e["name"]) and (e["pid"], e["tid"]) not in step_threads)
        for e in named
    )


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


def _disjoint(spans: list[tuple[int, int]]) -> list[list[int]]:
    merged: list[list[int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        elif e > s:
            merged.append([s, e])
    return merged


def _without(spans: list[tuple[int, int]], holes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The time `spans` cover that `holes` do not, as intervals."""
    left = []
    cut = _disjoint(holes)
    for s, e in _disjoint(spans):
        for hs, he in cut:
            if he <= s or hs >= e:
                continue
            if hs > s:
                left.append((s, hs))
            s = max(s, he)
        if e > s:
            left.append((s, e))
    return left


def critical_path_bounds(path: Path, category_of: dict) -> dict[str, float]:
    """Per kernel category, the least a step can take once that category's device work is gone, ms per step:
    the larger of the device work left (per step, its busiest device's union) and the host's recorded work that
    does not wait on the device (per step, each thread's ops, runtime calls, Python frames and host ranges, the
    ProfilerStep excepted, less its syncs, polls and blocking copies; the union over the threads, less the
    removed work's launch calls), each the mean over the steps (as the blame takes them). `category_of`: device
    activity name → category."""
    events = load_events(path)
    steps = list(_windows(events).values())
    device = [e for e in events if e["kind"] in ("kernel", "copy")]
    runtime = [e for e in events if e["kind"] == "runtime"]
    pageable = {d["correlation"] for d in device if d["correlation"] is not None and _PAGEABLE.search(d["name"])}
    copy_end = {d["correlation"]: d["ts"] + d["dur"] for d in device if d["kind"] == "copy" and d["correlation"]}
    launched: dict[int, set] = defaultdict(set)
    for d in device:
        if d["correlation"]:
            launched[d["correlation"]].add(category_of.get(d["name"]))
    host, waits, launches = defaultdict(list), defaultdict(list), defaultdict(list)
    for e in events:
        if e["kind"] in ("op", "runtime", "python") or (
            e["kind"] == "annotation" and not e["name"].startswith("ProfilerStep#")
        ):
            host[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for r in runtime:
        span = (r["ts"], r["ts"] + r["dur"])
        if _waits(r, pageable, copy_end):
            waits[(r["pid"], r["tid"])].append(span)
        elif r["name"] in LAUNCHES and len(launched.get(r["correlation"], ())) == 1:
            launches[next(iter(launched[r["correlation"]]))].append(span)
    categories = sorted({c for c in category_of.values() if c is not None})
    host_ns, device_ns = {c: 0 for c in categories}, {c: 0 for c in categories}
    for start, end in steps:

        def clip(spans, start=start, end=end):
            return [(max(s, start), min(e, end)) for s, e in spans if s < end and e > start]

        # each thread's time less its waits, then the union over the threads, then the removed launch calls
        worked = union_ns([span for t, spans in host.items() for span in _without(clip(spans), clip(waits[t]))])
        in_step = defaultdict(list)  # (device, category) → the step's device work
        for d in device:
            if d["ts"] < end and d["ts"] + d["dur"] > start:
                in_step[(d["device"], category_of.get(d["name"]))].append((d["ts"], d["ts"] + d["dur"]))
        for c in categories:
            host_ns[c] += worked - sum(e - s for s, e in clip(launches[c]))
            left = defaultdict(list)
            for (on, category), spans in in_step.items():
                if category != c:
                    left[on] += spans
            device_ns[c] += max((union_ns(clip(spans)) for spans in left.values()), default=0)
    return {c: max(host_ns[c], device_ns[c]) / 1e6 / len(steps) for c in categories}
