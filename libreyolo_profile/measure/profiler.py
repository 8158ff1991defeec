"""The profiler as both writers configure it, Kineto's stderr chatter filtered, and what the
window measures beside the trace: allocator peaks on CUDA, the process's peak RSS on the CPU."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Iterator

from libreyolo_profile.errors import ProfileError
from libreyolo_profile.measure.modules import BACKWARD_PREFIX, assign_lanes, separate_backward_ranges

# Profiler settings, chosen for low distortion: no stacks, modules or FLOP counting (each adds per-op
# host cost; the CPU forward dispatches ~5,000 aten ops per call). Shapes are recorded: the roofline
# (sql/roofline_costs.sql) computes each op's FLOPs and bytes from them, and the headline comes
# from unprofiled calls, so their host cost does not bend it.
PROFILER_OPTIONS = {"record_shapes": True, "with_stack": False, "with_modules": False, "with_flops": False}
# The scalar lists among an op's inputs (a convolution's stride, padding, dilation: the trace's Concrete
# Inputs) are recorded in the window's first step only. Recorded in every step, the process grew 0.6-0.85 GB
# with each profiled training step of LibreYOLO9-t (batch 4, 320 px) and the later steps slowed to 1.6-2.1 s
# from ~0.85 s; without them it stays within ~50 MB a step (benchmarks/bench_training_window.py). A step
# repeats its calls, and sql/ingest.sql gives a later step's call the lists of the first step's call at
# the same place.
SCALAR_LISTS_RECORDED = "first profiled step"


def profiler_settings(device) -> dict:
    """How the profiler was configured, as the profile records it (settings.profiler)."""
    lists = SCALAR_LISTS_RECORDED if _scalar_list_switch() is not None else "every profiled step"
    return dict(
        PROFILER_OPTIONS, scalar_lists_recorded=lists, activities=["cpu"] + (["cuda"] if device.type == "cuda" else [])
    )


def _scalar_list_switch():
    """torch's switch for recording scalar lists (private, in torch since 2.1); None where this torch lacks it,
    and then every step records them."""
    try:
        from torch._C import _profiler
    except ImportError:
        return None
    return getattr(_profiler, "_set_record_concrete_inputs_enabled_val", None)


@contextlib.contextmanager
def scalar_lists_switch() -> Iterator:
    """Yields a function that turns the recording of scalar lists off for the rest of the window; it is on
    again (torch's default) when the window ends."""
    switch = _scalar_list_switch()
    try:
        yield (lambda: switch(False)) if switch is not None else (lambda: None)
    finally:
        if switch is not None:
            switch(True)


def make_profiler(device, profile_memory: bool = False):
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    return profile(activities=activities, profile_memory=profile_memory, **PROFILER_OPTIONS)


def export_trace(prof, path: Path) -> Path:
    with kineto_quiet():
        prof.export_chrome_trace(str(path))
    _check_exported(path)
    # tracks of their own, so every thread's ranges nest (measure/modules.py); streamed where the file is as
    # Kineto writes it, else read whole
    if streamed_backward_ranges(path) is None:
        separate_backward_ranges(path)
    return path


# Kineto writes each event as a block of lines: "  {" alone, the fields indented deeper, then "  }" or "  },".
_EVENT_OPEN, _EVENT_CLOSE = b"  {", b"  }"


def _event_blocks(handle) -> Iterator[tuple[int, list[bytes]]]:
    """(line number of its opening line, its lines) for every event block; other lines as (number, [line])
    one by one. Raises ValueError where a block does not close."""
    block: list[bytes] | None = None
    start = 0
    for number, line in enumerate(handle):
        bare = line.rstrip(b"\r\n")
        if block is None:
            if bare == _EVENT_OPEN:
                block, start = [line], number
            else:
                yield number, [line]
            continue
        block.append(line)
        if bare.startswith(_EVENT_CLOSE) and bare.rstrip(b",") == _EVENT_CLOSE:
            yield start, block
            block = None
    if block is not None:
        raise ValueError("an event block does not close")


def streamed_backward_ranges(path: Path) -> int | None:
    """measure/modules.py's `separate_backward_ranges`, without holding the trace: a training window's trace
    is ~200 MB, and read whole as Python objects it took ~2 GB on top of the measuring process (its peak: 4.6 GiB
    against 2.7 without it, benchmarks/bench_run_cost.py). The file is read twice, a block at a time: once for
    the backward module ranges (all `assign_lanes` reads), then copied with those ranges moved and the lanes'
    names added first in traceEvents. Returns how many ranges moved; None where the file is not laid out as
    Kineto writes it (the caller then reads it whole)."""
    prefix = BACKWARD_PREFIX.encode()
    ranges: dict[int, dict] = {}
    try:
        with open(path, "rb") as handle:
            for start, lines in _event_blocks(handle):
                if not any(prefix in line for line in lines):
                    continue
                if len(lines) == 1:  # a range outside Kineto's blocks: not the layout this reads
                    return None
                event = json.loads(b"".join(lines).rstrip().rstrip(b","))
                if isinstance(event, dict) and str(event.get("name", "")).startswith(BACKWARD_PREFIX):
                    ranges[start] = event
    except (OSError, ValueError):
        return None
    if not ranges:
        return 0
    events = list(ranges.values())
    moved = assign_lanes(events)  # in place: the ranges' tids, then the lanes' names appended
    if not moved:
        return 0
    names = events[len(ranges) :]
    handle_out, temp = tempfile.mkstemp(prefix=".libreyolo-profile-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(handle_out, "wb") as out, open(path, "rb") as handle:
            opened = False
            for start, lines in _event_blocks(handle):
                if not opened and lines[0].rstrip().endswith(b'"traceEvents": ['):
                    out.write(lines[0])
                    out.writelines(b"  " + json.dumps(name).encode() + b",\n" for name in names)
                    opened = True
                    continue
                event = ranges.get(start) if len(lines) > 1 else None
                if event is None:
                    out.writelines(lines)
                    continue
                comma = b"," if lines[-1].rstrip().endswith(b",") else b""
                out.write(b"  " + json.dumps(event, allow_nan=False).encode() + comma + b"\n")
        if not opened:
            raise ValueError("no traceEvents array")
        os.replace(temp, path)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(temp)
        return None
    return moved


def _check_exported(path: Path) -> None:
    """Kineto writes the trace in C++ and says nothing when the disk fills: a device left without a free
    block is named here (a full disk exits 3 through the workspace), and so is a missing or empty trace,
    rather than found missing or cut short by the analysis."""
    try:
        device = os.statvfs(path.parent)
        free = device.f_bfree if os.geteuid() == 0 else device.f_bavail  # root may write the reserved blocks
    except OSError:
        free = None
    if free == 0:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    if not path.is_file() or path.stat().st_size == 0:
        raise ProfileError(f"the profiler wrote no trace to {path} (its own message, if any, is above)", 3)


# Kineto (C++) writes status lines straight to fd 2 at profiler start/stop, whatever
# KINETO_LOG_LEVEL says, and on a CUDA build without a GPU an "ERROR … gpuGetDeviceCount failed"
# line. These are dropped; any other line Kineto writes is passed through.
_KINETO_NOISE = re.compile(r"^(USDT|STAGE|INFO):\d{4}-\d\d-\d\d |^ERROR:\d{4}-\d\d-\d\d .*gpuGetDeviceCount failed")


@contextlib.contextmanager
def kineto_quiet() -> Iterator[None]:
    """Capture fd 2 around a profiler start/stop/export call and drop Kineto's routine lines."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except OSError:  # no usable fd 2: nothing to filter
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            kept = [
                line
                for line in sink.read().decode("utf-8", "replace").splitlines(keepends=True)
                if not _KINETO_NOISE.match(line)
            ]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()


@contextlib.contextmanager
def profiling(prof) -> Iterator:
    """`with prof:` with Kineto's start/stop chatter filtered from stderr."""
    with kineto_quiet():
        prof.start()
    try:
        yield prof
    finally:
        with kineto_quiet():
            prof.stop()


def cuda_memory_reset(device) -> int | None:
    """Reset the allocator peaks at a trial's start; returns the alloc-retry count to diff."""
    import torch

    if device.type != "cuda":
        return None
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    return int(torch.cuda.memory_stats(device).get("num_alloc_retries", 0))


def cuda_memory_capture(device, retries_before: int | None) -> dict:
    import torch

    if device.type != "cuda":
        return {}
    stats = torch.cuda.memory_stats(device)
    peak = torch.cuda.max_memory_allocated(device) / 2**20
    return {
        "peak_vram_mb": round(peak, 2),
        "peak_mem_mb": round(peak, 2),
        "peak_reserved_mb": round(torch.cuda.max_memory_reserved(device) / 2**20, 2),
        "device_total_mb": round(torch.cuda.get_device_properties(device).total_memory / 2**20, 2),
        "num_alloc_retries": int(stats.get("num_alloc_retries", 0)) - int(retries_before or 0),
    }


def peak_rss_mb() -> float | None:
    """Peak resident set size of this process so far (Linux reports KiB), for CPU profiles."""
    with contextlib.suppress(Exception):
        import resource

        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return round(rss / 1024 if sys.platform != "darwin" else rss / 2**20, 1)
    return None


def sync(device) -> None:
    if device.type == "cuda":
        import torch

        torch.cuda.synchronize(device)
