"""Repairing what fast parsers reject, and salvaging what cannot be repaired.

A piece that does not decode is repaired (invalid UTF-8, raw control characters, bare inf/NaN,
unescaped quotes in names: real PyTorch bugs), else salvaged event by event; what was repaired or
dropped is counted in `TraceStats`. A boundary between events (`}` , `{` with any whitespace) is only
a candidate: compact JSON has `}, {` inside kernel names.
"""

from __future__ import annotations

import json
import re

import msgspec

from libreyolo_profile.store.decode.events import EVENT_DECODER, RAW_NULL, Event, EventArgs, TraceStats

EVENT_BOUNDARY = re.compile(rb"\}\s*,\s*\{")
TRUNCATED = "truncated"  # what msgspec's error says of text that stops mid-value
_CONTROL_TO_SPACE = bytes.maketrans(bytes(range(32)), b" " * 32)
_BARE_NONFINITE = re.compile(rb"([:,\[]\s*)[-+]?(?:inf(?:inity)?|nan)(?=\s*[,}\]])", re.IGNORECASE)
# a name whose inner quotes were not escaped (pytorch#113001): up to the next `", "<known key>":`
_LOOSE_NAME = re.compile(rb'("name"\s*:\s*")(.*?)("\s*,\s*"(?:ph|cat|pid|tid|ts|dur|args|id|s|bp)"\s*:)', re.DOTALL)
_MAX_JOIN = 64  # candidate boundaries a salvaged event may span (names with `}, {` inside)


def repair_json(text: bytes) -> tuple[bytes, int]:
    """(text with the known kinds of invalid JSON fixed, how many spots were fixed)."""
    fixes = 0
    try:
        text.decode("utf-8")
    except UnicodeDecodeError:
        repaired = text.decode("utf-8", "replace")
        fixes += repaired.count("\ufffd")
        text = repaired.encode("utf-8")
    controls = len(text) - len(
        text.translate(None, bytes(range(32)).replace(b"\n", b"").replace(b"\r", b"").replace(b"\t", b""))
    )
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


def _lenient_event(obj) -> Event | None:
    """An event whose fields have unexpected types, coerced field by field (None: not an event)."""
    if not isinstance(obj, dict):
        return None

    def scalar(value, types):
        if value is None or isinstance(value, types) and not isinstance(value, bool):
            return value
        return msgspec.json.encode(value).decode() if not isinstance(value, str) else value

    def raw(value):
        return RAW_NULL if value is None else msgspec.Raw(msgspec.json.encode(value))

    args = obj.get("args")
    parsed_args = None
    if isinstance(args, dict):
        fields = {}
        for field in msgspec.structs.fields(EventArgs):
            if field.encode_name not in args:
                continue
            value = args[field.encode_name]
            if field.name in ("input_dims", "input_types", "concrete_inputs"):
                fields[field.name] = raw(value)
            elif field.name in ("total_allocated", "total_reserved", "mem_bytes"):
                fields[field.name] = (
                    float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
                )
            elif field.name in ("device_type", "device_id"):
                fields[field.name] = value if isinstance(value, int) and not isinstance(value, bool) else None
            else:
                fields[field.name] = scalar(value, (int, str))
        parsed_args = EventArgs(**fields)
    return Event(
        ph=str(obj.get("ph") or ""),
        cat=raw(obj.get("cat")),
        name=raw(obj.get("name")),
        pid=raw(obj.get("pid")),
        tid=raw(obj.get("tid")),
        ts=raw(obj.get("ts")),
        dur=raw(obj.get("dur")),
        args=parsed_args,
    )


def _decode_one(text: bytes, stats: TraceStats) -> Event | str | None:
    """One event's text: the event, TRUNCATED (the text stops mid-event), or None (undecodable)."""
    try:
        return EVENT_DECODER.decode(text)
    except msgspec.DecodeError as exc:
        if TRUNCATED in str(exc):
            return TRUNCATED
    fixed, fixes = repair_json(text)
    try:
        event = EVENT_DECODER.decode(fixed)
    except msgspec.DecodeError as exc:
        if TRUNCATED in str(exc):
            return TRUNCATED
        try:
            event = _lenient_event(msgspec.json.decode(fixed))
        except msgspec.DecodeError:
            return None
        if event is None:
            return None
    stats.repairs += fixes
    return event


def salvage_events(piece: bytes, at_end: bool, stats: TraceStats) -> tuple[list[Event], int]:
    """Decode a piece event by event: (events, bytes consumed). Candidate boundaries inside strings
    are rejoined; text that cannot be decoded even after repair is dropped and counted. Without
    `at_end`, an event still open at the end of the piece is left unconsumed for the next one."""
    matches = list(EVENT_BOUNDARY.finditer(piece))
    starts = [0] + [m.end() - 1 for m in matches]
    ends = [m.start() + 1 for m in matches] + [len(piece)]
    events: list[Event] = []
    i, n = 0, len(starts)
    while i < n:
        result, j = None, i
        for j in range(i, min(n, i + _MAX_JOIN)):
            result = _decode_one(piece[starts[i] : ends[j]], stats)
            if isinstance(result, Event):
                break
        if isinstance(result, Event):
            events.append(result)
            i = j + 1
            continue
        if j == n - 1 and result == TRUNCATED:  # the text stops inside this event
            if not at_end:
                return events, starts[i]  # completed by the next piece
            stats.truncated = True
            return events, len(piece)
        if j == n - 1 and not at_end and i + _MAX_JOIN > n:
            return events, starts[i]  # maybe decodable with more text
        stats.dropped_events += 1
        i += 1
    return events, len(piece)


def array_end(piece: bytes) -> tuple[bytes, int, int] | None:
    """Where the event array closes inside `piece`: (the piece, repaired if it had to be, index of
    its `]`, spots repaired), or None when it does not close here. Only called on a piece that
    failed to decode."""
    for text, fixes in ((piece, 0), repair_json(piece)):
        if b"]" not in text:
            return None
        try:
            decoded = text.decode("utf-8")
            _, end = json.JSONDecoder(strict=False).raw_decode("[" + decoded)
        except (ValueError, UnicodeDecodeError):
            continue
        return text, len(decoded[: end - 2].encode("utf-8")), fixes  # `end` counts the "[" we added
    return None
