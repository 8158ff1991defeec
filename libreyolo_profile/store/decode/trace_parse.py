"""Decode a PyTorch profiler (Kineto) Chrome trace into Arrow record batches of raw events, streaming.

Only what the SQL needs leaves this module: phase, category, name, process, thread, exact
timestamps, and the handful of `args` the analysis joins on. Timestamps are kept as their JSON
text and turned into integer nanoseconds by DuckDB's DECIMAL cast, so sub-µs fractions survive
on absolute µs clocks (float64 would round …689.047 to …689.0).

How (see ../shared/notes/trace-parsing-measurements.md for the measurements behind it):
- the file is read in blocks (gzip decompressed on the fly, by `isal` when installed, else zlib);
  the `traceEvents` array is cut into ~128 KB pieces at event boundaries, and each piece is decoded
  by msgspec into typed Structs (no GC tracking) and turned into Arrow columns right away, while
  it is still in the CPU cache. Memory stays bounded by one block plus the Arrow output, which
  spills to a memory-mapped temporary file once it grows large.
- a boundary (`}` , `{` with any whitespace) is only a candidate: compact JSON has `}, {` inside
  kernel names; a cut is accepted only when the piece decodes.
- a piece that does not decode is repaired (invalid UTF-8, raw control characters, bare
  inf/NaN, unescaped quotes in names: real PyTorch bugs), else salvaged event by event; a file cut
  off mid-way yields its complete events. What was repaired, dropped or cut off is counted in
  `TraceStats` and said on stderr.
- hostile input is bounded (`Limits`): whitespace runs are skipped in linear time, one event's text
  (so any one JSON string) and the inflated size of a gzip are capped, and past a cap the trace is
  refused with one line instead of hanging or exhausting memory.
- a large plain (not gzip) file is split into two byte ranges at an event boundary and the second
  range is decoded by a second process.
"""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import signal
import stat
import sys
import time
import zlib
from operator import attrgetter
from pathlib import Path
from typing import Callable, Iterator

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from libreyolo_profile.errors import UnanalysableError, UsageError
from libreyolo_profile.output.textsafe import safe_line

_NULL = msgspec.Raw(b"null")


class _Args(msgspec.Struct, gc=False):
    correlation: int | str | None = None
    external_id: int | str | None = msgspec.field(default=None, name="External id")
    external_id_2021: int | str | None = msgspec.field(default=None, name="external id")
    device: int | str | None = None
    stream: int | str | None = None
    total_allocated: float | None = msgspec.field(default=None, name="Total Allocated")
    total_reserved: float | None = msgspec.field(default=None, name="Total Reserved")
    device_type: int | None = msgspec.field(default=None, name="Device Type")
    device_id: int | None = msgspec.field(default=None, name="Device Id")
    input_dims: msgspec.Raw = msgspec.field(default=_NULL, name="Input Dims")


class _Event(msgspec.Struct, gc=False):
    # text fields stay raw JSON: Arrow builds strings from bytes ~4x faster than from str objects
    ph: str = ""
    cat: msgspec.Raw = _NULL
    name: msgspec.Raw = _NULL
    pid: msgspec.Raw = _NULL
    tid: msgspec.Raw = _NULL
    ts: msgspec.Raw = _NULL
    dur: msgspec.Raw = _NULL
    args: _Args | None = None


class _DeviceProperties(msgspec.Struct, gc=False):
    id: int | str | None = None
    name: str | None = None
    totalGlobalMem: int | float | None = None


class _DistributedInfo(msgspec.Struct, gc=False):
    rank: int | str | None = None
    world_size: int | str | None = None
    backend: str | None = None


class _Header(msgspec.Struct, gc=False):
    """Everything of the trace object except its events (which may come before or after these)."""
    deviceProperties: list[_DeviceProperties] | None = None
    distributedInfo: _DistributedInfo | None = None


# Input Dims are kept only for the ops that reveal the batch size (see sql/ingest.sql).
_BATCH_REVEALING_OPS = frozenset({"aten::conv2d", "aten::convolution", "aten::linear", "aten::matmul"})
_BATCH_REVEALING_RAW = frozenset(f'"{name}"'.encode() for name in _BATCH_REVEALING_OPS)
_KEPT_PHASES = frozenset(("X", "i", "I"))

EVENT_SCHEMA = pa.schema([
    ("ph", pa.string()),
    ("cat", pa.string()),
    ("name", pa.string()),
    ("pid", pa.string()),
    ("tid", pa.string()),
    ("ts_text", pa.string()),
    ("dur_text", pa.string()),
    ("correlation", pa.string()),
    ("external_id", pa.string()),
    ("device", pa.string()),
    ("stream", pa.string()),
    ("mem_allocated", pa.float64()),
    ("mem_reserved", pa.float64()),
    ("mem_device_type", pa.int64()),
    ("mem_device_id", pa.int64()),
    ("input_dims", pa.string()),
])


class TraceStats(msgspec.Struct):
    """What reading the trace saw, and what it had to repair or leave out."""
    events_seen: int = 0  # events in traceEvents, of every phase
    events_kept: int = 0  # rows of the table (duration and instant events)
    bytes_total: int = 0  # size of the file on disk
    bytes_read: int = 0  # decompressed JSON bytes read
    truncated: bool = False  # the JSON ends before the event array is closed
    repairs: int = 0  # invalid spots fixed (bad UTF-8, control characters, bare inf/NaN, stray quotes)
    dropped_events: int = 0  # event texts that could not be decoded even after repair
    workers: int = 1  # processes that decoded the events


class ParsedTrace(msgspec.Struct):
    events: pa.Table
    devices: list[dict]  # [{"device": id, "name": str, "total_mb": float}]
    rank: int | None
    world_size: int | None
    stats: TraceStats | None = None


# ------------------------------------------------------------------------------------------------
# reading bytes

_BLOCK = 4 << 20  # bytes read (or decompressed) at a time
_PIECE = 128 << 10  # bytes decoded at a time: small enough that the Structs stay in the CPU cache
_BATCH_ROWS = 32768  # rows per Arrow record batch
_SPILL_BYTES = 64 << 20  # Arrow output beyond this goes to a memory-mapped temporary file
_PARALLEL_BYTES = 32 << 20  # plain files at least this big are decoded by two processes (a 100 MB trace: 1.2 s → 0.75 s on 2 idle cores; below, forking costs more than it saves)
_MAX_PREFIX = 256 << 20  # bytes searched for the "traceEvents" key before giving up (and header kept after the events)
_BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark some editors and Windows tools write first: skipped
_SPACE = re.compile(rb"[ \t\r\n]*")


def _more_of_a_space_run(text: bytes | bytearray, block) -> bool:
    """`block` is nothing but whitespace and `text` already ends in whitespace: the block adds
    nothing a JSON reader needs (one space stands for any run), so a run of gigabytes is never held.
    Fails fast on a real block, at its first byte that is not whitespace."""
    return text[-1:].isspace() and _SPACE.fullmatch(block) is not None

# Caps against hostile input. None bothers a real trace: the largest real event is a few KB (long
# Input Dims), and real Kineto gzips inflate 9-30x (the shared traces) where a gzip of whitespace or
# of one long string inflates ~1000x.
MAX_EVENT_BYTES = 64 << 20  # one event's text, so any one JSON string inside it
MAX_INFLATION_RATIO = 200  # a gzip may inflate to this many times its size ...
MIN_INFLATED_CAP = 256 << 20  # ... or to this much, whichever is more
_ENV_MAX_EVENT = "LIBREYOLO_PROFILE_MAX_EVENT_MB"
_ENV_MAX_INFLATED = "LIBREYOLO_PROFILE_MAX_INFLATED_MB"


class Limits(msgspec.Struct, frozen=True):
    """How much one trace may make the reader hold or inflate."""
    max_event_bytes: int = MAX_EVENT_BYTES
    max_inflated_bytes: int | None = None  # None: max(MIN_INFLATED_CAP, MAX_INFLATION_RATIO × file size)

    @classmethod
    def from_env(cls) -> "Limits":
        """The defaults, or the sizes (MiB) named by LIBREYOLO_PROFILE_MAX_EVENT_MB and
        LIBREYOLO_PROFILE_MAX_INFLATED_MB, for a real trace beyond them (or a test)."""
        return cls(max_event_bytes=_env_mib(_ENV_MAX_EVENT) or MAX_EVENT_BYTES,
                   max_inflated_bytes=_env_mib(_ENV_MAX_INFLATED))

    def inflated_cap(self, compressed_size: int) -> int:
        if self.max_inflated_bytes is not None:
            return self.max_inflated_bytes
        return max(MIN_INFLATED_CAP, MAX_INFLATION_RATIO * compressed_size)


def _env_mib(name: str) -> int | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise UsageError(f"{name}={text!r}: expected a positive number of MiB")
    return int(value * (1 << 20))


def _mib(size: int) -> str:
    return f"{size / (1 << 20):,.0f} MiB"


def _gzip_decompressor():
    try:  # isal (PyPI `isal`) decompresses ~3x faster than zlib; optional
        if os.environ.get("LIBREYOLO_PROFILE_NO_ISAL"):
            raise ImportError
        from isal import isal_zlib

        return isal_zlib.decompressobj(31), isal_zlib.error
    except ImportError:
        return zlib.decompressobj(31), zlib.error


class _Source:
    """Decompressed blocks of a file (or of the byte range [start, end) of a plain file)."""

    def __init__(self, path: Path, start: int = 0, end: int | None = None, limits: Limits | None = None):
        self.path = path
        self.limits = limits or Limits()
        try:
            self.handle = open(path, "rb")
        except FileNotFoundError:
            raise UsageError(f"no such file: {path}") from None
        except PermissionError:
            raise UsageError(f"permission denied: {path}") from None
        except IsADirectoryError:
            raise UsageError(f"{path} is a directory, not a trace") from None
        except OSError as exc:
            raise UnanalysableError(f"{path}: cannot read the trace ({exc.strerror or exc})") from None
        self.size = os.fstat(self.handle.fileno()).st_size
        self.gzip = self.handle.read(2) == b"\x1f\x8b"
        self.handle.seek(start)
        self.remaining = (end if end is not None else self.size) - start
        self.decompressor, self.gzip_error = _gzip_decompressor() if self.gzip else (None, None)
        self.truncated_gzip = False
        self.corrupt_gzip: str | None = None
        self.inflated = 0
        self.inflated_cap = self.limits.inflated_cap(self.size)

    def position(self) -> int:
        return self.handle.tell()

    def blocks(self) -> Iterator[bytes | memoryview]:
        """Blocks of JSON text; a memoryview is only valid until the next block is asked for."""
        buffer = bytearray(_BLOCK)  # reused: fresh 4 MB objects would page-fault on every read
        try:
            while self.remaining > 0:
                if not self.gzip:
                    view = memoryview(buffer)[:min(_BLOCK, self.remaining)]
                    n = self.handle.readinto(view)
                    if not n:
                        break
                    self.remaining -= n
                    yield view[:n]
                    continue
                raw = self.handle.read(_BLOCK // 4)
                if not raw:
                    break
                self.remaining -= len(raw)
                yield from self._inflate(raw)
            if self.gzip and not self.decompressor.eof:
                self.truncated_gzip = True
        except OSError as exc:
            raise UnanalysableError(f"{self.path}: cannot read the trace ({exc.strerror or exc})") from None
        finally:
            self.handle.close()

    def _inflate(self, raw: bytes) -> Iterator[bytes]:
        while raw:
            try:
                out = self.decompressor.decompress(raw, _BLOCK)
            except self.gzip_error as exc:
                self.corrupt_gzip = str(exc)
                self.remaining = 0
                return
            if out:
                self.inflated += len(out)
                if self.inflated > self.inflated_cap:
                    self._refuse_bomb()
                yield out
            if self.decompressor.eof:
                raw = self.decompressor.unused_data
                if raw.lstrip(b"\0"):  # a concatenated gzip member follows
                    self.decompressor, _ = _gzip_decompressor()
                else:
                    return
            else:
                raw = self.decompressor.unconsumed_tail

    def _refuse_bomb(self):
        raise UnanalysableError(
            f"{self.path}: the gzip inflates past {_mib(self.inflated_cap)} "
            f"({self.inflated_cap / max(self.size, 1):,.0f}x its {self.size:,} bytes; real traces inflate under "
            f"{MAX_INFLATION_RATIO}x): refused as a decompression bomb (set {_ENV_MAX_INFLATED} to read it anyway)")


# ------------------------------------------------------------------------------------------------
# repairing what fast parsers reject

_BOUNDARY = re.compile(rb"\}\s*,\s*\{")
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*')
_CONTROL_TO_SPACE = bytes.maketrans(bytes(range(32)), b" " * 32)
_BARE_NONFINITE = re.compile(rb"([:,\[]\s*)[-+]?(?:inf(?:inity)?|nan)(?=\s*[,}\]])", re.IGNORECASE)
# a name whose inner quotes were not escaped (pytorch#113001): up to the next `", "<known key>":`
_LOOSE_NAME = re.compile(rb'("name"\s*:\s*")(.*?)("\s*,\s*"(?:ph|cat|pid|tid|ts|dur|args|id|s|bp)"\s*:)', re.DOTALL)
_TRUNCATED = "truncated"
_MAX_JOIN = 64  # candidate boundaries a salvaged event may span (names with `}, {` inside)


def _repair(text: bytes) -> tuple[bytes, int]:
    """(text with the known kinds of invalid JSON fixed, how many spots were fixed)."""
    fixes = 0
    try:
        text.decode("utf-8")
    except UnicodeDecodeError:
        repaired = text.decode("utf-8", "replace")
        fixes += repaired.count("\ufffd")
        text = repaired.encode("utf-8")
    controls = len(text) - len(text.translate(None, bytes(range(32)).replace(b"\n", b"").replace(b"\r", b"").replace(b"\t", b"")))
    if controls:
        fixes += controls
    text = text.translate(_CONTROL_TO_SPACE)
    text, n = _BARE_NONFINITE.subn(rb"\1null", text)
    fixes += n

    def escape_quotes(m: re.Match) -> bytes:
        inner = m.group(2)
        fixed = re.sub(rb'(?<!\\)"', rb'\\"', inner)
        return m.group(1) + fixed + m.group(3)

    if b'"name"' in text:
        loosened = _LOOSE_NAME.sub(escape_quotes, text)
        if loosened != text:
            fixes += 1
            text = loosened
    return text, fixes


def _lenient_event(obj) -> _Event | None:
    """An event whose fields have unexpected types, coerced field by field (None: not an event)."""
    if not isinstance(obj, dict):
        return None

    def scalar(value, types):
        if value is None or isinstance(value, types) and not isinstance(value, bool):
            return value
        return msgspec.json.encode(value).decode() if not isinstance(value, str) else value

    def raw(value):
        return _NULL if value is None else msgspec.Raw(msgspec.json.encode(value))

    args = obj.get("args")
    parsed_args = None
    if isinstance(args, dict):
        fields = {}
        for field in msgspec.structs.fields(_Args):
            if field.encode_name not in args:
                continue
            value = args[field.encode_name]
            if field.name == "input_dims":
                fields[field.name] = raw(value)
            elif field.name in ("total_allocated", "total_reserved"):
                fields[field.name] = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
            elif field.name in ("device_type", "device_id"):
                fields[field.name] = value if isinstance(value, int) and not isinstance(value, bool) else None
            else:
                fields[field.name] = scalar(value, (int, str))
        parsed_args = _Args(**fields)
    return _Event(ph=str(obj.get("ph") or ""), cat=raw(obj.get("cat")), name=raw(obj.get("name")),
                  pid=raw(obj.get("pid")), tid=raw(obj.get("tid")),
                  ts=raw(obj.get("ts")), dur=raw(obj.get("dur")), args=parsed_args)


_EVENT_DECODER = msgspec.json.Decoder(_Event)
_EVENTS_DECODER = msgspec.json.Decoder(list[_Event])


def _decode_one(text: bytes, stats: TraceStats) -> _Event | str | None:
    """One event's text: the event, _TRUNCATED (the text stops mid-event), or None (undecodable)."""
    try:
        return _EVENT_DECODER.decode(text)
    except msgspec.DecodeError as exc:
        if _TRUNCATED in str(exc):
            return _TRUNCATED
    fixed, fixes = _repair(text)
    try:
        event = _EVENT_DECODER.decode(fixed)
    except msgspec.DecodeError as exc:
        if _TRUNCATED in str(exc):
            return _TRUNCATED
        try:
            event = _lenient_event(msgspec.json.decode(fixed))
        except msgspec.DecodeError:
            return None
        if event is None:
            return None
    stats.repairs += fixes
    return event


def _salvage(piece: bytes, at_end: bool, stats: TraceStats) -> tuple[list[_Event], int]:
    """Decode a piece event by event: (events, bytes consumed). Candidate boundaries inside strings
    are rejoined; text that cannot be decoded even after repair is dropped and counted. Without
    `at_end`, an event still open at the end of the piece is left unconsumed for the next one."""
    matches = list(_BOUNDARY.finditer(piece))
    starts = [0] + [m.end() - 1 for m in matches]
    ends = [m.start() + 1 for m in matches] + [len(piece)]
    events: list[_Event] = []
    i, n = 0, len(starts)
    while i < n:
        result, j = None, i
        for j in range(i, min(n, i + _MAX_JOIN)):
            result = _decode_one(piece[starts[i]:ends[j]], stats)
            if isinstance(result, _Event):
                break
        if isinstance(result, _Event):
            events.append(result)
            i = j + 1
            continue
        if j == n - 1 and result == _TRUNCATED:  # the text stops inside this event
            if not at_end:
                return events, starts[i]  # completed by the next piece
            stats.truncated = True
            return events, len(piece)
        if j == n - 1 and not at_end and i + _MAX_JOIN > n:
            return events, starts[i]  # maybe decodable with more text
        stats.dropped_events += 1
        i += 1
    return events, len(piece)


def _array_end(piece: bytes) -> tuple[bytes, int, int] | None:
    """Where the event array closes inside `piece`: (the piece, repaired if it had to be, index of
    its `]`, spots repaired), or None when it does not close here. Only called on a piece that
    failed to decode."""
    for text, fixes in ((piece, 0), _repair(piece)):
        if b"]" not in text:
            return None
        try:
            decoded = text.decode("utf-8")
            _, end = json.JSONDecoder(strict=False).raw_decode("[" + decoded)
        except (ValueError, UnicodeDecodeError):
            continue
        return text, len(decoded[:end - 2].encode("utf-8")), fixes  # `end` counts the "[" we added
    return None


# ------------------------------------------------------------------------------------------------
# events to Arrow


def _strings(values: list) -> pa.Array:
    try:
        return pa.array(values, pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    try:  # all integers (pids, correlation ids): Arrow formats them as Python does
        ints = pa.array(values)
        if pa.types.is_integer(ints.type) or pa.types.is_null(ints.type):
            return ints.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        pass
    return pa.array([None if v is None else str(v) for v in values], pa.string())


def _raw_texts(values: list) -> pa.Array:
    """JSON number/string texts as strings: quotes stripped, `null` as null."""
    try:
        text = pc.cast(pa.array(values, pa.binary()), pa.string())
    except pa.ArrowInvalid:  # invalid UTF-8 inside a string value: replace as the old parser did
        text = pa.array([bytes(v).decode("utf-8", "replace") for v in values], pa.string())
    text = pc.utf8_trim(text, '"')
    return pc.if_else(pc.equal(text, "null"), pa.scalar(None, pa.string()), text)


def _json_texts(values: list[bytes], stats: TraceStats) -> pa.Array:
    """Raw JSON scalars as the text the old decoder produced: strings unquoted and unescaped,
    integers as written, other numbers as Python prints them, null as null."""
    raw = pa.array(values, pa.binary())
    try:
        text = raw.cast(pa.string())
    except pa.ArrowInvalid:  # invalid UTF-8 (pytorch#136180): decode in Python, replacing bad bytes
        texts = []
        for v in values:
            try:
                v.decode("utf-8")
            except UnicodeDecodeError:
                stats.repairs += 1
            texts.append(_python_text(v))
        return pa.array(texts, pa.string())
    quoted = pc.starts_with(text, '"')
    plain_int = pc.match_substring_regex(text, r"^(-?[1-9][0-9]*|0|null)$")
    simple = pc.if_else(quoted, pc.invert(pc.match_substring(text, "\\")), plain_int)
    unquoted = pc.if_else(quoted, pc.utf8_slice_codeunits(text, 1, -1), text)
    unquoted = pc.if_else(pc.and_(pc.invert(quoted), pc.equal(text, "null")), pa.scalar(None, pa.string()), unquoted)
    if pc.all(simple).as_py() is not False:
        return unquoted
    fixed = unquoted.to_pylist()
    for i in pc.indices_nonzero(pc.invert(simple)).to_pylist():
        fixed[i] = _python_text(values[i])
    return pa.array(fixed, pa.string())


def _python_text(raw: bytes) -> str | None:
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return raw.decode("utf-8", "replace").strip('"')
    return value if value is None or isinstance(value, str) else str(value)


_EVENT_FIELDS = ("cat", "name", "pid", "tid", "ts", "dur")
_ARG_STRING_FIELDS = ("correlation", "external_id", "external_id_2021", "device", "stream")
_ARG_NUMBER_FIELDS = ("total_allocated", "total_reserved", "device_type", "device_id")
_NO_ARGS = _Args()
_GETTERS = {f: attrgetter(f) for f in ("ph", *_EVENT_FIELDS, "args", *_ARG_STRING_FIELDS, *_ARG_NUMBER_FIELDS)}


class _Columns:
    """Python lists of one batch's columns, filled piece by piece, turned into a RecordBatch."""

    def __init__(self, stats: TraceStats):
        self.stats = stats
        self.lists = {name: [] for name in ("ph", *_EVENT_FIELDS, "input_dims",
                                            *_ARG_STRING_FIELDS, *_ARG_NUMBER_FIELDS)}
        self.rows = 0

    def add(self, events: list[_Event]) -> None:
        """Copy what the table needs out of the events (whose Raw values die with the piece)."""
        g = _GETTERS
        lists = self.lists
        lists["ph"].extend(map(g["ph"], events))
        for f in _EVENT_FIELDS:
            lists[f].extend(map(bytes, map(g[f], events)))
        args = [a if a is not None else _NO_ARGS for a in map(g["args"], events)]
        for f in (*_ARG_STRING_FIELDS, *_ARG_NUMBER_FIELDS):
            lists[f].extend(map(g[f], args))
        names = lists["name"][-len(events):] if events else []
        lists["input_dims"].extend([bytes(a.input_dims) if n in _BATCH_REVEALING_RAW else None
                                    for n, a in zip(names, args)])
        self.rows += len(events)

    def batch(self) -> pa.RecordBatch:
        lists = self.lists
        dims = [None if d is None or d == b"null" else d.decode("utf-8", "replace").strip('"')
                for d in lists["input_dims"]]
        columns = [
            _strings(lists["ph"]), _json_texts(lists["cat"], self.stats), _json_texts(lists["name"], self.stats),
            _json_texts(lists["pid"], self.stats), _json_texts(lists["tid"], self.stats),
            _raw_texts(lists["ts"]), _raw_texts(lists["dur"]),
            _strings(lists["correlation"]),
            pc.coalesce(_strings(lists["external_id"]), _strings(lists["external_id_2021"])),
            _strings(lists["device"]), _strings(lists["stream"]),
            pa.array(lists["total_allocated"], pa.float64()), pa.array(lists["total_reserved"], pa.float64()),
            pa.array(lists["device_type"], pa.int64()), pa.array(lists["device_id"], pa.int64()),
            pa.array(dims, pa.string()),
        ]
        return pa.RecordBatch.from_arrays(columns, schema=EVENT_SCHEMA)


# ------------------------------------------------------------------------------------------------
# the streaming reader


class _EventReader:
    """Walks one file (or byte range) and yields record batches; the header and stats after."""

    def __init__(self, path: Path, start: int = 0, end: int | None = None, in_array: bool = False,
                 progress: Callable[[int], None] | None = None, limits: Limits | None = None):
        self.path = Path(path)
        self.limits = limits or Limits()
        self.source = _Source(self.path, start, end, self.limits)
        self.in_array = in_array  # the range starts inside the event array, at an event
        self.progress = progress
        self.stats = TraceStats(bytes_total=self.source.size)
        self.prefix = b""  # JSON before the event array
        self.suffix = b""  # JSON after it
        self.closed = False  # the array's closing bracket was seen
        self.range_ends_mid_array = False  # the first of two processes' ranges

    # -- header ------------------------------------------------------------------------------
    def _find_array(self, blocks: Iterator[bytes]) -> bytes:
        """Consume the JSON before the event array; returns what follows its `[`."""
        data = bytearray()  # from the first byte that is not whitespace (any run of it is dropped as it streams by)
        key_at = -1
        first = True
        for block in blocks:
            searched = max(0, len(data) - 16)
            self.stats.bytes_read += len(block)
            if first:
                block = bytes(block).removeprefix(_BOM)
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
                    raise UnanalysableError(f"{self.path}: " + ("not a JSON trace (binary data)" if _is_binary(block)
                                                                 else "not JSON, so not a PyTorch profiler trace"))
            data += block
            if key_at < 0:
                key_at = data.find(b'"traceEvents"', searched)
            if key_at >= 0:
                m = _EVENTS_KEY.match(data, key_at)
                if m and len(data) > m.end():
                    if data[m.end():m.end() + 1] != b"[":
                        raise UnanalysableError(f"{self.path}: traceEvents is not a list of events")
                    self.prefix = bytes(data[:m.end()])
                    return bytes(data[m.end() + 1:])
            if len(data) > _MAX_PREFIX:
                break
        self._raise_not_a_trace(bytes(data))

    def _raise_not_a_trace(self, data: bytes):
        if self.source.corrupt_gzip:
            raise UnanalysableError(f"{self.path}: damaged gzip data ({self.source.corrupt_gzip}) before any trace event")
        if not data.strip():
            raise UnanalysableError(f"{self.path}: the file is empty, not a PyTorch profiler trace")
        try:
            value = msgspec.json.decode(data)
        except msgspec.DecodeError:
            if self.source.gzip and (self.source.truncated_gzip or self.source.corrupt_gzip):
                raise UnanalysableError(f"{self.path}: the gzip stream is damaged before any trace event") from None
            raise UnanalysableError(f"{self.path}: not valid JSON and no trace events found, "
                                    "not a PyTorch profiler trace") from None
        raise UnanalysableError(f"{self.path}: JSON ({type(value).__name__}) without trace events, "
                                "not a PyTorch profiler trace")

    def header(self) -> _Header:
        if not self.prefix.strip():
            return _Header()
        suffix = self.suffix if self.closed else b"}"
        for text in (self.prefix + b"[]" + suffix, self.prefix + b"[]}"):
            for candidate in (text, _repair(text)[0]):
                try:
                    return msgspec.json.decode(candidate, type=_Header)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    continue
        try:  # the fields we need, one by one, when the rest of the header is unusual
            loose = msgspec.json.decode(_repair(self.prefix + b"[]" + suffix)[0])
            return _Header(deviceProperties=msgspec.convert(loose.get("deviceProperties"), list[_DeviceProperties] | None, strict=False)
                           if isinstance(loose, dict) else None)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return _Header()

    # -- events ------------------------------------------------------------------------------
    def batches(self) -> Iterator[pa.RecordBatch]:
        blocks = self.source.blocks()
        # `pending` (unparsed text) and `scratch` (one piece in brackets, for the decoder) are reused
        # buffers; decoded Raw values point into `scratch`, so `_Columns.add` copies them out.
        pending = bytearray() if self.in_array else bytearray(self._find_array(blocks))
        scratch = bytearray(4 * _PIECE)
        stats = self.stats
        columns = _Columns(stats)
        pos = 0
        eof = False
        min_cut = 0  # a cut must lie beyond this (an event larger than one piece)
        stats = self.stats
        while True:
            # keep at least two pieces of text ahead (or everything, at the end)
            while not eof and len(pending) - pos < 2 * _PIECE + min_cut:
                block = next(blocks, None)
                if block is None:
                    eof = True
                    break
                stats.bytes_read += len(block)
                if _more_of_a_space_run(pending, block):
                    continue
                del pending[:pos]
                pending += block
                min_cut = max(0, min_cut - pos)
                pos = 0
                if self.progress:
                    self.progress(self.source.position())
            # skip whitespace between events (any run of it: each byte once, then dropped with `pos`)
            pos = _SPACE.match(pending, pos).end()
            if not self.in_array and not self.closed and pending[pos:pos + 1] == b"]":
                # an empty array closes at once
                self.closed = True
                self.suffix = self._rest(bytes(pending[pos + 1:]), blocks)
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
            if cut is not None:  # a piece cut at a boundary is ~_PIECE long, unless one event in it is huge
                self._check_event_size(size)
            if len(scratch) < size + 2:
                scratch = bytearray(size + 2)
            scratch[0] = 0x5B  # [
            scratch[1:size + 1] = memoryview(pending)[pos:end]
            scratch[size + 1] = 0x5D  # ]
            try:
                events = _EVENTS_DECODER.decode(memoryview(scratch)[:size + 2])
                consumed = size
            except msgspec.DecodeError as exc:
                piece = bytes(pending[pos:end])
                closing = _array_end(piece) if cut is None or b"]" in piece else None
                if closing is not None:
                    text, at, fixes = closing
                    stats.repairs += fixes
                    try:
                        events = _EVENTS_DECODER.decode(b"[" + text[:at] + b"]")
                    except msgspec.DecodeError as last_exc:
                        events, _ = self._decode_hard(text[:at], True, str(last_exc))
                    self.closed = True
                    self.suffix = self._rest(text[at + 1:] + bytes(pending[end:]), blocks)
                    self._emit_into(columns, events)
                    break
                events, consumed = self._decode_hard(piece, cut is None and eof, str(exc))
            self._emit_into(columns, events)
            del events  # release the Raw views into `scratch` before it is reused
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
            if columns.rows >= _BATCH_ROWS:
                yield columns.batch()
                columns = _Columns(stats)
        if columns.rows:
            yield columns.batch()
        if self.source.truncated_gzip or self.source.corrupt_gzip:
            stats.truncated = True

    def _expects_close(self) -> bool:
        """A range that ends mid-array by design (the first of two processes') is not cut off."""
        return not self.range_ends_mid_array

    def _check_event_size(self, size: int) -> int:
        """`size` bytes hold no event boundary yet: fine up to the cap, refused past it (one huge
        string, or a run of whitespace inside an event, would otherwise be held whole)."""
        if size > self.limits.max_event_bytes:
            raise UnanalysableError(
                f"{self.path}: {_mib(size)} of text from byte {self.stats.bytes_read - size:,} of the JSON hold no "
                f"end of an event (capped at {_mib(self.limits.max_event_bytes)}; no profiler writes one event or string "
                f"that long): refused (set {_ENV_MAX_EVENT} to read it anyway)")
        return size

    def _rest(self, head: bytes, blocks: Iterator[bytes]) -> bytes:
        """The JSON after the event array (header fields such as deviceProperties may sit there):
        read to the end, but only its first _MAX_PREFIX bytes kept, and no block of nothing but whitespace."""
        kept = bytearray(head.lstrip())
        for block in blocks:
            self.stats.bytes_read += len(block)
            block = bytes(block)
            if len(kept) < _MAX_PREFIX and not block.isspace():
                kept += block.lstrip() if not kept else block
        return bytes(kept[:_MAX_PREFIX])

    @staticmethod
    def _cut(pending: bytes, pos: int, min_cut: int, eof: bool) -> int | None:
        """End (exclusive) of the next piece: just past a candidate boundary's `}`."""
        limit = pos + max(_PIECE, min_cut)
        if limit < len(pending):
            at = pending.rfind(b"}", pos + min_cut, limit)
            while at > pos:
                if _BOUNDARY.match(pending, at):
                    return at + 1
                at = pending.rfind(b"}", pos + min_cut, at)
            m = _BOUNDARY.search(pending, limit)
            if m:
                return m.start() + 1
        return None

    def _decode_hard(self, piece: bytes, at_end: bool, error: str) -> tuple[list[_Event], int]:
        if _TRUNCATED not in error:
            fixed, fixes = _repair(piece)
            try:
                events = _EVENTS_DECODER.decode(b"[" + fixed + b"]")
                self.stats.repairs += fixes
                return events, len(piece)
            except msgspec.DecodeError:
                pass
        return _salvage(piece, at_end, self.stats)

    def _emit_into(self, columns: _Columns, events: list[_Event]) -> None:
        self.stats.events_seen += len(events)
        kept = [e for e in events if e.ph in _KEPT_PHASES]
        self.stats.events_kept += len(kept)
        columns.add(kept)


# ------------------------------------------------------------------------------------------------
# output: batches in memory, spilling to a memory-mapped Arrow file when large


class _Sink:
    def __init__(self, spill_dir: Path | None = None):
        self.batches: list[pa.RecordBatch] = []
        self.nbytes = 0
        self.spill_dir = spill_dir
        self.writer = None
        self.file: Path | None = None

    def add(self, batch: pa.RecordBatch) -> None:
        if self.writer is not None:
            self.writer.write_batch(batch)
            return
        self.batches.append(batch)
        self.nbytes += batch.nbytes
        if self.nbytes > _SPILL_BYTES:
            self._spill()

    def _spill(self) -> None:
        if self.spill_dir is None:
            from libreyolo_profile.store.disk.cache import work_dir  # under the cache, swept if we are killed

            self.spill_dir = work_dir("ingest")
            self.own_dir = True
        self.file = self.spill_dir / f"events-{os.getpid()}.arrow"
        self.writer = pa.ipc.new_file(self.file, EVENT_SCHEMA)
        for batch in self.batches:
            self.writer.write_batch(batch)
        self.batches = []

    def table(self) -> pa.Table:
        if self.writer is None:
            return pa.Table.from_batches(self.batches, schema=EVENT_SCHEMA)
        self.writer.close()
        return _map_table(self.file)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if getattr(self, "own_dir", False):
            shutil.rmtree(self.spill_dir, ignore_errors=True)


def _map_table(file: Path) -> pa.Table:
    """The Arrow file as a table backed by the page cache; the file is unlinked once mapped."""
    table = pa.ipc.open_file(pa.memory_map(str(file))).read_all()
    file.unlink(missing_ok=True)
    return table


# ------------------------------------------------------------------------------------------------
# two processes over byte ranges of a plain file


def _split_point(path: Path, array_start: int, size: int) -> tuple[int, int] | None:
    """(end of the first range, start of the second): a boundary near the middle of the array
    whose following event decodes, so the cut is not inside a string."""
    middle = array_start + (size - array_start) // 2
    with open(path, "rb") as handle:
        handle.seek(middle)
        window = handle.read(4 << 20)
    for m in _BOUNDARY.finditer(window):
        start = m.end() - 1
        nxt = _BOUNDARY.search(window, start)
        if nxt is None:
            return None
        try:
            _EVENT_DECODER.decode(window[start:nxt.start() + 1])
        except msgspec.DecodeError:
            continue
        return middle + m.start() + 1, middle + start
    return None


def _decode_range(path: Path, start: int, end: int, out: Path, limits: Limits) -> None:
    """The second process's work: decode [start, end) into an Arrow file plus a small JSON of stats."""
    try:  # die with the parent (a killed reader must not leave a worker behind)
        import ctypes
        ctypes.CDLL("libc.so.6").prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except OSError:
        pass
    gc.disable()
    reader = _EventReader(path, start, end, in_array=True, limits=limits)
    with pa.ipc.new_file(out.with_suffix(".tmp"), EVENT_SCHEMA) as writer:
        for batch in reader.batches():
            writer.write_batch(batch)
    out.with_suffix(".tmp").replace(out)
    result = {"stats": msgspec.structs.asdict(reader.stats), "suffix": reader.suffix.decode("latin-1"),
              "closed": reader.closed}
    out.with_suffix(".json").write_text(json.dumps(result))


def _fork_decoder(path: Path, start: int, end: int, out: Path, limits: Limits) -> int:
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
        _decode_range(path, start, end, out, limits)
        code = 0
    except BaseException as exc:  # reported by the parent through the missing result file
        try:
            sys.stderr.write(safe_line(f"libreyolo-profile: second decoder: {type(exc).__name__}: {exc}") + "\n")
        except Exception:
            pass
    finally:
        os._exit(code)


def _parse_parallel(path: Path, progress, limits: Limits) -> ParsedTrace | None:
    """Two processes over the two halves of a big plain trace; None when it cannot be split."""
    probe = _EventReader(path, limits=limits)
    blocks = probe.source.blocks()
    try:
        rest = probe._find_array(blocks)
    finally:
        blocks.close()
    array_start = probe.stats.bytes_read - len(rest)
    split = _split_point(path, array_start, probe.source.size)
    if split is None:
        return None
    first_end, second_start = split
    from libreyolo_profile.store.disk.cache import work_dir  # under the cache, swept if we are killed

    work = work_dir("ingest")
    try:
        second = work / "second.arrow"
        child = _fork_decoder(path, second_start, probe.source.size, second, limits)
        status = None
        try:
            first = _EventReader(path, 0, first_end, progress=progress, limits=limits)
            first.range_ends_mid_array = True
            sink = _Sink(work)
            sink._spill()
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
            raise UnanalysableError(f"{path}: the second decoding process failed "
                                    f"(exit {os.waitstatus_to_exitcode(status)})")
        result = json.loads(second.with_suffix(".json").read_text())
        table = pa.concat_tables([first_table, _map_table(second)])
        stats = first.stats
        other = TraceStats(**result["stats"])
        for field in ("events_seen", "events_kept", "bytes_read", "repairs", "dropped_events"):
            setattr(stats, field, getattr(stats, field) + getattr(other, field))
        stats.truncated = other.truncated
        stats.workers = 2
        first.suffix = result["suffix"].encode("latin-1")
        first.closed = result["closed"]
        return _finish(path, table, first)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# public entry points


class _Progress:
    """A progress bar on stderr for big traces when stderr is a terminal; a start/end line for very
    big ones otherwise; nothing for small ones."""

    def __init__(self, path: Path, size: int):
        self.bar = None
        self.line = False
        self.started = time.perf_counter()
        self.path = path
        if size >= 32 << 20 and sys.stderr.isatty():
            from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn
            from rich.console import Console

            self.bar = Progress("reading trace", BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                                console=Console(stderr=True), transient=True)
            self.task = self.bar.add_task("", total=size)
            self.bar.start()
        elif size >= 256 << 20:
            self.line = True
            print(f"reading {path.name} ({size / 1e6:.0f} MB)…", file=sys.stderr, flush=True)

    def __call__(self, position: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=position)

    def done(self, stats: TraceStats | None) -> None:
        if self.bar is not None:
            self.bar.stop()
        if self.line and stats is not None:
            print(f"read {stats.events_seen:,} events in {time.perf_counter() - self.started:.1f} s",
                  file=sys.stderr, flush=True)


def iter_event_batches(path: Path, progress: Callable[[int], None] | None = None,
                       limits: Limits | None = None) -> tuple[_EventReader, Iterator[pa.RecordBatch]]:
    """(reader, its batches): stream the events of a trace as EVENT_SCHEMA record batches, one
    process; `reader.header()` and `reader.stats` are complete once the batches are exhausted."""
    reader = _EventReader(Path(path), progress=progress, limits=limits)
    return reader, reader.batches()


def parse_trace(path: Path, workers: int | None = None, limits: Limits | None = None,
                report: bool = True) -> ParsedTrace:
    """The trace's raw events (EVENT_SCHEMA), devices, rank and world size.

    Large outputs are backed by a memory-mapped temporary file (already unlinked), so the table
    does not hold the trace in anonymous memory. `workers=1` forces one process. `limits`: the caps
    against hostile input (default: `Limits.from_env()`). `report`: say the damage on stderr."""
    path = Path(path)
    limits = limits or Limits.from_env()
    progress = None
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the collector doubles parse time at this size, and Structs need none
    try:
        size = _file_size(path)
        progress = _Progress(path, size)
        parsed = None
        if (workers or 2) > 1 and size >= _PARALLEL_BYTES and (os.cpu_count() or 1) > 1 and not _is_gzip(path):
            parsed = _parse_parallel(path, progress, limits)
        if parsed is None:
            reader, batches = iter_event_batches(path, progress, limits)
            sink = _Sink()
            try:
                for batch in batches:
                    sink.add(batch)
                table = sink.table()
            finally:
                sink.close()
            parsed = _finish(path, table, reader)
        progress.done(parsed.stats)
        progress = None
        if report:
            _report(path, parsed.stats)
        return parsed
    finally:
        if progress is not None:
            progress.done(None)
        if gc_was_enabled:
            gc.enable()


def _file_size(path: Path) -> int:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except PermissionError:
        raise UsageError(f"permission denied: {path}") from None
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        # opening a FIFO blocks until a writer comes; a device or socket never ends
        raise UsageError(f"{path} is {special_file_kind(info.st_mode)}, not a regular file")
    return info.st_size


def special_file_kind(mode: int) -> str:
    """What a file that is not a regular file or directory is, in words."""
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


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


def _is_gzip(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(2) == b"\x1f\x8b"
    except PermissionError:
        raise UsageError(f"permission denied: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory, not a trace") from None


def _finish(path: Path, table: pa.Table, reader: _EventReader) -> ParsedTrace:
    stats = reader.stats
    if stats.events_seen == 0:
        if stats.truncated:
            raise UnanalysableError(f"{path}: the trace is cut off before its first complete event")
        if stats.dropped_events:
            raise UnanalysableError(f"{path}: no trace event could be read ({stats.dropped_events} unreadable entries), "
                                    "not a PyTorch profiler trace")
        raise UnanalysableError(f"{path}: JSON without trace events, not a PyTorch profiler trace")
    header = reader.header()
    devices = []
    for prop in header.deviceProperties or []:
        total = prop.totalGlobalMem
        devices.append({"device": None if prop.id is None else str(prop.id), "name": prop.name,
                        "total_mb": None if total is None else float(total) / 2**20})
    info = header.distributedInfo

    def _int(value):
        try:
            return None if value is None else int(value)
        except ValueError:
            return None

    return ParsedTrace(events=table, devices=devices,
                       rank=_int(info.rank) if info else None,
                       world_size=_int(info.world_size) if info else None,
                       stats=stats)


def damage_notes(stats: TraceStats) -> list[str]:
    """What had to be repaired, dropped or recovered, one sentence each (none for a clean trace).
    The profile keeps them as its `trace_damaged` mark, so every later read can say them again."""
    notes = []
    if stats.truncated:
        notes.append(f"cut off (the JSON ends mid-file, e.g. a killed job): recovered {stats.events_seen:,} complete "
                     f"events from {stats.bytes_read / 1e6:.1f} MB of JSON; whatever came after is missing")
    if stats.repairs:
        notes.append(f"repaired {stats.repairs:,} spots of invalid JSON (bad UTF-8, control characters, bare "
                     "inf/NaN or unescaped quotes)")
    if stats.dropped_events:
        notes.append(f"{stats.dropped_events:,} unreadable event(s) left out")
    return notes


def _report(path: Path, stats: TraceStats) -> None:
    """Say on stderr what had to be repaired, dropped or recovered (nothing for a clean trace)."""
    for note in damage_notes(stats):
        print(safe_line(f"warning: {path}: {note}"), file=sys.stderr)


def file_identity(path: Path) -> str:
    st = os.stat(path)
    return f"{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}"
