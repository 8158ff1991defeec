"""The one trial loop: warmup, unprofiled timing and the profiled window, for `infer`, `run` and
benchmarks/bench_profiler_overhead.py alike.

A measured unit of work is a `Call`: `call(index, annotate)` runs the index-th call or step once;
`annotate` asks it to mark its phases (`## forward ##` …) for the trace. Calls open each phase with
`phase(name, annotate)`: annotated, it is a `record_function` range for the profiler; unannotated
inside `time_block`, it is timed on the host clock, so the stage split of the headline comes from
unprofiled work too. The runner owns everything around the calls: which ones run, the clock, the
`ProfilerStep#n` ranges, the device synchronize that ends a block, and the progress tick.

The headline (step time, throughput, percentiles, stage split) is measured on unprofiled blocks
(`time_block`); the profiled window supplies the attribution. On CUDA a block's calls are timed with
CUDA events recorded on the current stream, and the host synchronizes only at the block's edges, so
the timing adds no synchronization the work itself doesn't do.
"""

from __future__ import annotations

import contextlib
import gc
import random
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Protocol

from libreyolo_profile.collector import resume_before_measuring
from libreyolo_profile.measure.profiler import profiling, scalar_lists_switch, sync


class Call(Protocol):
    def __call__(self, index: int, annotate: bool) -> object: ...


@dataclass
class Block:
    """A timed stretch of calls. `call_ms`: each call's time (CUDA events on a GPU, the host clock on
    the CPU); `wall_ms`: the block's host wall time, ending when the device is done; `stage_ms`: per
    phase, each call's host time in it (unprofiled blocks only); `clock`: which clock timed the calls."""

    call_ms: list[float]
    wall_ms: float
    stage_ms: dict[str, list[float]] = field(default_factory=dict)
    clock: str = "host perf_counter"


# the phase timer of the unprofiled block being timed now (None: phases are not timed)
_stage_timer: dict[str, list[float]] | None = None


@contextlib.contextmanager
def phase(name: str, annotate: bool) -> Iterator[None]:
    """A phase of a call: a `## name ##` profiler range when annotated; timed on the host clock when an
    unprofiled block is being timed; otherwise nothing at all."""
    if annotate:
        from torch.profiler import record_function

        with record_function(f"## {name} ##"):
            yield
        return
    timer = _stage_timer
    if timer is None:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timer.setdefault(name, []).append((time.perf_counter() - t0) * 1000.0)


def _no_progress(*_args, **_kwargs) -> None:
    return None


class TrialRunner:
    """Runs calls on one device, ticking `advance()` after every call (the progress bar)."""

    def __init__(self, device, advance: Callable[..., object] = _no_progress):
        resume_before_measuring()  # the command's start-up heap frozen out of the collector (collector.py)
        self.device = device
        self.advance = advance
        self.cuda = getattr(device, "type", "cpu") == "cuda"

    def warmup(self, call: Call, count: int, done: int = 0) -> None:
        """`count` untimed, unannotated calls, then a device synchronize: allocator and kernels settle.
        `done`: the first calls of them already made (infer's preflight is its first warmup call)."""
        for index in range(count):
            if index >= done:
                call(index, False)
            self.advance()
        sync(self.device)

    def time_block(self, call: Call, indices: Iterable[int]) -> Block:
        """The calls of `indices`, unprofiled and unannotated, as one block: each call timed (CUDA events
        on a GPU), each phase timed on the host, a synchronize before and after the block only."""
        global _stage_timer
        indices = list(indices)
        stages: dict[str, list[float]] = {}
        gc.collect()  # the garbage the profiler or the setup left is not this block's to pay for
        sync(self.device)
        if self.cuda:
            import torch

            events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in indices]
        host_ms = []
        _stage_timer = stages
        try:
            t_block = time.perf_counter()
            for k, index in enumerate(indices):
                t0 = time.perf_counter()
                if self.cuda:
                    events[k][0].record()
                call(index, False)
                if self.cuda:
                    events[k][1].record()
                host_ms.append((time.perf_counter() - t0) * 1000.0)
                self.advance()
            sync(self.device)
            wall_ms = (time.perf_counter() - t_block) * 1000.0
        finally:
            _stage_timer = None
        if self.cuda:
            return Block(
                [start.elapsed_time(end) for start, end in events],
                wall_ms,
                stages,
                "CUDA events on the current stream (synchronized at the block's edges)",
            )
        return Block(host_ms, wall_ms, stages)

    def profiled_window(self, call: Call, count: int, profiler, *, sync_last: bool = False) -> Block:
        """`count` annotated calls under `profiler`, each inside its own `ProfilerStep#<n>` range
        (n from 1). `sync_last`: the last step waits for the device inside its range, so the window
        ends when the device is done (training); inference calls synchronize themselves. Call times
        are host wall times: under the profiler they are the profiled side of the overhead pair."""
        from torch.profiler import record_function

        times = []
        with scalar_lists_switch() as stop_scalar_lists, profiling(profiler):
            t_window = time.perf_counter()
            for index in range(count):
                t0 = time.perf_counter()
                with record_function(f"ProfilerStep#{index + 1}"):
                    call(index, True)
                    if sync_last and index == count - 1:
                        sync(self.device)
                times.append((time.perf_counter() - t0) * 1000.0)
                if index == 0:
                    stop_scalar_lists()  # the first step's are the window's (measure/profiler.py)
                self.advance()
            window_ms = (time.perf_counter() - t_window) * 1000.0
        return Block(times, window_ms)


def seed_everything(seed: int, device) -> None:
    """Python, NumPy and torch (and every CUDA device's) random generators, as LibreYOLO seeds them."""
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if device.type == "cuda":
        torch.cuda.manual_seed_all(seed)
