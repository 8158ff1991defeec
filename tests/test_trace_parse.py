"""The streaming trace parser against an independent reference (stdlib json, number texts kept),
on every shared real trace, and under every way it can cut, spill, split or decompress."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from libreyolo_profile.store.decode.events import EVENT_SCHEMA, ROOFLINE_SHAPED_OPS
from libreyolo_profile.store.decode.limits import MAX_INFLATION_RATIO, MIN_INFLATED_CAP, DecodeSizes
from libreyolo_profile.store.decode.parse import parse_trace
from tests.conftest import require_traces

TRACE_NAMES = [
    "a100_cutlass_adam_rank0",
    "v100_resnet50_workers0",
    "v100_resnet50_workers4",
    "v100_resnet_ddp_ns_resolution",
    "h100_vit_image_classifier",
    "a100_alexnet_no_profilerstep",
    "mi250_rocm_minitoy",
    "cpu_only_rank34",
]
BATCH_OPS = {"aten::conv2d", "aten::convolution", "aten::linear", "aten::matmul"}


class _Number(str):
    """A JSON number kept as the text it was written as."""


def _text(value):
    if value is None:
        return None
    if isinstance(value, _Number):
        return str(value) if "." not in value and "e" not in value.lower() else str(float(value))
    return str(value)


JSON_COLUMNS = ("input_dims", "shape_dims", "input_types", "concrete_inputs")


def reference_table(path: Path) -> pa.Table:
    """What the table must hold, computed the slow, obvious way."""
    data = gzip.open(path).read() if path.read_bytes()[:2] == b"\x1f\x8b" else path.read_bytes()
    # an integer's text is the same read as a number or a string (_text), so only fractions need _Number: a
    # Python class called per number halved the reading of the real traces' hundreds of thousands of integers
    doc = json.loads(data, parse_int=str, parse_float=_Number)
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    rows = {f.name: [] for f in EVENT_SCHEMA}
    for e in events:
        if e.get("ph") not in ("X", "i", "I"):
            continue
        args = e.get("args") or {}
        external = args.get("External id", args.get("external id"))
        rows["ph"].append(e["ph"])
        rows["cat"].append(_text(e.get("cat")))
        rows["name"].append(_text(e.get("name")))
        rows["pid"].append(_text(e.get("pid")))
        rows["tid"].append(_text(e.get("tid")))
        rows["ts_text"].append(None if e.get("ts") is None else str(e["ts"]))  # the text as written
        rows["dur_text"].append(None if e.get("dur") is None else str(e["dur"]))
        rows["correlation"].append(_text(args.get("correlation")))
        rows["external_id"].append(_text(external))
        rows["device"].append(_text(args.get("device")))
        rows["stream"].append(_text(args.get("stream")))
        rows["mem_allocated"].append(None if args.get("Total Allocated") is None else float(args["Total Allocated"]))
        rows["mem_reserved"].append(None if args.get("Total Reserved") is None else float(args["Total Reserved"]))
        rows["mem_device_type"].append(None if args.get("Device Type") is None else int(args["Device Type"]))
        rows["mem_device_id"].append(None if args.get("Device Id") is None else int(args["Device Id"]))
        rows["mem_bytes"].append(None if args.get("Bytes") is None else float(args["Bytes"]))
        rows["mem_addr"].append(_text(args.get("Addr")))
        dims = args.get("Input Dims") if e.get("name") in BATCH_OPS else None
        rows["input_dims"].append(None if dims is None else json.loads(json.dumps(dims)))
        shaped = e.get("name") in ROOFLINE_SHAPED_OPS  # the ops sql/roofline_models.sql costs
        for column, key in (
            ("shape_dims", "Input Dims"),
            ("input_types", "Input type"),
            ("concrete_inputs", "Concrete Inputs"),
        ):
            value = args.get(key) if shaped else None
            rows[column].append(None if value is None else json.loads(json.dumps(value)))
        rows["copy_bytes"].append(None if args.get("bytes") is None else float(args["bytes"]))
        # a collective's process group, message size and kind, as text (where recorded)
        for column, key in (
            ("pg_name", "Process Group Name"),
            ("msg_nelems", "In msg nelems"),
            ("collective", "Collective name"),
        ):
            rows[column].append(_text(args.get(key)))
    return rows


def assert_matches_reference(table: pa.Table, path: Path) -> None:
    expected = reference_table(path)
    assert table.schema == EVENT_SCHEMA
    for name in table.column_names:
        got = table[name].to_pylist()
        if name in JSON_COLUMNS:  # kept as written (whitespace and all): compare as JSON
            got = [None if g is None else json.loads(g, parse_int=_Number, parse_float=_Number) for g in got]
        assert got == expected[name], f"column {name} differs from the reference"


@pytest.fixture(scope="module")
def traces():
    return require_traces()


@pytest.fixture(scope="module")
def parsed_real(traces):
    """A shared trace parsed with the default settings, once for every test of this file that reads it."""
    parsed = {}

    def by_name(name: str):
        if name not in parsed:
            parsed[name] = parse_trace(traces / f"{name}.json.gz")
        return parsed[name]

    return by_name


@pytest.mark.parametrize("name", TRACE_NAMES)
def test_every_real_trace_matches_the_reference(traces, parsed_real, name):
    path = traces / f"{name}.json.gz"
    parsed = parsed_real(name)
    assert_matches_reference(parsed.events, path)
    assert parsed.stats.events_kept == parsed.events.num_rows
    assert parsed.stats.repairs == 0 and parsed.stats.dropped_events == 0 and not parsed.stats.truncated


def test_sub_microsecond_timestamps_survive(parsed_real):
    ts = parsed_real("v100_resnet_ddp_ns_resolution").events["ts_text"].to_pylist()
    assert "1712195495519689.047" in ts


def test_devices_rank_and_world_size(parsed_real):
    parsed = parsed_real("a100_cutlass_adam_rank0")
    assert parsed.rank == 0 and parsed.world_size == 16
    assert parsed.devices[0] == {
        "device": "0",
        "name": "NVIDIA A100-SXM4-80GB",
        "total_mb": 84990623744 / 2**20,
        "num_sms": 108,
    }


@pytest.fixture(scope="module")
def plain_trace(traces, tmp_path_factory):
    """A real trace, uncompressed (byte ranges and the two-process path need a plain file); no test writes it."""
    path = tmp_path_factory.mktemp("plain") / "h100.json"
    path.write_bytes(gzip.open(traces / "h100_vit_image_classifier.json.gz").read())
    return path


@pytest.fixture(scope="module")
def plain_events(plain_trace):
    """The plain trace's table under the default sizes: what every other way of cutting it must give."""
    return parse_trace(plain_trace).events


def test_tiny_pieces_and_blocks_cut_everywhere(plain_trace, plain_events):
    """Pieces of 200 bytes and blocks of 1 KB: most cuts need several candidates and rejoins."""
    expected = plain_events
    assert parse_trace(plain_trace, sizes=DecodeSizes(piece_bytes=200, block_bytes=1024)).events.equals(expected)


def test_two_processes_give_the_same_table(plain_trace):
    expected = parse_trace(plain_trace, workers=1).events
    parsed = parse_trace(plain_trace, sizes=DecodeSizes(parallel_bytes=1 << 20))
    assert parsed.stats.workers == 2
    assert parsed.events.equals(expected)


def test_spilled_output_is_the_same_table(plain_trace, plain_events):
    expected = plain_events
    assert parse_trace(plain_trace, sizes=DecodeSizes(spill_bytes=1 << 16, batch_rows=500)).events.equals(expected)


def test_released_pages_of_a_spilled_table_read_back_the_same(plain_trace, plain_events):
    """Ingest lets go of each mapped batch once DuckDB has read it (release_pages): whatever touches the
    table afterwards reads the same rows back from the file, and the mapping is resident no longer."""
    from libreyolo_profile.store.decode.spill import release_pages

    expected = plain_events
    spilled = parse_trace(plain_trace, sizes=DecodeSizes(spill_bytes=1 << 16, batch_rows=500)).events
    assert spilled.equals(expected)  # every page touched
    resident_before = _resident_kib_of_deleted_maps()
    for batch in spilled.to_batches():
        release_pages(batch)
    assert _resident_kib_of_deleted_maps() < resident_before
    assert spilled.equals(expected)


def _resident_kib_of_deleted_maps() -> int:
    """Resident KiB of this process's mappings of unlinked files (the spilled tables' maps)."""
    total, in_deleted = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if "-" in line.split(" ", 1)[0] and len(line.split()) >= 5:
            in_deleted = line.endswith("(deleted)")
        elif in_deleted and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


def test_batch_rows_cut_the_table_into_record_batches(plain_trace, plain_events):
    """The sizes travel as a parameter down to the reader: batches of at least 500 rows (a batch is
    closed once a piece brings it to `batch_rows`) instead of one for the whole trace."""
    whole = plain_events
    assert 500 < whole.num_rows < DecodeSizes().batch_rows and whole["ph"].num_chunks == 1
    small = parse_trace(plain_trace, sizes=DecodeSizes(batch_rows=500)).events
    chunk_rows = [len(chunk) for chunk in small["ph"].chunks]
    assert len(chunk_rows) > 1 and all(rows >= 500 for rows in chunk_rows[:-1])
    assert small.equals(whole)


def test_zlib_and_isal_agree(traces, parsed_real, monkeypatch):
    path = traces / "v100_resnet_ddp_ns_resolution.json.gz"
    default = parsed_real("v100_resnet_ddp_ns_resolution").events
    monkeypatch.setenv("LIBREYOLO_PROFILE_NO_ISAL", "1")
    assert parse_trace(path).events.equals(default)


@pytest.mark.parametrize("layout", ["indent4", "compact", "bare_list", "events_first"])
def test_other_json_layouts(plain_trace, tmp_path, layout):
    """Re-serialized traces: other indentation, compact `}, {` separators, a bare event list, and
    the event array before the device properties."""
    doc = json.loads(plain_trace.read_bytes())
    if layout == "indent4":
        text = json.dumps(doc, indent=4)
    elif layout == "compact":
        text = json.dumps(doc, separators=(", ", ":"))
    elif layout == "bare_list":
        text = json.dumps(doc["traceEvents"])
    else:
        text = json.dumps({"traceEvents": doc["traceEvents"], **{k: v for k, v in doc.items() if k != "traceEvents"}})
    path = tmp_path / f"{layout}.json"
    path.write_text(text)
    parsed = parse_trace(path)
    assert_matches_reference(parsed.events, path)
    if layout != "bare_list":
        assert parsed.devices and parsed.devices[0]["name"].startswith("NVIDIA H100")


def test_braces_inside_names_with_small_pieces(tmp_path):
    lam = "void at::native::kernel<{lambda()#1}, {lambda(float)#2}>"
    events = [
        {"ph": "X", "cat": "kernel", "name": lam if i % 2 else f"k{i}", "pid": 0, "tid": 7, "ts": 1000 + i, "dur": 1}
        for i in range(400)
    ]
    path = tmp_path / "compact.json"
    path.write_text(json.dumps({"traceEvents": events}, separators=(",", ":")).replace("},{", "}, {"))
    parsed = parse_trace(path, sizes=DecodeSizes(piece_bytes=128))
    assert parsed.events["name"].to_pylist() == [e["name"] for e in events]
    assert parsed.stats.dropped_events == 0


def test_cut_off_trace_recovers_a_prefix(plain_trace, plain_events, tmp_path, capsys):
    full = plain_events
    data = plain_trace.read_bytes()
    path = tmp_path / "cut.json"
    path.write_bytes(data[: int(len(data) * 0.7)])
    parsed = parse_trace(path)
    assert parsed.stats.truncated
    n = parsed.events.num_rows
    assert 0 < n < full.num_rows
    assert parsed.events.equals(full.slice(0, n))
    assert "cut off" in capsys.readouterr().err


def test_typed_values_other_traces_use(tmp_path):
    """pid/tid as strings and numbers, string and float timestamps, ROCm stream ids."""
    events = [
        {
            "ph": "X",
            "cat": "kernel",
            "name": "k",
            "pid": "Spans",
            "tid": "",
            "ts": "123.456789",
            "dur": 1.5,
            "args": {"stream": "0x0", "device": 0, "correlation": 7},
        },
        {"ph": "X", "cat": "cpu_op", "name": 17, "pid": 12, "tid": "12", "ts": "TS", "dur": 2},
        {"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": 5, "s": "g"},
        {"ph": "f", "name": "flow", "id": 1, "pid": 1, "tid": 1, "ts": 5},
    ]
    path = tmp_path / "typed.json"  # a float literal Python itself cannot hold exactly
    path.write_text(json.dumps({"traceEvents": events}).replace('"TS"', "1712195495519689.047"))
    table = parse_trace(path).events
    assert table["pid"].to_pylist() == ["Spans", "12", "1"]
    assert table["tid"].to_pylist() == ["", "12", "1"]
    assert table["ts_text"].to_pylist() == ["123.456789", "1712195495519689.047", "5"]
    assert table["name"].to_pylist() == ["k", "17", "mark"]
    assert table["stream"].to_pylist() == ["0x0", None, None]


# ------------------------------------------------------------------------------------------------
# hostile input: caps (passed as parameters) and whitespace runs

from libreyolo_profile.errors import UnanalysableError, UsageError  # noqa: E402
from libreyolo_profile.store.decode.limits import Limits  # noqa: E402
from tests.bad_inputs.make_bad_inputs import BOM, clean_events, kineto_text  # noqa: E402

RUN = b" \n\t\r" * 4096  # 16 KiB of whitespace: many 1 KiB blocks of nothing else below


@pytest.fixture
def synthetic(tmp_path):
    path = tmp_path / "clean.json"
    path.write_bytes(kineto_text(clean_events(steps=4)))
    return path


@pytest.mark.parametrize(
    "where",
    ["before", "after_key", "after_bracket", "after_brace", "after_comma", "before_close", "after_close", "at_end"],
)
def test_whitespace_runs_anywhere_leave_the_table_alone(synthetic, tmp_path, where):
    """Runs of whitespace wherever JSON allows it, many blocks long: the same table as without, and
    the text after the events (the header's other fields) still read."""
    clean = synthetic.read_bytes()
    expected = parse_trace(synthetic)
    first_event_end = clean.index(b"},\n") + 1
    at = {
        "before": 0,
        "after_key": clean.index(b'"traceEvents":') + len(b'"traceEvents":'),
        "after_bracket": clean.index(b"[") + 1,
        "after_brace": first_event_end,
        "after_comma": first_event_end + 1,
        "before_close": clean.rindex(b"]"),
        "after_close": clean.rindex(b"]") + 1,
        "at_end": len(clean),
    }[where]
    path = tmp_path / "spaced.json"
    path.write_bytes(clean[:at] + RUN + clean[at:])
    parsed = parse_trace(path, limits=Limits(max_event_bytes=64 << 10), sizes=DecodeSizes(block_bytes=1024))
    assert parsed.events.equals(expected.events)
    assert parsed.devices == expected.devices and parsed.devices
    assert not parsed.stats.truncated and parsed.stats.bytes_read == len(clean) + len(RUN)


def test_byte_order_mark_is_skipped(synthetic, tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(BOM + synthetic.read_bytes())
    assert parse_trace(path).events.equals(parse_trace(synthetic).events)


def test_one_event_past_the_cap_is_refused(tmp_path):
    """One 2 MiB name: read under the default cap (64 MiB), refused under a 1 MiB cap."""
    events = clean_events(steps=2)
    events[1]["name"] = "x" * (2 << 20)
    path = tmp_path / "long_name.json"
    path.write_bytes(kineto_text(events))
    assert parse_trace(path).events["name"].to_pylist()[1] == events[1]["name"]
    with pytest.raises(UnanalysableError, match="capped at 1 MiB"):
        parse_trace(path, limits=Limits(max_event_bytes=1 << 20))


def test_inflating_past_the_cap_is_refused(synthetic, tmp_path):
    data = synthetic.read_bytes()
    path = tmp_path / "clean.json.gz"
    path.write_bytes(gzip.compress(data))
    assert parse_trace(path, limits=Limits(max_inflated_bytes=len(data))).events.num_rows > 0
    with pytest.raises(UnanalysableError, match="decompression bomb"):
        parse_trace(path, limits=Limits(max_inflated_bytes=len(data) - 1))


def test_default_inflation_cap_scales_with_the_file():
    limits = Limits()
    assert limits.inflated_cap(1 << 20) == MIN_INFLATED_CAP
    assert limits.inflated_cap(1 << 30) == MAX_INFLATION_RATIO << 30  # a 1 GiB gzip: 200 GiB inflated
    assert Limits(max_inflated_bytes=5).inflated_cap(1 << 30) == 5


def test_caps_from_the_environment(monkeypatch):
    monkeypatch.setenv("LIBREYOLO_PROFILE_MAX_EVENT_MB", "0.5")
    monkeypatch.setenv("LIBREYOLO_PROFILE_MAX_INFLATED_MB", "3")
    assert Limits.from_env() == Limits(max_event_bytes=1 << 19, max_inflated_bytes=3 << 20)
    monkeypatch.setenv("LIBREYOLO_PROFILE_MAX_INFLATED_MB", "lots")
    with pytest.raises(UsageError, match="LIBREYOLO_PROFILE_MAX_INFLATED_MB"):
        Limits.from_env()


def test_binary_data_is_named(tmp_path):
    path = tmp_path / "noise.json"
    path.write_bytes(bytes((i * 197 + 89) % 256 for i in range(4096)))
    with pytest.raises(UnanalysableError, match=r"not a JSON trace \(binary data\)"):
        parse_trace(path)


def test_special_files_are_refused_before_opening(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opening it for reading would block: the test would hang, not fail, without the check
    with pytest.raises(UsageError, match="is a FIFO, not a regular file"):
        parse_trace(fifo)


# ------------------------------------------------------------------------------------------------
# sizes and progress, passed in by the caller


def test_the_header_before_the_events_is_searched_up_to_max_prefix_bytes(tmp_path):
    """`max_prefix_bytes` reaches the search for "traceEvents": 4 KiB of header before the events are
    read under the default (256 MiB), and refused when only 1 KiB may be searched."""
    path = tmp_path / "long_header.json"
    path.write_bytes(kineto_text(clean_events(steps=2), header={"schemaVersion": 1, "padding": "x" * 4096}))
    assert parse_trace(path).events.num_rows > 0
    with pytest.raises(UnanalysableError, match="no trace events found"):
        parse_trace(path, sizes=DecodeSizes(block_bytes=256, max_prefix_bytes=1024))


def test_progress_is_told_how_far_reading_got(synthetic):
    """The decoder shows nothing itself: it makes the caller's progress with the path and size, calls
    it with byte positions as blocks come in, and says at the end how many events it read."""
    calls = []

    class Recorder:
        def __init__(self, path, size):
            calls.append(("start", path, size))

        def __call__(self, position):
            calls.append(("at", position))

        def done(self, events_read):
            calls.append(("done", events_read))

    size = synthetic.stat().st_size
    parsed = parse_trace(synthetic, sizes=DecodeSizes(block_bytes=1024), progress=Recorder)
    positions = [call[1] for call in calls if call[0] == "at"]
    assert calls[0] == ("start", synthetic, size) and calls[-1] == ("done", parsed.stats.events_seen)
    assert len(positions) > 1 and positions == sorted(positions) and 0 < positions[-1] <= size


def test_progress_lines_for_a_very_big_trace_without_a_terminal(capsys):
    from libreyolo_profile.output.progress import LINES_FROM_BYTES, TraceReadingProgress

    progress = TraceReadingProgress(Path("big.json"), LINES_FROM_BYTES)
    progress(LINES_FROM_BYTES // 2)
    progress.done(1234)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "reading big.json (268 MB)…"  # 256 MiB = 268,435,456 bytes
    assert len(lines) == 2 and lines[1].startswith("read 1,234 events in ")
