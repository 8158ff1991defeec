"""Memory (issue 30): the allocator's `[memory]` events in both formats — the memory table, the
`memory` reader, peak_vram_mb / peak_mem_mb from it, the report's chart, the thrashing mark, and
`infer --memory`.

Real traces are checked against tests/memory_reference.py (plain Python over the raw events); the
synthetic ones against rows derived by hand in the comments beside them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests import synthetic_traces as st
from tests.conftest import cli_json, require_traces, run_cli
from tests.memory_reference import reference, top_ops

MIB = 1 << 20
TRACES_WITH_MEMORY = ("v100_resnet50_workers0", "v100_resnet50_workers4", "h100_vit_image_classifier")


def memory_json(path: Path, *args: str) -> dict:
    return cli_json("memory", str(path), *args)


def device(doc: dict, allocator: str = "cuda", device_id: int = 0) -> dict:
    (found,) = [d for d in doc["devices"] if (d["allocator"], d["device"]) == (allocator, device_id)]
    return found


# ---------------------------------------------------------------------------------------------
# real traces against the reference


@pytest.mark.parametrize("name", TRACES_WITH_MEMORY)
def test_real_traces_match_the_reference(name):
    trace = require_traces() / f"{name}.json.gz"
    expected = reference(trace)
    got = memory_json(trace, "--top", "3")
    assert {(d["allocator"], d["device"]) for d in got["devices"]} == set(expected)
    for d in got["devices"]:
        ref = expected[(d["allocator"], d["device"])]
        assert d["levels"] == ref["levels"]
        assert d["events"] == ref["events"]
        assert d["peak_mb"] == pytest.approx(ref["peak_mb"], abs=1e-9)
        assert d["peak_ms"] == pytest.approx(ref["peak_ms"], abs=1e-6)
        assert d["peak_step"] == ref["peak_step"] and d["peak_op"] == ref["peak_op"]
        want = top_ops(ref, 3)
        assert [o["net_mb"] for o in d["top_ops"]] == pytest.approx([v for _, v in want], abs=1e-9)
        # equal net bytes may come in either order: compare the names of each value
        for o in d["top_ops"]:
            same = {n or "(outside any op)" for n, v in ref["ops"].items() if abs(v - o["net_mb"]) < 1e-9}
            assert o["op"] in same


def test_v100_peak_is_the_relative_swing():
    """The 2021 format (Bytes only): peak_vram_mb is the 2,662 MiB rise, said to be relative."""
    trace = require_traces() / "v100_resnet50_workers0.json.gz"
    result = run_cli("get", str(trace), "peak_vram_mb")
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) == pytest.approx(2662.312, abs=1e-3)
    assert "relative: at least 2,662.3 MiB above the window's start" in result.stderr
    got = cli_json("get", str(trace), "peak_vram_mb")
    assert got["note"].startswith("relative") and got["reason"] is None
    assert cli_json("get", str(trace), "memory_level")["value"] == "relative"
    text = run_cli("memory", str(trace))
    assert text.returncode == 0 and "at least 2,662.3 MiB above the window's start" in text.stdout
    assert "profile_memory was off" not in json.dumps(cli_json("summary", str(trace)))


@pytest.mark.parametrize("name", TRACES_WITH_MEMORY)
def test_report_draws_the_memory_chart(name, tmp_path):
    trace = require_traces() / f"{name}.json.gz"
    out = tmp_path / "r.html"
    result = run_cli("report", str(trace), "--out", str(out))
    assert result.returncode == 0, result.stderr
    page = out.read_text()
    chart = re.search(r'<svg class="chart" data-chart="memory-cuda-0".*?</svg>', page, re.S).group(0)
    assert '<circle class="peak"' in chart and 'class="allocated"' in chart and 'class="band"' in chart


def test_sparkline_reads_in_a_pipe():
    trace = require_traces() / "h100_vit_image_classifier.json.gz"
    out = run_cli("memory", str(trace)).stdout
    assert "level over time (MiB allocated): ▁ = " in out and "one column = " in out
    assert re.search(r"^  [▁▂▃▄▅▆▇█]{60}$", out, re.M)


# ---------------------------------------------------------------------------------------------
# synthetic traces, rows derived by hand

# Two steps of 100 µs on one A100, one kernel each (a GPU profile). Allocations in MiB, in order:
#   t=10  +100 (A) in aten::conv2d [5, 30), by aten::empty [9, 11)
#   t=20  +50  (B) in aten::conv2d
#   t=40  +25  (C) in aten::relu [35, 45)              <- the peak: +175 over the start
#   t=50  -100 (A) outside any op
#   t=110 +100 (D) in aten::conv2d [105, 130)          (level equals the peak again: the first one counts)
#   t=150 -50  (B) in aten::relu [140, 160)
#   t=170 -25  (C), t=180 -100 (D) outside any op
MOVES = [
    (10, 100, "A"),
    (20, 50, "B"),
    (40, 25, "C"),
    (50, -100, "A"),
    (110, 100, "D"),
    (150, -50, "B"),
    (170, -25, "C"),
    (180, -100, "D"),
]
BEFORE_MB = 1000  # allocated before the window (absolute format only)
ADDR = {"A": 0x7F00_0000_0000, "B": 0x7F00_1000_0000, "C": 0x7F00_2000_0000, "D": 0x7F00_3000_0000}


def two_step_trace(path: Path, absolute: bool, reserved_mb: int = 1200, extra: list | None = None) -> Path:
    events = [
        st.annotation("ProfilerStep#1", 0, 100),
        st.annotation("ProfilerStep#2", 100, 100),
        st.op("aten::conv2d", 5, 25),
        st.op("aten::empty", 9, 2),
        st.op("aten::relu", 35, 10),
        st.op("aten::conv2d", 105, 25),
        st.op("aten::relu", 140, 20),
        st.runtime("cudaLaunchKernel", 60, 5, correlation=1),
        st.kernel(st.ELEMENTWISE, 70, 10, correlation=1),
        st.runtime("cudaLaunchKernel", 160, 5, correlation=2),
        st.kernel(st.ELEMENTWISE, 170, 10, correlation=2),
    ]
    level = BEFORE_MB
    for t, mb, block in MOVES:
        level += mb
        events.append(
            st.memory(
                t,
                mb * MIB,
                total=level * MIB if absolute else None,
                reserved=reserved_mb * MIB if absolute else None,
                addr=ADDR[block] if absolute else None,
            )
        )
    return st.write_trace(path, events + (extra or []), devices=[st.A100])


def test_absolute_format_hand_derived(tmp_path):
    trace = two_step_trace(tmp_path / "abs.json", absolute=True)
    d = device(memory_json(trace))
    assert d["levels"] == "absolute"
    assert d["peak_mb"] == 1175 and d["peak_ms"] == pytest.approx(0.040, abs=1e-9)
    assert (d["peak_step"], d["peak_op"], d["peak_leaf_op"]) == (1, "aten::relu", "aten::relu")
    assert d["peak_reserved_mb"] == 1200
    assert d["live_at_peak_mb"] == 175  # A, B and C were allocated in the window and not yet freed
    assert (d["allocations"], d["frees"], d["alloc_mb"], d["freed_mb"], d["net_mb"]) == (4, 4, 275, 275, 0)
    ops = {o["op"]: o for o in memory_json(trace, "--top", "10")["devices"][0]["top_ops"]}
    # net: conv2d +100 +50 +100; relu +25 −50; outside −100 −25 −100
    assert {k: o["net_mb"] for k, o in ops.items()} == {
        "aten::conv2d": 250,
        "aten::relu": -25,
        "(outside any op)": -225,
    }
    assert {k: o["net_to_peak_mb"] for k, o in ops.items()} == {
        "aten::conv2d": 150,
        "aten::relu": 25,
        "(outside any op)": 0,
    }
    assert {k: o["live_at_peak_mb"] for k, o in ops.items()} == {
        "aten::conv2d": 150,
        "aten::relu": 25,
        "(outside any op)": 0,
    }
    assert cli_json("get", str(trace), "peak_vram_mb")["value"] == 1175
    assert cli_json("get", str(trace), "memory_level")["value"] == "absolute"
    assert "note" not in cli_json("get", str(trace), "peak_vram_mb")


def test_ops_table_says_its_bytes_are_handed_on_not_held(tmp_path):
    """The ops' net bytes are summed over every call and freed by later ops: the column says so ('handed on')
    and a line says it is no level and no leak (a 60.8 MiB 'net' beside a 6.3 MiB peak read as one)."""
    trace = two_step_trace(tmp_path / "abs.json", absolute=True)
    done = run_cli("memory", str(trace), env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "handed on MiB" in done.stdout and "net MiB" not in done.stdout
    prose = " ".join(done.stdout.split())  # the sentences wrap at the terminal's width, between words
    assert "summed over every call in the window" in prose and "no leak" in prose
    # the sparkline's scale has the digits its 0.2 ms window needs (it read "one column = 0.00 ms")
    column = re.search(r"one column = ([0-9.]+) ms", done.stdout)
    assert column and float(column.group(1)) > 0


def test_relative_format_hand_derived(tmp_path):
    trace = two_step_trace(tmp_path / "rel.json", absolute=False)
    d = device(memory_json(trace))
    # levels from 0 at the window's start: 100, 150, 175, 75, 175, 125, 100, 0
    assert d["levels"] == "relative" and d["peak_mb"] == 175 and d["peak_ms"] == pytest.approx(0.040, abs=1e-9)
    assert d["peak_reserved_mb"] is None and d["live_at_peak_mb"] is None and d["low_mb"] == 0
    got = cli_json("get", str(trace), "peak_vram_mb")
    assert got["value"] == 175 and got["note"].startswith("relative: at least 175.0 MiB above the window's start")
    text = run_cli("memory", str(trace)).stdout
    assert all(len(line) <= 80 for line in text.splitlines() if "level over time" not in line)  # a pipe's width
    prose = " ".join(text.split())  # wrapped between words
    assert "at least 175.0 MiB above the window's start" in prose and "no block addresses" in prose


def test_table_rows_by_hand_in_query_and_db(tmp_path):
    """The sidecar itself, through the cross-run views and `db`: step rows and the timeline's points
    of the relative trace."""
    trace = two_step_trace(tmp_path / "rel.json", absolute=False)
    project = tmp_path / "runs"
    assert run_cli("import", str(trace), "--project", str(project)).returncode == 0
    steps = cli_json(
        "query",
        "SELECT step, events, allocations, frees, net_mb FROM memory WHERE record = 'step' ORDER BY step",
        str(project),
    )
    # step 1: +100 +50 +25 −100; step 2: +100 −50 −25 −100
    assert [[r[k] for k in ("step", "events", "allocations", "frees", "net_mb")] for r in steps] == [
        [1, 4, 3, 1, 75.0],
        [2, 4, 1, 3, -75.0],
    ]
    points = cli_json("query", "SELECT allocated_mb FROM memory WHERE record = 'point' ORDER BY ts_ms", str(project))
    assert [r["allocated_mb"] for r in points] == [0, 100, 150, 175, 75, 175, 125, 100, 0]
    # what ran at each event: t=10 inside aten::empty inside aten::conv2d; t=20 in conv2d after empty
    # returned (the innermost open op is its parent again); t=50, 170, 180 outside any op
    running = cli_json("query", "SELECT op, leaf_op FROM memory WHERE record = 'point' ORDER BY ts_ms", str(project))
    assert [(r["op"], r["leaf_op"]) for r in running] == [
        (None, None),
        ("aten::conv2d", "aten::empty"),
        ("aten::conv2d", "aten::conv2d"),
        ("aten::relu", "aten::relu"),
        (None, None),
        ("aten::conv2d", "aten::conv2d"),
        ("aten::relu", "aten::relu"),
        (None, None),
        (None, None),
    ]
    db = tmp_path / "all.duckdb"
    assert run_cli("db", str(db), str(project)).returncode == 0
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT max(allocated_mb) FROM memory WHERE record = 'device'").fetchone()[0] == 175


# ---------------------------------------------------------------------------------------------
# churn and the thrashing mark

A100_MIB = st.A100["totalGlobalMem"] / MIB  # 40,536.3 MiB


def churn_trace(path: Path, reserved_mb: int, malloc_steps: tuple[int, ...]) -> Path:
    """Three steps of 100 µs, a kernel each; in each step one 64 MiB allocation and its free inside an
    aten::add, the allocator at `reserved_mb` reserved; cudaMalloc + cudaFree in `malloc_steps`."""
    events = []
    for step in (1, 2, 3):
        t = (step - 1) * 100
        events += [
            st.annotation(f"ProfilerStep#{step}", t, 100),
            st.op("aten::add", t + 10, 30),
            st.runtime("cudaLaunchKernel", t + 50, 5, correlation=step),
            st.kernel(st.ELEMENTWISE, t + 60, 20, correlation=step),
            st.memory(t + 20, 64 * MIB, total=(500 + 64) * MIB, reserved=reserved_mb * MIB, addr=step),
            st.memory(t + 30, -64 * MIB, total=500 * MIB, reserved=reserved_mb * MIB, addr=step),
        ]
        if step in malloc_steps:
            events += [st.runtime("cudaMalloc", t + 15, 3), st.runtime("cudaFree", t + 35, 3)]
    return st.write_trace(path, events, devices=[st.A100])


def test_churn_per_step_and_the_thrashing_mark(tmp_path):
    trace = churn_trace(tmp_path / "t.json", reserved_mb=39_000, malloc_steps=(1, 2, 3))
    d = device(memory_json(trace))
    # steps 2 and 3 are the steady state: one cudaMalloc and one cudaFree each; 2 allocator events a step
    assert (d["steady_steps"], d["steady_runtime_calls_per_step"], d["steady_steps_calling"]) == (2, 2.0, 2)
    assert d["events_per_step"] == 2 and (d["runtime_mallocs"], d["runtime_frees"]) == (3, 3)
    assert cli_json("get", str(trace), "steady_malloc_calls_per_step")["value"] == 2.0
    assert cli_json("get", str(trace), "thrashing")["value"] is True
    share = 100 * 39_000 / A100_MIB
    want = (
        f"2.0 cudaMalloc/cudaFree calls per steady-state step, in 2 of 2 steady-state steps, with 39,000 of "
        f"the device's {A100_MIB:,.0f} MiB reserved ({share:.1f}%)"
    )
    assert want in json.dumps(cli_json("summary", str(trace)), ensure_ascii=False)


@pytest.mark.parametrize("reserved_mb, malloc_steps", [(20_000, (1, 2, 3)), (39_000, (1,))])
def test_no_thrashing_without_both_signs(tmp_path, reserved_mb, malloc_steps):
    """Reserved far below the device's total, or cudaMalloc only in the first (warm-up) step: no mark."""
    trace = churn_trace(tmp_path / "t.json", reserved_mb=reserved_mb, malloc_steps=malloc_steps)
    assert cli_json("get", str(trace), "thrashing")["value"] is False


# ---------------------------------------------------------------------------------------------
# bounds and reasons


def test_timeline_is_bounded_and_keeps_the_exact_peak(tmp_path):
    """20,001 events on one device: at most 2 points per each of 500 runs, plus the peak's 16
    neighbours either side and the first and last; the peak itself exactly."""
    events = [
        st.annotation("ProfilerStep#1", 0, 30_000),
        st.op("aten::big", 1, 29_998),
        st.runtime("cudaLaunchKernel", 10, 5, correlation=1),
        st.kernel(st.ELEMENTWISE, 20, 10, correlation=1),
    ]
    level, best = 0, (0, None)
    for i in range(20_001):
        moved = (i % 7 - 3) * MIB + (5 * MIB if i == 12_345 else 0)
        level += moved
        if level > best[0]:
            best = (level, 1 + i)
        events.append(st.memory(1 + i, moved))
    trace = st.write_trace(tmp_path / "big.json", events, devices=[st.A100])
    d = device(memory_json(trace))
    assert d["timeline_points"] <= 2 * 500 + 2 * 16 + 3
    assert d["peak_mb"] == best[0] / MIB and d["peak_ms"] == pytest.approx(best[1] / 1000, abs=1e-9)


def test_host_only_events_never_say_profile_memory_was_off(tmp_path):
    events = [
        st.annotation("ProfilerStep#1", 0, 100),
        st.op("aten::add", 10, 30),
        st.runtime("cudaLaunchKernel", 50, 5, correlation=1),
        st.kernel(st.ELEMENTWISE, 60, 20, correlation=1),
        st.memory(20, 4096, device_type=0),
        st.memory(30, -4096, device_type=0),
    ]
    trace = st.write_trace(tmp_path / "host.json", events, devices=[st.A100])
    got = cli_json("get", str(trace), "peak_vram_mb")
    assert got["value"] is None
    assert got["reason"] == "the trace's allocator events are the host's only: none for the device"
    assert device(memory_json(trace), "cpu", -1)["peak_mb"] == 4096 / MIB


def test_hostile_op_names_cannot_drive_the_terminal(tmp_path):
    """An op name holding ESC/OSC sequences is printed escaped by `memory` (peak line and tables)."""
    hostile = "aten::relu\x1b]52;c;cHduZWQ=\x07\x1b[2J"
    events = [
        st.annotation("ProfilerStep#1", 0, 100),
        st.op(hostile, 10, 30),
        st.runtime("cudaLaunchKernel", 50, 5, correlation=1),
        st.kernel(st.ELEMENTWISE, 60, 20, correlation=1),
        st.memory(20, 4 * MIB),
        st.memory(60, -4 * MIB),
    ]
    trace = st.write_trace(tmp_path / "evil.json", events, devices=[st.A100])
    result = run_cli("memory", str(trace), env={"COLUMNS": "400"})
    assert result.returncode == 0, result.stderr
    assert "aten::relu\\x1b]52" in result.stdout and not re.search("[\x1b\x07\x9b]", result.stdout)


def test_no_allocator_events(tmp_path):
    trace = require_traces() / "a100_cutlass_adam_rank0.json.gz"
    got = memory_json(trace)
    assert got["devices"] == [] and "--memory" in got["note"]
    assert (
        cli_json("get", str(trace), "peak_vram_mb")["reason"]
        == "the trace has no allocator events (profile_memory was off)"
    )


# ---------------------------------------------------------------------------------------------
# a measured CPU profile with --memory


@pytest.mark.slow
def test_measured_cpu_infer_with_memory(tmp_path):
    result = run_cli(
        "infer",
        "--device",
        "cpu",
        "--imgsz",
        "64",
        "--runs",
        "2",
        "--warmup",
        "1",
        "--memory",
        "--project",
        str(tmp_path),
        timeout=900,
    )
    assert result.returncode == 0, result.stderr
    home = tmp_path / "infer"
    doc = json.loads((home / "profile.json").read_text())
    assert doc["settings"]["profile_memory"] is True
    assert doc["timing"]["headline"] != "trace"  # the headline still comes from the unprofiled calls
    got = memory_json(home)
    host = device(got, "cpu", -1)
    # the host's totals count only what was allocated while the profiler ran
    assert host["levels"] == "profiled" and host["events"] > 0 and host["top_ops"]
    assert "allocated while the profiler recorded" in cli_json("get", str(home), "peak_mem_mb")["note"]
    # the allocator events are the profiled window's: the reference over the kept trace agrees
    ref = reference(home / "profile_trace.json")[("cpu", -1)]
    assert host["peak_mb"] == pytest.approx(ref["peak_mb"], abs=1e-9) and host["peak_op"] == ref["peak_op"]
    assert host["peak_ms"] == pytest.approx(ref["peak_ms"], abs=1e-6)
    assert doc["metrics"]["peak_mem_mb"] == pytest.approx(host["peak_mb"], abs=1e-9)
    assert 'data-chart="memory-cpu--1"' in (home / "report.html").read_text()
    assert run_cli("memory", str(home)).returncode == 0


@pytest.mark.slow
def test_measured_cpu_run_with_memory(tmp_path):
    """`run --memory`: the training step's allocations per step, the phase bands of a training step."""
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "synth3.yaml"
    result = run_cli(
        "run",
        str(fixture),
        "--device",
        "cpu",
        "--batch",
        "2",
        "--imgsz",
        "64",
        "--steps",
        "2",
        "--warmup",
        "1",
        "--workers",
        "0",
        "--memory",
        "--no-report",
        # the 2 steps profiled, without the unprofiled replay of them (the headline: nothing here reads it;
        # the infer case above checks where the headline comes from): the replay's snapshot of the model and
        # optimizer, its restore and its 2 steps were ~1 s of the command's ~12 CPU-s
        "--no-overhead",
        "--project",
        str(tmp_path),
        timeout=900,
    )
    assert result.returncode == 0, result.stderr
    home = tmp_path / "train"
    assert json.loads((home / "profile.json").read_text())["settings"]["profile_memory"] is True
    host = device(memory_json(home), "cpu", -1)
    assert (
        host["events"] > 0 and host["steady_steps"] == 1 and host["peak_phase"] in ("forward", "backward", "optimizer")
    )
    ref = reference(home / "profile_trace.json")[("cpu", -1)]
    assert host["peak_mb"] == pytest.approx(ref["peak_mb"], abs=1e-9) and host["peak_op"] == ref["peak_op"]
    bands = cli_json("query", "SELECT DISTINCT phase FROM memory WHERE record = 'band'", str(tmp_path))
    assert {"forward", "backward"} <= {r["phase"] for r in bands}
