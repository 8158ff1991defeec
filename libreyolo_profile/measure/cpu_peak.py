"""The CPU's roof, measured: what a short float32 matmul and a large copy reach on this machine with
the threads torch uses. The roofline of a CPU profile (sql/roofline.sql) is held to these figures;
they are recorded with their method in profile.json (environment.cpu_peak).

Best of a few repeats, so a moment of contention on a shared machine lowers the figure less. The probe
costs a measuring command 0.3-1 s (a 2-core CPU, 2 and 1 torch threads), and the roof is the machine's,
not the run's: `cpu_peak` remembers it for REMEMBERED_HOURS per CPU model, logical CPU count, torch
thread count and torch version (measure/remembered.py), so the runs a user compares within a day are
held to one roof, and says in its method when it was measured."""

from __future__ import annotations

import datetime
import hashlib
import math
import os
import time
from typing import Annotated

import msgspec

MATMUL_N = 1024  # 2·n³ = 2.1 GFLOP per product: tens of ms on a laptop core, enough to time
COPY_MIB = 64  # past every cache level of common CPUs: the copy runs at memory bandwidth
REPEATS = 20
REMEMBERED_HOURS = 24
_VERSION = "1"  # of the key and the entry: bump when either changes

_Positive = Annotated[float, msgspec.Meta(gt=0)]


class _Roof(msgspec.Struct):
    fp32_tflops: _Positive
    tb_per_s: _Positive
    threads: Annotated[int, msgspec.Meta(ge=1)]
    method: str
    measured_at: float  # Unix seconds


def cpu_peak(cpu_model: str) -> dict:
    """The roof for this command: the one an earlier command on this machine measured in the last
    REMEMBERED_HOURS (same CPU model, logical CPUs, torch threads and torch version), else measured now
    and remembered. {"fp32_tflops", "tb_per_s", "threads", "method", "measured_at"} or {"null_reason"}."""
    import torch

    from libreyolo_profile.measure.remembered import entry_path, read_entry, write_entry

    threads = torch.get_num_threads()
    key = f"{_VERSION}|{cpu_model}|{os.cpu_count()}|{threads}|{torch.__version__}|{MATMUL_N}|{COPY_MIB}|{REPEATS}"
    entry = entry_path("cpu_peak", hashlib.sha256(key.encode()).hexdigest()[:32])
    kept, now = read_entry(entry, _Roof), time.time()
    if kept is not None and _usable(kept, threads, now):
        shown = dict(msgspec.structs.asdict(kept), measured_at=_utc(kept.measured_at))
        shown["method"] = (
            f"{kept.method}, at {shown['measured_at']} by an earlier command on this machine (remembered "
            f"{REMEMBERED_HOURS} h for the same CPU, thread count and torch)"
        )
        return shown
    measured = measure_cpu_peak()
    if "null_reason" in measured:
        return measured
    write_entry(entry, _Roof(**measured, measured_at=now))
    return dict(measured, measured_at=_utc(now))


def _usable(kept: _Roof, threads: int, now: float) -> bool:
    fresh = 0 <= now - kept.measured_at <= REMEMBERED_HOURS * 3600  # a time in the future is no time
    return fresh and kept.threads == threads and math.isfinite(kept.fp32_tflops) and math.isfinite(kept.tb_per_s)


def _utc(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _best_seconds(work, repeats: int = REPEATS) -> float:
    work()  # warm: allocation, thread pool, page faults
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def measure_cpu_peak() -> dict:
    """{"fp32_tflops", "tb_per_s", "threads", "method"}, or {"null_reason"} when torch cannot run the probe."""
    try:
        import torch

        a, b = torch.randn(MATMUL_N, MATMUL_N), torch.randn(MATMUL_N, MATMUL_N)
        product = torch.empty(MATMUL_N, MATMUL_N)
        matmul_s = _best_seconds(lambda: torch.mm(a, b, out=product))
        source = torch.empty(COPY_MIB * 2**20 // 4)
        target = torch.empty_like(source)
        copy_s = _best_seconds(lambda: target.copy_(source))
    except Exception as exc:  # a broken torch build: the roof stays unknown, and says why
        return {"null_reason": f"the CPU peak probe failed ({type(exc).__name__}: {str(exc)[:120]})"}
    threads = torch.get_num_threads()
    return {
        "fp32_tflops": 2 * MATMUL_N**3 / matmul_s / 1e12,
        "tb_per_s": 2 * COPY_MIB * 2**20 / copy_s / 1e12,  # bytes read + bytes written
        "threads": threads,
        "method": (
            f"measured: best of {REPEATS} torch.mm of two {MATMUL_N}×{MATMUL_N} float32 matrices "
            f"(2·n³ FLOPs) and best of {REPEATS} copies of {COPY_MIB} MiB float32 (bytes read + written), "
            f"{threads} torch threads"
        ),
    }
