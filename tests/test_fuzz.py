"""Fuzzing trace ingest and the loader: mutated Kineto text and random JSON never crash them.

Whatever the bytes, `parse_trace` returns a table of EVENT_SCHEMA or raises one of our errors
(UnanalysableError/UsageError, which the CLI turns into one line and an exit code), and
`load_document` does the same. Fixed budget and derandomized, so CI is repeatable and quick.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from libreyolo_profile.errors import ProfileError
from libreyolo_profile.store.decode.events import EVENT_SCHEMA
from libreyolo_profile.store.decode.limits import DecodeSizes
from libreyolo_profile.store.decode.parse import parse_trace
from tests.bad_inputs.make_bad_inputs import clean_events, kineto_text

SEED = kineto_text(clean_events(steps=3))
FUZZ = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _parse_bytes(data: bytes, tmp_path, name: str = "t.json", sizes: DecodeSizes | None = None):
    path = tmp_path / name
    path.write_bytes(data)
    try:
        parsed = parse_trace(path, sizes=sizes)
    except ProfileError:
        return None
    assert parsed.events.schema == EVENT_SCHEMA
    assert parsed.stats.events_kept == parsed.events.num_rows
    return parsed


mutation = st.one_of(
    st.tuples(st.just("cut"), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.floats(0, 1), st.integers(0, 255)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.binary(min_size=1, max_size=8)),
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(1, 64)),
    st.tuples(
        st.just("token"),
        st.floats(0, 1),
        st.sampled_from(
            [b"inf", b"NaN", b"\x00", b"\xff\xfe", b'"', b"}, {", b"]", b"{", b"\n", b"\\", b'"ts": "x"', b"null"]
        ),
    ),
)


def _mutate(data: bytes, ops) -> bytes:
    for op in ops:
        at = int(op[1] * len(data))
        if op[0] == "cut":
            data = data[:at]
        elif op[0] == "flip" and data:
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([op[2]]) + data[at + 1 :]
        elif op[0] in ("insert", "token"):
            data = data[:at] + op[2] + data[at:]
        elif op[0] == "delete":
            data = data[:at] + data[at + op[2] :]
    return data


@FUZZ
@given(ops=st.lists(mutation, min_size=1, max_size=4), piece=st.sampled_from([64, 512, 1 << 17]))
def test_mutated_kineto_text(tmp_path, ops, piece):
    _parse_bytes(_mutate(SEED, ops), tmp_path, sizes=DecodeSizes(piece_bytes=piece))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
event_like = st.fixed_dictionaries(
    {"ph": st.sampled_from(["X", "i", "M", "f", 1, None])},
    optional={
        "name": json_values,
        "cat": json_values,
        "pid": json_values,
        "tid": json_values,
        "ts": json_values,
        "dur": json_values,
        "args": json_values,
    },
)


@FUZZ
@given(
    doc=st.one_of(
        json_values,
        st.fixed_dictionaries(
            {"traceEvents": st.lists(event_like, max_size=6)},
            optional={"deviceProperties": json_values, "distributedInfo": json_values},
        ),
    )
)
def test_random_json(tmp_path, doc):
    parsed = _parse_bytes(json.dumps(doc).encode(), tmp_path)
    if parsed is not None and isinstance(doc, dict):
        kept = [e for e in doc.get("traceEvents", []) if e.get("ph") in ("X", "i", "I")]
        assert parsed.events.num_rows == len(kept)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.one_of(
        st.binary(max_size=64), st.builds(lambda ops: _mutate(SEED[:600], ops), st.lists(mutation, max_size=3))
    )
)
def test_loader_never_crashes(tmp_path, monkeypatch, data):
    """The reader-facing loader (profile.json detection, cache) on arbitrary bytes."""
    from libreyolo_profile.store.disk.loader import load_document

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "input.json"
    path.write_bytes(data)
    try:
        loaded = load_document(path)
    except ProfileError:
        return
    assert isinstance(loaded.doc, dict) and "metrics" in loaded.doc


def _gaps_between_tokens(text: bytes) -> list[int]:
    """Offsets just after a `,` `:` or newline that stand outside every JSON string: inserting whitespace
    there changes no value. (Names hold `: ` too, e.g. `autograd::engine::evaluate_function: …`.)"""
    gaps, in_string, escaped = [], False, False
    for i, byte in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # closing quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x2C, 0x3A, 0x0A):  # , : newline
            gaps.append(i + 1)
    return gaps


_GAPS = _gaps_between_tokens(SEED)


@FUZZ
@given(
    runs=st.lists(
        st.tuples(st.sampled_from(_GAPS), st.integers(1, 5000), st.sampled_from([b" ", b"\n", b"\t", b"\r\n"])),
        max_size=6,
    ),
    block=st.sampled_from([64, 1024, 4 << 20]),
)
def test_whitespace_runs_never_change_the_table(tmp_path, runs, block):
    """Whitespace between tokens, any amount, anywhere, across any block size: the same table."""
    data = SEED
    for at, n, space in sorted(runs, reverse=True):  # from the end, so earlier gaps keep their offsets
        data = data[:at] + space * n + data[at:]
    parsed = _parse_bytes(data, tmp_path, sizes=DecodeSizes(block_bytes=block))
    assert parsed is not None
    for name in EVENT_SCHEMA.names:
        got, want = parsed.events[name].to_pylist(), _SEED_TABLE[name].to_pylist()
        if name in ("input_dims", "shape_dims", "input_types", "concrete_inputs"):  # kept as written: compare as JSON
            got, want = ([None if v is None else json.loads(v) for v in values] for values in (got, want))
        assert got == want, name


def _seed_table():
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "seed.json"
        path.write_bytes(SEED)
        return parse_trace(path).events


_SEED_TABLE = _seed_table()
