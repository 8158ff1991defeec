"""An independent reference for the roofline table, in plain Python over a trace's raw events, written
from the formulas (docs/SCHEMA.md, "The roofline"), not from sql/roofline*.sql: for every outermost
GEMM, convolution and attention call inside a ProfilerStep, its FLOPs (2 per multiply-accumulate),
the bytes of a GEMM (inputs read once, output written once) and its device time (the union of the
kernels, memcpys and memsets launched inside it on its thread; in a trace with no device work, the
call's own wall time), per (op, recorded shapes) over all phases."""

from __future__ import annotations

import bisect
import gzip
import json
import math
from collections import defaultdict
from pathlib import Path

from libreyolo_profile.store.decode.events import ROOFLINE_SHAPED_OPS  # which op names have a model at all
from tests.scalar_lists_reference import complete_scalar_lists

ELEMENT_BYTES = {"float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2}
GEMMS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::linear", "aten::matmul"}
CONVS = {"aten::convolution", "aten::_convolution"}
ATTENTION = {
    "aten::scaled_dot_product_attention": 5,
    "aten::_scaled_dot_product_flash_attention": 4,
    "aten::_scaled_dot_product_efficient_attention": 6,
}  # 0-based index of is_causal


def _gemm(name: str, dims: list) -> tuple[float, list]:
    """(FLOPs, output dims) of a GEMM-family call."""
    if name == "aten::mm":
        (m, k), (_, n) = dims[0], dims[1]
        return 2 * m * k * n, [m, n]
    if name == "aten::addmm":
        (m, k), (_, n) = dims[1], dims[2]
        return 2 * m * k * n, [m, n]
    if name in ("aten::bmm", "aten::baddbmm"):
        a, b = (dims[0], dims[1]) if name == "aten::bmm" else (dims[1], dims[2])
        return 2 * a[0] * a[1] * a[2] * b[2], [a[0], a[1], b[2]]
    if name == "aten::linear":
        x, w = dims[0], dims[1]
        rows = math.prod(x[:-1])
        return 2 * rows * x[-1] * w[0], x[:-1] + [w[0]]
    a, b = dims[0], dims[1]  # matmul, both at least 2-D here (the traces have no other)
    batch = max(math.prod(a[:-2]), math.prod(b[:-2]))
    return 2 * batch * a[-2] * a[-1] * b[-1], [batch, a[-2], b[-1]]


def _conv_flops(dims: list, concrete: list) -> float:
    x, w = dims[0], dims[1]
    stride, padding, dilation = (json.loads(concrete[i]) for i in (3, 4, 5))
    transposed = concrete[6] == "True"
    positions = 1
    for i, size in enumerate(x[2:]):
        if transposed:
            positions *= size
        else:
            positions *= (size + 2 * padding[i] - dilation[i] * (w[2 + i] - 1) - 1) // stride[i] + 1
    return 2 * x[0] * math.prod(w) * positions


def _attention_flops(name: str, dims: list, concrete: list) -> float:
    q, k, v = dims[0], dims[1], dims[2]
    heads = math.prod(q[:-2])
    causal = len(concrete) > ATTENTION[name] and concrete[ATTENTION[name]] == "True"
    return 2 * heads * q[-2] * k[-2] * (q[-1] + v[-1]) * (0.5 if causal else 1)


def _costs(event: dict) -> tuple[float, float | None] | None:
    name, args = event["name"], event.get("args", {})
    dims, types, concrete = args.get("Input Dims"), args.get("Input type", []), args.get("Concrete Inputs", [])
    if not dims:
        return None
    if name in GEMMS:
        flops, out = _gemm(name, dims)
        sizes = [ELEMENT_BYTES.get(t) for t in types]
        tensors = [(d, s) for d, s in zip(dims, sizes, strict=False) if s is not None]
        moved = sum(math.prod(d) * s for d, s in tensors) + math.prod(out) * max(s for _, s in tensors)
        return flops, moved
    if name in CONVS and concrete:
        return _conv_flops(dims, concrete), None
    if name in ATTENTION:
        return _attention_flops(name, dims, concrete), None
    return None


def _outermost_modeled(ops: list[dict]) -> list[dict]:
    """Modeled op calls with no modeled call around them on their thread (a stack per thread)."""
    kept, stacks = [], defaultdict(list)
    for e in sorted(ops, key=lambda e: (e["pid"], e["tid"], e["ts"], -e["dur"])):
        stack = stacks[(e["pid"], e["tid"])]
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
            stack.pop()
        if not any(s["name"] in ROOFLINE_SHAPED_OPS for s in stack) and e["name"] in ROOFLINE_SHAPED_OPS:
            kept.append(e)
        stack.append(e)
    return kept


def _union(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, -math.inf
    for s, e in sorted(intervals):
        if s > end:
            total, end = total + e - s, e
        elif e > end:
            total, end = total + e - end, e
    return total


def reference_units(path: Path) -> dict:
    """(phase-free) per (op, Input Dims as compact JSON): calls, GFLOP and MB per call, mean device µs."""
    with gzip.open(path) if str(path).endswith(".gz") else open(path, "rb") as handle:
        events = [e for e in json.load(handle)["traceEvents"] if e.get("ph") == "X"]
    for e in events:
        e["ts"], e["dur"] = float(e["ts"]), float(e.get("dur", 0))
    complete_scalar_lists(events)  # lists recorded in the first step only (run, infer)
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    ops = [
        e
        for e in events
        if str(e.get("cat", "")).lower() in ("cpu_op", "operator") and not str(e["name"]).startswith("ProfilerStep#")
    ]
    launches = {}
    for e in sorted(events, key=lambda e: e["ts"]):
        corr = e.get("args", {}).get("correlation")
        if (
            str(e.get("cat", "")).lower() in ("cuda_runtime", "cuda_driver", "runtime")
            and corr
            and corr not in launches
        ):
            launches[corr] = (e["tid"], e["ts"])
    work = [
        (launches[e["args"]["correlation"]], e["ts"], e["ts"] + e["dur"])
        for e in events
        if str(e.get("cat", "")).lower() in ("kernel", "gpu_memcpy", "gpu_memset")
        and e.get("args", {}).get("correlation") in launches
    ]
    # the work per launching thread, by its launch time: an op's is found by bisect, not by a scan of all of it
    by_thread: dict = defaultdict(list)
    for (tid, at), s, e in sorted(work, key=lambda w: w[0][1]):
        by_thread[tid].append((at, s, e))
    launched_at = {tid: [at for at, _, _ in items] for tid, items in by_thread.items()}
    rows: dict = {}
    for op in _outermost_modeled(ops):
        if not any(s <= op["ts"] < e for s, e in steps):
            continue
        costs = _costs(op)
        if costs is None:
            continue
        end = op["ts"] + op["dur"]
        items, ats = by_thread.get(op["tid"], []), launched_at.get(op["tid"], [])
        spans = [(s, e) for _, s, e in items[bisect.bisect_left(ats, op["ts"]) : bisect.bisect_left(ats, end)]]
        if not work:  # a CPU trace: the op's own wall time is its device time
            spans = [(op["ts"], end)]
        if not spans:
            continue
        key = (op["name"], json.dumps(op["args"]["Input Dims"]))
        row = rows.setdefault(key, {"calls": 0, "flops": costs[0], "bytes": costs[1], "device": 0.0})
        row["calls"] += 1
        row["device"] += _union(spans)
    return {
        key: {
            "calls": r["calls"],
            "gflops": r["flops"] / 1e9,
            "mb_moved": None if r["bytes"] is None else r["bytes"] / 1e6,
            "device_us": r["device"] / r["calls"],
        }
        for key, r in rows.items()
    }


# -- the bytes of elementwise calls, from PyTorch itself --------------------------------------------------------
# Written from PyTorch's own semantics, not from sql/roofline_costs.sql: each recorded call is re-run on "meta"
# tensors (shapes and dtypes, no data), so the output's shape and dtype are what PyTorch gives (its broadcasting
# and type promotion), and whether the last argument is an out= tensor is what the op's schemas say. A 0-dim
# argument beside a tensor of one or more dimensions is a Python number the profiler wrapped: it moves nothing.
ELEMENTWISE = (
    "aten::add",
    "aten::add_",
    "aten::sub",
    "aten::sub_",
    "aten::mul",
    "aten::mul_",
    "aten::div",
    "aten::div_",
    "aten::neg",
    "aten::exp",
    "aten::sqrt",
    "aten::rsqrt",
    "aten::relu",
    "aten::relu_",
    "aten::sigmoid",
    "aten::tanh",
)
TORCH_DTYPES = {
    "float": "float32",
    "double": "float64",
    "c10::Half": "float16",
    "c10::BFloat16": "bfloat16",
    "long int": "int64",
    "long": "int64",
    "int": "int32",
    "bool": "bool",
    "unsigned char": "uint8",
}


def _out_position(torch, name: str, count: int) -> int | None:
    """The 0-based position of the out= tensor when every schema of `name` with `count` arguments ends in one."""
    schemas = [s for s in torch._C._jit_get_schemas_for_operator(name) if len(s.arguments) == count]
    if schemas and all(s.arguments[-1].name == "out" for s in schemas):
        return count - 1
    return None


def elementwise_bytes(torch, name: str, dims: list, types: list) -> tuple[float, str] | None:
    """(bytes one call moves: tensor inputs read once, the output written once; the output's dtype), None where
    the recorded arguments are not ones this reference re-runs."""
    out_at = _out_position(torch, name, len(types))
    tensors = [i for i, t in enumerate(types) if t in TORCH_DTYPES and isinstance(dims[i], list) and i != out_at]
    if not tensors:
        return None
    shaped = [i for i in tensors if dims[i]]
    args = []
    for i, t in enumerate(types):
        if i == out_at:
            continue
        dtype = getattr(torch, TORCH_DTYPES[t]) if t in TORCH_DTYPES else None
        if i in tensors and (dims[i] or not shaped):
            args.append(torch.empty(dims[i], dtype=dtype, device="meta"))
        elif i in tensors:  # a wrapped Python number
            args.append(1.0 if dtype.is_floating_point else 1)
        elif t in ("Scalar", "Int", "Double"):
            args.append(1)
        else:
            return None
    op = getattr(torch.ops.aten, name.removeprefix("aten::"))
    result = None
    # trailing numbers may be keyword-only (add's alpha): their defaults give the same output
    while result is None and args:
        try:
            result = op(*args)
        except (RuntimeError, TypeError):
            if isinstance(args[-1], torch.Tensor):
                return None
            args = args[:-1]
    if result is None:
        return None
    read = sum(math.prod(dims[i]) * args_size(torch, types[i]) for i in (shaped or tensors))
    out_size = args_size(torch, types[out_at]) if out_at is not None else result.element_size()
    out_dtype = TORCH_DTYPES[types[out_at]] if out_at is not None else str(result.dtype).removeprefix("torch.")
    return read + result.numel() * out_size, out_dtype


def args_size(torch, type_name: str) -> int:
    return torch.empty((), dtype=getattr(torch, TORCH_DTYPES[type_name])).element_size()


def reference_elementwise(path: Path) -> dict:
    """Per (op, Input Dims as compact JSON, the output's dtype) of the elementwise calls in a trace: the MB one
    call moves, each value its calls move (calls of one key can differ in their other arguments' types)."""
    import torch

    with gzip.open(path) if str(path).endswith(".gz") else open(path, "rb") as handle:
        data = json.load(handle)
    events = data["traceEvents"] if isinstance(data, dict) else data
    rows: dict = {}
    signatures: dict = {}
    for e in events:
        if not isinstance(e, dict) or e.get("name") not in ELEMENTWISE:
            continue
        args = e.get("args") or {}
        dims, types = args.get("Input Dims"), args.get("Input type")
        if not isinstance(dims, list) or not isinstance(types, list) or len(dims) != len(types):
            continue
        seen = (e["name"], repr(dims), repr(types))  # as distinct as the JSON text, cheaper to make per call
        if seen in signatures:
            continue
        signature = signatures[seen] = (e["name"], json.dumps(dims), json.dumps(types))
        if signature not in rows:
            rows[signature] = elementwise_bytes(torch, e["name"], dims, types)
    found: dict = {}
    # a call this reference cannot re-run leaves its (op, dims) out: our row may hold it in its mean
    unknown = {(name, dims) for (name, dims, _), costed in rows.items() if costed is None}
    for (name, dims, _), costed in rows.items():
        if costed is not None and (name, dims) not in unknown:
            found.setdefault((name, dims, costed[1]), set()).add(costed[0] / 1e6)
    return found
