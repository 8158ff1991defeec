"""Decoded events into Arrow columns of EVENT_SCHEMA, a batch at a time, while the piece they came
from is still in the CPU cache."""

from __future__ import annotations

from operator import attrgetter

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from libreyolo_profile.store.decode.events import (
    BATCH_REVEALING_RAW,
    EVENT_SCHEMA,
    ROOFLINE_SHAPED_RAW,
    Event,
    EventArgs,
    TraceStats,
)


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


def _raw_json_texts(values: list) -> list:
    """Raw JSON values (an args list) as their text, null where absent."""
    return [None if d is None or d == b"null" else d.decode("utf-8", "replace").strip('"') for d in values]


def _python_text(raw: bytes) -> str | None:
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return raw.decode("utf-8", "replace").strip('"')
    return value if value is None or isinstance(value, str) else str(value)


def _compact_json(raw: bytes) -> str:
    """A JSON value as compact text (no whitespace between tokens), however the trace was written: a
    pretty-printed `"Input Dims": [\n [\n 1, …` is the same value as `[[1, …`, and the SQL reads it as text."""
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return raw.decode("utf-8", "replace").strip('"')
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


_EVENT_FIELDS = ("cat", "name", "pid", "tid", "ts", "dur")
_ARG_STRING_FIELDS = (
    "correlation",
    "external_id",
    "external_id_2021",
    "device",
    "stream",
    "mem_addr",
    "pg_name",
    "msg_nelems",
    "collective",
)
_ARG_NUMBER_FIELDS = (
    "total_allocated",
    "total_reserved",
    "device_type",
    "device_id",
    "mem_bytes",
    "copy_bytes",
)
_SHAPE_FIELDS = ("shape_dims", "input_types", "concrete_inputs")  # kept for the ops ROOFLINE_SHAPED_OPS names
_NO_ARGS = EventArgs()
_GETTERS = {f: attrgetter(f) for f in ("ph", *_EVENT_FIELDS, "args", *_ARG_STRING_FIELDS, *_ARG_NUMBER_FIELDS)}


class BatchColumns:
    """Python lists of one batch's columns, filled piece by piece, turned into a RecordBatch."""

    def __init__(self, stats: TraceStats):
        self.stats = stats
        self.lists = {
            name: []
            for name in ("ph", *_EVENT_FIELDS, "input_dims", *_SHAPE_FIELDS, *_ARG_STRING_FIELDS, *_ARG_NUMBER_FIELDS)
        }
        self.rows = 0

    def add(self, events: list[Event]) -> None:
        """Copy what the table needs out of the events (whose Raw values die with the piece)."""
        g = _GETTERS
        lists = self.lists
        lists["ph"].extend(map(g["ph"], events))
        for f in _EVENT_FIELDS:
            lists[f].extend(map(bytes, map(g[f], events)))
        args = [a if a is not None else _NO_ARGS for a in map(g["args"], events)]
        for f in (*_ARG_STRING_FIELDS, *_ARG_NUMBER_FIELDS):
            lists[f].extend(map(g[f], args))
        names = lists["name"][-len(events) :] if events else []
        lists["input_dims"].extend(
            [bytes(a.input_dims) if n in BATCH_REVEALING_RAW else None for n, a in zip(names, args, strict=True)]
        )
        shaped = [a if n in ROOFLINE_SHAPED_RAW else None for n, a in zip(names, args, strict=True)]
        for field, attribute in zip(_SHAPE_FIELDS, ("input_dims", "input_types", "concrete_inputs"), strict=True):
            lists[field].extend([None if a is None else bytes(getattr(a, attribute)) for a in shaped])
        self.rows += len(events)

    def batch(self) -> pa.RecordBatch:
        lists = self.lists
        dims = [None if d is None or d == b"null" else _compact_json(d) for d in lists["input_dims"]]
        columns = [
            _strings(lists["ph"]),
            _json_texts(lists["cat"], self.stats),
            _json_texts(lists["name"], self.stats),
            _json_texts(lists["pid"], self.stats),
            _json_texts(lists["tid"], self.stats),
            _raw_texts(lists["ts"]),
            _raw_texts(lists["dur"]),
            _strings(lists["correlation"]),
            pc.coalesce(_strings(lists["external_id"]), _strings(lists["external_id_2021"])),
            _strings(lists["device"]),
            _strings(lists["stream"]),
            pa.array(lists["total_allocated"], pa.float64()),
            pa.array(lists["total_reserved"], pa.float64()),
            pa.array(lists["device_type"], pa.int64()),
            pa.array(lists["device_id"], pa.int64()),
            pa.array(lists["mem_bytes"], pa.float64()),
            _strings(lists["mem_addr"]),
            pa.array(dims, pa.string()),
            *(pa.array(_raw_json_texts(lists[f]), pa.string()) for f in _SHAPE_FIELDS),
            pa.array(lists["copy_bytes"], pa.float64()),
            _strings(lists["pg_name"]),
            _strings(lists["msg_nelems"]),
            _strings(lists["collective"]),
        ]
        return pa.RecordBatch.from_arrays(columns, schema=EVENT_SCHEMA)
