"""What every reader shares: opening a profile's tables in DuckDB, running a SQL file with bound
parameters, and printing (rich tables on stdout, or exactly one JSON document with --json)."""

from __future__ import annotations

import sys
from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.sqlfiles import sql_text
from libreyolo_profile.store.loader import Loaded, load_document, sidecar_dir
from libreyolo_profile.store.schema import TABLES
from libreyolo_profile.textsafe import safe_line, strict_json

PHASES = {"train": ["dataload", "to_device", "forward", "backward", "optimizer"],
          "infer": ["preprocess", "forward", "postprocess"]}


def open_tables(path: Path):
    """(loaded profile, DuckDB connection holding its kernels/ops/phases/steps tables)."""
    import duckdb

    loaded = load_document(path)
    directory = sidecar_dir(loaded)
    con = duckdb.connect(":memory:")
    for table in TABLES:
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_parquet($file)",
                    {"file": str(directory / f"{table}.parquet")})
    return loaded, con


def run_sql(con, name: str, params: dict | None = None) -> tuple[list[str], list[tuple]]:
    cursor = con.execute(sql_text(name), params or {})
    return [d[0] for d in cursor.description], cursor.fetchall()


def records(columns: list[str], rows: list[tuple]) -> list[dict]:
    return [dict(zip(columns, row)) for row in rows]


def phases_present(con) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT DISTINCT phase FROM (SELECT phase FROM phases UNION ALL SELECT phase FROM kernels "
        "UNION ALL SELECT phase FROM ops) WHERE phase IS NOT NULL ORDER BY phase").fetchall()]


def check_phase(con, phase: str | None) -> None:
    if phase is None:
        return
    present = phases_present(con)
    if phase not in present:
        raise UsageError(f"unknown phase '{phase}'; phases in this profile: {', '.join(present) or 'none'}")


def emit_json(document) -> None:
    """The one JSON document of a --json command: strict JSON, NaN and Infinity as null."""
    sys.stdout.write(strict_json(document, indent=2) + "\n")


def profile_identity(loaded: Loaded) -> dict:
    doc = loaded.doc
    return {"path": str(loaded.path), "kind": doc.get("kind"), "device_type": doc.get("device_type"),
            "source": doc.get("source", {}).get("type"), "steps": doc.get("metrics", {}).get("steps")}


def stdout_console():
    from rich.console import Console

    return Console(soft_wrap=False)


def stderr_note(text: str) -> None:
    """One diagnostic line on stderr; a name or path in it cannot act on the terminal or add lines."""
    sys.stderr.write(safe_line(text.rstrip()) + "\n")


def fmt(value, digits: int = 2) -> str:
    """A value for a human: numbers rounded, None as a dash, strings from traces made terminal-safe."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}f}"
    return safe_line(value)


def table(title: str | None, columns: list[tuple[str, str]], rows: list[list]):
    """A rich table; columns are (header, justify)."""
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=escape(safe_line(title)) if title is not None else None, title_justify="left",
              header_style="bold", show_edge=False, pad_edge=False)
    for header, justify in columns:
        t.add_column(escape(safe_line(header)), justify=justify, overflow="fold")
    for row in rows:
        # names come from traces: `[/x]` in a kernel name must print, not parse as rich markup, and an
        # escape sequence in it must show as text, not act on the terminal
        t.add_row(*[escape(safe_line(v)) if isinstance(v, str)
                    else v if hasattr(v, "__rich__") or hasattr(v, "__rich_console__") else fmt(v)
                    for v in row])
    return t


def short_name(name: str, width: int = 90) -> str:
    """A name cut to `width` characters for a table, its control characters escaped first (so the
    cut counts what the terminal shows)."""
    name = safe_line(name)
    return name if len(name) <= width else name[: width - 1] + "…"
