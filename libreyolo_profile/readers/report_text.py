"""Compact terminal charts for `summary` (rich markup strings made of block characters).

A bar is whole blocks plus one eighth-block for the remainder, so 20 cells resolve 0.6 %.
The colours match the HTML report's palette as closely as a terminal's named colours allow.
"""

from __future__ import annotations

from rich.markup import escape

from libreyolo_profile.output.textsafe import safe_line

PHASE_STYLES = {
    "dataload": "yellow",
    "to_device": "magenta",
    "forward": "blue",
    "backward": "red",
    "optimizer": "green",
    "preprocess": "yellow",
    "postprocess": "green",
}
CATEGORY_STYLES = {
    "gemm": "blue",
    "elementwise": "red",
    "norm": "green",
    "layout": "yellow",
    "reduce": "magenta",
    "memcpy": "grey50",
    "memset": "grey70",
    "optimizer": "cyan",
    "nms/sort": "dark_orange",
    "communication": "dark_red",
    "other": "grey50",
}
# blame causes (sql/blame.sql): device work in the category colours, host causes in their own
BLAME_STYLES = {
    "gemm_conv": "blue",
    "attention": "cyan",
    "memory_bound": "red",
    "device_other": "grey50",
    "communication": "dark_red",
    "memcpy_memset": "grey70",
    "sync_bubble": "bright_magenta",
    "module_loading": "dark_orange",
    "allocator": "orange3",
    "dataload": "yellow",
    "launching": "bright_green",
    "cpu_work": "green",
    "unexplained_idle": "grey30",
    "cpu_gemm_conv": "blue",
    "cpu_other_ops": "cyan",
    "cpu_communication": "dark_red",
    "framework_overhead": "bright_green",
}
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
