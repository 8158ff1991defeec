"""Repairing what fast parsers reject, and salvaging what cannot be repaired.

A piece that does not decode is repaired (invalid UTF-8, raw control characters, bare inf/NaN,
unescaped quotes in names: real PyTorch bugs), else salvaged event by event: values nested deeper than
NESTING_CAP are cut to null (decoders recurse per level), and fields of unexpected types are taken one by
one (`_lenient_event`); what was repaired or dropped is counted in `TraceStats`. A boundary between
events (`}` , `{` with any whitespace) is only a candidate: compact JSON has `}, {` inside kernel names.
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


_NESTED_ARGS = ("input_dims", "input_types", "concrete_inputs")
# numbers past a double's range (1e400) read as inf, which columns.py counts and nulls, instead of failing
GENERIC_DECODER = msgspec.json.Decoder(float_hook=float)
NESTING_CAP = 100  # levels of arrays and objects an event's values may nest; real ones nest a handful
NESTED_TOO_DEEP = f"values nested deeper than {NESTING_CAP} levels, read as null"
# a string (skipped whole), or a run of opening or of closing brackets (counted at once: 100,000 nested
# brackets are two runs, not 200,000 tokens)
_NESTING_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[{](?:\s*[\[{])*|[\]}](?:\s*[\]}])*')


def cap_nesting(text: bytes, cap: int = NESTING_CAP) -> tuple[bytes, int]:
    """(text with every value nested deeper than `cap` levels replaced by null, how many were): decoders
    recurse once per level, so 100,000 nested brackets would exhaust the stack."""
    if text.count(b"[") + text.count(b"{") <= cap:
        return text, 0
    depth, cut_from, cuts, out, last = 0, -1, 0, [], 0
    for m in _NESTING_TOKEN.finditer(text):
        run = m.group()
        if run[0] == 0x22:  # a string
            continue
        if run[0] in b"[{":
            n = run.count(b"[") + run.count(b"{")
            if depth <= cap < depth + n and cut_from < 0:  # this run opens level cap + 1
                cut_from = m.start() + _past_bracket(run, cap + 1 - depth) - 1
            depth += n
        else:
            n = run.count(b"]") + run.count(b"}")
            if depth > cap >= depth - n and cut_from >= 0:  # this run closes level cap + 1
                out += [text[last:cut_from], b"null"]
                last, cut_from, cuts = m.start() + _past_bracket(run, depth - cap), -1, cuts + 1
            depth -= n
    if cut_from >= 0:  # cut off while nested too deep: whatever follows is not an event
        out += [text[last:cut_from], b"null"]
        last, cuts = len(text), cuts + 1
    return b"".join(out) + text[last:], cuts


def _past_bracket(run: bytes, k: int) -> int:
    """The offset just past the k-th bracket (from 1) of a run of brackets and whitespace."""
    if not any(c in run for c in b" \t\r\n"):  # brackets only, the usual run
        return k
    seen = 0
    for i, c in enumerate(run):
        seen += c in b"[]{}"
        if seen == k:
            return i + 1
    return len(run)


def _lenient_event(obj) -> Event | None:
    """An event whose fields have unexpected types, field by field (None: not an event). Arg values go
    on as they are: columns.py reads each as its column's type and counts what it could not."""
    if not isinstance(obj, dict):
        return None

    def raw(value):
        return RAW_NULL if value is None else msgspec.Raw(msgspec.json.encode(value))

    args = obj.get("args", msgspec.UNSET)
    parsed_args = args if not isinstance(args, dict) else None  # not an object: columns.py counts it
    if isinstance(args, dict):
        fields = {}
        for field in msgspec.structs.fields(EventArgs):
            if field.encode_name in args:
                value = args[field.encode_name]
                fields[field.name] = raw(value) if field.name in _NESTED_ARGS else value
        parsed_args = EventArgs(**fields)
    ph = obj.get("ph")
    return Event(
        ph=ph if isinstance(ph, str) else "" if ph is None else msgspec.json.encode(ph).decode(),
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
    except RecursionError:
        pass
    fixed, fixes = repair_json(text)
    fixed, deep = cap_nesting(fixed)
    try:
        event = EVENT_DECODER.decode(fixed)
    except msgspec.DecodeError as exc:
        if TRUNCATED in str(exc):
            return TRUNCATED
        try:
            event = _lenient_event(GENERIC_DECODER.decode(fixed))
        except (msgspec.DecodeError, RecursionError):
            return None
        if event is None:
            return None
    stats.repairs += fixes
    if deep:
        stats.count(NESTED_TOO_DEEP)
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
            if result is None and j == i and cap_nesting(piece[starts[i] : ends[i]])[1]:
                break  # nested too deep to be an event, whatever follows: joining would only redo the work
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


def array_end(piece: bytes) -> tuple[bytes, int, int, int] | None:
    """Where the event array closes inside `piece`: (the piece, repaired if it had to be, index of
    its `]`, spots repaired, values nested too deep and cut to null), or None when it does not close
    here. Only called on a piece that failed to decode."""
    attempts = [(piece, 0, 0), (*repair_json(piece), 0)]
    for text, fixes, deep in attempts:
        if b"]" not in text:
            return None
        try:
            decoded = text.decode("utf-8")
            _, end = json.JSONDecoder(strict=False).raw_decode("[" + decoded)
        except RecursionError:  # nested too deep for any decoder: the same text with those values cut
            capped, cuts = cap_nesting(text)
            if cuts and not deep:
                attempts.append((capped, fixes, cuts))
            continue
        except (ValueError, UnicodeDecodeError):
            continue
        return text, len(decoded[: end - 2].encode("utf-8")), fixes, deep  # `end` counts the "[" we added
    return None
