"""Strings from traces, file names and SQL results made safe to print on a terminal.

A kernel or op name is whatever the traced program called it, so it can hold escape sequences:
ESC starts CSI and OSC sequences (clear the screen, retitle the window, OSC 52 writes the
clipboard), U+009B is a one-byte CSI on terminals that honour C1, and BEL, BS and CR rewrite what
is already shown. Every human-readable output path sends such strings through here; each control
character becomes a visible escape (`\\x1b`), so the name stays recognisable and nothing acts on
the terminal. JSON output needs none of this: json.dumps with ensure_ascii escapes them itself.

This module imports nothing from the package, so store, readers and cli can all use it, and
nothing heavy, so `get` keeps its cold start.
"""

from __future__ import annotations

import json
import math
import re
import sys

# C0 controls, DEL, and C1 controls (U+0080–U+009F)
_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# the same minus newline and tab, which keep their meaning in free text
_CONTROL_BUT_LAYOUT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(match: re.Match) -> str:
    return f"\\x{ord(match.group()):02x}"


def safe_text(value) -> str:
    """Free text (a note, a verdict line): control characters escaped, newlines and tabs kept."""
    return _CONTROL_BUT_LAYOUT.sub(_visible, str(value))


def safe_line(value) -> str:
    """One line (a table cell, an error message): every control character escaped, \\n and \\t too,
    so a name cannot break a row or turn one error line into two."""
    return _ANY_CONTROL.sub(_visible, str(value))


def finite_or_none(value):
    """The document with every NaN and ±Infinity replaced by None (JSON null), recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def strict_json(document, indent: int | None = None) -> str:
    """Standard JSON text (RFC 8259): no NaN or Infinity tokens, control characters as \\u escapes."""
    return json.dumps(finite_or_none(document), indent=indent, default=str, allow_nan=False, ensure_ascii=True)


# the --json documents this process printed: a stop signal after a command printed its one document adds no
# second (an error object after it made stdout two documents where a pipe parses one)
documents_written = 0


def print_document(document, indent: int | None = 2) -> None:
    """A --json command's one document on stdout, counted."""
    global documents_written
    sys.stdout.write(strict_json(document, indent=indent) + "\n")
    documents_written += 1


def write_error(prog: str, message: str, exit_code: int, as_json: bool, prefix: str = "error: ") -> int:
    """A failure as the group reports it: one terminal-safe line on stderr (`prog: error: message`)
    and, under --json, a small JSON object on stdout so a pipe still gets something to parse.
    Returns the exit code."""
    sys.stderr.write(f"{prog}: {prefix}{safe_line(message)}\n")
    if as_json:
        try:
            sys.stdout.write(strict_json({"error": message, "exit_code": exit_code}) + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):  # stdout closed or a broken pipe: stderr already has the line
            pass
    return exit_code
