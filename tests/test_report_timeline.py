"""The report's step timeline (readers/report_timeline.py, sql/report_timeline.sql): on a hand-built trace of
many steps full of sub-pixel kernels, the page draws a bounded number of steps and runs, says which steps it
left out, keeps every step's critical path whole and every lane's busy time exact; a CPU trace has host
lanes only; a profile without a trace says why nothing is drawn. The browser check is in tests/test_report.py.

All times below are µs from the start of the trace (tests/synthetic_traces.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from libreyolo_profile.readers import report_timeline
from libreyolo_profile.readers.common import open_profile
from libreyolo_profile.readers.report_timeline import BINS, STEPS_CAP, timeline, timeline_section
from tests.conftest import job_folders, require_traces, run_cli_in_process, trace_files
from tests.synthetic_traces import A100, ELEMENTWISE, GEMM_FP32_SIMT, annotation, kernel, op, runtime, write_trace

STEPS, KERNELS, SLOW = 40, 300, 17  # ProfilerStep#17 lasts 1.5 ms, every other 1 ms
COPY_US = 20.0


def many_steps(path: Path) -> Path:
    """40 steps; in each, 300 elementwise kernels of 0.5 µs 3 µs apart on stream 7 (each far below a column
    of the page: 1.5 ms / 720 ≈ 2.08 µs), one 20 µs GEMM on stream 9, each launched from the host thread."""
    events, t, corr = [], 0.0, 0
    for i in range(STEPS):
        dur = 1500.0 if i == SLOW else 1000.0
        events.append(annotation(f"ProfilerStep#{i}", t, dur))
        events.append(op("aten::add", t + 5, 950))
        for k in range(KERNELS):
            corr += 1
            start = t + 10 + 3 * k
            events.append(runtime("cudaLaunchKernel", start, 1, corr))
            events.append(kernel(ELEMENTWISE, start + 1.5, 0.5, corr, stream=7))
        corr += 1
        events.append(runtime("cudaLaunchKernel", t + 930, 1, corr))
        events.append(kernel(GEMM_FP32_SIMT, t + 940, COPY_US, corr, stream=9))
        t += dur
    return write_trace(path, events, devices=[A100])


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> Path:
    """The many-step trace, written once for the module (the tests that read it only read it)."""
    return many_steps(tmp_path_factory.mktemp("timeline") / "many_steps.json")


@pytest.fixture(scope="module")
def opened(many, tmp_path_factory):
    """The many-step trace's profile, analysed once for the module in a cache of its own (a module's fixture
    runs before the test's private cache is set). Its drawn timeline is kept in that cache only: a test's own
    cache has none, so a test reading the timeline of this profile there computes it from the trace."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("timeline-cache")))
        profile = open_profile(many)
        return profile, timeline(profile)


@pytest.fixture(scope="module")
def drawn(opened) -> dict:
    """The many-step trace's timeline, as a first report reads it from the trace."""
    return opened[1]


def by_step_and_lane(rows: list[dict]) -> dict[tuple[int, str], list[dict]]:
    out: dict[tuple[int, str], list[dict]] = {}
    for r in rows:
        out.setdefault((r["step"], r["lane"]), []).append(r)
    return out


def test_a_long_trace_draws_few_steps_and_says_which(drawn):
    rows = drawn["rows"]
    shown = sorted({r["step"] for r in rows})
    assert rows[0]["steps_total"] == STEPS
    assert 2 <= len(shown) <= STEPS_CAP
    slowest = [r for r in rows if r["slowest"]]
    assert {r["step"] for r in slowest} == {slowest[0]["step"]}
    assert slowest[0]["step_ms"] == pytest.approx(1.5)  # the 1.5 ms step is drawn, whatever its number
    assert all(r["step_ms"] == pytest.approx(1.0) for r in rows if not r["slowest"])
    html = timeline_section({"timeline": drawn}, 900)
    assert f"{len(shown)} of {STEPS} steps drawn" in html
    assert f"the slowest (step {slowest[0]['step']})" in html
    assert html.count('class="lane-run"') == len(rows)


def test_runs_are_bounded_and_every_lane_keeps_its_time(drawn):
    rows = drawn["rows"]
    lanes = {r["lane"] for r in rows}
    assert {"critical path (blame)", "host phases", "stream 7 · compute", "stream 9 · compute"} <= lanes
    steps = {r["step"] for r in rows}
    assert len(rows) <= len(steps) * len(lanes) * BINS
    groups = by_step_and_lane(rows)
    for step in steps:
        step_ms = next(r["step_ms"] for r in rows if r["step"] == step)
        # the critical path covers the whole step, exactly once (the blame's pieces add up to it)
        assert sum(r["busy_ms"] for r in groups[(step, "critical path (blame)")]) == pytest.approx(step_ms, abs=1e-9)
        # the sub-pixel kernels: their summed time, though 300 of them share far fewer drawn runs, light ones
        small = groups[(step, "stream 7 · compute")]
        assert sum(r["busy_ms"] for r in small) == pytest.approx(KERNELS * 0.5e-3, abs=1e-9)
        assert len(small) < KERNELS / 4  # a run per few columns: an empty column between kernels ends a run
        assert {r["key"] for r in small} == {"elementwise"} and max(r["level"] for r in small) <= 2
        gemm = groups[(step, "stream 9 · compute")]
        assert {r["key"] for r in gemm} == {"gemm"}
        assert sum(r["busy_ms"] for r in gemm) == pytest.approx(COPY_US / 1e3, abs=1e-9)
        # 20 µs is 9.6 columns of a 1.5 ms step cut in 720: the whole columns full, the edge ones lighter
        assert gemm[-1]["bin_end"] - gemm[0]["bin_start"] in (10, 11)
        assert max(r["level"] for r in gemm) == 4 and len(gemm) <= 3


def test_a_cpu_trace_has_host_lanes_only(tmp_path):
    events = []
    for i in range(3):
        t = i * 1000.0
        events += [
            annotation(f"ProfilerStep#{i}", t, 900),
            op("aten::conv2d", t + 10, 500),
            op("aten::relu", t + 600, 100),
        ]
    drawn = timeline(open_profile(write_trace(tmp_path / "cpu.json", events)))
    kinds = {r["lane_kind"] for r in drawn["rows"]}
    assert kinds <= {"blame", "phases", "host"} and "blame" in kinds
    assert {r["key"] for r in drawn["rows"] if r["lane_kind"] == "blame"} >= {"cpu_gemm_conv"}


def test_without_a_trace_the_section_says_why(opened, monkeypatch):
    profile = opened[0]
    monkeypatch.setattr(report_timeline, "trace_of", lambda _p: (None, None, "no trace kept"))
    data = timeline(profile)
    assert data == {"unavailable": "no trace kept"}
    html = timeline_section({"timeline": data}, 900)
    assert "not drawn: no trace kept" in html and "<svg" not in html


def blame_by_step(profile, rank) -> dict[int, dict[str, float]]:
    """The profile's own blame table: per step, each cause's ms (the rank the timeline draws)."""
    rows = profile.con.execute(
        "SELECT step, cause, ms FROM blame WHERE rank IS NOT DISTINCT FROM $rank", {"rank": rank}
    ).fetchall()
    out: dict[int, dict[str, float]] = {}
    for step, cause, ms in rows:
        out.setdefault(step, {})[cause] = ms
    return out


def assert_critical_path_is_the_blame(drawn: dict, profile) -> None:
    """Each drawn step's critical-path lane covers the blame table's step exactly; each cause drawn is one of
    the step's and is drawn with at most its time (a cause too thin to win a column is in no run), and the
    step's largest cause is drawn."""
    blame = blame_by_step(profile, drawn["rank"])
    covered: dict[int, float] = {}
    own: dict[int, dict[str, float]] = {}
    for r in drawn["rows"]:
        if r["lane_kind"] == "blame":
            covered[r["step"]] = covered.get(r["step"], 0.0) + r["busy_ms"]
            own.setdefault(r["step"], {}).setdefault(r["key"], 0.0)
            own[r["step"]][r["key"]] += r["key_ms"]
    assert covered, "no critical path drawn"
    for step, causes in own.items():
        assert covered[step] == pytest.approx(sum(blame[step].values()), abs=1e-6), step
        assert set(causes) <= set(blame[step]), (step, causes, blame[step])
        assert all(ms <= blame[step][cause] + 1e-6 for cause, ms in causes.items()), (step, causes, blame[step])
        assert max(blame[step], key=blame[step].get) in causes


def test_a_real_trace_draws_its_blame_exactly():
    files = sorted(trace_files(), key=lambda p: (p.stat().st_size, p.name))
    trace = files[len(files) // 2]  # a mid-sized one, whichever the folder holds
    profile = open_profile(trace)
    drawn = timeline(profile)
    assert "rows" in drawn, drawn
    assert_critical_path_is_the_blame(drawn, profile)


def test_a_job_draws_the_rank_its_tables_show(tmp_path):
    folders = job_folders()
    if not folders:
        pytest.skip("no multi-rank job among the shared traces")
    # in this process: an import needs neither torch nor LibreYOLO, which a forked or fresh interpreter starts
    done = run_cli_in_process("import", "--job", str(folders[0]), "--project", str(tmp_path / "p"), "--json")
    assert done.returncode == 0, done.stderr
    profile = open_profile(Path(json.loads(done.stdout)["directory"]))
    drawn = timeline(profile)
    assert drawn["rank"] == profile.doc["job"]["metrics_rank"]
    assert_critical_path_is_the_blame(drawn, profile)
    assert f"rank {drawn['rank']} of {len(profile.doc['job']['ranks'])} in the job" in timeline_section(
        {"timeline": drawn}, 900
    )


def test_a_timeline_that_cannot_be_computed_fails_alone(opened, private_cache, monkeypatch):
    import duckdb

    from libreyolo_profile.store.disk.kept_sections import kept_section

    profile = opened[0]
    # the test's own cache keeps no timeline of the profile: the section is computed from the trace
    assert kept_section(profile.doc, report_timeline.SECTION) is None

    def broken(con, name, trace_rank):
        raise duckdb.ConversionException("Conversion Error: an odd value\nLINE 1: …")

    monkeypatch.setattr(report_timeline, "section_files", broken)
    data = timeline(profile)
    assert data == {"unavailable": "it could not be computed on this trace (Conversion Error: an odd value)"}
    assert "not drawn: it could not be computed" in timeline_section({"timeline": data}, 900)


def test_the_timeline_is_kept_with_the_profile_and_read_once(tmp_path, monkeypatch):
    """The first report computes the section from the trace and keeps it; a later one reads what was kept and
    never the trace (its parser, broken here, is not called), with the same rows."""
    import libreyolo_profile.store.decode.parse as parse
    from libreyolo_profile.store.disk.kept_sections import kept_section

    profile = open_profile(many_steps(tmp_path / "t.json"))
    assert kept_section(profile.doc, report_timeline.SECTION) is None
    first = timeline(profile)
    assert kept_section(profile.doc, report_timeline.SECTION) is not None

    def no_parse(*args, **kwargs):
        raise AssertionError("the trace was read again")

    monkeypatch.setattr(parse, "parse_trace", no_parse)
    again = timeline(open_profile(tmp_path / "t.json"))
    assert again == first and again["rows"]


def test_a_measurement_that_asks_keeps_the_timeline_of_the_analysis(many, opened):
    """analyse_trace(sections=("report_timeline",)) computes the rows in the analysis's own pass; kept under
    the profile, they are what a report reading the trace again would draw."""
    from libreyolo_profile.store.disk.kept_sections import keep_section
    from libreyolo_profile.store.ingest.analyse import analyse_trace

    asked = analyse_trace(many, sections=("report_timeline",))
    assert "report_timeline" in asked["sections"] and set(asked["kept"]) == {"report_timeline"}
    profile, fresh = opened  # a profile of its own (another generation): its timeline read from the trace
    doc = {"generation": "a-measurement", "kind": profile.doc.get("kind")}
    home = keep_section(doc, report_timeline.SECTION, None, asked["kept"]["report_timeline"])
    kept = json.loads((home / "report_timeline.json").read_text())
    assert kept["rows"] == fresh["rows"]


def test_a_measurement_writing_a_report_computes_its_timeline_in_the_analysis(many, drawn, tmp_path, monkeypatch):
    """`run`/`infer` with a report ask for the section (kept_sections.ASKED) and the store's write_profile
    computes it in the analysis of the trace it keeps: the report then never reads the trace again."""
    import shutil

    import libreyolo_profile.store.decode.parse as parse
    from libreyolo_profile.store.disk.kept_sections import ASKED, kept_section
    from libreyolo_profile.store.disk.writer import write_profile
    from libreyolo_profile.store.document.capture import TrialCapture

    trials = []
    for i in range(2):  # the profile keeps the last trial's trace
        shutil.copyfile(many, tmp_path / f"trial{i}.json")
        trials.append(TrialCapture(trace_path=tmp_path / f"trial{i}.json", images_per_step=1))
    asked = ASKED.set(("report_timeline",))
    try:
        doc, written = write_profile(
            tmp_path / "measured" / "infer", kind="infer", trials=trials, keep_trace=True, command=["infer"],
            settings={}, environment={}, model={}, marks={},
        )  # fmt: skip
    finally:
        ASKED.reset(asked)
    assert kept_section(doc, report_timeline.SECTION) is not None

    def no_parse(*args, **kwargs):
        raise AssertionError("the trace was read again")

    with monkeypatch.context() as patched:
        patched.setattr(parse, "parse_trace", no_parse)
        kept = timeline(open_profile(written))
    # what a first report draws reading the same trace (the module's profile of it, computed from the trace)
    assert kept["rows"] and kept["rows"] == drawn["rows"]


def test_a_builtin_profile_says_it_holds_no_trace():
    from libreyolo_profile.store.document.builtin import SOURCE_TYPE

    assert report_timeline.BUILTIN_SOURCE == SOURCE_TYPE
    builtin = sorted((require_traces().parent / "libreyolo_builtin_profiles").glob("*_profile.json"))
    if not builtin:
        pytest.skip("no LibreYOLO built-in profile among the shared files")
    data = timeline(open_profile(builtin[0]))
    assert data == {"unavailable": report_timeline.trace_of(open_profile(builtin[0]))[2]}
    assert "built-in profile holds per-step sums" in data["unavailable"]
