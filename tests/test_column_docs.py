"""Column docs from one source: every sidecar table's columns are declared once, as rows of
sql/sidecar_columns.sql (store/schema.py builds the parquet schemas and docs/SCHEMA.md's tables block from
them). The SQL that computes a table (sql/table_<name>.sql) selects exactly those columns in that order, and
the comment above each select item, which says what the code beside it computes, names the unit the
vocabulary declares. A column added, renamed, reordered or given another unit on one side only fails here.

The rule read from a comment: the comment lines right above a select item document it and every item
after it up to the next comment (`-- mean, shortest and longest execution, µs` above three columns);
its unit is the unit word it names (`, ms`, `in ms`, `integer ns`, `%`, `count` …); a column whose
docs have no unit (—) names none.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from libreyolo_profile.store.schema import TABLES

REPO = Path(__file__).resolve().parents[1]
UNITS = ("ms", "µs", "ns", "%", "count", "MiB", "MB", "img/s", "s", "GFLOP", "FLOP/byte", "TFLOP/s", "TB/s")
_UNIT = re.compile(r"(?:^|(?<=[\s,(;:]))(" + "|".join(re.escape(u) for u in UNITS) + r")(?=$|[\s,;.)])")


def documented_tables() -> dict[str, list[tuple[str, str]]]:
    """sql/sidecar_columns.sql: table → [(column, unit)], unit '' where it has none."""
    return {table: [(name, unit) for name, _, unit, _ in columns] for table, columns in TABLES.items()}


def _split_items(code: str) -> list[tuple[int, str]]:
    """The select list split at its top-level commas: [(offset of the item's first character, item)]."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(code + ","):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            item = code[start:i]
            if item.strip():
                items.append((start + len(item) - len(item.lstrip()), item))
            start = i + 1
    return items


def _item_name(item: str) -> str:
    alias = re.search(r"\bAS\s+(\w+)\s*$", item, re.I)
    return alias.group(1) if alias else re.search(r"(\w+)\s*$", item).group(1)


def sql_columns(path: Path) -> list[tuple[str, str]]:
    """A table SQL's output columns with the unit its comments give: [(column, unit)]."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("SELECT"))
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith("FROM"))
    code, comment_at, comment, after_code = "", [], "", True
    for line in lines[start + 1 : end]:
        stripped = line.strip()
        if stripped.startswith("--"):
            comment = stripped[2:] if after_code else comment + " " + stripped[2:]
            after_code = False
            continue
        after_code = True
        comment_at.append((len(code), comment))  # the comment in force from this offset on
        code += re.sub(r"'(?:[^']|'')*'", "''", line) + "\n"
    columns = []
    for offset, item in _split_items(code):
        in_force = [c for at, c in comment_at if at <= offset][-1]
        columns.append((_item_name(item), _units(in_force)))
    return columns


def _units(comment: str) -> str:
    found = set(_UNIT.findall(re.sub(r"\([^)]*\)", "", comment)))
    assert len(found) <= 1, f"one comment names several units {sorted(found)}: {comment!r}"
    return found.pop() if found else ""


def test_every_sidecar_table_is_declared_and_has_its_sql():
    on_disk = sorted(p.stem.removeprefix("table_") for p in (REPO / "sql").glob("table_*.sql"))
    assert sorted(TABLES) == on_disk


@pytest.mark.parametrize("table", sorted(TABLES))
def test_sql_column_comments_say_what_the_docs_say(table):
    documented = documented_tables()[table]
    in_sql = sql_columns(REPO / "sql" / f"table_{table}.sql")
    assert [c for c, _ in in_sql] == [c for c, _ in documented], (
        f"columns differ between sql/table_{table}.sql and sql/sidecar_columns.sql"
    )
    differ = [
        (column, sql_unit or "—", doc_unit or "—")
        for (column, sql_unit), (_, doc_unit) in zip(in_sql, documented, strict=True)
        if sql_unit != doc_unit
    ]
    assert differ == [], f"(column, unit in sql/table_{table}.sql, unit in sql/sidecar_columns.sql): {differ}"


def test_the_checker_catches_a_planted_difference(tmp_path):
    planted = tmp_path / "table_x.sql"
    planted.write_text(
        "-- x\nSELECT\n    -- wall time, ms\n    a / 1e6 AS wall_ms,\n    -- mean, min and max, µs\n"
        "    avg(d) AS mean_us, min(d) AS min_us,\n    max(d) AS max_us,\n    -- the step, 1-based\n"
        "    step\nFROM t;\n",
        encoding="utf-8",
    )
    assert sql_columns(planted) == [
        ("wall_ms", "ms"),
        ("mean_us", "µs"),
        ("min_us", "µs"),
        ("max_us", "µs"),
        ("step", ""),
    ]
