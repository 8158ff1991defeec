"""Decode a PyTorch profiler (Kineto) Chrome trace into an Arrow table of raw events: the decoder's
one entry point, `parse_trace`, and what it says of a damaged trace (`damage_notes`).

How (see ../shared/notes/trace-parsing-measurements.md for the measurements behind it), a module each:
- source.py reads the file in blocks, gzip decompressed on the fly, and refuses special files;
- reader.py cuts the `traceEvents` array into pieces at event boundaries and decodes each by msgspec
  (events.py: the Structs and EVENT_SCHEMA), columns.py turns them into Arrow columns right away;
- repair.py repairs what fast parsers reject (real PyTorch bugs) and salvages the rest event by event;
- spill.py keeps the output in memory, memory-mapped from a temporary file once it grows large;
- parallel.py decodes a large plain file as two byte ranges, the second in a forked process;
- limits.py bounds what hostile input may make us hold (`Limits`) and holds the working sizes
  (`DecodeSizes`), which change speed and memory, never the table.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import Callable, Protocol

import pyarrow as pa

from libreyolo_profile.errors import UnanalysableError
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.pandas_probe import before_building_arrays
from libreyolo_profile.store.decode.columns import as_number
from libreyolo_profile.store.decode.events import ParsedTrace, TraceStats
from libreyolo_profile.store.decode.limits import DecodeSizes, Limits
from libreyolo_profile.store.decode.parallel import decode_in_two_processes
from libreyolo_profile.store.decode.reader import EventReader
from libreyolo_profile.store.decode.source import is_gzip, regular_file_size
from libreyolo_profile.store.decode.spill import ArrowSink


class ReadingProgress(Protocol):
    """What a caller may show while a trace is read (output/progress.py has one for the terminal)."""

    def __call__(self, position: int) -> None: ...  # bytes of the file read so far

    def done(self, events_read: int | None) -> None: ...  # None: reading failed


def parse_trace(
    path: Path,
    workers: int | None = None,
    limits: Limits | None = None,
    report: bool = True,
    sizes: DecodeSizes | None = None,
    progress: Callable[[Path, int], ReadingProgress] | None = None,
) -> ParsedTrace:
    """The trace's raw events (EVENT_SCHEMA), devices, rank and world size.

    Large outputs are backed by a memory-mapped temporary file (already unlinked), so the table
    does not hold the trace in anonymous memory. `workers=1` forces one process. `limits`: the caps
    against hostile input (default: `Limits.from_env()`). `report`: say the damage on stderr.
    `sizes`: the working sizes (default: `DecodeSizes()`). `progress`: made with the path and the
    file's size, then told how far reading got (default: nothing shown)."""
    path = Path(path)
    before_building_arrays()  # the first arrays of a command are the trace's
    limits = limits or Limits.from_env()
    sizes = sizes or DecodeSizes()
    shown = None
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the collector doubles parse time at this size, and Structs need none
    try:
        size = regular_file_size(path)
        shown = progress(path, size) if progress is not None else None
        parsed = _decode(path, size, workers, limits, sizes, shown)
        if shown is not None:
            shown.done(parsed.stats.events_seen)
            shown = None
        if report:
            _report(path, parsed.stats)
        return parsed
    finally:
        if shown is not None:
            shown.done(None)
        if gc_was_enabled:
            gc.enable()


def _decode(
    path: Path,
    size: int,
    workers: int | None,
    limits: Limits,
    sizes: DecodeSizes,
    progress: Callable[[int], None] | None,
) -> ParsedTrace:
    decoded = None
    if (workers or 2) > 1 and size >= sizes.parallel_bytes and (os.cpu_count() or 1) > 1 and not is_gzip(path):
        decoded = decode_in_two_processes(path, progress, limits, sizes)
    if decoded is None:
        decoded = _decode_in_one_process(path, progress, limits, sizes)
    table, reader = decoded
    return _parsed_trace(path, table, reader)


def _decode_in_one_process(
    path: Path, progress: Callable[[int], None] | None, limits: Limits, sizes: DecodeSizes
) -> tuple[pa.Table, EventReader]:
    reader = EventReader(path, progress=progress, limits=limits, sizes=sizes)
    sink = ArrowSink(sizes=sizes)
    try:
        for batch in reader.batches():
            sink.add(batch)
        table = sink.table()
    finally:
        sink.close()
    return table, reader


def _parsed_trace(path: Path, table: pa.Table, reader: EventReader) -> ParsedTrace:
    stats = reader.stats
    if stats.events_seen == 0:
        if stats.truncated:
            raise UnanalysableError(f"{path}: the trace is cut off before its first complete event")
        if stats.dropped_events:
            raise UnanalysableError(
                f"{path}: no trace event could be read ({stats.dropped_events} unreadable entries), "
                "not a PyTorch profiler trace"
            )
        raise UnanalysableError(f"{path}: JSON without trace events, not a PyTorch profiler trace")
    header = reader.header()
    devices = []
    for prop in header.deviceProperties or []:
        total = prop.totalGlobalMem
        devices.append(
            {
                "device": None if prop.id is None else str(prop.id),
                "name": prop.name,
                "total_mb": None if total is None else float(total) / 2**20,
                "num_sms": as_number(prop.numSms, True)[0],
            }
        )
    info = header.distributedInfo
    return ParsedTrace(
        events=table,
        devices=devices,
        rank=_int_or_none(info.rank) if info else None,
        world_size=_int_or_none(info.world_size) if info else None,
        stats=stats,
        distributed=None
        if info is None
        else {
            "backend": info.backend,
            "pg_config": None if bytes(info.pg_config) == b"null" else bytes(info.pg_config).decode("utf-8", "replace"),
        },
    )


def _int_or_none(value) -> int | None:
    return as_number(value, True)[0]  # "3", 3.0 and 3 alike


def damage_notes(stats: TraceStats | None, typing: list[tuple[str, int, str | None]] = ()) -> list[str]:
    """What had to be repaired, dropped, recovered or read differently, one sentence each (none for a clean
    trace). `typing`: what typing the events in SQL had to alter, as (reason, events, an example) rows
    (sql/events.sql's event_damage). The profile keeps them as its `trace_damaged` mark, so every later
    read can say them again."""
    notes = []
    stats = stats or TraceStats()
    if stats.truncated:
        notes.append(
            f"cut off (the JSON ends mid-file, e.g. a killed job): recovered {stats.events_seen:,} complete "
            f"events from {stats.bytes_read / 1e6:.1f} MB of JSON; whatever came after is missing"
        )
    if stats.repairs:
        notes.append(
            f"repaired {stats.repairs:,} spots of invalid JSON (bad UTF-8, control characters, bare "
            "inf/NaN or unescaped quotes)"
        )
    if stats.dropped_events:
        notes.append(f"{stats.dropped_events:,} unreadable event(s) left out")
    counted = [(reason, n, stats.examples.get(reason)) for reason, n in stats.altered.items()]
    for reason, events, example in [*counted, *typing]:
        notes.append(
            f"{events:,} event{'' if events == 1 else 's'}: {reason}" + (f" (e.g. {example})" if example else "")
        )
    notes.extend(f"header: {note}" for note in stats.header_notes)
    return notes


def _report(path: Path, stats: TraceStats) -> None:
    """Say on stderr what had to be repaired, dropped or recovered (nothing for a clean trace)."""
    for note in damage_notes(stats):
        print(safe_line(f"warning: {path}: {note}"), file=sys.stderr)
