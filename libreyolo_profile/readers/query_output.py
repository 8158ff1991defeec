"""How `libreyolo profile query` prints a result: rows are fetched from DuckDB's cursor in batches, so
--json and --csv stream every row without holding the result in memory, and the terminal table shows
at most --max-rows rows and says how many more there were. Every writer stops between two batches
when the stream's `stopped()` says the query's deadline passed (readers/query.py runs it in its worker
thread), and marks the stream started before its first byte, so the deadline's message knows whether
stdout holds part of a result whichever error stopped the worker (a DuckDB interrupt inside a fetch too).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import json
import sys
import uuid

from libreyolo_profile.errors import UnanalysableError
from libreyolo_profile.output.textsafe import finite_or_none, safe_line

BATCH_ROWS = 2048  # rows fetched per step: small enough that a stop is seen at once
DEFAULT_MAX_ROWS = 1000  # the terminal table's cap (0: every row)


class StreamStopped(UnanalysableError):
    """The deadline passed while the rows were fetched or written (exit 1). `output_started`: stdout holds
    part of the result already, so cli.py adds no JSON error document after half a JSON array."""

    def __init__(self, message: str, output_started: bool):
        super().__init__(message)
        self.output_started = output_started


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


def plain(value):
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
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def cell(value) -> str:
    """A value as the table and --csv show it (NULL in the table; --csv writes an empty field)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, (list, tuple)):
        return ", ".join(cell(v) for v in value)
    return str(plain(value))


class Stream:
    """What a writer shares with the thread that waits on it: `stopped()` (the deadline passed) and
    `started` (stdout holds part of the result: no JSON error document may follow it)."""

    def __init__(self, stopped):
        self.stopped, self.started = stopped, False


def _batches(cursor, stream: Stream):
    """The cursor's rows in batches until it is done; StreamStopped once the stream is stopped."""
    while True:
        if stream.stopped():
            raise StreamStopped("query stopped by its --timeout", stream.started)
        rows = cursor.fetchmany(BATCH_ROWS)
        if not rows:
            return
        yield rows


def write_json(cursor, columns: list[str], stream: Stream) -> int:
    """One JSON array of row objects on stdout, written batch by batch; returns the rows written."""
    out, count = sys.stdout, 0
    stream.started = True
    out.write("[")
    for rows in _batches(cursor, stream):
        for row in rows:
            record = finite_or_none(dict(zip(columns, plain(list(row)), strict=False)))
            text = json.dumps(record, default=str, allow_nan=False)
            out.write(("\n" if count == 0 else ",\n") + text)
            count += 1
    out.write("\n]\n" if count else "]\n")
    return count


def write_csv(cursor, columns: list[str], stream: Stream) -> int:
    """A header line and one CSV line per row (RFC 4180 quoting; NULL is an empty field; control
    characters shown as \\xNN, as in the table); returns the rows written."""
    import csv

    writer, count = csv.writer(sys.stdout, lineterminator="\n"), 0
    stream.started = True
    writer.writerow([safe_line(name) for name in columns])
    for rows in _batches(cursor, stream):
        writer.writerows([["" if v is None else safe_line(_csv_value(v)) for v in row] for row in rows])
        count += len(rows)
    return count


def _csv_value(value) -> str:
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(plain(value), default=str)
    return cell(value) if isinstance(value, (bool, _dt.datetime)) else str(plain(value))


def write_table(cursor, columns: list[str], stream: Stream, max_rows: int) -> int:
    """The first `max_rows` rows (0: all) as a table; the rows past them are counted, not kept, and a
    line on stderr says how many were cut. Returns the rows the result had."""
    shown: list[tuple] = []
    total = 0
    for rows in _batches(cursor, stream):  # nothing is printed before the last batch
        room = max_rows - len(shown) if max_rows else len(rows)
        shown += rows[: max(room, 0)]
        total += len(rows)
    stream.started = True
    show_rows(columns, shown)
    if total > len(shown):
        from libreyolo_profile.output.terminal import stderr_note

        stderr_note(
            f"showing {len(shown):,} of {total:,} rows ({total - len(shown):,} cut by --max-rows "
            f"{max_rows}): --json or --csv print every row, --max-rows 0 shows them all"
        )
    return total


def show_rows(columns: list[str], rows: list[tuple]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from libreyolo_profile.output.terminal import stdout_console

    console = stdout_console()
    texts = [[safe_line(cell(v)) for v in row] for row in rows]
    natural = sum(max([len(safe_line(n))] + [len(r[i]) for r in texts]) for i, n in enumerate(columns))
    if rows and natural + 3 * (len(columns) - 1) > console.width:
        # too wide for the terminal: one record per row, never a cell folded letter by letter
        show_records(console, columns, texts)
        return
    t = Table(header_style="bold", show_edge=False, pad_edge=False)
    for i, name in enumerate(columns):
        numeric = any(isinstance(r[i], (int, float, decimal.Decimal)) and not isinstance(r[i], bool) for r in rows)
        t.add_column(escape(safe_line(name)), justify="right" if numeric else "left", overflow="fold")
    for row in rows:
        # values come from traces and from the user's SQL: `[/x]` must print, not parse as rich markup,
        # and an escape sequence must show as text, not act on the terminal
        t.add_row(*[escape(safe_line(cell(v))) for v in row])
    console.print(t)


def show_records(console, columns: list[str], texts: list[list[str]]) -> None:
    """Each row as `column  value` lines under a `── row N ──` rule (what `duckdb -line` does)."""
    from rich.table import Table
    from rich.text import Text

    for number, row in enumerate(texts, 1):
        console.print(f"── row {number} ──", highlight=False, markup=False)
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")  # a value wraps inside its own column (a path, at its end)
        for name, value in zip(columns, row, strict=True):
            grid.add_row(Text(safe_line(name)), Text(value))
        console.print(grid)
