"""The streaming event reader: walks the JSON of one trace (or of a byte range of it) and yields
Arrow record batches of its events; the header and `TraceStats` are complete once they are exhausted.

The `traceEvents` array is cut into ~128 KB pieces at candidate event boundaries, and each piece is
decoded by msgspec into typed Structs (no GC tracking) and turned into Arrow columns right away; a
cut is accepted only when the piece decodes (compact JSON has `}, {` inside kernel names). A piece
that does not decode is repaired or salvaged (repair.py); a file cut off mid-way yields its complete
events. Whitespace runs are skipped in linear time and one event's text is capped (`Limits`), so
hostile input is refused with one line instead of hanging or exhausting memory.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Iterator

import msgspec
import pyarrow as pa

from libreyolo_profile.errors import UnanalysableError
from libreyolo_profile.store.decode.columns import BatchColumns, as_number
from libreyolo_profile.store.decode.events import (
    EVENTS_DECODER,
    KEPT_PHASES,
    OTHER_PHASES,
    RAW_NULL,
    UNREAD_TIME_PHASES,
    DeviceProperties,
    DistributedInfo,
    Event,
    Header,
    TraceStats,
    example_text,
)
from libreyolo_profile.store.decode.limits import ENV_MAX_EVENT, DecodeSizes, Limits, mib
from libreyolo_profile.store.decode.repair import (
    EVENT_BOUNDARY,
    GENERIC_DECODER,
    NESTED_TOO_DEEP,
    TRUNCATED,
    array_end,
    cap_nesting,
    repair_json,
    salvage_events,
)
from libreyolo_profile.store.decode.source import TraceSource

BYTE_ORDER_MARK = b"\xef\xbb\xbf"  # a UTF-8 byte order mark some editors and Windows tools write first: skipped
_SPACE = re.compile(rb"[ \t\r\n]*")
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*')


def _more_of_a_space_run(text: bytes | bytearray, block) -> bool:
    """`block` is nothing but whitespace and `text` already ends in whitespace: the block adds
    nothing a JSON reader needs (one space stands for any run), so a run of gigabytes is never held.
    Fails fast on a real block, at its first byte that is not whitespace."""
    return text[-1:].isspace() and _SPACE.fullmatch(block) is not None


def _header_value(value, kind: str, where: str, notes: list[str]):
    """One header field as `kind` ("int", "number", "text" or "id": an int or a text), None (with a note
    in `notes`) where it cannot be read as one."""
    if value is None:
        return None
    if kind == "text" or (kind == "id" and isinstance(value, str)):
        if isinstance(value, str):
            return value
        notes.append(f"`{where}` not a text ({example_text(value)}), read as unknown")
        return None
    number, why = as_number(value, kind in ("int", "id"))
    if why and number is None:
        notes.append(f"`{where}` {why} ({example_text(value)})")
    return number


def _devices(value, notes: list[str]) -> list[DeviceProperties] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        notes.append(f"`deviceProperties` not a list ({example_text(value)}), so the devices are unknown")
        return None
    devices = []
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            notes.append(f"`deviceProperties[{i}]` not an object ({example_text(entry)}), left out")
            continue
        fields = {"id": "id", "name": "text", "totalGlobalMem": "number", "numSms": "int"}
        read = {f: _header_value(entry.get(f), kind, f"deviceProperties[{i}].{f}", notes) for f, kind in fields.items()}
        devices.append(DeviceProperties(**read))
    return devices


def _distributed(value, notes: list[str]) -> DistributedInfo | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        notes.append(f"`distributedInfo` not an object ({example_text(value)}), so the rank is unknown")
        return None
    fields = {"rank": "int", "world_size": "int", "backend": "text"}
    info = {f: _header_value(value.get(f), kind, f"distributedInfo.{f}", notes) for f, kind in fields.items()}
    pg_config = value.get("pg_config")
    raw = RAW_NULL if pg_config is None else msgspec.Raw(msgspec.json.encode(pg_config))
    return DistributedInfo(**info, pg_config=raw)


def _is_binary(head: bytes) -> bool:
    """Text that is not JSON but bytes no text holds: NULs, or invalid UTF-8 early on."""
    sample = head[:4096]
    if b"\0" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(sample) - 4  # a character cut by the sample's end is not evidence
    return False


class EventReader:
    """Walks one file (or byte range) and yields record batches; the header and stats after."""

    def __init__(
        self,
        path: Path,
        start: int = 0,
        end: int | None = None,
        in_array: bool = False,
        progress: Callable[[int], None] | None = None,
        limits: Limits | None = None,
        sizes: DecodeSizes | None = None,
    ):
        self.path = Path(path)
        self.limits = limits or Limits()
        self.sizes = sizes or DecodeSizes()
        self.source = TraceSource(self.path, start, end, self.limits, self.sizes)
        self.in_array = in_array  # the range starts inside the event array, at an event
        self.progress = progress
        self.stats = TraceStats(bytes_total=self.source.size)
        self.prefix = b""  # JSON before the event array
        self.suffix = b""  # JSON after it
        self.closed = False  # the array's closing bracket was seen
        self.range_ends_mid_array = False  # the first of two processes' ranges

    # -- header ------------------------------------------------------------------------------
    def find_array(self, blocks: Iterator[bytes]) -> bytes:
        """Consume the JSON before the event array; returns what follows its `[`."""
        data = bytearray()  # from the first byte that is not whitespace (any run of it is dropped as it streams by)
        key_at = -1
        first = True
        for block in blocks:
            searched = max(0, len(data) - 16)
            self.stats.bytes_read += len(block)
            if first:
                block = bytes(block).removeprefix(BYTE_ORDER_MARK)
                first = False
            if _more_of_a_space_run(data, block):
                continue
            if not data:
                block = bytes(block).lstrip()
                if not block:
                    continue
                if block[:1] == b"[":  # a bare event list
                    return block[1:]
                if block[:1] != b"{":
                    raise UnanalysableError(
                        f"{self.path}: "
                        + (
                            "not a JSON trace (binary data)"
                            if _is_binary(block)
                            else "not JSON, so not a PyTorch profiler trace"
                        )
                    )
            data += block
            if key_at < 0:
                key_at = data.find(b'"traceEvents"', searched)
            if key_at >= 0:
                m = _EVENTS_KEY.match(data, key_at)
                if m and len(data) > m.end():
                    if data[m.end() : m.end() + 1] != b"[":
                        raise UnanalysableError(f"{self.path}: traceEvents is not a list of events")
                    self.prefix = bytes(data[: m.end()])
                    return bytes(data[m.end() + 1 :])
            if len(data) > self.sizes.max_prefix_bytes:
                break
        self._raise_not_a_trace(bytes(data))

    def _raise_not_a_trace(self, data: bytes):
        if self.source.corrupt_gzip:
            raise UnanalysableError(
                f"{self.path}: damaged gzip data ({self.source.corrupt_gzip}) before any trace event"
            )
        if not data.strip():
            raise UnanalysableError(f"{self.path}: the file is empty, not a PyTorch profiler trace")
        try:
            value = msgspec.json.decode(data)
        except msgspec.DecodeError:
            if self.source.gzip and (self.source.truncated_gzip or self.source.corrupt_gzip):
                raise UnanalysableError(f"{self.path}: the gzip stream is damaged before any trace event") from None
            raise UnanalysableError(
                f"{self.path}: not valid JSON and no trace events found, not a PyTorch profiler trace"
            ) from None
        raise UnanalysableError(
            f"{self.path}: JSON ({type(value).__name__}) without trace events, not a PyTorch profiler trace"
        )

    def header(self) -> Header:
        if not self.prefix.strip():
            return Header()
        suffix = self.suffix if self.closed else b"}"
        # with the JSON after the events (where the header may sit), else without it (when it is damaged)
        for text in (self.prefix + b"[]" + suffix, self.prefix + b"[]}"):
            try:
                return msgspec.json.decode(text, type=Header)
            except (msgspec.DecodeError, RecursionError):
                pass
            # an odd value somewhere: the fields we need one by one, so one cannot take the others with it
            try:
                loose = GENERIC_DECODER.decode(cap_nesting(repair_json(text)[0])[0])
            except msgspec.DecodeError:
                continue
            if isinstance(loose, dict):
                notes = self.stats.header_notes
                return Header(
                    deviceProperties=_devices(loose.get("deviceProperties"), notes),
                    distributedInfo=_distributed(loose.get("distributedInfo"), notes),
                )
        return Header()

    # -- events ------------------------------------------------------------------------------
    def batches(self) -> Iterator[pa.RecordBatch]:
        """The events, a record batch of up to batch_rows at a time, decoded a piece (~piece_bytes) at a time."""
        blocks = self.source.blocks()
        # `pending` (unparsed text) and `scratch` (one piece in brackets, for the decoder) are reused
        # buffers; decoded Raw values point into `scratch`, so `BatchColumns.add` copies them out.
        pending = bytearray() if self.in_array else bytearray(self.find_array(blocks))
        scratch = bytearray(4 * self.sizes.piece_bytes)
        stats = self.stats
        columns = BatchColumns(stats)
        pos = 0
        eof = False
        min_cut = 0  # a cut must lie beyond this (an event larger than one piece)
        while True:
            if not eof:
                pos, min_cut, eof = self._read_ahead(blocks, pending, pos, min_cut)
            # skip whitespace between events (any run of it: each byte once, then dropped with `pos`)
            pos = _SPACE.match(pending, pos).end()
            if not self.in_array and not self.closed and pending[pos : pos + 1] == b"]":
                # an empty array closes at once
                self.closed = True
                self.suffix = self._rest(bytes(pending[pos + 1 :]), blocks)
                break
            self.in_array = True
            if pos >= len(pending):
                if eof:
                    stats.truncated = not self.closed and self._expects_close()
                    break
                continue
            cut = self._cut(pending, pos, min_cut, eof)
            if cut is None and not eof:
                min_cut = self._check_event_size(len(pending) - pos)  # no boundary yet: read more
                continue
            end = cut if cut is not None else len(pending)
            size = end - pos
            if cut is not None:  # a piece cut at a boundary is ~piece_bytes long, unless one event in it is huge
                self._check_event_size(size)
            scratch, events, consumed = self._decode_piece(scratch, pending, pos, end, cut is None, eof, blocks)
            self._emit_into(columns, events)
            del events  # release the Raw views into `scratch` before it is reused
            if consumed is None:  # the piece held the array's closing bracket: the JSON after it is read
                break
            if consumed == 0:
                min_cut = self._check_event_size(end - pos)  # the first event needs more text than this piece
                if eof and cut is None:
                    stats.truncated = True
                    break
                continue
            min_cut = 0
            nxt = pending.find(b"{", pos + consumed)
            pos = nxt if nxt >= 0 else len(pending)
            if cut is None and consumed >= size and eof:
                stats.truncated = self._expects_close()
                break
            if columns.rows >= self.sizes.batch_rows:
                yield columns.batch()
                columns = BatchColumns(stats)
        if columns.rows:
            yield columns.batch()
        if self.source.truncated_gzip or self.source.corrupt_gzip:
            stats.truncated = True

    def _read_ahead(self, blocks: Iterator[bytes], pending: bytearray, pos: int, min_cut: int) -> tuple[int, int, bool]:
        """Keep at least two pieces of text ahead of `pos` in `pending` (or everything, at the end), dropping
        what lies before `pos` as blocks are appended: returns (pos, min_cut, eof) after the move."""
        while len(pending) - pos < 2 * self.sizes.piece_bytes + min_cut:
            block = next(blocks, None)
            if block is None:
                return pos, min_cut, True
            self.stats.bytes_read += len(block)
            if _more_of_a_space_run(pending, block):
                continue
            del pending[:pos]
            pending += block
            min_cut = max(0, min_cut - pos)
            pos = 0
            if self.progress:
                self.progress(self.source.position())
        return pos, min_cut, False

    def _decode_piece(
        self,
        scratch: bytearray,
        pending: bytearray,
        pos: int,
        end: int,
        uncut: bool,
        eof: bool,
        blocks: Iterator[bytes],
    ) -> tuple[bytearray, list[Event], int | None]:
        """Decode the piece `pending[pos:end]` (`uncut`: it runs to the end of the text read so far) in
        brackets in `scratch` (grown when too small): (scratch, its events, the bytes they used up). A piece
        that does not decode is repaired or salvaged; one that holds the array's closing bracket closes the
        array, its consumed bytes then None."""
        size = end - pos
        if len(scratch) < size + 2:
            scratch = bytearray(size + 2)
        scratch[0] = 0x5B  # [
        scratch[1 : size + 1] = memoryview(pending)[pos:end]
        scratch[size + 1] = 0x5D  # ]
        try:
            return scratch, EVENTS_DECODER.decode(memoryview(scratch)[: size + 2]), size
        except (msgspec.DecodeError, RecursionError) as exc:  # RecursionError: nesting too deep (repair.py)
            piece = bytes(pending[pos:end])
            closing = array_end(piece) if uncut or b"]" in piece else None
            if closing is not None:
                return scratch, self._close_array(closing, bytes(pending[end:]), blocks), None
            events, consumed = self._decode_hard(piece, uncut and eof, str(exc))
            return scratch, events, consumed

    def _close_array(self, closing: tuple[bytes, int, int, int], after: bytes, blocks: Iterator[bytes]) -> list[Event]:
        """The events before the array's closing bracket (array_end's text, where it closes, its fixes and cuts); the
        JSON after the bracket, `after` and the blocks still to come, is kept as the suffix."""
        text, at, fixes, deep = closing
        self.stats.repairs += fixes
        if deep:
            self.stats.count(NESTED_TOO_DEEP, deep)
        try:
            events = EVENTS_DECODER.decode(b"[" + text[:at] + b"]")
        except (msgspec.DecodeError, RecursionError) as last_exc:
            events, _ = self._decode_hard(text[:at], True, str(last_exc))
        self.closed = True
        self.suffix = self._rest(text[at + 1 :] + after, blocks)
        return events

    def _expects_close(self) -> bool:
        """A range that ends mid-array by design (the first of two processes') is not cut off."""
        return not self.range_ends_mid_array

    def _check_event_size(self, size: int) -> int:
        """`size` bytes hold no event boundary yet: fine up to the cap, refused past it (one huge
        string, or a run of whitespace inside an event, would otherwise be held whole)."""
        if size > self.limits.max_event_bytes:
            raise UnanalysableError(
                f"{self.path}: {mib(size)} of text from byte {self.stats.bytes_read - size:,} of the JSON hold no "
                f"end of an event (capped at {mib(self.limits.max_event_bytes)}; "
                "no profiler writes one event or string that long): "
                f"refused (set {ENV_MAX_EVENT} to read it anyway)"
            )
        return size

    def _rest(self, head: bytes, blocks: Iterator[bytes]) -> bytes:
        """The JSON after the event array (header fields such as deviceProperties may sit there):
        read to the end, but only its first max_prefix_bytes kept, and no block of nothing but whitespace."""
        kept = bytearray(head.lstrip())
        for block in blocks:
            self.stats.bytes_read += len(block)
            block = bytes(block)
            if len(kept) < self.sizes.max_prefix_bytes and not block.isspace():
                kept += block.lstrip() if not kept else block
        return bytes(kept[: self.sizes.max_prefix_bytes])

    def _cut(self, pending: bytes, pos: int, min_cut: int, eof: bool) -> int | None:
        """End (exclusive) of the next piece: just past a candidate boundary's `}`."""
        limit = pos + max(self.sizes.piece_bytes, min_cut)
        if limit < len(pending):
            at = pending.rfind(b"}", pos + min_cut, limit)
            while at > pos:
                if EVENT_BOUNDARY.match(pending, at):
                    return at + 1
                at = pending.rfind(b"}", pos + min_cut, at)
            m = EVENT_BOUNDARY.search(pending, limit)
            if m:
                return m.start() + 1
        return None

    def _decode_hard(self, piece: bytes, at_end: bool, error: str) -> tuple[list[Event], int]:
        if TRUNCATED not in error:
            fixed, fixes = repair_json(piece)
            try:
                events = EVENTS_DECODER.decode(b"[" + fixed + b"]")
                self.stats.repairs += fixes
                return events, len(piece)
            except (msgspec.DecodeError, RecursionError):
                pass
        return salvage_events(piece, at_end, self.stats)

    def _emit_into(self, columns: BatchColumns, events: list[Event]) -> None:
        self.stats.events_seen += len(events)
        kept = [e for e in events if e.ph in KEPT_PHASES]
        self.stats.events_kept += len(kept)
        if len(kept) < len(events):
            self._count_left_out(e.ph for e in events if e.ph not in KEPT_PHASES)
        columns.add(kept)

    def _count_left_out(self, phases) -> None:
        """Count the events left out that could have held time: begin/end pairs, and phases the Trace Event
        Format does not have (flows, metadata and counters hold none, and are left out silently)."""
        for ph in phases:
            if ph in OTHER_PHASES:
                continue
            if ph in UNREAD_TIME_PHASES:
                self.stats.count("dropped: begin/end events (phase B or E) are not read", example=ph)
            elif ph:
                self.stats.count("dropped: a phase (ph) the trace event format does not have", example=ph)
            else:
                self.stats.count("dropped: no phase (ph)")
