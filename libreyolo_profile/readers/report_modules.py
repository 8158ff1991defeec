"""The HTML report's module chart: an icicle per pass (the model on top, its parts below it, their
largest blocks below those), each box as wide as the module's host time, from the summary's module
tree (readers/modules.py top_modules). Inline SVG like the rest of the report (report_svg.py)."""

from __future__ import annotations

from libreyolo_profile.metric_catalog import measured_unit
from libreyolo_profile.readers.modules import inclusive_note
from libreyolo_profile.readers.report_colors import color_for
from libreyolo_profile.readers.report_svg import FONT, esc, num

ROW_HEIGHT = 30
MODULE_PHASES = ("forward", "backward")


def _children(rows: list[dict]) -> dict:
    """parent path -> its rows, in tree order (rows arrive depth-first)."""
    paths = {r["path"] for r in rows}
    kids: dict = {}
    for r in rows:
        parent = r["path"].rpartition(".")[0]
        kids.setdefault(parent if parent in paths else None, []).append(r)
    return kids


def icicle(rows: list[dict], phase: str, width: int) -> str:
    """One pass's icicle. Children share their parent's width in proportion to their time; where
    backward ranges overlap and the children add up to more than the parent, they are scaled down
    to fit it (the hover title keeps every exact figure)."""
    kids = _children(rows)
    depth = max(int(r["depth"]) for r in rows) - min(int(r["depth"]) for r in rows) + 1
    height = ROW_HEIGHT * depth + 4
    color = color_for(phase)
    parts = [
        f'<svg class="chart" data-chart="modules-{esc(phase)}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{esc(phase)} pass by module" preserveAspectRatio="xMinYMin meet" style="{FONT}">'
    ]

    def draw(row: dict, x: float, w: float, level: int, overlapping: float | None = None) -> None:
        """`overlapping`: the summed share of the row and its siblings where their ranges overlap (backward
        under autograd) and add up to more than their parent: each box is then named by its time, since
        side-by-side shares of one whole would add up past 100%."""
        y = 2 + level * ROW_HEIGHT
        total = row["total_ms_per_step"] or 0.0
        title = (
            f"{row['path']} ({row['module_type']}): {num(total)} ms/step, self {num(row['self_ms_per_step'])} ms, "
            f"{num(row['share_pct'], 1)} % of the model"
        )
        if overlapping is not None:
            title += (
                f"; its range overlaps its siblings', which add up to {num(overlapping, 0)} % of the model, so the "
                "boxes are scaled to fit their parent and named by their time"
            )
            text = f"{row['name']} {num(total)} ms"
        else:
            text = f"{row['name']} {num(row['share_pct'], 0)}%"
        opacity = max(0.35, 1.0 - 0.2 * level)
        parts.append(
            f'<rect class="seg" x="{x:.2f}" y="{y}" width="{max(w - 1, 0):.2f}" height="{ROW_HEIGHT - 3}" '
            f'fill="{color}" fill-opacity="{opacity:.2f}"><title>{esc(title)}</title></rect>'
        )
        if w > 7.0 * len(text) + 8:
            parts.append(f'<text x="{x + 5:.1f}" y="{y + ROW_HEIGHT * 0.6:.1f}" class="inbar">{esc(text)}</text>')
        children = kids.get(row["path"], [])
        spent = sum(c["total_ms_per_step"] or 0.0 for c in children)
        scale = w / max(total, spent) if max(total, spent) > 0 else 0.0
        shares = sum(c["share_pct"] or 0.0 for c in children)
        overlap = shares if spent > total * 1.005 and total > 0 else None
        cx = x
        for child in children:
            cw = (child["total_ms_per_step"] or 0.0) * scale
            draw(child, cx, cw, level + 1, overlap)
            cx += cw

    roots = kids.get(None, [])
    whole = sum(r["total_ms_per_step"] or 0.0 for r in roots)
    x = 0.0
    for root in roots:
        w = width * (root["total_ms_per_step"] or 0.0) / whole if whole > 0 else 0.0
        draw(root, x, w, 0)
        x += w
    parts.append("</svg>")
    return "".join(parts)


def modules_section(side: dict, width: int) -> str:
    """'Where in the model': one icicle per pass the profile recorded module ranges for."""
    rows = side["summary"].get("modules") or []
    unit = measured_unit(side["summary"]["profile"]["kind"])
    charts = []
    for phase in MODULE_PHASES:
        part = [r for r in rows if r["phase"] == phase]
        if part:
            charts.append(
                f"<h3>{esc(phase)} pass</h3>"
                + icicle(part, phase, width)
                + f'<p class="note">{esc(inclusive_note(part, unit))}</p>'
            )
    if not charts:
        return ""
    return (
        "<h2>Where in the model: host time per module"
        + esc(f" · {(side['summary'].get('provenance') or {}).get('tables') or ''}".rstrip(" ·"))
        + "</h2>"
        f"<p>Each box is as wide as the module's host time per {unit}; below it, its parts and their largest "
        "blocks (<code>libreyolo profile modules</code> lists every module).</p>" + "".join(charts)
    )
