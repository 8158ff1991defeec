"""The summary's stacked bars: the blame per step and in total, and the step split by phase (rich
markup made of block characters, readers/report_text.py; a fill per segment where colour is unavailable)."""

from __future__ import annotations

from libreyolo_profile.metric_catalog import measured_unit
from libreyolo_profile.output.terminal import fmt
from libreyolo_profile.output.textsafe import safe_line

BLAME_STEPS_SHOWN = 10  # steps drawn as their own blame bar; the total bar covers them all


def bar_cells(console, wide: int, narrow: int) -> int:
    """A share bar's width: full in a wide terminal, short enough in 80 columns that no header is cut."""
    return wide if console.width >= 100 else narrow


def print_step_bar(console, s: dict, noun: str) -> None:
    """The step as one stacked bar, its legend quoting the table's "% of step": on a GPU the step can
    outlast the host's phases while the device finishes, and that rest is drawn as its own segment
    rather than stretched over the phases (which would quote a second, larger share for each)."""
    from libreyolo_profile.readers.report_text import PHASE_STYLES, patterns_for, stacked

    segments = [(r["phase"], r["step_pct"]) for r in s["phases"]]
    rest = 100.0 - sum(share or 0.0 for _, share in segments)
    if rest >= 0.5:
        segments.append(("outside phases", rest))
    patterns = patterns_for(name for name, _ in segments)
    line, key = stacked(segments, {**PHASE_STYLES, "outside phases": "grey50"}, patterns=patterns)
    if line:
        console.print(f"{noun} ▕{line}▏", highlight=False)
        console.print(f"     {key}", highlight=False)
    if any((r.get("gpu_ms") or 0) > (r.get("wall_ms") or 0) for r in s["phases"]):
        # backward's 64 GPU ms beside its 29 wall ms reads as an error unless the screen says why
        console.print(
            "GPU ms is the device time of the kernels a phase launched: they run asynchronously, after the "
            "host has moved on, so it can pass the phase's wall ms",
            highlight=False,
            markup=False,
        )


def print_blame(console, s: dict) -> None:
    """The blame as a stacked bar per step and in total, the verdict beside the total (sql/blame.sql)."""
    _blame_bars(console, s, BLAME_STEPS_SHOWN)


def print_blame_total(console, s: dict, legend: bool = True) -> None:
    """The first screen's blame: the total bar alone (each step's: summary --full), its legend unless told."""
    _blame_bars(console, s, 0, legend)


def _blame_bars(console, s: dict, steps_shown: int, legend: bool = True) -> None:
    from rich.markup import escape

    from libreyolo_profile.readers.report_text import BLAME_STYLES, patterns_for, stacked

    blame = s.get("blame") or {}
    if not blame.get("steps"):
        return
    noun = measured_unit(s["profile"]["kind"])
    cells = bar_cells(console, 60, 36)
    if steps_shown:
        console.print(
            f"[bold]Blame[/] · {escape(s['provenance']['tables'])}: what held each {noun}'s critical path "
            f"(% of its wall time)",
            highlight=False,
        )
    else:
        console.print(f"[bold]Blame[/]: what held the critical path, % of wall time ({noun}s: summary --full)")
    order = list(blame["total"])  # every bar in the total's order, so a cause sits in the same place
    patterns = patterns_for(order)
    for row in blame["steps"][:steps_shown]:
        causes = sorted(row["causes"].items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
        line, _ = stacked(causes, BLAME_STYLES, cells, patterns)
        console.print(f"{noun} {row['step']:>4} ▕{line}▏ {fmt(row['step_ms'], 2)} ms", highlight=False)
    hidden = len(blame["steps"]) - steps_shown
    if hidden > 0 and steps_shown:
        console.print(f"[dim]… {hidden} more {noun}s in the total[/]", highlight=False)
    line, key = stacked(list(blame["total"].items()), BLAME_STYLES, cells, patterns)
    console.print(
        f"{'total':<{len(noun) + 5}} ▕{line}▏ verdict: [bold]{escape(safe_line(s['verdict']['bound']))}[/]",
        highlight=False,
    )
    if legend:
        console.print(f"     {key}", highlight=False)
    else:
        console.print("     [dim]which cause is which: summary --full[/]", highlight=False)
