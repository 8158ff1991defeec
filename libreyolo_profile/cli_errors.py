"""How cli.py tells an interrupt from a failure and words an unexpected exception in one line."""

from __future__ import annotations

import sys


def interrupted(exc: BaseException) -> bool:
    """Ctrl-C, however it arrived: KeyboardInterrupt, or DuckDB's InterruptException (DuckDB turns
    SIGINT into its own exception), also when a reader wrapped it in a ProfileError."""
    duckdb = sys.modules.get("duckdb")  # not imported: no DuckDB work can have been interrupted
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, KeyboardInterrupt):
            return True
        if duckdb is not None and isinstance(exc, getattr(duckdb, "InterruptException", ())):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def first_paragraph(exc: BaseException) -> str:
    """An unexpected exception's message as one line: DuckDB's errors add a SQL excerpt and a caret
    line after a blank line, which is for a debugger, not for the error line."""
    lines = []
    for line in str(exc).splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)
