"""The analysis's kernel_category and is_tensorcore, with each rule's pattern written in as a constant
(store/ingest/timeline.py), give what the rule tables' own lookups give (sql/kernel_categories.sql,
sql/tensorcore_rules.sql): for every kernel name the rule tests know, and for the other activities."""

from __future__ import annotations

import duckdb
import pytest
from test_kernel_categories import NAMES
from test_tensorcore_rules import NOT_TENSOR_CORE, TENSOR_CORE

from libreyolo_profile.sqlfiles import sql_text
from libreyolo_profile.store.ingest.timeline import open_connection

CASES = [
    (activity, name)
    for name in sorted({n[0] for n in NAMES} | set(TENSOR_CORE) | set(NOT_TENSOR_CORE) | {"", "_Z3fooPf"})
    for activity in ("kernel", "memcpy", None)
] + [("kernel", None), (None, None), ("memset", "Memset (Device)")]


def _lookups(con) -> list[tuple]:
    con.execute("CREATE OR REPLACE TEMP TABLE cases (activity VARCHAR, name VARCHAR)")
    con.executemany("INSERT INTO cases VALUES (?, ?)", CASES)
    return con.execute(
        "SELECT activity, name, kernel_category(activity, name), is_tensorcore(activity, name) FROM cases"
    ).fetchall()


@pytest.fixture(scope="module")
def from_tables():
    con = duckdb.connect()
    for module in ("kernel_categories.sql", "tensorcore_rules.sql"):
        con.execute(sql_text(module))
    yield _lookups(con)
    con.close()


def test_inlined_patterns_give_the_rule_tables_answers(from_tables):
    con = open_connection()
    try:
        inlined = _lookups(con)
    finally:
        con.close()
    assert inlined == from_tables
    assert {row[2] for row in inlined} > {"other", "gemm", "memcpy"}  # the cases reach the rules
