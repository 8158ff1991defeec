"""`libreyolo profile query` and `libreyolo profile db`: SQL over every profile under some roots
(the views come from store/crossrun/views.py and sql/cross_run_views.sql).

`query` loads the tables the user's one SELECT names into memory, then switches DuckDB's file access
off entirely (no path stays readable or writable) and runs the SELECT in a worker thread under a time
limit, so the SQL can read the profiles and nothing else, can write nothing (not even through EXPLAIN
ANALYZE, which runs what it wraps), and stops on Ctrl-C. `db` materializes the same tables into a
.duckdb file that works on its own.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import os
import re
import shlex
import stat
import sys
import threading
import time
import uuid
from pathlib import Path

from libreyolo_profile import __version__
from libreyolo_profile.errors import UnanalysableError, UsageError
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.store.crossrun.index import collect, require_profiles
from libreyolo_profile.store.crossrun.views import DEFAULT_ROOT, open_cross_run, register
from libreyolo_profile.store.schema import SCHEMA_VERSION, TABLES, TABLES_VERSION


def lock_down(con, files: list[str], tables=TABLES) -> None:
    """From here on the connection opens no file at all (to read, to write, or to spill to), and changes
    no setting.

    DuckDB's allowed paths are writable as well as readable, and ATTACH of a new database file passes
    enable_external_access = false, so no path is allowed and the local file system is switched off: the
    sidecar `tables` the query needs are first loaded into memory from `files` (the parquet files
    `register` returned); a table not loaded stays a view over files that can no longer be opened."""
    for table in tables:
        _load_into_memory(con, table, [f for f in files if f.rsplit("/", 1)[-1] == f"{table}.parquet"])
    for name in con.list_filesystems():  # an object store's (s3fs) could write: nothing stays reachable
        con.unregister_filesystem(name)
    con.execute("SET temp_directory = ''")  # no spilling (its default is `.tmp` in the working directory)
    con.execute("SET enable_progress_bar = false")  # DuckDB's bar would land in stdout, which --json owns
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


QUERY_THREAD = "libreyolo-query"  # the worker thread that runs the user's SQL
DEFAULT_TIMEOUT_S = 60.0
_STOP_GRACE_S = 5.0  # how long an interrupted query may take to stop before the command exits anyway
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
    tokens = [(sql[start:end].strip(), start) for (start, kind), end in zip(marks, ends)
              if kind != duckdb.token_type.comment]
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
    return [sql[tokens[i][1]:] for i in starts if i < len(tokens)]


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


def _locked_query(con, sql: str, files: list[str]) -> tuple[list[str], list[tuple]]:
    import duckdb

    try:
        lock_down(con, files, tables_named(sql))
    except duckdb.Error as exc:  # a sidecar that cannot be read
        raise UsageError(f"query failed: {_one_line(exc)}") from None
    return run_query(con, sql)


def run_query(con, sql: str) -> tuple[list[str], list[tuple]]:
    import duckdb

    check_read_only(con, sql)
    try:
        cursor = con.execute(sql)
        columns = [d[0] for d in cursor.description] if cursor.description else []
        return unique_names(columns), cursor.fetchall()
    except duckdb.OutOfMemoryException as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(f"query failed: {first} (`query` writes nothing to disk, so it cannot spill: narrow "
                         f"the query, or run it in a DuckDB shell on `libreyolo profile db out.duckdb`)") from None
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


def show_rows(columns: list[str], rows: list[tuple]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from libreyolo_profile.output.terminal import stdout_console
    from libreyolo_profile.output.textsafe import safe_line

    t = Table(header_style="bold", show_edge=False, pad_edge=False)
    for i, name in enumerate(columns):
        numeric = any(isinstance(r[i], (int, float, decimal.Decimal)) and not isinstance(r[i], bool) for r in rows)
        t.add_column(escape(safe_line(name)), justify="right" if numeric else "left", overflow="fold")
    for row in rows:
        # values come from traces and from the user's SQL: `[/x]` must print, not parse as rich markup,
        # and an escape sequence must show as text, not act on the terminal
        t.add_row(*[escape(safe_line(_cell(v))) for v in row])
    stdout_console().print(t)


class _Worker:
    """Runs DuckDB work on `con` in a thread of its own while the main thread waits in short steps, so Ctrl-C
    reaches Python whatever DuckDB is doing (a statement run in the main thread sees it only where DuckDB
    checks for signals) and a deadline can be kept; either stops DuckDB with con.interrupt()."""

    def __init__(self, con, work):
        self.con, self.work, self.outcome = con, work, {}
        # The end is told by an Event, not Thread.join/is_alive: on Python 3.11 a join interrupted by Ctrl-C
        # can leave is_alive() False while the thread still runs (seen here: the process then aborted at exit).
        self.done = threading.Event()
        # Ctrl-C can land inside thread.start(), before the thread runs: a thread that begins after stop()
        # does no work, so a connection no thread has begun on is safe to close.
        self.lock, self.began, self.stopping = threading.Lock(), False, False
        self.thread = threading.Thread(target=self._target, name=QUERY_THREAD, daemon=True)

    def _target(self) -> None:
        with self.lock:
            self.began = not self.stopping
        if not self.began:
            return
        try:
            self.outcome["value"] = self.work()
        except BaseException as exc:  # handed to the main thread, which raises it
            self.outcome["error"] = exc
        finally:
            self.done.set()

    def run(self, timeout: float):
        deadline = time.monotonic() + timeout if timeout > 0 else math.inf
        try:
            self.thread.start()
            while not self.done.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    self.stop()
                    raise UnanalysableError(f"query exceeded --timeout {timeout:g} s "
                                            f"(give it more, or --timeout 0 for no limit)")
                self.done.wait(min(left, 0.1))  # short waits: Ctrl-C is handled between them
        except KeyboardInterrupt:
            self.stop()
            raise  # cli.run_cli prints "interrupted" and exits 130
        if "error" in self.outcome:
            raise self.outcome["error"]
        return self.outcome["value"]

    def stop(self) -> None:
        """Interrupt until the work ends (an interrupt that lands between two statements is lost, so it is
        repeated), for a few seconds at most: a thread blocked outside DuckDB is left to the process exit."""
        with self.lock:
            self.stopping = True
        give_up = time.monotonic() + _STOP_GRACE_S
        while self.busy and time.monotonic() < give_up:
            self.con.interrupt()
            self.done.wait(0.05)

    @property
    def busy(self) -> bool:
        """Whether the thread is (or may still be) working on the connection."""
        with self.lock:
            return self.began and not self.done.is_set()


def check_timeout(timeout: float) -> None:
    if not (math.isfinite(timeout) and timeout >= 0):
        raise UsageError(f"--timeout takes seconds, 0 or more (0: no limit), not {timeout}")


def print_query(sql: str, roots: list[Path], as_json: bool, timeout: float = DEFAULT_TIMEOUT_S) -> None:
    import duckdb

    from libreyolo_profile.output.json_out import emit_json

    check_timeout(timeout)
    roots = list(roots) or [DEFAULT_ROOT]
    try:
        # only the tables the SQL names get views: no other can be read once the connection is locked
        con, found, files = open_cross_run(roots, tables=tables_named(sql))
    except duckdb.InterruptException:  # DuckDB turns Ctrl-C during its own work into this error
        raise KeyboardInterrupt from None
    worker = _Worker(con, lambda: _locked_query(con, sql, files))
    try:
        check_read_only(con, sql)  # before locking: a refused statement gets its own message
        columns, rows = worker.run(timeout)
    finally:
        if not worker.busy:  # closing a connection another thread still uses is not safe
            con.close()
    if not rows and kernels_of_cpu_profiles_only(sql, found):
        from libreyolo_profile.output.terminal import stderr_note

        stderr_note("no rows: no GPU profiles under the roots (every one is a CPU profile, which records no kernels)")
    if as_json:
        emit_json([dict(zip(columns, _plain(list(row)))) for row in rows])
    else:
        show_rows(columns, rows)


def kernels_of_cpu_profiles_only(sql: str, found: list) -> bool:
    """The SQL reads the kernels and every profile found is a CPU one: why it returned nothing."""
    devices = [(item.row or item.doc or {}).get("device_type") for item in found]
    return "kernels" in tables_named(sql) and bool(devices) and all(device == "cpu" for device in devices)


# ---------------------------------------------------------------------------------------------
# db


def write_database(out: Path, roots: list[Path], as_json: bool, force: bool = False) -> None:
    """Materialize profiles, kernels, ops, phases, steps and blame into `out`, replacing it in one rename.
    `out` may replace an earlier database of ours; any other file only with --force, and never a
    symlink, a non-regular file or one of the files read (store/disk/atomic.py write_output)."""
    import duckdb

    from libreyolo_profile.output.json_out import emit_json
    from libreyolo_profile.sqlfiles import sql_text
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
    read = [*roots, *(item.json_path for item in found),
            *(item.sidecars / f"{t}.parquet" for item in found if item.sidecars is not None for t in TABLES)]
    out.parent.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}

    def materialize(staged: Path) -> None:
        con = duckdb.connect(":memory:")
        try:
            register(con, found)
            con.execute("ATTACH $path AS out", {"path": str(staged)})
            con.execute(sql_text("query_db.sql"), {
                "roots": [str(r) for r in roots], "producer": f"libreyolo-profile {__version__}",
                "tables_version": TABLES_VERSION, "schema_version": SCHEMA_VERSION})
            counts.update({name: con.execute(f"SELECT count(*) FROM out.{name}").fetchone()[0]  # fixed names
                           for name in ("profiles", *TABLES)})
            con.execute("DETACH out")
        finally:
            con.close()

    write_output(out, materialize, inputs=read, **guard)
    result = {"database": str(out), "profiles": len(found), "rows": counts}
    if as_json:
        emit_json(result)
    else:
        sys.stdout.write(safe_line(f"wrote {out}: {len(found)} profiles; "
                                   + ", ".join(f"{name} {n:,} rows" for name, n in counts.items() if name != "profiles"))
                         + "\n" + safe_line(f"open it with: duckdb {shlex.quote(str(out))}") + "\n")
