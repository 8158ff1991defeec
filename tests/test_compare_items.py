"""`compare --ops` / `--kernels` through the real CLI: on the V100 dataloader pair every row agrees with a
plain-Python diff of the two profiles' ops and kernels tables; on pooled directories built from a real
profile the per-op significance follows the headline's rule, with the expected figures derived by hand."""

from __future__ import annotations

import copy
import json
import math
import statistics
import uuid
from pathlib import Path

import pytest
from conftest import require_traces, run_cli

PAIR = ("v100_resnet50_workers0.json.gz", "v100_resnet50_workers4.json.gz")


@pytest.fixture(scope="module")
def cache(reader_cache_env):
    return reader_cache_env


def document(trace: Path, cache) -> dict:
    """The profile document the CLI's own ingest wrote for a trace (a `get` run fills the cache)."""
    from libreyolo_profile.store.disk.cache import trace_key

    home = Path(cache["XDG_CACHE_HOME"]) / "libreyolo-profile" / "traces" / trace_key(trace)
    if not (home / "profile.json").is_file():
        result = run_cli("get", str(trace), "steps", env=cache)
        assert result.returncode == 0, result.stderr
    return json.loads((home / "profile.json").read_text())


def table_rows(doc: dict, table: str) -> list[dict]:
    held = doc["tables"][table]
    return [dict(zip(held["columns"], row, strict=True)) for row in held["rows"]]


def per_name(doc: dict, table: str, measure: str) -> dict[str, tuple[float, float]]:
    """{name: (time per step, calls per step)} summed over the table's phase rows, in plain Python."""
    found: dict[str, list[float]] = {}
    for row in table_rows(doc, table):
        entry = found.setdefault(row["name"], [0.0, 0.0])
        entry[0] += row[measure]
        entry[1] += row["calls_per_step"]
    return {name: (ms, calls) for name, (ms, calls) in found.items()}


def reference_diff(before: dict, after: dict, table: str, measure: str) -> dict[str, dict]:
    b, a = per_name(before, table, measure), per_name(after, table, measure)
    return {
        name: {
            "delta_ms": a.get(name, (0.0, 0.0))[0] - b.get(name, (0.0, 0.0))[0],
            "before_calls": b.get(name, (0.0, 0.0))[1],
            "after_calls": a.get(name, (0.0, 0.0))[1],
            "presence": "both" if name in a and name in b else "new" if name in a else "gone",
        }
        for name in set(b) | set(a)
    }


@pytest.fixture(scope="module")
def pair(cache):
    traces = require_traces()
    before, after = (traces / name for name in PAIR)
    result = run_cli("compare", str(before), str(after), "--ops", "--kernels", "--json", env=cache)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), document(before, cache), document(after, cache)


@pytest.mark.parametrize("table, measure", [("ops", "self_ms_per_step"), ("kernels", "ms_per_step")])
def test_every_item_agrees_with_a_plain_python_diff_of_the_tables(pair, table, measure):
    report, before, after = pair
    expected = reference_diff(before, after, table, measure)
    rows = report[table]["rows"]
    assert {r["name"] for r in rows} == set(expected)
    for r in rows:
        want = expected[r["name"]]
        assert r["delta_ms"] == pytest.approx(want["delta_ms"], abs=1e-9), r["name"]
        assert r["before_calls"] == pytest.approx(want["before_calls"]) and r["presence"] == want["presence"]
        assert r["after_calls"] == pytest.approx(want["after_calls"])
        assert r["significant"] is None and r["before_n"] == 1 == r["after_n"]  # one profile a side
    # largest |Δ| first: the rows name the items whose time changed most
    ranked = sorted(expected, key=lambda name: -abs(expected[name]["delta_ms"]))
    assert [r["name"] for r in rows[:5]] == ranked[:5]
    assert report[table]["tested"] is False


def test_the_screen_names_the_ops_that_changed_most_and_says_why_untested(pair, cache):
    report, _, _ = pair
    traces = require_traces()
    result = run_cli("compare", *(str(traces / name) for name in PAIR), "--ops", "--top", "3", env=cache)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for r in report["ops"]["rows"][:3]:
        assert r["name"] in text
    assert report["ops"]["rows"][3]["name"] not in text and "kernels by |Δ|" not in text
    assert f"{len(report['ops']['rows']) - 3} more below --top 3" in text
    assert "tested only between directories of ≥ 2 profiles per side" in " ".join(text.split())
    assert run_cli("compare", *(str(traces / name) for name in PAIR), "--ops", "--top", "0", env=cache).returncode == 2
    markdown = run_cli(
        "compare", *(str(traces / name) for name in PAIR), "--kernels", "--top", "2", "--markdown", env=cache
    )
    assert markdown.returncode == 0, markdown.stderr
    rows = [line for line in markdown.stdout.splitlines() if line.startswith("| `")]
    kernels = report["kernels"]["rows"]
    assert len(rows) == 2 and rows[0].startswith(f"| `{kernels[0]['name']}` |")
    assert f"{kernels[0]['delta_ms']:+.2f}" in rows[0]


def variant(doc: dict, target: Path, self_ms: dict[str, float], drop: str | None = None) -> Path:
    """The profile with the given ops' self time per step set (each in its first phase row) and `drop`
    left out of its ops table, written as a profile of its own (a new generation)."""
    from libreyolo_profile.store.disk.writer import write_directory

    doc = copy.deepcopy(doc)
    held = doc["tables"]["ops"]
    name_at, self_at = held["columns"].index("name"), held["columns"].index("self_ms_per_step")
    held["rows"] = [row for row in held["rows"] if row[name_at] != drop]
    for name, value in self_ms.items():
        rows = [row for row in held["rows"] if row[name_at] == name]
        for i, row in enumerate(rows):
            row[self_at] = value if i == 0 else 0.0
    doc["generation"] = uuid.uuid4().hex
    write_directory(doc, target)
    return target


def test_pooled_sides_judge_each_op_by_the_headline_rule(pair, cache, tmp_path):
    _, doc, _ = pair
    # aten::add_ moves by 4 ms against a spread of 1 ms: SE 1/√2 per side, threshold 2·√(½+½) = 2 → significant.
    # aten::mul_ moves by 1 ms against the same spread: 1 < 2 → not significant.
    # aten::empty is left out of both after profiles: gone, its after time a measured 0.
    before_add, after_add = [10.0, 11.0], [14.0, 15.0]
    before_mul, after_mul = [5.0, 6.0], [6.0, 7.0]
    for i in range(2):
        variant(doc, tmp_path / "before" / f"p{i}", {"aten::add_": before_add[i], "aten::mul_": before_mul[i]})
        variant(
            doc, tmp_path / "after" / f"p{i}", {"aten::add_": after_add[i], "aten::mul_": after_mul[i]}, "aten::empty"
        )
    result = run_cli("compare", str(tmp_path / "before"), str(tmp_path / "after"), "--ops", "--json", env=cache)
    assert result.returncode == 0, result.stderr
    changes = json.loads(result.stdout)["ops"]
    assert changes["tested"] is True and "n_before = 2, n_after = 2" in changes["sentence"]
    rows = {r["name"]: r for r in changes["rows"]}
    add, mul, empty = rows["aten::add_"], rows["aten::mul_"], rows["aten::empty"]
    se = statistics.stdev(before_add) / math.sqrt(2)
    assert add["before_se"] == pytest.approx(se) and add["threshold"] == pytest.approx(2 * math.sqrt(2 * se * se))
    assert add["delta_ms"] == pytest.approx(4.0) and add["significant"] is True
    assert mul["delta_ms"] == pytest.approx(1.0) and mul["significant"] is False
    before_empty = per_name(doc, "ops", "self_ms_per_step")["aten::empty"][0]
    assert empty["presence"] == "gone" and empty["after_ms"] == 0 and empty["after_calls"] == 0
    # the same time in both before profiles: SE 0, so as in the headline any change is past 2·SE = 0
    assert empty["delta_ms"] == pytest.approx(-before_empty) and empty["threshold"] == 0 and empty["significant"]
    narrow = {**cache, "COLUMNS": "80"}  # a pipe's width: every table fits, no number cut
    text = run_cli("compare", str(tmp_path / "before"), str(tmp_path / "after"), "--ops", env=narrow).stdout
    assert max(len(line) for line in text.splitlines()) <= 80
    line = {
        name: next(x for x in text.splitlines() if x.startswith(name + " ")) for name in ("aten::add_", "aten::mul_")
    }
    assert line["aten::add_"].split()[-1] == "yes" and line["aten::mul_"].split()[-1] == "no"


def test_the_diff_sums_phases_keeps_a_null_time_null_and_reads_a_jobs_shown_rank(tmp_path):
    """sql/compare_ops.sql on hand-made ops tables (rows: rank, phase, name, calls/step, self ms/step):
      before (one trace):  fwd aten::mm 2 calls 1.0 ms, bwd aten::mm 1 call 0.5 ms, fwd aten::relu 4 calls NULL
      after (a job, rank 1 shown; rank 0's rows are not read): fwd aten::mm 3 calls 2.0 ms, fwd aten::add 1 call 0.25
    → aten::mm summed over phases: 1.5 → 2.0 ms (Δ +0.5), 3 → 3 calls; aten::relu: its before time NULL (only
      inclusive time recorded), so no Δ, and gone (after: a measured 0 calls); aten::add: new, 0 → 0.25 ms."""
    import duckdb

    from libreyolo_profile.sqlmodules import run_module

    con = duckdb.connect()
    tables = {
        "before": [(None, "forward", "aten::mm", 2.0, 1.0), (None, "backward", "aten::mm", 1.0, 0.5)]
        + [(None, "forward", "aten::relu", 4.0, None)],
        "after": [(1, "forward", "aten::mm", 3.0, 2.0), (1, "forward", "aten::add", 1.0, 0.25)]
        + [(0, "forward", "aten::mm", 9.0, 9.0)],
    }
    for side, rows in tables.items():
        con.execute(
            "CREATE TABLE t (rank BIGINT, phase VARCHAR, name VARCHAR, calls_per_step DOUBLE, self_ms_per_step DOUBLE)"
        )
        con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
        con.execute(f"COPY t TO '{tmp_path / side}.parquet' (FORMAT parquet)")
        con.execute("DROP TABLE t")
    files = [str(tmp_path / "before.parquet"), str(tmp_path / "after.parquet")]
    params = {"side": ["before", "after"], "source": files, "rank": [None, 1], "files": files}
    cursor = run_module(con, "compare_ops.sql", params)
    rows = {r[0]: dict(zip([d[0] for d in cursor.description], r, strict=True)) for r in cursor.fetchall()}
    mm, relu, add = rows["aten::mm"], rows["aten::relu"], rows["aten::add"]
    assert (mm["before_ms"], mm["after_ms"], mm["delta_ms"]) == pytest.approx((1.5, 2.0, 0.5))
    assert (mm["before_calls"], mm["after_calls"], mm["presence"], mm["detail"]) == (
        3.0,
        3.0,
        "both",
        "backward,forward",
    )
    assert relu["before_ms"] is None and relu["delta_ms"] is None and relu["after_ms"] == 0
    assert (relu["presence"], relu["after_calls"]) == ("gone", 0.0)
    assert (add["presence"], add["before_ms"], add["after_ms"], add["delta_pct"]) == ("new", 0.0, 0.25, None)
    assert mm["significant"] is None and mm["before_n"] == 1 == mm["after_n"]
    assert list(rows) == ["aten::mm", "aten::add", "aten::relu"]  # |Δ| first, a NULL Δ last
