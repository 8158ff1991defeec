"""Decoded events into Arrow columns of EVENT_SCHEMA, a batch at a time, while the piece they came
from is still in the CPU cache."""

from __future__ import annotations

import math
from collections import Counter
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
# args kept as text (ids, names): any scalar reads as its text; those SQL reads as integers are normalized
_ARG_STRING_FIELDS = ("stream", "mem_addr", "pg_name", "msg_nelems", "collective")
_ARG_ID_FIELDS = ("correlation", "external_id", "external_id_2021", "device")
_ARG_FLOAT_FIELDS = ("total_allocated", "total_reserved", "mem_bytes", "copy_bytes")
_ARG_INT_FIELDS = ("device_type", "device_id")
_ARG_SCALAR_FIELDS = (*_ARG_STRING_FIELDS, *_ARG_ID_FIELDS, *_ARG_FLOAT_FIELDS, *_ARG_INT_FIELDS)
_SHAPE_FIELDS = ("shape_dims", "input_types", "concrete_inputs")  # kept for the ops ROOFLINE_SHAPED_OPS names
_NO_ARGS = EventArgs()
_GETTERS = {f: attrgetter(f) for f in ("ph", *_EVENT_FIELDS, "args", *_ARG_SCALAR_FIELDS)}
_ARG_KEYS = {f.name: f.encode_name for f in msgspec.structs.fields(EventArgs)}  # as the trace spells them
_INT64 = (-(2**63), 2**63 - 1)
# the reasons below complete "N events: …" (parse.damage_notes)
ARGS_NOT_AN_OBJECT = "args not an object (null, a list …), so their correlation, ids and sizes are unknown"


def as_number(value, integer: bool) -> tuple[int | float | None, str | None]:
    """(a JSON value as a number: an int64 where `integer`, else a float; None where it cannot be read, why it
    had to be converted or left unread, None where it was already such a number)."""
    if value is None:
        return None, None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None, "not a number, read as unknown"
    number, converted = value, isinstance(value, str) or (integer and isinstance(value, float))
    if isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                return None, "text that is no number, read as unknown"
    if isinstance(number, float) and not math.isfinite(number):
        return None, "not finite, read as unknown"
    if integer and isinstance(number, float):
        if not number.is_integer():
            return None, "not an integer, read as unknown"
        number = int(number)
    if integer and not _INT64[0] <= number <= _INT64[1]:
        return None, "past 64 bits, read as unknown"
    if converted:  # a float or text standing for the number
        return number, f"written as {'text' if isinstance(value, str) else 'a float'}, read as the number"
    return number, None


def _read_number(value, integer: bool, key: str, stats: TraceStats):
    """One arg value as its column's number (as_number), every value converted or left unread counted by reason."""
    number, why = as_number(value, integer)
    if not integer and isinstance(number, int):
        try:
            number = float(number)  # a float64 column takes no int past 2^53 (Arrow refuses to round it)
        except OverflowError:
            number, why = None, "past a double's range, read as unknown"
    if why:
        stats.count(f"`{key}` {why}", example=value)
    return number


def _number_column(values: list, integer: bool, key: str, stats: TraceStats) -> pa.Array:
    """Numbers as int64 (`integer`) or float64. The common case, all numbers (or null) of the column's
    kind, takes one Arrow call; anything else is read value by value (_read_number)."""
    try:
        inferred = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        inferred = None
    kind = pa.int64() if integer else pa.float64()
    if inferred is not None and (
        pa.types.is_null(inferred.type)
        or inferred.type == pa.int64()
        or (not integer and pa.types.is_floating(inferred.type) and pc.all(pc.is_finite(inferred)).as_py() is not False)
    ):
        # unchecked: the one lossy case left is int64 -> float64 past 2^53, rounded as float() rounds it (a
        # checked cast refused "bytes": 9e18 and failed the whole trace)
        return inferred.cast(kind, safe=False)
    return pa.array([_read_number(v, integer, key, stats) for v in values], kind)


def _id_column(values: list, key: str, stats: TraceStats) -> pa.Array:
    """Integer ids (correlation, external id, device) as the text SQL casts to an integer: a float or text
    standing for an integer is read as it, anything else as null, each counted (_read_number)."""
    try:
        inferred = pa.array(values)
        if pa.types.is_null(inferred.type) or inferred.type == pa.int64():
            return inferred.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        pass
    return _number_column(values, True, key, stats).cast(pa.string())


class BatchColumns:
    """Python lists of one batch's columns, filled piece by piece, turned into a RecordBatch."""

    def __init__(self, stats: TraceStats):
        self.stats = stats
        self.lists = {name: [] for name in ("ph", *_EVENT_FIELDS, "input_dims", *_SHAPE_FIELDS, *_ARG_SCALAR_FIELDS)}
        self.rows = 0

    def add(self, events: list[Event]) -> None:
        """Copy what the table needs out of the events (whose Raw values die with the piece)."""
        g = _GETTERS
        lists = self.lists
        lists["ph"].extend(map(g["ph"], events))
        for f in _EVENT_FIELDS:
            lists[f].extend(map(bytes, map(g[f], events)))
        args = list(map(g["args"], events))
        kinds = Counter(map(type, args))
        not_objects = len(args) - kinds[EventArgs] - kinds[msgspec.UnsetType]
        if not_objects:
            self.stats.count(ARGS_NOT_AN_OBJECT, not_objects)
            args = [a if a.__class__ is EventArgs else _NO_ARGS for a in args]
        elif kinds[msgspec.UnsetType]:
            args = [_NO_ARGS if a is msgspec.UNSET else a for a in args]
        for f in _ARG_SCALAR_FIELDS:
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
            self._id("correlation"),
            pc.coalesce(self._id("external_id"), self._id("external_id_2021")),
            self._id("device"),
            _strings(lists["stream"]),
            self._number("total_allocated", False),
            self._number("total_reserved", False),
            self._number("device_type", True),
            self._number("device_id", True),
            self._number("mem_bytes", False),
            _strings(lists["mem_addr"]),
            pa.array(dims, pa.string()),
            *(pa.array(_raw_json_texts(lists[f]), pa.string()) for f in _SHAPE_FIELDS),
            self._number("copy_bytes", False),
            _strings(lists["pg_name"]),
            _strings(lists["msg_nelems"]),
            _strings(lists["collective"]),
        ]
        return pa.RecordBatch.from_arrays(columns, schema=EVENT_SCHEMA)

    def _number(self, field: str, integer: bool) -> pa.Array:
        return _number_column(self.lists[field], integer, _ARG_KEYS[field], self.stats)

    def _id(self, field: str) -> pa.Array:
        return _id_column(self.lists[field], _ARG_KEYS[field], self.stats)
