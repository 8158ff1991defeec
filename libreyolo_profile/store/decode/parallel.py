"""Two processes over a large plain (not gzip) trace: the file is split into two byte ranges at an
event boundary near its middle, and the second range is decoded by a forked second process."""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Callable

import msgspec
import pyarrow as pa

from libreyolo_profile.errors import UnanalysableError
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.store.decode.events import EVENT_DECODER, EVENT_SCHEMA, TraceStats
from libreyolo_profile.store.decode.limits import DecodeSizes, Limits
from libreyolo_profile.store.decode.reader import EventReader
from libreyolo_profile.store.decode.repair import EVENT_BOUNDARY
from libreyolo_profile.store.decode.spill import ArrowSink, map_table
from libreyolo_profile.store.workdir import work_dir

_SPLIT_WINDOW = 4 << 20  # bytes searched from the middle for a boundary to split at


def _split_point(path: Path, array_start: int, size: int) -> tuple[int, int] | None:
    """(end of the first range, start of the second): a boundary near the middle of the array
    whose following event decodes, so the cut is not inside a string."""
    middle = array_start + (size - array_start) // 2
    with open(path, "rb") as handle:
        handle.seek(middle)
        window = handle.read(_SPLIT_WINDOW)
    for m in EVENT_BOUNDARY.finditer(window):
        start = m.end() - 1
        nxt = EVENT_BOUNDARY.search(window, start)
        if nxt is None:
            return None
        try:
            EVENT_DECODER.decode(window[start : nxt.start() + 1])
        except (msgspec.DecodeError, RecursionError):
            continue
        return middle + m.start() + 1, middle + start
    return None


def _decode_range(path: Path, start: int, end: int, out: Path, limits: Limits, sizes: DecodeSizes) -> None:
    """The second process's work: decode [start, end) into an Arrow file plus a small JSON of stats."""
    try:  # die with the parent (a killed reader must not leave a worker behind)
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except OSError:
        pass
    gc.disable()
    reader = EventReader(path, start, end, in_array=True, limits=limits, sizes=sizes)
    staged = out.with_suffix(".tmp")
    # "x": created exclusively, never through a planted link (the work dir is private, this is belt and braces)
    with open(staged, "xb") as sink, pa.ipc.new_file(sink, EVENT_SCHEMA) as writer:
        for batch in reader.batches():
            writer.write_batch(batch)
    staged.replace(out)
    result = {
        "stats": msgspec.structs.asdict(reader.stats),
        "suffix": reader.suffix.decode("latin-1"),
        "closed": reader.closed,
    }
    out.with_suffix(".json").write_text(json.dumps(result))


def _fork_decoder(path: Path, start: int, end: int, out: Path, limits: Limits, sizes: DecodeSizes) -> int:
    """Fork the second decoder: it inherits the imported modules, so it starts at once instead of
    paying a fresh interpreter's ~0.3 s of imports. Returns the child's pid."""
    # The caller may have Python signal handlers (a measurement turns SIGTERM into an exception):
    # block the signals across the fork so none runs inside the child's at-fork hooks, then let the
    # child die of them by default while the parent keeps its own handlers.
    stop_signals = {signal.SIGINT, signal.SIGTERM}
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
    try:
        pid = os.fork()
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        raise
    if pid != 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return pid
    # child: never return into the caller's code, never run its exit handlers
    code = 1
    try:
        for signum in stop_signals:
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        _decode_range(path, start, end, out, limits, sizes)
        code = 0
    except BaseException as exc:  # reported by the parent through the missing result file
        try:
            sys.stderr.write(safe_line(f"libreyolo-profile: second decoder: {type(exc).__name__}: {exc}") + "\n")
        except Exception:
            pass
    finally:
        os._exit(code)


def decode_in_two_processes(
    path: Path, progress: Callable[[int], None] | None, limits: Limits, sizes: DecodeSizes
) -> tuple[pa.Table, EventReader] | None:
    """(the events, the first range's reader holding the header and the stats of both ranges):
    two processes over the two halves of a big plain trace; None when it cannot be split."""
    probe = EventReader(path, limits=limits, sizes=sizes)
    blocks = probe.source.blocks()
    try:
        rest = probe.find_array(blocks)
    finally:
        blocks.close()
    array_start = probe.stats.bytes_read - len(rest)
    split = _split_point(path, array_start, probe.source.size)
    if split is None:
        return None
    first_end, second_start = split
    work = work_dir("ingest")  # under the cache, swept if we are killed
    try:
        second = work / "second.arrow"
        child = _fork_decoder(path, second_start, probe.source.size, second, limits, sizes)
        status = None
        try:
            first = EventReader(path, 0, first_end, progress=progress, limits=limits, sizes=sizes)
            first.range_ends_mid_array = True
            sink = ArrowSink(work, sizes)
            sink.spill()
            for batch in first.batches():
                sink.add(batch)
            first_table = sink.table()
            _, status = os.waitpid(child, 0)
        finally:
            if status is None:  # the parent failed or was interrupted: take the child down with it
                try:
                    os.kill(child, signal.SIGKILL)
                    os.waitpid(child, 0)
                except (ProcessLookupError, ChildProcessError):
                    pass
        if os.waitstatus_to_exitcode(status) != 0 or not second.with_suffix(".json").is_file():
            raise UnanalysableError(
                f"{path}: the second decoding process failed (exit {os.waitstatus_to_exitcode(status)})"
            )
        result = json.loads(second.with_suffix(".json").read_text())
        table = pa.concat_tables([first_table, map_table(second)])
        _add_second_range(first, result)
        return table, first
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _add_second_range(first: EventReader, result: dict) -> None:
    """Fold what the second process saw into the first range's reader, as if one had read it all."""
    stats = first.stats
    other = TraceStats(**result["stats"])
    for field in ("events_seen", "events_kept", "bytes_read", "repairs", "dropped_events"):
        setattr(stats, field, getattr(stats, field) + getattr(other, field))
    stats.merge(other)
    stats.truncated = other.truncated
    stats.workers = 2
    first.suffix = result["suffix"].encode("latin-1")
    first.closed = result["closed"]
