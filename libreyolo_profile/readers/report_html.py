"""The HTML pieces every section of the report shares (readers/report_page.py): a figure as text, escaped
table cells, a category chip, the chart widths, and the note saying which calls a section was read from.
Cells come back as already-escaped HTML."""

from __future__ import annotations

from libreyolo_profile.metric_catalog import METRICS
from libreyolo_profile.output.terminal import fmt_count
from libreyolo_profile.readers.report_colors import color_for
from libreyolo_profile.readers.report_svg import esc, num

WIDE, NARROW = 900, 600  # chart viewBox widths: full page, one side of the compare view
NAME_CHARS = 150


def metric_unit(metric: str) -> str:
    return METRICS.get(metric, ("",))[0]


def value_text(value, unit: str | None = None) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if unit == "count" and isinstance(value, (int, float)):
        return fmt_count(value)  # 706 kernels, not 706.00
    if isinstance(value, (int, float)):
        return num(float(value))
    return "—" if value is None else str(value)


def html_table(headers: list[tuple[str, str]], rows: list[list[str]], cls: str = "") -> str:
    """headers: (text, css class); cells are already-escaped HTML."""
    head = "".join(f'<th class="{c}">{esc(h)}</th>' for h, c in headers)
    body = "".join("<tr>" + "".join(cells) + "</tr>" for cells in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def td(value, cls: str = "", unit: str | None = None) -> str:
    return f'<td class="{cls}">{esc(value_text(value, unit))}</td>'


def name_cell(name: str) -> str:
    shown = name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"
    return f'<td class="name" title="{esc(name)}">{esc(shown)}</td>'


def bar_cell(pct: float | None, color: str) -> str:
    width = max(0.0, min(100.0, pct or 0.0))
    return f'<td class="bar"><span style="width:{width:.1f}%;background:{color}"></span></td>'


def chip(category: str) -> str:
    return f'<span class="chip" style="background:{color_for(category)}">{esc(category)}</span>'


def where(side: dict) -> str:
    """' · profiled: 20 calls': which calls a section's figures were read from (readers/provenance.py)."""
    label = (side["summary"].get("provenance") or {}).get("tables")
    return f" · {label}" if label else ""
