"""The CPU's roof, measured: what a short float32 matmul and a large copy reach on this machine with
the threads torch uses. The roofline of a CPU profile (sql/roofline.sql) is held to these figures;
they are recorded with their method in profile.json (environment.cpu_peak).

Best of a few repeats, so a moment of contention on a shared machine lowers the figure less."""

from __future__ import annotations

import time

MATMUL_N = 1024  # 2·n³ = 2.1 GFLOP per product: tens of ms on a laptop core, enough to time
COPY_MIB = 64  # past every cache level of common CPUs: the copy runs at memory bandwidth
REPEATS = 20


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
