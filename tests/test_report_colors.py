"""The report's colours keep one meaning each (issue 25, point 10: "colours reused with other meanings
across report charts"): the palette in readers/report_page.py against an independent CIE76 distance,
against the vocabulary the SQL defines, and against reports the real CLI writes for real traces."""

from __future__ import annotations

import itertools
import re

import duckdb
import pytest
from conftest import REPO, require_traces, run_cli

from libreyolo_profile.readers import report_page
from libreyolo_profile.readers.report_charts import STEP_LANE  # the steps' lane: the page's grey, no meaning
from libreyolo_profile.readers.report_page import COLORS, FALLBACK, INK, MEANINGS, MIN_DELTA_E

# the phases sql/ingest.sql and sql/phases.sql name, train and infer (docs/SCHEMA.md, the phases table)
PHASES = ("dataload", "to_device", "forward", "backward", "optimizer", "preprocess", "forward", "postprocess")


def lab(colour: str) -> tuple[float, float, float]:
    """sRGB hex → CIE L*a*b* (D65), written out from the standard formulas."""
    rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = [((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92 for c in rgb]
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(v: float) -> float:
        return v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def delta_e(a: str, b: str) -> float:
    return sum((p - q) ** 2 for p, q in zip(lab(a), lab(b), strict=True)) ** 0.5


def test_delta_e_is_right_on_known_pairs():
    assert delta_e("#000000", "#ffffff") == pytest.approx(100.0, abs=0.01)
    assert delta_e("#ff0000", "#ff0000") == 0.0
    assert lab("#ff0000") == pytest.approx((53.24, 80.09, 67.20), abs=0.05)


def test_no_two_meanings_look_alike():
    colours = [colour for colour, _ in MEANINGS.values()]
    assert len(set(colours)) == len(colours), "one colour stands for two meanings"
    close = [
        (a, b, round(delta_e(MEANINGS[a][0], MEANINGS[b][0]), 1))
        for a, b in itertools.combinations(MEANINGS, 2)
        if delta_e(MEANINGS[a][0], MEANINGS[b][0]) < MIN_DELTA_E
    ]
    assert not close, close
    names = [name for _, carried in MEANINGS.values() for name in carried]
    assert len(set(names)) == len(names), "a name carried by two meanings"
    assert not set(FALLBACK) & set(COLORS.values()) and INK not in COLORS.values()


def sql_vocabulary() -> set[str]:
    """Every blame cause and kernel category the SQL can produce, read from the SQL that defines them."""
    con = duckdb.connect()
    con.execute((REPO / "sql" / "blame_causes.sql").read_text())  # the causes' table: no inputs
    causes = {row[0] for row in con.execute("SELECT cause FROM blame_causes").fetchall()}
    assert {"gemm_conv", "unexplained_idle", "python"} <= causes, "blame_causes.sql's vocabulary moved"
    rules = (REPO / "sql" / "kernel_categories.sql").read_text()  # the rules table and macros: no inputs
    con.execute(rules)
    categories = {row[0] for row in con.execute("SELECT DISTINCT category FROM kernel_category_rules").fetchall()}
    assert {"gemm", "attention", "nms/sort"} <= categories
    # kernel_category(): memcpy and memset activities are their own category; a kernel no rule matches is 'other'
    return causes | categories | {"memcpy", "memset", "other"}


def test_every_phase_category_and_cause_has_its_own_meaning():
    missing = sorted(name for name in sql_vocabulary() | set(PHASES) if name not in COLORS)
    assert not missing, f"no colour of its own (they would share a fallback grey): {missing}"


def meaning_of(label: str) -> str:
    for meaning, (_, names) in MEANINGS.items():
        if label == meaning or label in names:
            return meaning
    raise AssertionError(f"a legend label names no meaning of report_page.py: {label!r}")


def legend_pairs(page: str) -> list[tuple[str, str]]:
    """(colour, label) of every legend swatch and every category chip of the tables."""
    swatches = re.findall(r'<i(?: class="[^"]*")? style="background:(#[0-9a-fA-F]{6})"></i>([^<]+)</span>', page)
    return swatches + re.findall(r'<span class="chip" style="background:(#[0-9a-fA-F]{6})">([^<]+)</span>', page)


def check_page(page: str) -> None:
    """Every colour the page's charts draw is a meaning's, the ink or a fallback, and every legend swatch
    is its label's colour, so no colour carries two meanings on a page."""
    body = page[page.index("</style>") :]
    drawn = set(re.findall(r"(?:fill|stroke|background)[=:]\"?(#[0-9a-fA-F]{6})", body))
    allowed = set(COLORS.values()) | {INK, *FALLBACK, STEP_LANE}
    assert drawn <= allowed, f"colours from outside the palette: {sorted(drawn - allowed)}"
    by_colour: dict[str, set[str]] = {}
    for colour, label in legend_pairs(body):
        meaning = meaning_of(label)
        assert MEANINGS[meaning][0] == colour, (label, colour)
        by_colour.setdefault(colour, set()).add(meaning)
    assert all(len(meanings) == 1 for meanings in by_colour.values()), by_colour


def test_reports_of_real_traces_keep_one_meaning_per_colour(tmp_path):
    traces = require_traces()
    pages = []
    for name in ("a100_cutlass_adam_rank0.json.gz", "v100_resnet50_workers0.json.gz", "cpu_only_rank34.json.gz"):
        out = tmp_path / f"{name}.html"
        done = run_cli("report", str(traces / name), "--out", str(out))
        assert done.returncode == 0, done.stderr
        pages.append(out.read_text())
    for page in pages:
        check_page(page)
    legends = [pair for page in pages for pair in legend_pairs(page)]
    labels = {label for _, label in legends}
    # the charts that share hues in the old palette are all on these pages: phases, categories, causes
    assert {"forward", "backward", "gemm", "gemm_conv"} <= labels, sorted(labels)


def test_rank_lanes_and_roofline_legends_name_their_colours():
    from libreyolo_profile.readers.report_sections import ranks_section, roofline_section

    lanes = [
        {"rank": 0, "what": "steps", "start_ms": 0.0, "end_ms": 10.0, "straggler": False},
        {"rank": 0, "what": "collectives", "start_ms": 2.0, "end_ms": 5.0, "wait_ms": 1.0, "transfer_ms": 2.0,
         "collective": "allreduce #1", "last_rank": 1, "straggler": False},
        {"rank": 1, "what": "steps", "start_ms": 0.0, "end_ms": 10.0, "straggler": True},
        {"rank": 1, "what": "collectives", "start_ms": 3.0, "end_ms": 5.0, "wait_ms": 0.0, "transfer_ms": 2.0,
         "collective": "allreduce #1", "last_rank": 1, "straggler": True},
    ]  # fmt: skip
    point = {"op": "aten::mm", "input_dims": "[[8, 8]]", "gflops": 1.0, "intensity": 4.0, "tflops_per_s": 2.0,
             "pct_of_roofline": 10.0, "device_ms_per_step": 1.0}  # fmt: skip
    roofline = {"roofline": [{**point, "bound": "memory"}, {**point, "bound": "compute", "intensity": 400.0}]}
    for html in (ranks_section({"rank_lanes": lanes}, 900), roofline_section(roofline, 900)):
        assert html, "the section drew nothing"
        check_page("</style>" + html)
        assert len(legend_pairs(html)) >= 2


def test_an_unknown_name_gets_a_fallback_not_a_meaning():
    assert report_page.color_for("a category a later version adds") in FALLBACK
