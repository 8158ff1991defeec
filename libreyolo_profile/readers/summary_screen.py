"""`libreyolo profile summary`'s first screen (issue #52): what a user reads before anything scrolls
away, at most FIRST_SCREEN_LINES lines at 100 columns. The verdict with its evidence and next step, the
blame bar, a handful of headline figures, then one line per section naming the command that shows it;
everything else is `summary --full` (readers/summary.py draws both from the same summary document).

Text wraps between words, never inside a number, so an 80-column pipe or CI log reads the same figures."""

from __future__ import annotations

import re

from libreyolo_profile.metric_catalog import measured_unit
from libreyolo_profile.output.terminal import fmt, fmt_sig, short_name
from libreyolo_profile.output.textsafe import safe_line

FIRST_SCREEN_LINES = 40  # at 100 columns
# The handful of figures the first screen shows, in order, where the profile's kind and device have them
# (a CPU profile has no gpu_util_pct; leaf_busy_pct is its busy share). The rest: summary --full.
FIGURES = (
    "step_ms",
    "latency_p50_ms",
    "latency_p99_ms",
    "throughput_img_s",
    "gpu_util_pct",
    "leaf_busy_pct",
    "host_overhead_pct",
    "launches_per_step",
    "peak_mem_mb",
    "timing_cv_pct",
)
FIGURES_SHOWN = 6


def say(console, text: str, style: str | None = None) -> None:
    """A line of prose from the profile, inert on the terminal, wrapped between words."""
    console.print(safe_line(text), highlight=False, markup=False, style=style)


def first_figures(s: dict, rows: list[list], unavailable: dict, most: int) -> tuple[list[list], list[str]]:
    """The first screen's figure rows (metric, value, unit: summary.metric_rows' cells) and a sentence for
    each of its figures that is null (name: reason), at most `most` together."""
    by_name = {row[0]: row for row in rows}
    reason_of = {name: reason for reason, names in unavailable.items() for name in names}
    shown = [n for n in FIGURES if n in by_name or n in reason_of][:most]
    # a null figure the verdict names says why too (a CPU trace of a conv model: "gemm_conv_peak_pct is null")
    said = f"{s['verdict'].get('reason') or ''} {s['verdict'].get('next_step') or ''}"
    named = [n for n in reason_of if n not in shown and re.search(rf"\b{re.escape(n)}\b", said)]
    nulls = [f"{n}: {reason_of[n]}" for n in [*shown, *named] if n in reason_of]
    return [by_name[n] for n in shown if n in by_name], nulls


def section_lines(s: dict) -> list[tuple[str, str, str]]:
    """(section, what it holds, the command that shows it), one per section this profile has."""
    noun = measured_unit(s["profile"]["kind"])
    lines = []
    if s.get("job"):
        ranks, straggler = s["job"]["ranks"], (s["job"].get("straggler") or {})
        who = "none" if straggler.get("rank") is None else f"rank {straggler['rank']}"
        lines.append(("ranks", f"{len(ranks)} ranks; straggler: {who}", "ranks"))
    if s["phases"]:
        longest = max(s["phases"], key=lambda r: r["wall_ms"] or 0)
        lines.append(
            (
                "phases",
                f"{len(s['phases'])} phases; longest in host wall time: {longest['phase']} "
                f"{fmt(longest['wall_ms'])} ms ({fmt(longest['step_pct'])}% of the {noun})",
                "phases",
            )
        )
    if s["categories"]:
        top = s["categories"][0]
        kernel = s["top_kernels"][0] if s["top_kernels"] else None
        said = f"{top['category']} {fmt(top['share_pct'])}% of device time" + (
            f"; top: {short_name(kernel['name'], 28)} {fmt(kernel['ms_per_step'])} ms/{noun}" if kernel else ""
        )
        lines.append(("kernels", said, "kernels"))
    if s["top_ops"]:
        op = s["top_ops"][0]
        said = f"top by self CPU time: {short_name(op['name'], 40)} {fmt(op['self_ms_per_step'])} ms/{noun}"
        lines.append(("ops", said, "ops"))
    modules = [m for m in s.get("modules") or [] if m["depth"] == 1 and m["total_ms_per_step"] is not None]
    if modules:
        part = max(modules, key=lambda m: m["total_ms_per_step"])
        lines.append(
            (
                "modules",
                f"largest part: {short_name(part['path'], 40)} ({part['phase']}) "
                f"{fmt(part['total_ms_per_step'])} ms/{noun}",
                "modules",
            )
        )
    if s.get("above_roof"):
        r = s["above_roof"][0]
        lines.append(
            (
                "roofline",
                f"most time over its roofline: {r['op']}, {fmt_sig(r['above_roof_ms_per_step'])} ms/{noun} over "
                f"({fmt_sig(r['pct_of_roofline'])}% of roof)",
                "roofline",
            )
        )
    if s["devices"][1:]:
        lines.append(("devices", f"{len(s['devices']) - 1} more device(s) beside the busiest", "summary --full"))
    return lines


# what gives way, in order, where the screen would pass FIRST_SCREEN_LINES at FIRST_SCREEN_COLUMNS: the
# marks' sentences (their names stay), then figure rows, then the blame's legend. Decided at that width
# whatever the terminal's, so a pipe at 80 columns carries the same figures, only wrapped.
FIRST_SCREEN_COLUMNS = 100
COMPACTIONS = ({}, {"marks": False}, {"marks": False, "figures": 4}, {"marks": False, "figures": 4, "legend": False})


def show_first_screen(console, s: dict, header: list[str], rows: list[list], unavailable: dict, table) -> None:
    """The first screen at the fullest form that fits FIRST_SCREEN_LINES: `header` are summary's header
    lines, `rows`/`unavailable` summary.metric_rows', `table` output.terminal.table."""
    import io

    from rich.console import Console

    for compaction in COMPACTIONS:
        trial = Console(width=FIRST_SCREEN_COLUMNS, file=io.StringIO(), color_system=None, soft_wrap=False)
        _draw(trial, s, header, rows, unavailable, table, **compaction)
        if trial.file.getvalue().count("\n") <= FIRST_SCREEN_LINES:
            break
    _draw(console, s, header, rows, unavailable, table, **compaction)


def _draw(console, s, header, rows, unavailable, table, marks=True, figures=FIGURES_SHOWN, legend=True) -> None:
    from libreyolo_profile.readers.summary_charts import print_blame_total

    for line in header:
        say(console, line)
    if marks:
        for name, text in s["marks"].items():
            # whole, wrapped between words: the end of a mark is often its remedy
            console.print(f"[yellow]mark[/] {_escaped(' '.join(f'{name}: {text}'.split()))}", highlight=False)
    elif s["marks"]:
        say(console, f"marks: {', '.join(s['marks'])} (each in full: summary --full)", style="yellow")
    v = s["verdict"]
    console.print(f"[bold]verdict[/] · {_escaped(s['provenance']['profiled_metrics'])}", highlight=False)
    say(console, f"{v['bound']} — {v['reason']}")
    say(console, f"next: {v['next_step']}")
    print_blame_total(console, s, legend)
    shown, nulls = first_figures(s, rows, unavailable, figures)
    if shown:
        columns = [("metric", "left"), ("value", "right"), ("unit", "left")]
        console.print(table("Headline figures", columns, shown, width=console.width))
    for line in nulls:
        say(console, f"— {line}")
    sections = section_lines(s)
    say(console, "More, one command each (every table and figure: summary --full; one HTML page: report):")
    width = max((len(name) for name, _, _ in sections), default=0)
    for name, said, command in sections:
        say(console, f"  {name:<{width}}  {said} → {command}")


def _escaped(text: str) -> str:
    from rich.markup import escape

    return escape(safe_line(text))
