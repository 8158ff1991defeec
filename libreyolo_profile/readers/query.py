"""`libreyolo profile query` and `libreyolo profile db`: SQL over every profile under some roots
(the views come from store/crossrun/views.py and sql/cross_run_views.sql).

`query` loads the tables the user's one SELECT names into memory, then switches DuckDB's file access
off entirely (no path stays readable or writable) and runs the SELECT in a worker thread under a time
limit, so the SQL can read the profiles and nothing else, can write nothing (not even through EXPLAIN
ANALYZE, which runs what it wraps), and stops on Ctrl-C. The deadline covers printing too: the worker
hands DuckDB's cursor to readers/query_output.py, which streams the rows (--json, --csv) or shows at most
--max-rows of them; the connection may use at most --memory-limit (readers/query_limits.py). `db`
materializes the same tables into a .duckdb file that works on its own.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shlex
import stat
import sys
from pathlib import Path

from libreyolo_profile import __version__
from libreyolo_profile.connections import without_progress_bar
from libreyolo_profile.errors import UnanalysableError, UsageError
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.readers.query_limits import memory_limit_setting
from libreyolo_profile.readers.query_output import DEFAULT_MAX_ROWS, unique_names
from libreyolo_profile.readers.query_worker import QueryWorker
from libreyolo_profile.store.crossrun.index import collect, require_profiles
from libreyolo_profile.store.crossrun.views import DEFAULT_ROOT, open_cross_run, register
from libreyolo_profile.store.schema import SCHEMA_VERSION, TABLES, TABLES_VERSION


def lock_down(con, files: list[str], tables=TABLES, memory_limit: str | None = None) -> None:
    """From here on the connection opens no file at all (to read, to write, or to spill to), uses at most
    `memory_limit` (memory_limit_setting; the tables loaded here count against it), and changes no setting.

    DuckDB's allowed paths are writable as well as readable, and ATTACH of a new database file passes
    enable_external_access = false, so no path is allowed and the local file system is switched off: the
    sidecar `tables` the query needs are first loaded into memory from `files` (the parquet files
    `register` returned); a table not loaded stays a view over files that can no longer be opened."""

    # a fixed format (memory_limit_setting), never the user's text as given
    con.execute(f"SET memory_limit = '{memory_limit_setting(memory_limit)}'")
    for table in tables:
        _load_into_memory(con, table, [f for f in files if f.rsplit("/", 1)[-1] == f"{table}.parquet"])
    for name in con.list_filesystems():  # an object store's (s3fs) could write: nothing stays reachable
        con.unregister_filesystem(name)
    con.execute("SET temp_directory = ''")  # no spilling (its default is `.tmp` in the working directory)
    without_progress_bar(con)
    con.execute("SET enable_external_access = false")
    con.execute("SET disabled_filesystems = 'LocalFileSystem'")  # after the line above, which needs it
    con.execute("SET lock_configuration = true")


def _load_into_memory(con, table: str, files: list[str]) -> None:
    """Replace the view `table` (over parquet files) by a temporary table of the same name and rows."""
    for file in files:  # a FIFO put in a sidecar's place would block the load forever: refuse it unopened
        if "://" in file:
            continue  # an object (s3://): no FIFO there
        try:
            mode = os.stat(file).st_mode
        except OSError:
            continue  # DuckDB reports the missing file in the user's terms
        if not stat.S_ISREG(mode):
            raise UsageError(f"{file} is not a regular file: not read (reading it could block forever)")
    # `table` is one of TABLES, never user input
    con.execute(f"CREATE TEMP TABLE {table}__loaded AS SELECT * FROM {table}")
    con.execute(f"DROP VIEW {table}")
    con.execute(f"ALTER TABLE {table}__loaded RENAME TO {table}")


def tables_named(sql: str) -> list[str]:
    """The sidecar tables the SQL may read: each whose name appears in it as a word (quoted, in a string, in
    a comment: loading one too many only costs time; one named only by an expression such as
    query_table('ker' || 'nels') is not loaded and cannot be read once the connection is locked)."""
    words = {word.lower() for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql)}
    return [table for table in TABLES if table in words]


# ---------------------------------------------------------------------------------------------
# query


DEFAULT_TIMEOUT_S = 60.0
_READ_ONLY_HINT = "to keep the tables, use `libreyolo profile db out.duckdb`"


def _one_line(exc: Exception) -> str:
    lines = []
    for line in str(exc).splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines) or type(exc).__name__


def _statement_kind(con, sql: str) -> str:
    """The type of the one statement in `sql`, as DuckDB's parser names it (SELECT, COPY, EXPLAIN …)."""
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise UsageError(f"bad SQL: {_one_line(exc)}") from None
    if len(statements) != 1:
        raise UsageError(f"give exactly one SQL statement, not {len(statements)}")
    return statements[0].type.name


def _explained(sql: str) -> list[str]:
    """Where the statement an EXPLAIN wraps may start: after EXPLAIN and an optional ANALYZE, and past a
    parenthesized group when there is one (an option list, or the statement itself: `EXPLAIN (SELECT 1)`).
    Found with DuckDB's tokenizer, so strings and comments are whole tokens."""
    import duckdb

    marks = duckdb.tokenize(sql)
    ends = [start for start, _ in marks[1:]] + [len(sql)]
    tokens = [
        (sql[start:end].strip(), start)
        for (start, kind), end in zip(marks, ends, strict=False)
        if kind != duckdb.token_type.comment
    ]
    words = [text.upper() for text, _ in tokens]
    at = 1  # tokens[0] is EXPLAIN: the parser said so
    if at < len(words) and words[at] in ("ANALYZE", "ANALYSE"):
        at += 1
    starts = [at]
    if at < len(words) and words[at] == "(":
        depth = 0
        for end in range(at, len(words)):
            depth += {"(": 1, ")": -1}.get(words[end], 0)
            if depth == 0:
                starts.append(end + 1)
                break
    return [sql[tokens[i][1] :] for i in starts if i < len(tokens)]


def _is_one_select(con, sql: str) -> bool:
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error:
        return False
    return len(statements) == 1 and statements[0].type.name == "SELECT"


def check_read_only(con, sql: str) -> None:
    """One SELECT, or an EXPLAIN of one SELECT: anything else is refused before it runs. (EXPLAIN ANALYZE
    runs the statement it wraps, so EXPLAIN ANALYZE COPY … would write.)"""
    if not sql.strip():
        raise UsageError("empty SQL: give one SELECT over profiles, kernels, ops, phases, steps or blame")
    kind = _statement_kind(con, sql)
    if kind == "EXPLAIN":
        if not any(_is_one_select(con, inner) for inner in _explained(sql)):
            raise UsageError(f"read-only: EXPLAIN runs here only for a SELECT ({_READ_ONLY_HINT})")
    elif kind != "SELECT":
        raise UsageError(f"read-only: only SELECT queries run here, not {kind} ({_READ_ONLY_HINT})")


def _locked_print(con, sql: str, files: list[str], memory_limit: str | None, write, stream) -> int:
    """Lock the connection, run the one SELECT and hand its cursor to `write` (readers/query_output.py),
    which prints the rows batch by batch until done or the stream is stopped; returns the rows the result had."""
    with _duckdb_errors():
        lock_down(con, files, tables_named(sql), memory_limit)  # a sidecar that cannot be read fails here
        check_read_only(con, sql)
        cursor = con.execute(sql)
        columns = unique_names([d[0] for d in cursor.description] if cursor.description else [])
        return write(cursor, columns, stream)  # rows are computed while fetched: errors come from here too


def run_query(con, sql: str) -> tuple[list[str], list[tuple]]:
    """The columns and every row of one read-only statement (docs and tests; `query` streams instead)."""
    check_read_only(con, sql)
    with _duckdb_errors():
        cursor = con.execute(sql)
        columns = [d[0] for d in cursor.description] if cursor.description else []
        return unique_names(columns), cursor.fetchall()


@contextlib.contextmanager
def _duckdb_errors():
    """DuckDB's errors as one line: out of memory and failed reads are exit 1 (the limit or the storage, not
    the SQL, is at fault), any other error exit 2 (bad SQL, a type error); an interrupt (the deadline,
    Ctrl-C) passes through."""
    import duckdb

    try:
        yield
    except duckdb.OutOfMemoryException as exc:
        raise UnanalysableError(
            f"query failed: {_first_line(exc)} (the limit is --memory-limit; `query` cannot "
            f"spill to disk: narrow the query, raise --memory-limit, or run it in a DuckDB "
            f"shell on `libreyolo profile db out.duckdb`)"
        ) from None
    except duckdb.InterruptException:
        raise
    except duckdb.Error as exc:
        # a read that failed under it (an object store that stopped answering) is exit 1, as it is while listing
        failed_read = isinstance(exc, (duckdb.IOException, duckdb.HTTPException)) or "did not answer" in str(exc)
        raise (UnanalysableError if failed_read else UsageError)(f"query failed: {_one_line(exc)}") from None


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def check_timeout(timeout: float) -> None:
    if not (math.isfinite(timeout) and timeout >= 0):
        raise UsageError(f"--timeout takes seconds, 0 or more (0: no limit), not {timeout}")


def print_query(
    sql: str,
    roots: list[Path],
    as_json: bool,
    timeout: float = DEFAULT_TIMEOUT_S,
    *,
    as_csv: bool = False,
    max_rows: int = DEFAULT_MAX_ROWS,
    memory_limit: str | None = None,
) -> None:
    """Run one read-only SELECT over the profiles under `roots` and print its rows: a table of at most
    `max_rows` rows, or every row as JSON or CSV, streamed. `timeout` covers running and printing."""
    import duckdb

    from libreyolo_profile.readers import query_output

    check_timeout(timeout)
    if as_json and as_csv:
        raise UsageError("give --json or --csv, not both")
    if max_rows < 0:
        raise UsageError(f"--max-rows takes a number of rows, 0 or more (0: every row), not {max_rows}")
    memory_limit_setting(memory_limit)  # a bad size is refused before any profile is read
    write = (
        query_output.write_json
        if as_json
        else query_output.write_csv
        if as_csv
        else lambda cursor, columns, stream: query_output.write_table(cursor, columns, stream, max_rows)
    )
    roots = list(roots) or [DEFAULT_ROOT]
    try:
        # only the tables the SQL names get views: no other can be read once the connection is locked
        con, found, files = open_cross_run(roots, tables=tables_named(sql))
    except duckdb.InterruptException:  # DuckDB turns Ctrl-C during its own work into this error
        raise KeyboardInterrupt from None
    stream = query_output.Stream(lambda: worker.stopping)
    worker = QueryWorker(
        con, lambda: _locked_print(con, sql, files, memory_limit, write, stream), lambda: stream.started
    )
    try:
        check_read_only(con, sql)  # before locking: a refused statement gets its own message
        count = worker.run(timeout)
    finally:
        if not worker.busy:  # closing a connection another thread still uses is not safe
            con.close()
    if not count and kernels_of_cpu_profiles_only(sql, found):
        from libreyolo_profile.output.terminal import stderr_note

        stderr_note("no rows: no GPU profiles under the roots (every one is a CPU profile, which records no kernels)")


def kernels_of_cpu_profiles_only(sql: str, found: list) -> bool:
    """The SQL reads the kernels and every profile found is a CPU one: why it returned nothing."""
    devices = [(item.row or item.doc or {}).get("device_type") for item in found]
    return "kernels" in tables_named(sql) and bool(devices) and all(device == "cpu" for device in devices)


# ---------------------------------------------------------------------------------------------
# db


# the DuckDB storage format `db` writes: readable by DuckDB 1.0 and later (shells included)
DB_STORAGE_VERSION = "v1.0.0"


def write_database(out: Path, roots: list[Path], as_json: bool, force: bool = False) -> None:
    """Materialize profiles, kernels, ops, phases, steps and blame into `out`, replacing it in one rename.
    `out` may replace an earlier database of ours; any other file only with --force, and never a
    symlink, a non-regular file or one of the files read (store/disk/atomic.py write_output)."""
    from libreyolo_profile.store.disk.atomic import check_output, is_profile_database, write_output

    roots = list(roots) or [DEFAULT_ROOT]
    out = Path(out)
    if out.is_dir() and not out.is_symlink():
        raise UsageError(f"{out} is a directory; name the .duckdb file to write")
    guard = {"what": "database", "ours": is_profile_database, "force": force}
    # a link or a non-regular file is refused before reading every profile under the roots
    check_output(out, what="database", ours=is_profile_database, force=True)
    found = collect(roots)
    require_profiles(found, roots)
    read = _files_read(roots, found)
    out.parent.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    write_output(out, lambda staged: counts.update(_materialize(staged, found, roots)), inputs=read, **guard)
    _say_written(out, len(found), counts, as_json)


def _files_read(roots: list[Path], found: list) -> list[Path]:
    """Every file `db` reads (the roots, each profile.json and sidecar): the output may replace none of them."""
    return [
        *roots,
        *(item.json_path for item in found),
        *(item.sidecars / f"{t}.parquet" for item in found if item.sidecars is not None for t in TABLES),
    ]


def _materialize(staged: Path, found: list, roots: list[Path]) -> dict[str, int]:
    """Write the tables of every profile found into the database file `staged`; returns each table's rows."""
    import duckdb

    from libreyolo_profile.sqlmodules import run_module

    con = duckdb.connect(":memory:")
    try:
        register(con, found)
        # an older storage format than this duckdb writes by default, so the DuckDB shells people
        # install (duckdb-cli 1.x on PyPI) open the file too; tests/test_query.py opens it with one
        con.execute(f"ATTACH $path AS out (STORAGE_VERSION '{DB_STORAGE_VERSION}')", {"path": str(staged)})
        run_module(
            con,
            "query_db.sql",
            {
                "roots": [str(r) for r in roots],
                "producer": f"libreyolo-profile {__version__}",
                "tables_version": TABLES_VERSION,
                "schema_version": SCHEMA_VERSION,
            },
        )
        counts = {
            name: con.execute(f"SELECT count(*) FROM out.{name}").fetchone()[0]  # fixed names
            for name in ("profiles", *TABLES)
        }
        con.execute("DETACH out")
    finally:
        con.close()
    return counts


def _say_written(out: Path, profiles: int, counts: dict[str, int], as_json: bool) -> None:
    from libreyolo_profile.output.json_out import emit_json

    if as_json:
        emit_json({"database": str(out), "profiles": profiles, "rows": counts})
    else:
        sys.stdout.write(
            safe_line(
                f"wrote {out}: {profiles} profiles; "
                + ", ".join(f"{name} {n:,} rows" for name, n in counts.items() if name != "profiles")
            )
            + "\n"
            + safe_line(f"open it with: duckdb {shlex.quote(str(out))}")
            + "\n"
        )
