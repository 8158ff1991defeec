"""Tiny hand-written Kineto traces for the diff tests (tests/test_sql_diff.py).

Each helper returns one Chrome-trace event as PyTorch's profiler writes it. Times are given in µs
relative to the start of the trace; `write_trace` puts them on Kineto's absolute µs clock and
writes every timestamp and duration as exact decimal text, the way Kineto does
(`"ts": 1700000000000165.250`): a Python float at that magnitude would print as …165.2 and the
test would lose the sub-µs precision it means to check.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

T0_US = 1_700_000_000_000_000  # Kineto's absolute µs clock
HOST_PID, HOST_TID = 1, 1  # the Python thread that runs the model
GPU_PID = 0
A100 = {"id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42_505_273_344}

# real-looking kernel names, one per category the tests need
GEMM_TENSORCORE = (
    "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_tensorop_kernel"
)
GEMM_FP32_SIMT = "ampere_sgemm_128x64_nn"
ELEMENTWISE = "void at::native::elementwise_kernel<128, 2>(int, at::native::AddFunctor<float>)"
MULTI_TENSOR_APPLY = "void at::native::multi_tensor_apply_kernel<at::native::FusedAdamFunctor<float, 4>>(int)"
FILL = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)"
MEMCPY_HTOD = "Memcpy HtoD (Pinned -> Device)"


class _Time:
    """A time in µs from the start of the trace, written as exact absolute decimal text."""

    def __init__(self, offset_us: float | int | str, absolute: bool):
        self.value = (Decimal(T0_US) if absolute else Decimal(0)) + Decimal(str(offset_us))


def _event(cat: str, name: str, start_us, dur_us, pid, tid, args: dict | None = None) -> dict:
    event = {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": pid,
        "tid": tid,
        "ts": _Time(start_us, absolute=True),
        "dur": _Time(dur_us, absolute=False),
    }
    if args:
        event["args"] = args
    return event


def annotation(name: str, start_us, dur_us) -> dict:
    """A host range: `ProfilerStep#N`, or one of our `## phase ##` marks."""
    return _event("user_annotation", name, start_us, dur_us, HOST_PID, HOST_TID)


def op(name: str, start_us, dur_us, input_dims: list | None = None) -> dict:
    """A framework op (aten::…) on the model's thread."""
    return _event(
        "cpu_op",
        name,
        start_us,
        dur_us,
        HOST_PID,
        HOST_TID,
        {"Input Dims": input_dims} if input_dims is not None else None,
    )


def python_function(name: str, start_us, dur_us) -> dict:
    """A Python frame on the model's thread, as with_stack records it (`nn.Module: <Class>_<n>`)."""
    return _event("python_function", name, start_us, dur_us, HOST_PID, HOST_TID)


def python_frame(name: str, start_us, dur_us, tid: int = HOST_TID) -> dict:
    """A Python frame the profiler recorded with with_stack (cat python_function)."""
    return _event("python_function", name, start_us, dur_us, HOST_PID, tid)


def runtime(name: str, start_us, dur_us, correlation: int | None = None) -> dict:
    """A CUDA runtime call on the host (cudaLaunchKernel, cudaMemcpyAsync, cudaStreamSynchronize …)."""
    return _event(
        "cuda_runtime",
        name,
        start_us,
        dur_us,
        HOST_PID,
        HOST_TID,
        {"correlation": correlation} if correlation is not None else None,
    )


def kernel(name: str, start_us, dur_us, correlation: int, stream: int = 7, device: int = 0) -> dict:
    """A kernel on the device, tied to its launch by the correlation id."""
    return _event(
        "kernel",
        name,
        start_us,
        dur_us,
        GPU_PID,
        stream,
        {"correlation": correlation, "device": device, "stream": stream},
    )


def memcpy(
    name: str, start_us, dur_us, correlation: int, stream: int = 7, device: int = 0, copy_bytes: int | None = None
) -> dict:
    """A device copy (gpu_memcpy), tied to its cudaMemcpyAsync by the correlation id."""
    args = {"correlation": correlation, "device": device, "stream": stream}
    if copy_bytes is not None:
        args["bytes"] = copy_bytes
    return _event("gpu_memcpy", name, start_us, dur_us, GPU_PID, stream, args)


def memory(
    start_us,
    nbytes: int,
    *,
    device_type: int = 1,
    device_id: int = 0,
    total: int | None = None,
    reserved: int | None = None,
    addr: int | None = None,
) -> dict:
    """An allocator `[memory]` instant on the model's thread: `nbytes` > 0 an allocation, < 0 a free.
    With `total` (and `reserved`, `addr`) in the newer format; without, the 2021 one (Bytes only)."""
    args = {"Device Type": device_type, "Device Id": device_id if device_type else -1, "Bytes": nbytes}
    if total is not None:
        args["Total Allocated"] = total
        args["Total Reserved"] = reserved if reserved is not None else total
    if addr is not None:
        args["Addr"] = addr
    return {
        "ph": "i",
        "s": "t",
        "cat": "cpu_instant_event",
        "name": "[memory]",
        "pid": HOST_PID,
        "tid": HOST_TID,
        "ts": _Time(start_us, absolute=True),
        "args": args,
    }


def write_trace(path: Path, events: list[dict], devices: list[dict] | None = None, indent: int | None = None) -> Path:
    """Write `events` as a Kineto trace file; times become exact decimal text.

    By default in Kineto's own layout: one event a line, `"Input Dims": [[1, 3, 64, 64], …]`
    written compactly. `indent` pretty-prints the whole document instead (what `python -m json.tool`
    makes of a trace), which puts whitespace inside every array."""
    raw_times: list[str] = []

    def placeholder(value):
        if isinstance(value, _Time):
            raw_times.append(format(value.value, "f"))
            return f"@@time{len(raw_times) - 1}@@"
        raise TypeError(f"not JSON serialisable: {value!r}")

    if indent is not None:
        document = {"schemaVersion": 1, "deviceProperties": devices or [], "traceEvents": events}
        text = json.dumps(document, default=placeholder, indent=indent)
    else:
        head = json.dumps({"schemaVersion": 1, "deviceProperties": devices or []})[:-1]
        body = ",\n  ".join(json.dumps(event, default=placeholder) for event in events)
        text = head + ', "traceEvents": [\n  ' + body + "\n]}\n"
    # one pass over the text: a replace per time rescanned the whole document (30 s for 20,000 events)
    text = re.sub(r'"@@time(\d+)@@"', lambda match: raw_times[int(match.group(1))], text)
    path.write_text(text)
    return path


def shaped_op(name: str, start_us, dur_us, dims: list, types: list, concrete: list | None = None) -> dict:
    """A framework op recorded with record_shapes: Input Dims, Input type and (PyTorch ≥ 2.1) Concrete Inputs."""
    args = {"Input Dims": dims, "Input type": types}
    if concrete is not None:
        args["Concrete Inputs"] = concrete
    return _event("cpu_op", name, start_us, dur_us, HOST_PID, HOST_TID, args)
