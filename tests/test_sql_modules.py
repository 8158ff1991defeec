"""The SQL modules (libreyolo_profile/sqlmodules.py): every sql/*.sql declares what it needs in its header,
the loader runs the modules in that order and refuses an undeclared dependency or a cycle; and the
shared interval macros of sql/intervals.sql on tiny hand-derived inputs."""

from __future__ import annotations

import random
import re
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from libreyolo_profile.sqlmodules import (
    SqlModuleError,
    all_modules,
    check_modules,
    dependency_order,
    load_requirements,
    module_names,
    parse_module,
    references,
    run_module,
)

REPO = Path(__file__).resolve().parents[1]


def tree(**texts: str) -> dict:
    """A planted sql/ tree: module name (without .sql) → its text."""
    return {f"{name}.sql": parse_module(f"{name}.sql", text) for name, text in texts.items()}


# ------------------------------------------------------------------------------------------------
# the loader's rules, on planted trees


def test_an_undeclared_table_dependency_is_refused():
    planted = tree(
        base="-- base\nCREATE OR REPLACE TEMP TABLE alpha AS SELECT 1 AS x;\n",
        user="-- user: reads alpha, needs nothing declared\nSELECT x FROM alpha;\n",
    )
    refused = r"sql/user\.sql uses alpha, which sql/base\.sql creates.*requires: base\.sql"
    with pytest.raises(SqlModuleError, match=refused):
        check_modules(planted)


def test_an_undeclared_macro_dependency_is_refused():
    planted = tree(
        base="-- base\nCREATE OR REPLACE TEMP MACRO twice(v) AS 2 * v;\n", user="-- user\nSELECT twice(3) AS six;\n"
    )
    with pytest.raises(SqlModuleError, match=r"sql/user\.sql uses twice, which sql/base\.sql creates"):
        check_modules(planted)


def test_reading_what_a_required_module_drops_is_refused():
    planted = tree(
        base="-- base\nCREATE TEMP TABLE scratch AS SELECT 1 AS x;\n"
        "CREATE TEMP TABLE alpha AS SELECT x FROM scratch;\nDROP TABLE scratch;\n",
        user="-- user\n-- requires: base.sql\nSELECT x FROM scratch;\n",
    )
    with pytest.raises(SqlModuleError, match=r"sql/user\.sql uses scratch, which sql/base\.sql drops before it ends"):
        check_modules(planted)


def test_declared_dependencies_and_inputs_pass():
    planted = tree(
        base="-- base\nCREATE OR REPLACE TEMP TABLE alpha AS SELECT 1 AS x;\n",
        user="-- user\n-- requires: base.sql\nSELECT x FROM alpha;\n",
        # reads alpha, which its caller fills without running base.sql
        other="-- other\n-- inputs: alpha (the caller creates it)\nSELECT x FROM alpha;\n",
    )
    check_modules(planted)
    assert dependency_order("user.sql", planted) == ["base.sql", "user.sql"]
    assert dependency_order("other.sql", planted) == ["other.sql"]


def test_names_in_comments_strings_aliases_and_columns_are_not_uses():
    planted = tree(
        base="-- base\nCREATE OR REPLACE TEMP TABLE alpha AS SELECT 1 AS x;\n"
        "CREATE OR REPLACE TEMP MACRO twice(v) AS 2 * v;\n",
        user="-- user: alpha twice()\nSELECT 'alpha' AS label, t.alpha, 3 AS alpha, 4 AS twice, $alpha AS p "
        "FROM (SELECT 1 AS alpha) t; -- twice(alpha)\n",
    )
    check_modules(planted)


def test_a_cycle_is_refused():
    planted = tree(
        a="-- a\n-- requires: b.sql\nSELECT 1;\n",
        b="-- b\n-- requires: c.sql\nSELECT 1;\n",
        c="-- c\n-- requires: a.sql\nSELECT 1;\n",
    )
    with pytest.raises(SqlModuleError, match=r"cycle: a\.sql → b\.sql → c\.sql → a\.sql"):
        check_modules(planted)


def test_a_missing_required_module_is_refused():
    with pytest.raises(SqlModuleError, match=r"sql/a\.sql requires nowhere\.sql, which is not a module"):
        check_modules(tree(a="-- a\n-- requires: nowhere.sql\nSELECT 1;\n"))


def test_only_the_header_declares():
    # a `-- requires:` line after the first statement is a comment like any other
    planted = parse_module("late.sql", "-- late\nSELECT 1;\n-- requires: other.sql\n")
    assert planted.requires == ()


# ------------------------------------------------------------------------------------------------
# the real sql/ tree


def test_the_real_tree_loads():
    modules = all_modules()  # parses and checks every module; raises on a broken rule
    assert {p.name for p in (REPO / "sql").glob("*.sql")} == set(modules)
    # what the trace path runs, in order: each module after what it requires
    order = dependency_order("metrics.sql", modules)
    position = order.index
    assert position("intervals.sql") < position("ingest.sql") < position("blame.sql") < position("metrics.sql")
    assert order.index("kernel_categories.sql") < order.index("kernel_shares.sql") < order.index("metrics.sql")
    assert dependency_order("table_modules.sql", modules)[-2:] == ["modules.sql", "table_modules.sql"]


def test_every_declaration_is_used():
    """A required module whose objects the module never reads, or an input it never names, is stale."""
    modules = all_modules()
    for mod in modules.values():
        tables, calls = references(mod)
        for needed in mod.requires:
            provided = modules[needed].tables | modules[needed].macros
            assert provided & (tables | calls), f"{mod.name} requires {needed} but reads nothing of it"
        for name in mod.inputs:
            assert name.lower() in tables, f"{mod.name} declares input {name} but never reads it"


# the only modules that read a sql/*.sql file's text themselves, and why; every other one runs a module through
# the loader (sqlmodules.run_module or module_relation, readers/common.run_sql)
READS_SQL_TEXT = {
    "libreyolo_profile/sqlfiles.py": "it defines sql_text",
    "libreyolo_profile/sqlmodules.py": "the loader: it runs each module after what it requires",
    "libreyolo_profile/vocabulary.py": "it keys its cache by a vocabulary module's text (run_module runs it)",
    "libreyolo_profile/store/crossrun/views.py": "the cross-run view templates are text it fills in, not modules",
}


def test_python_runs_sql_only_through_the_loader():
    """No run order in Python: the package runs sql/*.sql only through the loader. A module's text handed to
    `con.execute(…)`, `con.sql(…)` or pasted into a query of its own skips what the module requires, so
    outside READS_SQL_TEXT no module calls sql_text at all, and none anywhere runs its result directly."""
    offenders = []
    for path in (REPO / "libreyolo_profile").rglob("*.py"):
        name = path.relative_to(REPO).as_posix()
        text = path.read_text(encoding="utf-8")
        runs_text = re.search(r"\.(execute|sql)\(\s*sql_text\(", text)
        if runs_text or (name not in READS_SQL_TEXT and re.search(r"\bsql_text\(", text)):
            offenders.append(name)
    assert offenders == []
    assert all((REPO / name).is_file() for name in READS_SQL_TEXT), "an exception names a module that is gone"


def test_requirements_run_once_per_connection():
    con = duckdb.connect()
    con.execute(
        "CREATE TEMP TABLE kernel_time AS SELECT 0 AS device, 'gemm' AS category, true AS tensorcore, 3.0 AS time"
    )
    run_module(con, "kernel_shares.sql")  # runs kernel_categories.sql first
    con.execute("INSERT INTO kernel_category_rules VALUES (1, 'planted', 'own', 'planted', 'this test')")
    load_requirements(con, "kernel_shares.sql")  # already there: not run again, the planted rule stays
    assert con.execute("SELECT count(*) FROM kernel_category_rules WHERE category = 'planted'").fetchone()[0] == 1
    assert con.execute("SELECT gemm_pct, tensorcore_pct FROM kernel_shares").fetchone() == (100.0, 100.0)


# ------------------------------------------------------------------------------------------------
# sql/intervals.sql, each figure derived by hand


@pytest.fixture
def con():
    con = duckdb.connect()
    run_module(con, "intervals.sql")
    yield con
    con.close()


def test_interval_union(con):
    # grp 1: [0,5) ∪ [3,8) → [0,8); [8,9) touches it → [0,9); [10,10) is zero-length → nothing; [12,15)
    # grp 2: [1,2)
    rows = con.execute("""
        WITH k AS (SELECT * FROM (VALUES (1, 0, 5), (1, 3, 8), (1, 8, 9), (1, 10, 10), (1, 12, 15), (2, 1, 2))
                   v(grp, s, e))
        SELECT grp, s, e FROM interval_union(k) ORDER BY grp, s""").fetchall()
    assert rows == [(1, 0, 9), (1, 12, 15), (2, 1, 2)]


def plain_union(rows):
    """The union of (grp, s, e) rows by a sort and a sweep, in plain Python: the reference."""
    islands = []
    for grp, s, e in sorted(set(rows)):
        if islands and islands[-1][0] == grp and s <= islands[-1][2]:
            islands[-1][2] = max(islands[-1][2], e)
        else:
            islands.append([grp, s, e])
    return [tuple(island) for island in islands]


def test_interval_union_of_duplicates_is_the_same_every_run(con):
    # Intervals recorded twice or three times (a frame and its copy), gaps between them, shuffled: a parallel
    # sort may hand the copies over in any order, and the union must not depend on it (it once bridged the
    # gap before a duplicated interval now and then: 1 µs of a step's idle went to the wrong cause).
    rng = random.Random(7)
    rows, t = [], 0
    for i in range(60_000):
        t += rng.randint(1, 5)
        length = rng.randint(1, 4)
        rows += [(i % 3, t, t + length)] * rng.randint(1, 3)
        t += length
    rng.shuffle(rows)
    con.execute("SET threads = 4")
    con.register("k", pa.table({name: [row[n] for row in rows] for n, name in enumerate(("grp", "s", "e"))}))
    expected = plain_union(rows)
    for _ in range(3):
        assert con.execute("SELECT grp, s, e FROM interval_union(k) ORDER BY ALL").fetchall() == expected


def test_interval_coverage(con):
    # grp 1, labels by priority: 1 on [0,4) and [6,8); 2 on [2,10); 3 on [3,5), and [5,5) zero-length.
    # Edges 0,2,3,4,5,6,8,10: [0,2) {1} → 1; [2,3) {1,2} → 1; [3,4) {1,2,3} → 1; [4,5) {2,3} → 2;
    # [5,6) {2} → 2; [6,8) {1,2} → 1; [8,10) {2} → 2.  grp 2: 'b' on [0,1), 'a' on [0,1) too → 'a', 2 labels.
    rows = con.execute("""
        WITH k AS (SELECT * FROM (VALUES (1, '1', 0, 4), (1, '1', 6, 8), (1, '2', 2, 10), (1, '3', 3, 5),
                                         (1, '3', 5, 5), (2, 'b', 0, 1), (2, 'a', 0, 1)) v(grp, label, s, e))
        SELECT grp, s, e, first_label, labels FROM interval_coverage(k) ORDER BY grp, s""").fetchall()
    assert rows == [
        (1, 0, 2, "1", 1),
        (1, 2, 3, "1", 2),
        (1, 3, 4, "1", 3),
        (1, 4, 5, "2", 2),
        (1, 5, 6, "2", 1),
        (1, 6, 8, "1", 2),
        (1, 8, 10, "2", 1),
        (2, 0, 1, "a", 2),
    ]


def test_interval_overlap(con):
    got = con.execute("""SELECT intervals_overlap(0, 10, 5, 20), interval_overlap_length(0, 10, 5, 20),
                                intervals_overlap(0, 10, 10, 20), interval_overlap_length(0, 10, 10, 20),
                                intervals_overlap(0, 10, 4, 4), interval_overlap_length(0, 10, 4, 4),
                                interval_overlap_length(2, 3, 0, 10)""").fetchone()
    # [0,10)∩[5,20) = [5,10): 5; touching at 10: nothing; a zero-length one at 4: nothing; [2,3) inside: 1
    assert got == (True, 5, False, 0, False, 0, 1)


def test_interval_tree(con):
    # one thread: A [0,100) ⊃ Z [10,10) (zero-length), B [20,60) ⊃ C [20,40) (starts with B, shorter:
    # inside it), D [60,70) (starts where B ends: B's sibling) ⊃ Y [60,60) (zero-length at D's start)
    rows = con.execute("""
        WITH k AS (SELECT * FROM (VALUES ('t', 'A', 0, 100), ('t', 'Z', 10, 10), ('t', 'B', 20, 60), ('t', 'C', 20, 40),
                                         ('t', 'D', 60, 70), ('t', 'Y', 60, 60), ('u', 'E', 0, 5)) v(grp, id, s, e))
        SELECT id, depth, parent_id FROM interval_tree(k) ORDER BY id""").fetchall()
    assert rows == [
        ("A", 0, None),
        ("B", 1, "A"),
        ("C", 2, "B"),
        ("D", 1, "A"),
        ("E", 0, None),
        ("Y", 2, "D"),
        ("Z", 1, "A"),
    ]


def test_interval_self_and_owners(con):
    # A [0,100) ⊃ B [20,60) ⊃ C [30,40); X [50,80) overlaps B without nesting (rank 9). Pieces:
    # 0–20 A, 20–30 B, 30–40 C, 40–50 B, 50–80 X (started last), 80–100 A; Z [90,90) owns nothing.
    # Self: A 20 + 20 = 40, B 10 + 10 = 20, C 10, X 30 — they add up to A's 100.
    rows = con.execute("""
        WITH k AS (SELECT * FROM (VALUES (1, 'A', 0, 100, 0), (1, 'B', 20, 60, 1), (1, 'C', 30, 40, 2),
                                         (1, 'X', 50, 80, 9), (1, 'Z', 90, 90, 1)) v(grp, id, s, e, rank))
        SELECT id, self FROM interval_self(k) ORDER BY id""").fetchall()
    assert rows == [("A", 40), ("B", 20), ("C", 10), ("X", 30)]
    # two open intervals starting together: the higher rank owns the time, then the higher id
    tie = con.execute("""
        WITH k AS (SELECT * FROM (VALUES (1, 1, 0, 10, 0), (1, 2, 0, 10, 5), (1, 3, 0, 10, 5)) v(grp, id, s, e, rank))
        SELECT id, self FROM interval_self(k)""").fetchall()
    assert tie == [(3, 10)]


def test_intervals_open_at(con):
    # A [0,100) ⊃ B [20,60): instant 25 is held by A and B, owned by B; 60 only by A (B is half-open);
    # 100 by nothing; Z [30,30) holds no instant, not even 30
    rows = con.execute("""
        WITH k AS (SELECT * FROM (VALUES (1, 'A', 0, 100, 0), (1, 'B', 20, 60, 1), (1, 'Z', 30, 30, 2))
                   v(grp, id, s, e, rank)),
        x AS (SELECT * FROM (VALUES (1, 25, 'k1'), (1, 60, 'k2'), (1, 100, 'k3'), (1, 30, 'k4')) v(grp, t, instant_id))
        SELECT instant_id, interval_id, owner FROM intervals_open_at(k, x)
        ORDER BY instant_id, interval_id""").fetchall()
    assert rows == [("k1", "A", False), ("k1", "B", True), ("k2", "A", True), ("k4", "A", False), ("k4", "B", True)]


def test_a_checkout_run_without_an_install_finds_its_own_sql(monkeypatch):
    """`python -m libreyolo_profile` inside a checkout imports the checkout's package, which has no `sql`
    subpackage (an install maps it onto the top-level sql/): the SQL is then the checkout's sql/ (found on
    the first CUDA run, where every analysis failed with "No module named 'libreyolo_profile.sql'")."""
    import importlib.util

    from libreyolo_profile import sqlfiles

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "libreyolo_profile.sql" else real(name, *a)
    )
    sqlfiles.sql_directory.cache_clear()
    try:
        found = sqlfiles.sql_directory()
        assert found == Path(sqlfiles.__file__).resolve().parent.parent / "sql"
        assert (found / "blame.sql").is_file() and "blame.sql" in module_names()
    finally:
        sqlfiles.sql_directory.cache_clear()


def test_us_text_to_ns_matches_exact_decimal_arithmetic():
    # Kineto times as written: integers (the fast path), sub-µs digits, exponents, signs, hex-looking and
    # non-numbers; each against Python's exact decimal: round(µs × 1000) ns, NULL where it is no number or
    # past BIGINT's range of ns.
    from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext

    texts = ["1683564901753196", "1683564901753196.5", "1683564901753196.123456", "0", "-7", "007", "12.3456",
             "1e3", "15e-1", "2.5E2", "+5", "9223372036854775", "-9223372036854775", "0x10", "0b101", "1,000",
             "abc", "", "inf", "nan", "1.0005", "-1.0005",
             "9223372036854776", "1e28", "1e29", "1e30", "-1e31", "9.9e31", "1e32"]  # fmt: skip

    def exact(text: str):
        try:
            value = Decimal(text.replace("_", ""))
        except InvalidOperation:
            return None
        if not value.is_finite():
            return None
        with localcontext(prec=80):
            ns = int((value * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))
        return ns if -(2**63) <= ns < 2**63 else None  # past BIGINT: NULL, never an error (1e29-1e32 raised one)

    con = duckdb.connect()
    (macro,) = [
        s.query for s in con.extract_statements(all_modules()["events.sql"].text) if "us_text_to_ns(t)" in s.query
    ]
    con.execute(macro)
    got = [con.execute("SELECT us_text_to_ns($t)", {"t": t}).fetchone()[0] for t in texts]
    assert got == [exact(t) for t in texts]


def test_a_copy_launched_where_two_top_level_ops_meet_makes_both_to_device(tmp_path):
    # Top-level ops on the host thread: A [100, 110] µs, B [110, 120] (A's end is B's start), C [130, 140];
    # a host-to-device copy launched at 110.0 lies in both A and B (an op's range holds its last instant),
    # one launched at 135 lies in C only at depth 1 (inside aten::to's child): to_device ranges A, B and C;
    # D [150, 160] holds a device-to-host copy only: not to_device.
    from libreyolo_profile.store.decode.parse import parse_trace
    from libreyolo_profile.store.ingest.timeline import ingest
    from tests.synthetic_traces import annotation, memcpy, op, runtime, write_trace

    events = [
        annotation("ProfilerStep#1", 90, 80),
        op("aten::to", 100, 10),
        op("aten::copy_", 110, 10),
        op("aten::to", 130, 10),
        op("aten::_to_copy", 132, 6),
        op("aten::item", 150, 10),
        runtime("cudaMemcpyAsync", 110, 0.5, correlation=1),
        runtime("cudaMemcpyAsync", 135, 1, correlation=2),
        runtime("cudaMemcpyAsync", 152, 1, correlation=3),
        memcpy("Memcpy HtoD (Pageable -> Device)", 111, 2, correlation=1),
        memcpy("Memcpy HtoD (Pageable -> Device)", 136, 2, correlation=2),
        memcpy("Memcpy DtoH (Device -> Pageable)", 153, 2, correlation=3),
    ]
    con = ingest(parse_trace(write_trace(tmp_path / "t.json", events)), None)
    rows = con.execute("SELECT start_ns, end_ns FROM phase_ranges WHERE phase = 'to_device' ORDER BY ALL").fetchall()
    origin = 90_000  # ns from the trace's first event
    assert rows == [(100_000 - origin, 110_000 - origin), (110_000 - origin, 120_000 - origin),
                    (130_000 - origin, 140_000 - origin)]  # fmt: skip
