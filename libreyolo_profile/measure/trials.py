"""The one trial loop: warmup, unprofiled timing and the profiled window, for `infer`, `run` and
benchmarks/bench_profiler_overhead.py alike.

A measured unit of work is a `Call`: `call(index, annotate)` runs the index-th call or step once;
`annotate` asks it to mark its phases (`## forward ##` …) for the trace. The runner owns everything
around the calls: which ones run, the clock, the `ProfilerStep#n` ranges, the device synchronize
that ends a window, and the progress tick after each call.

Timing is host wall time (`time.perf_counter`) around each call. A later change that interleaves
unprofiled blocks with profiled ones, or times on the device with CUDA events, belongs here: the
writers only say which calls make up a window.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Protocol

from libreyolo_profile.measure.profiler import profiling, sync


class Call(Protocol):
    def __call__(self, index: int, annotate: bool) -> object: ...


@dataclass(frozen=True)
class Window:
    """A timed stretch of calls: each call's wall time and the whole stretch's, in milliseconds."""
    call_ms: list[float]
    window_ms: float


def _no_progress() -> None:
    return None


class TrialRunner:
    """Runs calls on one device, ticking `advance()` after every call (the progress bar)."""

    def __init__(self, device, advance: Callable[[], object] = _no_progress):
        self.device = device
        self.advance = advance

    def warmup(self, call: Call, count: int) -> None:
        """`count` untimed, unannotated calls, then a device synchronize: allocator and kernels settle."""
        for index in range(count):
            call(index, False)
            self.advance()
        sync(self.device)

    def time_each(self, call: Call, indices: Iterable[int]) -> list[float]:
        """Each call of `indices`, unprofiled and unannotated, timed on its own (ms)."""
        times = []
        for index in indices:
            t0 = time.perf_counter()
            call(index, False)
            times.append((time.perf_counter() - t0) * 1000.0)
            self.advance()
        return times

    def time_window(self, call: Call, count: int) -> Window:
        """`count` unprofiled calls as one window that ends when the device is done."""
        times = []
        t_window = time.perf_counter()
        for index in range(count):
            t0 = time.perf_counter()
            call(index, False)
            times.append((time.perf_counter() - t0) * 1000.0)
            self.advance()
        sync(self.device)
        return Window(times, (time.perf_counter() - t_window) * 1000.0)

    def profiled_window(self, call: Call, count: int, profiler, *, sync_last: bool = False) -> Window:
        """`count` annotated calls under `profiler`, each inside its own `ProfilerStep#<n>` range
        (n from 1). `sync_last`: the last step waits for the device inside its range, so the window
        ends when the device is done (training); inference calls synchronize themselves."""
        from torch.profiler import record_function

        times = []
        with profiling(profiler):
            t_window = time.perf_counter()
            for index in range(count):
                t0 = time.perf_counter()
                with record_function(f"ProfilerStep#{index + 1}"):
                    call(index, True)
                    if sync_last and index == count - 1:
                        sync(self.device)
                times.append((time.perf_counter() - t0) * 1000.0)
                self.advance()
            window_ms = (time.perf_counter() - t_window) * 1000.0
        return Window(times, window_ms)


def seed_everything(seed: int, device) -> None:
    """Python, NumPy and torch (and every CUDA device's) random generators, as LibreYOLO seeds them."""
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if device.type == "cuda":
        torch.cuda.manual_seed_all(seed)
