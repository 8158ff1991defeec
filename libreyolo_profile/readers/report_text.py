"""Compact terminal charts for `summary` (rich markup strings made of block characters).

A bar is whole blocks plus one eighth-block for the remainder, so 20 cells resolve 0.6 %.
The colours match the HTML report's palette as closely as a terminal's named colours allow.
"""

from __future__ import annotations

from rich.markup import escape

from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.vocabulary import terminal_colours

# the terminal's colour of each phase, kernel category and blame cause (sql/palette.sql terminal_palette)
PHASE_STYLES = terminal_colours("phase")
CATEGORY_STYLES = terminal_colours("category")
BLAME_STYLES = terminal_colours("cause")
_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(pct: float | None, cells: int = 20, style: str = "blue"):
    """A left-aligned bar for a share in % (0–100), `cells` wide at 100 %, as rich Text (a table
    cell that is Text is printed as is, while plain strings from traces are escaped)."""
    from rich.text import Text

    if pct is None or pct <= 0:
        return Text("")
    eighths = round(min(pct, 100.0) / 100.0 * cells * 8)
    text = "█" * (eighths // 8) + (_EIGHTHS[eighths % 8] if eighths % 8 else "")
    return Text(text, style=style)


# Where colour cannot tell segments apart (stdout not a terminal, or NO_COLOR set), each segment is
# drawn in its own fill and the legend shows that fill: a bar in a CI log still reads.
PATTERNS = "█▓▒░#=+:~-*o"


def colourless() -> bool:
    import os
    import sys

    return bool(os.environ.get("NO_COLOR")) or not sys.stdout.isatty()


def patterns_for(names) -> dict[str, str] | None:
    """{name: fill character} in the given order where colour is unavailable; None where it is."""
    if not colourless():
        return None
    return {name: PATTERNS[i % len(PATTERNS)] for i, name in enumerate(dict.fromkeys(names))}


def stacked(
    segments: list[tuple[str, float | None]], styles: dict, cells: int = 60, patterns: dict | None = None
) -> tuple[str, str]:
    """One 100 % bar split by (name, value) and its legend line, both as rich markup.

    Cells are handed out by largest remainder so the bar is always exactly `cells` wide; a
    segment too small for a cell still appears in the legend with its share. `patterns` (name →
    fill) replaces the colour-only block where colour is unavailable (patterns_for)."""
    values = [(name, value) for name, value in segments if value and value > 0]
    total = sum(v for _, v in values)
    if total <= 0:
        return "", ""
    exact = [(name, cells * v / total) for name, v in values]
    counts = {name: int(x) for name, x in exact}
    spare = cells - sum(counts.values())
    for name, _ in sorted(exact, key=lambda item: item[1] - int(item[1]), reverse=True)[:spare]:
        counts[name] += 1
    fill = lambda name, block: (patterns or {}).get(name, block)  # noqa: E731
    line = "".join(
        f"[{styles.get(name, 'white')}]{fill(name, '█') * counts[name]}[/]" for name, _ in values if counts[name]
    )
    legend = "  ".join(
        f"[{styles.get(name, 'white')}]{escape(fill(name, '■'))}[/] {escape(safe_line(name))} {100 * v / total:.0f}%"
        for name, v in values
    )
    return line, legend
