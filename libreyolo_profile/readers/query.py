"""`libreyolo profile query` and `libreyolo profile db`: SQL over every profile under some roots
(the views come from store/catalog.py and sql/cross_run_views.sql).

`query` runs the user's one SELECT with DuckDB's file access switched off (only the sidecars stay
readable), so the SQL can read the profiles and nothing else, and can write nothing. `db`
materializes the same tables into a .duckdb file that works on its own.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import os
import shlex
import sys
import uuid
from pathlib import Path

from libreyolo_profile import __version__
from libreyolo_profile.errors import UsageError
from libreyolo_profile.store.catalog import DEFAULT_ROOT, collect, open_cross_run, register, require_profiles
from libreyolo_profile.store.schema import SCHEMA_VERSION, TABLES, TABLES_VERSION


def lock_down(con, readable: list[str]) -> None:
    """From here on the connection can read the sidecars and nothing else, write nowhere, change no setting."""
    con.execute("SET allowed_paths = $files", {"files": readable})
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


# ---------------------------------------------------------------------------------------------
# query


_ALLOWED_STATEMENTS = ("SELECT", "EXPLAIN")


def _one_line(exc: Exception) -> str:
    lines = []
    for line in str(exc).splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines) or type(exc).__name__


def check_read_only(con, sql: str) -> None:
    """One SELECT (or EXPLAIN): anything that could write or change settings is refused before it runs."""
    import duckdb

    if not sql.strip():
        raise UsageError("empty SQL: give one SELECT over profiles, kernels, ops, phases or steps")
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise UsageError(f"bad SQL: {_one_line(exc)}") from None
    if len(statements) != 1:
        raise UsageError(f"give exactly one SQL statement, not {len(statements)}")
    kind = statements[0].type.name
    if kind not in _ALLOWED_STATEMENTS:
        raise UsageError(f"read-only: only SELECT queries run here, not {kind} "
                         f"(to keep the tables, use `libreyolo profile db out.duckdb`)")


def run_query(con, sql: str) -> tuple[list[str], list[tuple]]:
    import duckdb

    check_read_only(con, sql)
    try:
        cursor = con.execute(sql)
        columns = [d[0] for d in cursor.description] if cursor.description else []
        return unique_names(columns), cursor.fetchall()
    except duckdb.Error as exc:
        raise UsageError(f"query failed: {_one_line(exc)}") from None


def unique_names(columns: list[str]) -> list[str]:
    """Result column names made unique the way DuckDB names a table's columns (x, x_1, …), so a
    `SELECT *` over a join keeps every column in a JSON row object."""
    seen: set[str] = set()
    out = []
    for name in columns:
        candidate, n = name, 0
        while candidate in seen:
            n += 1
            candidate = f"{name}_{n}"
        seen.add(candidate)
        out.append(candidate)
    return out


def _plain(value):
    """A JSON-ready value: DuckDB's Python types become numbers, strings, lists and objects."""
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _cell(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, (list, tuple)):
        return ", ".join(_cell(v) for v in value)
    return str(_plain(value))


def render(columns: list[str], rows: list[tuple]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from libreyolo_profile.readers.common import stdout_console

    t = Table(header_style="bold", show_edge=False, pad_edge=False)
    for i, name in enumerate(columns):
        numeric = any(isinstance(r[i], (int, float, decimal.Decimal)) and not isinstance(r[i], bool) for r in rows)
        t.add_column(escape(name), justify="right" if numeric else "left", overflow="fold")
    for row in rows:
        # values come from traces and from the user's SQL: `[/x]` must print, not parse as rich markup
        t.add_row(*[escape(_cell(v)) for v in row])
    stdout_console().print(t)


def main(sql: str, roots: list[Path], as_json: bool) -> None:
    from libreyolo_profile.readers.common import emit_json

    roots = list(roots) or [DEFAULT_ROOT]
    con, _, files = open_cross_run(roots)
    try:
        check_read_only(con, sql)  # before locking: a refused statement gets its own message
        lock_down(con, files)
        columns, rows = run_query(con, sql)
    finally:
        con.close()
    if as_json:
        emit_json([dict(zip(columns, _plain(list(row)))) for row in rows])
    else:
        render(columns, rows)


# ---------------------------------------------------------------------------------------------
# db


def db_main(out: Path, roots: list[Path], as_json: bool) -> None:
    """Materialize profiles, kernels, ops, phases and steps into `out`, replacing it in one rename."""
    import duckdb

    from libreyolo_profile.readers.common import emit_json
    from libreyolo_profile.sqlfiles import sql_text

    roots = list(roots) or [DEFAULT_ROOT]
    out = Path(out)
    if out.is_dir():
        raise UsageError(f"{out} is a directory; name the .duckdb file to write")
    found = collect(roots)
    require_profiles(found, roots)
    out.parent.mkdir(parents=True, exist_ok=True)
    staged = out.parent / f".{out.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    con = duckdb.connect(":memory:")
    try:
        register(con, found)
        con.execute("ATTACH $path AS out", {"path": str(staged)})
        con.execute(sql_text("query_db.sql"), {
            "roots": [str(r) for r in roots], "producer": f"libreyolo-profile {__version__}",
            "tables_version": TABLES_VERSION, "schema_version": SCHEMA_VERSION})
        counts = {name: con.execute(f"SELECT count(*) FROM out.{name}").fetchone()[0]  # fixed names
                  for name in ("profiles", *TABLES)}
        con.execute("DETACH out")
        con.close()
        os.replace(staged, out)
    finally:
        con.close()
        for leftover in (staged, Path(f"{staged}.wal")):
            if leftover.exists():
                leftover.unlink()
    result = {"database": str(out), "profiles": len(found), "rows": counts}
    if as_json:
        emit_json(result)
    else:
        sys.stdout.write(f"wrote {out}: {len(found)} profiles; "
                         + ", ".join(f"{name} {n:,} rows" for name, n in counts.items() if name != "profiles")
                         + f"\nopen it with: duckdb {shlex.quote(str(out))}\n")
