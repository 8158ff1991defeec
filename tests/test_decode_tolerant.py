"""Tolerant decoding (issue #49): the smallest real traces, mutated the way other profiler versions and
vendors write them, still answer (or exit with a documented code and one line), and every event whose
reading was repaired, converted or left out is counted by reason in the trace_damaged mark.

The traces are found by globbing the shared folder (the three smallest, to stay cheap); each mutation
knows how many events it changed and the words the mark must then hold, so a mutation that finds
nothing to change on a trace checks only that the trace still answers."""

from __future__ import annotations

import copy
import gzip
import json
import random
import re
from pathlib import Path

import pytest

from libreyolo_profile.errors import EXIT_UNANALYSABLE, EXIT_USAGE
from libreyolo_profile.store.decode.limits import DecodeSizes
from libreyolo_profile.store.decode.parse import parse_trace
from libreyolo_profile.store.document.marks import trace_damaged
from tests.conftest import require_traces, run_cli_in_process, trace_files, trace_id

SMALLEST = sorted(trace_files(), key=lambda p: p.stat().st_size)[:3]
DEEP = 100_000


def _load(path: Path):
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)


def _text(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _events(doc) -> list:
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def _args(doc) -> list[dict]:
    return [e["args"] for e in _events(doc) if isinstance(e.get("args"), dict)]


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# -- mutations: each changes `doc` in place and returns {words the mark must hold: events changed} ---------

# the args the decoder reads as numbers or integer ids (store/decode/events.py EventArgs), as traces spell them
READ_ARGS = ("correlation", "External id", "device", "Bytes", "Total Allocated", "Device Id", "bytes")


def numbers_as_strings(doc, rng) -> dict:
    """ROCm writes `"bytes": "9216"`; other writers quote ids and times."""
    changed = 0
    for args in _args(doc):
        for key, value in args.items():
            if _number(value):
                args[key] = str(value)
                changed += key in READ_ARGS
    for e in _events(doc):
        for key in ("ts", "dur", "pid", "tid"):
            if _number(e.get(key)):
                e[key] = str(e[key])
    return {"written as text, read as the number": changed}


def ints_as_floats(doc, rng) -> dict:
    """`"device": 0.0`, `"Device Id": 1.0`, float timestamps."""
    changed = 0
    for args in _args(doc):
        for key, value in args.items():
            if isinstance(value, int) and not isinstance(value, bool):
                args[key] = float(value)
                changed += key in READ_ARGS and key not in ("Bytes", "Total Allocated", "bytes")
    for e in _events(doc):
        for key in ("ts", "dur", "pid", "tid"):
            if isinstance(e.get(key), int):
                e[key] = float(e[key])
    return {"written as a float, read as the number": changed}


def floats_as_ints(doc, rng) -> dict:
    for e in _events(doc):
        for key in ("ts", "dur"):
            if isinstance(e.get(key), float):
                e[key] = int(e[key])
    return {}


def args_missing(doc, rng) -> dict:
    for e in _events(doc):
        if rng.random() < 0.3:
            e.pop("args", None)
    return {}


def args_not_objects(doc, rng) -> dict:
    changed = 0
    for e in _events(doc):
        if "args" in e and rng.random() < 0.3:
            e["args"] = rng.choice([None, [1, 2], "args"])
            changed += e.get("ph") in ("X", "i", "I")
    return {"args not an object": changed}


def negative_durations(doc, rng) -> dict:
    changed = 0
    for e in _events(doc):
        if e.get("ph") == "X" and _number(e.get("dur")) and rng.random() < 0.1:
            e["dur"] = -abs(e["dur"]) - 1
            changed += 1
    return {"negative duration": changed}


def unknown_phases(doc, rng) -> dict:
    changed = 0
    for e in _events(doc):
        if rng.random() < 0.3:
            e["ph"] = "Q"
            changed += 1
    return {"a phase (ph) the trace event format does not have": changed}


def huge_integers(doc, rng) -> dict:
    """Ids and timestamps past int64 (2^70), Input Dims of 2^40."""
    ids = stamps = 0
    for e in _events(doc):
        args = e.get("args")
        if isinstance(args, dict):
            for key in ("correlation", "External id"):
                if _number(args.get(key)) and rng.random() < 0.3:
                    args[key] = 2**70
                    ids += e.get("ph") in ("X", "i", "I")
            if "Input Dims" in args:
                args["Input Dims"] = [[2**40, 3]]
        if e.get("ph") in ("X", "i", "I") and rng.random() < 0.05:
            e["ts"] = 2**70
            stamps += 1
    return {"past 64 bits": ids, "no readable timestamp": stamps}


def times_past_any_clock(doc, rng) -> dict:
    """Four readable duration events (not a step) get a time no clock gives: ts 1e30 µs (its × 1000 to ns
    overflowed DuckDB's DECIMAL and failed the whole trace), ts -9.2e15 µs, dur 1e30 and dur 9.2e15 µs (in
    range of BIGINT ns, but an end or a difference of two overflowed it). Each is left out or read as 0 long."""
    readable = [
        e
        for e in _events(doc)
        if e.get("ph") == "X"
        and not str(e.get("name", "")).startswith("ProfilerStep#")
        and _number(e.get("ts"))
        and abs(e["ts"]) < 2**60
        and _number(e.get("dur"))
        and 0 <= e["dur"] < 2**60
    ]
    planted = rng.sample(readable, min(4, len(readable)))
    values = [("ts", 1e30), ("dur", 1e30), ("ts", -9_200_000_000_000_000), ("dur", 9_200_000_000_000_000)]
    for e, (key, value) in zip(planted, values[: len(planted)], strict=True):
        e[key] = value
    stamps = sum(1 for e in planted if abs(e["ts"]) >= 2**60)
    return {"no readable timestamp": stamps, "out of range, read as 0 long": len(planted) - stamps}


def step_under_unknown_category(doc, rng) -> dict:
    for e in _events(doc):
        if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation":
            e["cat"] = "some_vendor_category"
    return {}


def as_mtia_lanes(doc, rng) -> dict:
    """The device work and runtime calls as an MTIA trace files them (Kineto's mtia_ccp_events, mtia_runtime):
    the same work, so the same answer."""
    relabel = {"kernel": "mtia_ccp_events", "cuda_runtime": "mtia_runtime"}
    for e in _events(doc):
        e["cat"] = relabel.get(e.get("cat"), e.get("cat"))
    return {}


def odd_distributed_info(doc, rng) -> dict:
    if not isinstance(doc, dict):
        return {}
    doc["distributedInfo"] = {"rank": [1], "world_size": {"n": 2}, "backend": 7}
    return {"distributedInfo.rank": 1}


# Three mutated copies of each trace, so that the test stays cheap (each is one summary): two that change how
# values are written, not what they say, so the answer must be the clean trace's, and one that damages it in
# every way at once (in this order: a later mutation counts only events an earlier one left readable).
SAME_ANSWER = {
    "numbers_as_strings": [numbers_as_strings, step_under_unknown_category, odd_distributed_info],
    "ints_as_floats": [ints_as_floats, as_mtia_lanes],
}
DAMAGE = [
    unknown_phases,
    args_missing,
    args_not_objects,
    negative_durations,
    huge_integers,
    times_past_any_clock,
    floats_as_ints,
]


def _bare_tokens(text: str) -> tuple[str, dict]:
    """NaN and Infinity as bare tokens (Python's json and some C++ writers emit them) in every seventh
    duration and in every Total Allocated."""
    durations = iter(range(10**9))
    text, n = re.subn(r'"dur": [0-9.]+', lambda m: '"dur": NaN' if next(durations) % 7 == 0 else m.group(), text)
    text = re.sub(r'"Total Allocated": [0-9.]+', '"Total Allocated": Infinity', text)
    return text, {"repaired": int("NaN" in text)}


def _deep_nesting(text: str) -> tuple[str, dict]:
    """One event's args holds a list nested 100,000 levels deep (it ended in RecursionError)."""
    at = text.find('"args": {')
    if at < 0:
        return text, {}
    nested = "[" * DEEP + "]" * DEEP
    rest = text[at + len('"args": {') :]
    joint = "" if rest.lstrip().startswith("}") else ", "  # empty args (the pre-Kineto format writes `{}`)
    return text[:at] + '"args": {"deep": ' + nested + joint + rest, {"nested deeper": 1}


TEXT_MUTATIONS = [_bare_tokens, _deep_nesting]


# -- running and checking ---------------------------------------------------------------------------------


def _summary(path: Path, cache: Path) -> tuple[int, dict | None, str]:
    result = run_cli_in_process("summary", str(path), "--json", env={"XDG_CACHE_HOME": str(cache)})
    assert "Traceback" not in result.stderr, result.stderr
    if result.returncode == 0:
        return 0, json.loads(result.stdout, parse_constant=_refuse_constant), result.stderr
    assert result.returncode in (EXIT_UNANALYSABLE, EXIT_USAGE), (result.returncode, result.stderr)
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, result.stderr
    return result.returncode, None, result.stderr


def _refuse_constant(token: str):
    raise AssertionError(f"{token} in the JSON output")


def _check_counted(doc: dict, expected: dict) -> None:
    """Every reason the mutation provoked is in the trace_damaged mark, with a count."""
    damage = (doc.get("marks") or {}).get("trace_damaged", "")
    for words, changed in expected.items():
        if changed:
            assert words in damage, (words, damage)
    notes = damage.removeprefix(trace_damaged([])).split("; ") if damage else []
    for note in notes:
        assert re.match(r"(rank \d+: )?(header: |[0-9,]+ events?: |repaired |cut off|[0-9,]+ unreadable)", note), note


@pytest.fixture(scope="module")
def clean_answers(tmp_path_factory) -> dict:
    """Each trace's own summary, once."""
    require_traces()
    cache = tmp_path_factory.mktemp("tolerant-cache")
    answers = {}
    for trace in SMALLEST:
        code, doc, _ = _summary(trace, cache)
        answers[trace] = (code, doc)
    assert any(code == 0 for code, _ in answers.values()), "none of the smallest traces answers unmutated"
    return answers


def _comparable(doc: dict) -> dict:
    return {name: value for name, value in doc["metrics"].items() if isinstance(value, (int, float))}


def _mutated(original, mutations: list, rng: random.Random) -> tuple[str, dict]:
    """The trace's JSON text after `mutations`, and what the mark must then say."""
    doc, expected = copy.deepcopy(original), {}
    for mutate in mutations:
        for words, changed in mutate(doc, rng).items():
            expected[words] = expected.get(words, 0) + changed
    return json.dumps(doc), expected


@pytest.mark.parametrize("trace", SMALLEST, ids=trace_id)
def test_mutations_answer_and_count_what_they_changed(trace, clean_answers, tmp_path):
    clean_code, clean = clean_answers[trace]
    original = _load(trace)
    runs = {name: _mutated(original, mutations, random.Random(49)) for name, mutations in SAME_ANSWER.items()}
    text, expected = _mutated(original, DAMAGE, random.Random(49))
    for mutate in TEXT_MUTATIONS:
        text, more = mutate(text)
        expected.update(more)
    runs["damaged"] = text, expected
    for name, (text, expected) in runs.items():
        path = tmp_path / f"{name}.json"
        path.write_text(text)
        code, answer, err = _summary(path, tmp_path / "cache")  # answers, or one line with a documented code
        if clean_code != 0:  # a trace that does not answer clean need not answer mutated
            continue
        assert code == 0, (name, err)
        _check_counted(answer, expected)
        if name in SAME_ANSWER:
            assert _comparable(answer) == pytest.approx(_comparable(clean), rel=1e-9, nan_ok=True), name


def _a_trace_with_profiler_steps(clean_answers) -> object:
    """One of the small traces whose window comes from ProfilerStep ranges."""
    trace = next(
        (
            t
            for t, (code, doc) in clean_answers.items()
            if code == 0 and doc["window"]["source"].startswith("ProfilerStep")
        ),
        None,
    )
    assert trace is not None, "no small trace with ProfilerStep ranges"
    return trace


def _host_steps(doc) -> list[dict]:
    """The trace's ProfilerStep ranges on the host (a GPU lane repeats them as gpu_user_annotation)."""
    return [
        e
        for e in _events(doc)
        if str(e.get("name", "")).startswith("ProfilerStep#")
        and e.get("ph") == "X"
        and str(e.get("cat", "")).lower() != "gpu_user_annotation"
    ]


def test_a_broken_step_is_not_called_empty(clean_answers, tmp_path):
    """A ProfilerStep with a negative duration reads as 0 long and is dropped: the trace_damaged mark counts
    it, and the empty_steps mark, which says nothing ran inside, does not (the trace disproves that). The
    broken step is added after the trace's end, where a step of any length would be empty."""
    trace = _a_trace_with_profiler_steps(clean_answers)
    doc = _load(trace)
    events = _events(doc)
    step = next(e for e in events if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("ph") == "X")
    end = max(float(e["ts"]) + float(e.get("dur") or 0) for e in events if _number(e.get("ts")))
    events.append(step | {"name": "ProfilerStep#999999", "ts": end + 1000, "dur": -5})
    path = tmp_path / "broken_step.json"
    path.write_text(json.dumps(doc))
    code, answer, err = _summary(path, tmp_path / "cache")
    assert code == 0, err
    assert "1 event: negative duration" in answer["marks"]["trace_damaged"]
    clean = clean_answers[trace][1]
    assert answer["marks"].get("empty_steps") == clean["marks"].get("empty_steps")
    assert answer["window"]["steps"] == clean["window"]["steps"]


def test_unusable_steps_are_not_said_to_be_absent(clean_answers, tmp_path):
    """ProfilerStep ranges whose timestamp or duration cannot be read are no steps, but the window's source
    (and the window_fallback mark) must not claim the trace has none, nor empty_steps that nothing ran in them."""
    trace = _a_trace_with_profiler_steps(clean_answers)
    doc = _load(trace)
    steps = _host_steps(doc)
    steps[0]["ts"] = "not a time"
    for step in steps[1:]:
        step["dur"] = "NaN"
    path = tmp_path / "unusable_steps.json"
    path.write_text(json.dumps(doc))
    code, answer, err = _summary(path, tmp_path / "cache")
    assert code == 0, err
    assert f"none of the trace's {len(steps)} ProfilerStep ranges" in answer["window"]["source"], answer["window"]
    assert "no ProfilerStep ranges" not in answer["marks"]["window_fallback"]
    assert "empty_steps" not in answer["marks"]


def test_broken_steps_beside_an_empty_one_leave_no_empty_window(clean_answers, tmp_path):
    """Every ProfilerStep that held work lost its duration, and the profiler's empty closing step (after the
    trace's end here) was still readable: the empty step alone became the window, and a GPU trace read as a
    CPU profile of one step of a few µs. The window is the active span, and the empty step is said empty."""
    trace = _a_trace_with_profiler_steps(clean_answers)
    doc = _load(trace)
    events = _events(doc)
    steps = _host_steps(doc)
    end = max(float(e["ts"]) + float(e.get("dur") or 0) for e in events if _number(e.get("ts")))
    for step in steps:
        del step["dur"]
    events.append(steps[0] | {"name": "ProfilerStep#999999", "ts": end + 1000, "dur": 50})
    path = tmp_path / "broken_steps_and_an_empty_one.json"
    path.write_text(json.dumps(doc))
    code, answer, err = _summary(path, tmp_path / "cache")
    assert code == 0, err
    clean = clean_answers[trace][1]
    assert f"none of the trace's {len(steps)} ProfilerStep ranges" in answer["window"]["source"], answer["window"]
    assert answer["window"]["source"].startswith(("device active span", "host active span")), answer["window"]
    assert answer["marks"]["empty_steps"].startswith("1 ProfilerStep range(s) (0.050 ms in all) dropped")
    assert ("cpu_profile" in answer["marks"]) == ("cpu_profile" in clean["marks"])


def test_one_event_far_from_the_rest_keeps_the_memory_section(tmp_path):
    """Ops 2e15 µs (~63 years) before the rest, too many to be stray times (a lane on another clock), put
    every other event ~2e18 ns after the trace's start; the memory section's ordering key (ns × 1024)
    overflowed BIGINT and the section was lost."""
    require_traces()
    holding = [t for t in sorted(trace_files(), key=lambda p: p.stat().st_size) if b'"[memory]"' in _text(t)]
    if not holding:
        pytest.skip("no shared trace records allocator events")
    doc = _load(holding[0])
    events = _events(doc)
    first = min(float(e["ts"]) for e in events if _number(e.get("ts")))
    some = next(e for e in events if e.get("name") == "[memory]")
    far = {"ph": "X", "cat": "cpu_op", "name": "far op", "ts": first - 2e15, "dur": 1}
    events += [far | {"pid": some["pid"], "tid": some["tid"]}] * (11 + len(events) // 100)
    path = tmp_path / "far_event.json"
    path.write_text(json.dumps(doc))
    code, answer, err = _summary(path, tmp_path / "cache")
    assert code == 0, err
    assert "section_unavailable" not in answer["marks"], answer["marks"]["section_unavailable"]
    assert answer["metrics"]["peak_mem_mb"] is not None


def _holding_kernels_and_ops() -> list[Path]:
    """The three smallest traces that record both device kernels and host ops."""
    kernels = ('"cat": "kernel"', '"cat":"kernel"')
    traces = sorted(trace_files(), key=lambda p: p.stat().st_size)
    return [t for t in traces if b'"cpu_op"' in _text(t) and any(k.encode() in _text(t) for k in kernels)][:3]


# ops that allocate or reshape and launch no device work of their own
NO_LAUNCH_OPS = ("aten::empty", "aten::view", "aten::as_strided", "aten::resize_")


@pytest.mark.parametrize("trace", _holding_kernels_and_ops(), ids=trace_id)
def test_ops_of_another_process_on_a_thread_lose_no_device_time(trace, tmp_path):
    """The ops that launch nothing written with no pid, or another process's (a tid alone is not a thread):
    the roofline's units were nested per (pid, tid) but looked up by tid, so such a child op hid its parent's
    later launches, and their device time left the roofline, whose rows hold every execution in the window
    (a100_alexnet_no_profilerstep: 65.245 of 66.203 ms). The window's device time is the clean trace's."""

    def roofline_ms(path: Path) -> float:
        result = run_cli_in_process(
            "roofline", str(path), "--top", "1000000000", "--json", env={"XDG_CACHE_HOME": str(tmp_path / "cache")}
        )
        assert result.returncode == 0, result.stderr
        return sum(r["device_ms_per_step"] or 0 for r in json.loads(result.stdout)["roofline"])

    doc = _load(trace)
    ops = [e for e in _events(doc) if e.get("cat") == "cpu_op" and str(e.get("name", "")).startswith(NO_LAUNCH_OPS)]
    for n, op in enumerate(ops):
        if n % 2:
            op["pid"] = 999_999_999
        else:
            op.pop("pid", None)
    path = tmp_path / "ops_on_other_processes.json"
    path.write_text(json.dumps(doc))
    assert roofline_ms(path) == pytest.approx(roofline_ms(trace), abs=1e-6)


@pytest.mark.parametrize("trace", SMALLEST, ids=trace_id)
@pytest.mark.parametrize("years", [-60, 60])
def test_a_stray_time_is_left_out_not_measured(trace, years, clean_answers, tmp_path):
    """One op ~60 years before or after the rest (a time of 0 beside µs since the epoch, one event in ns): kept,
    a window from the active span ran 53 years. Left out and counted; every figure is the clean trace's."""
    clean_code, clean = clean_answers[trace]
    if clean_code != 0:
        pytest.skip("the trace does not answer unmutated")
    doc = _load(trace)
    events = _events(doc)
    times = [float(e["ts"]) for e in events if _number(e.get("ts"))]
    at = (min(times) if years < 0 else max(times)) + years * 365.25 * 86400e6
    host = next(e for e in events if e.get("ph") == "X")
    events.append(
        {"ph": "X", "cat": "cpu_op", "name": "aten::stray", "ts": at, "dur": 5, "pid": host["pid"], "tid": host["tid"]}
    )
    path = tmp_path / "stray_time.json"
    path.write_text(json.dumps(doc))
    code, answer, err = _summary(path, tmp_path / "cache")
    assert code == 0, err
    assert (
        "1 event: dropped: a timestamp more than a day from the rest of the trace" in answer["marks"]["trace_damaged"]
    )
    assert answer["window"] == clean["window"]
    assert _comparable(answer) == pytest.approx(_comparable(clean), rel=1e-9, nan_ok=True)


def test_two_processes_merged_into_one_file_are_refused_not_averaged(clean_answers, tmp_path):
    """Two traces' events in one file (a tool that merges ranks for a viewer): the steps of both read as one
    timeline gave a step of neither (dlrm ranks 0 and 1, 14.5 and 19.9 ms, read as 2 steps of 9.96 ms), their
    correlation ids clashing. Refused with the reason, exit 1; one ProfilerStep whose pid alone is damaged is
    no second process."""

    def steps_with_ops(doc) -> bool:  # its ProfilerSteps on the process of its ops (not so in every trace)
        steps = {e.get("pid") for e in _events(doc) if str(e.get("name", "")).startswith("ProfilerStep#")}
        return any(e.get("cat") in ("cpu_op", "cuda_runtime") and e.get("pid") in steps for e in _events(doc))

    stepped = [
        t
        for t, (code, doc) in clean_answers.items()
        if code == 0 and doc["window"]["source"].startswith("ProfilerStep")
    ]
    trace = next((t for t in stepped if steps_with_ops(_load(t))), None)
    if trace is None:
        pytest.skip("no small trace records its ProfilerSteps on its ops' process")
    first, second = _load(trace), _load(trace)
    for event in _events(second):
        if "pid" in event:
            event["pid"] = f"second {event['pid']}"  # another process, whatever the first's pids
    merged = copy.deepcopy(first)
    _events(merged).extend(_events(second))
    path = tmp_path / "merged.json"
    path.write_text(json.dumps(merged))
    code, _, err = _summary(path, tmp_path / "cache")
    assert code == EXIT_UNANALYSABLE and "ProfilerSteps of 2 processes" in err and "import --job" in err, err

    step = next(e for e in _events(first) if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("ph") == "X")
    step["pid"] = "damaged"
    path = tmp_path / "one_damaged_step_pid.json"
    path.write_text(json.dumps(first))
    code, _, err = _summary(path, tmp_path / "cache")
    assert code == 0, err


@pytest.mark.parametrize("trace", SMALLEST[:1], ids=trace_id)
def test_no_usable_duration_exits_1_with_the_reason(trace, tmp_path):
    doc = _load(trace)
    for e in _events(doc):
        if e.get("ph") == "X":
            e["dur"] = -1
    path = tmp_path / "unusable.json"
    path.write_text(json.dumps(doc))
    code, _, err = _summary(path, tmp_path / "cache")
    assert code == EXIT_UNANALYSABLE and "usable duration" in err, err


def test_allocator_events_with_float_device_ids_are_read(tmp_path):
    """`Device Id` 1.0 dropped every allocator event: memory said the trace held none."""
    require_traces()

    def beside(doc) -> list[dict]:
        return [e for e in _events(doc) if e.get("cat") in ("kernel", "cpu_op") and e.get("ph") == "X"][:4]

    doc = next((d for d in map(_load, reversed(SMALLEST)) if beside(d)), None)
    if doc is None:
        pytest.skip("none of the smallest traces has a Kineto op or kernel to allocate beside")
    events, kernels = _events(doc), beside(doc)
    for i, e in enumerate(kernels):
        args = {"Device Type": 1, "Device Id": 0, "Addr": 1000 + i, "Bytes": 1 << 20, "Total Allocated": (i + 1) << 20}
        events.append(
            {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": e["pid"], "tid": e["tid"]}
            | {"ts": e["ts"], "s": "t", "args": args}
        )
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps(doc))
    for e in events:
        if e.get("name") == "[memory]":
            e["args"]["Device Id"] = 0.0
            e["args"]["Bytes"] = str(e["args"]["Bytes"])
    floats = tmp_path / "floats.json"
    floats.write_text(json.dumps(doc))
    tables = [parse_trace(p, report=False).events for p in (clean, floats)]
    for column in ("mem_device_id", "mem_device_type", "mem_bytes", "mem_allocated"):
        assert tables[0][column].to_pylist() == tables[1][column].to_pylist(), column
    assert sum(v is not None for v in tables[1]["mem_device_id"].to_pylist()) == len(kernels)
    stats = parse_trace(floats, report=False).stats
    assert stats.altered["`Device Id` written as a float, read as the number"] == len(kernels)
    assert stats.altered["`Bytes` written as text, read as the number"] == len(kernels)


SIZE_ARGS = ("bytes", "Bytes", "Total Allocated", "Total Reserved")


@pytest.mark.parametrize("arg", ["bytes", "Total Allocated"])
def test_sizes_past_a_double_or_an_id_past_int32_cost_no_section(arg, tmp_path):
    """The smallest trace whose events record `arg` (copies' bytes, the allocator's totals), with sizes of
    ±9e18 (int64, past a double's 2^53: the decoder's checked cast refused them and failed the trace) and
    1e300 (the blame's copy label cast it to BIGINT: failed), and device ids of 9e18 (the memory table cast
    them to INTEGER: the section was lost). Each is a number the trace wrote: read, and every section kept."""
    require_traces()
    holding = [t for t in sorted(trace_files(), key=lambda p: p.stat().st_size) if f'"{arg}"'.encode() in _text(t)]
    if not holding:
        pytest.skip(f"no shared trace records {arg}")
    doc = _load(holding[0])
    extremes = iter([9 * 10**18, -9 * 10**18, 1e300] * 2)
    for args in _args(doc):
        for key in SIZE_ARGS:
            if _number(args.get(key)):
                args[key] = next(extremes, args[key])
        if _number(args.get("Device Id")):
            args["Device Id"] = 9 * 10**18
    path = tmp_path / "extreme_sizes.json"
    path.write_text(json.dumps(doc))
    code, answer, err = _summary(path, tmp_path / "cache")
    assert code == 0, err
    assert "section_unavailable" not in answer["marks"], answer["marks"]["section_unavailable"]


def test_an_odd_header_field_loses_only_itself(tmp_path):
    """An unreadable distributedInfo made the whole header undecodable: deviceProperties went with it."""
    require_traces()
    trace = next((t for t in SMALLEST if isinstance(_load(t), dict) and _load(t).get("deviceProperties")), None)
    assert trace is not None, "no small trace records deviceProperties"
    doc = _load(trace)
    odd_distributed_info(doc, random.Random(0))
    path = tmp_path / "odd_header.json"
    path.write_text(json.dumps(doc))
    clean, odd = parse_trace(trace, report=False), parse_trace(path, report=False)
    assert odd.devices == clean.devices and odd.rank is None
    assert any("distributedInfo.rank" in note for note in odd.stats.header_notes), odd.stats.header_notes


def test_deep_nesting_anywhere_loses_nothing_else(tmp_path):
    """100,000 nested brackets in an entry of the event array and in the last event's args (the piece that
    closes the array): every real event is kept, the array's end and the header after it are found."""
    require_traces()
    trace = SMALLEST[-1]
    clean = parse_trace(trace, report=False)
    text = json.dumps(_load(trace))
    nested = "[" * DEEP + "]" * DEEP
    if text.startswith("["):  # a JSON list: the pre-Kineto format
        text = '[{"nested": ' + nested + "}, " + text[1:]
    else:
        text = text.replace('"traceEvents": [', '"traceEvents": [{"nested": ' + nested + "}, ", 1)
    at = text.rfind('"args": {')
    rest = text[at + len('"args": {') :]
    joint = "" if rest.lstrip().startswith("}") else ", "  # empty args (the pre-Kineto format writes `{}`)
    text = text[:at] + '"args": {"deep": ' + nested + joint + rest
    path = tmp_path / "deep.json"
    path.write_text(text)
    deep = parse_trace(path, report=False)
    assert deep.events.num_rows == clean.events.num_rows and not deep.stats.truncated
    assert deep.devices == clean.devices and deep.stats.dropped_events == 0
    assert deep.stats.altered["values nested deeper than 100 levels, read as null"] == 2
    assert deep.stats.altered["dropped: no phase (ph)"] == 1  # the entry with nothing but the nesting


def test_two_processes_count_what_one_counts(tmp_path):
    """A big plain trace is decoded by two processes: what each counted is added up, not lost."""
    require_traces()
    doc = _load(SMALLEST[-1])
    numbers_as_strings(doc, random.Random(1))
    unknown_phases(doc, random.Random(2))
    path = tmp_path / "mutated.json"
    path.write_text(json.dumps(doc))
    one = parse_trace(path, workers=1, report=False).stats
    two = parse_trace(path, report=False, sizes=DecodeSizes(parallel_bytes=1, piece_bytes=512, block_bytes=4096)).stats
    assert two.workers == 2 and one.altered and two.altered == one.altered


def test_a_job_keeps_each_ranks_damage(tmp_path):
    """`import --job` with one rank's trace cut off: the job's profile says which rank was damaged."""
    require_traces()
    from libreyolo_profile.store.document.job import job_document

    doc = _load(SMALLEST[-1])
    if isinstance(doc, dict):
        doc.pop("distributedInfo", None)  # ranks from the file names below
    text = json.dumps(doc)
    (tmp_path / "rank0.json").write_text(text)
    (tmp_path / "rank1.json").write_text(text[: int(len(text) * 0.9)])
    job = job_document([tmp_path / "rank0.json", tmp_path / "rank1.json"])
    damage = job["marks"]["trace_damaged"]
    assert "rank 1: cut off" in damage and "rank 0:" not in damage, damage
