"""Human-readable output: rich tables on stdout, one-line notes on stderr, numbers for people.
Every string from a trace passes through textsafe first, so it can neither act on the terminal nor
parse as rich markup."""

from __future__ import annotations

import sys

from libreyolo_profile.output.textsafe import safe_line


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
