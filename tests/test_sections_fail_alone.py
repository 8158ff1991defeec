"""Sections fail alone (#49): an optional section (roofline, memory, modules, advice, ranks) that cannot be
computed on a trace is empty or null with the reason and the section_unavailable mark, and every other figure
stands; only the core fails a profile, with exit 1 and one line. No NaN or Infinity reaches a document: the
values are null, and the mark and the null reasons say where they were computed."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from libreyolo_profile import sqlmodules
from libreyolo_profile.store.document import marks
from libreyolo_profile.store.document.finite import NON_FINITE_REASON, settle_non_finite
from libreyolo_profile.store.document.from_trace import profile_from_trace
from libreyolo_profile.store.ingest.analyse import analyse_trace
from libreyolo_profile.store.sections import FIRST_READ, OPTIONAL_SECTIONS
from tests.conftest import require_traces, run_cli

TRACE = "h100_vit_image_classifier"  # every section has rows on it: modules, memory, roofline, advice, a timeline
# a failure of the data's making: it raises only where the trace has ops (as an overflow or a bad cast would)
PLANTED = "\nSELECT CASE WHEN count(*) > 0 THEN error('planted failure') END FROM placed_ops;\n"


def plant(monkeypatch, module: str) -> None:
    """`module`'s SQL fails on any trace with ops, from now on in this process."""
    original = sqlmodules.module

    def planted(name: str):
        found = original(name)
        return dataclasses.replace(found, text=found.text + PLANTED) if name == module else found

    monkeypatch.setattr(sqlmodules, "module", planted)


@pytest.fixture(scope="module")
def baseline():
    return profile_from_trace(require_traces() / f"{TRACE}.json.gz")


@pytest.fixture(scope="module")
def first_read():
    """The trace's first read with nothing planted: what a read that asks for one more section must add to."""
    return analyse_trace(require_traces() / f"{TRACE}.json.gz")


def _depends_on(section: str) -> set[str]:
    """`section` and the sections whose modules require its module, as the SQL headers declare."""
    modules = sqlmodules.all_modules()
    needed = OPTIONAL_SECTIONS[section].module
    return {name for name, s in OPTIONAL_SECTIONS.items() if needed in sqlmodules.dependency_order(s.module, modules)}


@pytest.mark.parametrize("section", FIRST_READ)
def test_a_section_that_fails_leaves_the_rest_of_the_profile(monkeypatch, traces_dir, baseline, section):
    plant(monkeypatch, OPTIONAL_SECTIONS[section].module)
    doc = profile_from_trace(traces_dir / f"{TRACE}.json.gz")
    gone = _depends_on(section)
    mark = doc["marks"][marks.SECTION_UNAVAILABLE]
    assert f"{section}: it could not be computed on this trace" in mark and "planted failure" in mark
    for name in gone - {section}:
        assert f"{name}: it reads the {section} section" in mark
    for name in OPTIONAL_SECTIONS:
        if name in gone:
            continue
        assert f"{name}:" not in mark
    lost_tables = {t for n in gone for t in OPTIONAL_SECTIONS[n].tables}
    lost_metrics = {m for n in gone for m in OPTIONAL_SECTIONS[n].metrics}
    for name, table in doc["tables"].items():
        if name in lost_tables:
            assert baseline["tables"][name]["rows"] and table["rows"] == [], name
        else:
            assert table == baseline["tables"][name], name
    for name, value in baseline["metrics"].items():
        if name in lost_metrics and name in doc["metrics"]:
            assert doc["metrics"][name] is None and "could not be computed" in doc["null_reasons"][name], name
        else:
            assert doc["metrics"][name] == value, name
    assert doc["verdict"]["bound"] == baseline["verdict"]["bound"]
    json.dumps(doc, allow_nan=False)


LATER = [name for name in OPTIONAL_SECTIONS if name not in FIRST_READ]


@pytest.mark.parametrize("section", LATER)
def test_a_section_the_first_read_does_not_need_is_not_computed_by_it(
    monkeypatch, traces_dir, baseline, first_read, section
):
    """The first read never runs it (a planted failure in it changes nothing), and it fails alone where asked
    for (a job asks for the ranks' timeline)."""
    # the verdict or the first screen needs every other: store/sections.py says what
    assert LATER == ["ranks", "report_timeline", "launches"]
    plant(monkeypatch, OPTIONAL_SECTIONS[section].module)
    doc = profile_from_trace(traces_dir / f"{TRACE}.json.gz")
    assert marks.SECTION_UNAVAILABLE not in doc["marks"]
    assert doc["tables"] == baseline["tables"] and doc["verdict"] == baseline["verdict"]
    assert doc["metrics"] == baseline["metrics"]
    asked = analyse_trace(traces_dir / f"{TRACE}.json.gz", sections=(section,))
    assert section in asked["sections"] and "planted failure" in asked["unavailable"][section]
    assert section not in asked["kept"]
    assert asked["timeline"] == [] and asked["metrics"] == first_read["metrics"]


def test_the_first_read_holds_its_sections_and_a_job_the_ranks_timeline(traces_dir, first_read):
    first = first_read
    assert first["sections"] == list(FIRST_READ) and first["timeline"] == []
    job = analyse_trace(traces_dir / f"{TRACE}.json.gz", sections=("ranks",))
    assert job["sections"] == [*FIRST_READ, "ranks"] and job["timeline"]  # the trace has steps on the clock
    assert job["metrics"] == first["metrics"] and job["tables"] == first["tables"]


@pytest.mark.cold_cache
def test_the_readers_answer_and_say_why_a_section_is_empty(monkeypatch, trace):
    path = str(trace(TRACE))
    plant(monkeypatch, "roofline.sql")
    summary = run_cli("summary", path, "--json")
    assert summary.returncode == 0, summary.stderr
    doc = json.loads(summary.stdout)
    assert doc["metrics"]["step_ms"] > 0 and doc["metrics"]["sol_step_ms"] is None
    assert "roofline: it could not be computed" in doc["marks"][marks.SECTION_UNAVAILABLE]
    roofline = run_cli("roofline", path, "--json")
    assert roofline.returncode == 0, roofline.stderr
    answer = json.loads(roofline.stdout)
    assert answer["roofline"] == [] and "roofline section could not be computed" in answer["note"]
    for reader in ("kernels", "ops", "phases", "modules", "memory"):
        out = run_cli(reader, path, "--json")
        assert out.returncode == 0, (reader, out.stderr)


@pytest.mark.cold_cache
def test_a_core_failure_is_one_line_and_exit_1(monkeypatch, trace):
    path = str(trace(TRACE))
    plant(monkeypatch, "blame.sql")
    out = run_cli("summary", path)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "the blame of each step could not be computed" in lines[0], out.stderr
    assert "Traceback" not in out.stderr


def test_non_finite_values_are_null_with_the_place_and_the_reason():
    doc = {
        "metrics": {"sol_step_ms": math.nan, "step_ms": 5.0, "gemm_conv_peak_pct": math.inf},
        "null_reasons": {"gemm_conv_peak_pct": "a reason that no longer holds"},
        "marks": {},
        "trials": [{"sol_step_ms": math.nan}],
        "tables": {"roofline": {"columns": ["op", "tb_per_s"], "rows": [["aten::sum", -math.inf], ("x", 1.0)]}},
    }
    settle_non_finite(doc, {"metrics.step_host_ms": 1})
    assert doc["metrics"] == {"sol_step_ms": None, "step_ms": 5.0, "gemm_conv_peak_pct": None}
    assert doc["null_reasons"]["sol_step_ms"] == doc["null_reasons"]["gemm_conv_peak_pct"] == NON_FINITE_REASON
    assert doc["tables"]["roofline"]["rows"] == [["aten::sum", None], ("x", 1.0)]
    said = doc["marks"][marks.NON_FINITE]
    for place in ("metrics.sol_step_ms", "metrics.gemm_conv_peak_pct", "trials[].sol_step_ms"):
        assert place in said
    assert "tables.roofline.tb_per_s (1)" in said and "metrics.step_host_ms (1)" in said
    json.dumps(doc, allow_nan=False)
    clean = {"metrics": {"step_ms": 1.0}, "marks": {}, "tables": {}}
    assert marks.NON_FINITE not in settle_non_finite(clean)["marks"]


def test_a_zero_element_reduction_no_longer_fails_the_profile(trace):
    """The corpus trace whose `aten::sum` of [[0], []] divided 0 by 0 in the reduction's cost model (its analysis
    is the one the other tests of this worker share)."""
    path = str(trace("corpus/trace_diff__control__control"))
    summary = run_cli("summary", path, "--json")
    assert summary.returncode == 0, summary.stderr
    doc = json.loads(summary.stdout)
    assert marks.NON_FINITE not in doc["marks"] and marks.SECTION_UNAVAILABLE not in doc["marks"]
    rows = json.loads(run_cli("roofline", path, "--op", "^aten::sum$", "--top", "100000", "--json").stdout)["roofline"]
    empty = [r for r in rows if r["input_dims"] == "[[0], []]"]
    assert empty and all(r["gflops"] == 0 and r["mb_moved"] == pytest.approx(4 / 1e6) for r in empty)
