"""The report's roofline chart: arithmetic intensity against achieved TFLOP/s, log-log, the device's
roof (the bandwidth slope up to each peak) and every costed op shape as a point sized by its time.
Figures come from the roofline table (sql/roofline_reader.sql); nothing is computed here but positions."""

from __future__ import annotations

import math

from libreyolo_profile.metric_catalog import is_cpu_profile
from libreyolo_profile.readers.report_colors import INK, color_for
from libreyolo_profile.readers.report_svg import _open, esc, legend, num

# a point by its bound, in the colours of those meanings (report_colors.py); a roof is ink, named by its label
POINT_MEANINGS = {"compute": "compute_bound_point", "memory": "memory_bound_point"}
LABEL_GAP = 13  # px between two roofs' names: the tick font is 11 px


def _plotted(rows: list[dict]) -> list[dict]:
    return [
        r
        for r in rows
        if (r.get("gflops") or 0) > 0
        and (r.get("intensity") or 0) > 0
        and (r.get("tflops_per_s") or 0) > 0
        and r.get("device_ms_per_step")
    ]


def _decades(low: float, high: float) -> tuple[int, int]:
    return math.floor(math.log10(low)), math.ceil(math.log10(high))


def roofline_chart(rows: list[dict], width: int = 900, height: int = 360, on_cpu: bool = False) -> str:
    """The SVG, or "" when no op shape has FLOPs, bytes and a measured time. A CPU's rates in GFLOP/s and GB/s,
    where TFLOP/s would label its roof 0.0."""
    points = _plotted(rows)
    if not points:
        return ""
    scale, flops_unit, bw_unit = (1e3, "GFLOP/s", "GB/s") if on_cpu else (1.0, "TFLOP/s", "TB/s")
    roofs = {
        (r["roof_class"], r["peak_tflops"] * scale, r["peak_tb_per_s"] * scale)
        for r in points
        if r.get("peak_tflops") and r.get("peak_tb_per_s")
    }
    xs = [r["intensity"] for r in points] + [p / bw for _, p, bw in roofs]
    ys = [r["tflops_per_s"] * scale for r in points] + [p for _, p, _ in roofs]
    (x0, x1), (y0, y1) = _decades(min(xs) / 2, max(xs) * 2), _decades(min(ys) / 2, max(ys) * 2)
    left, right, top, bottom = 70, width - 20, 16, height - 44

    def px(x: float) -> float:
        return left + (right - left) * (math.log10(x) - x0) / (x1 - x0)

    def py(y: float) -> float:
        return bottom - (bottom - top) * (math.log10(y) - y0) / (y1 - y0)

    parts = [_open("roofline", width, height, f"roofline: arithmetic intensity against achieved {flops_unit}")]
    for d in range(x0, x1 + 1):
        parts.append(
            f'<line x1="{px(10**d):.1f}" x2="{px(10**d):.1f}" y1="{top}" y2="{bottom}" class="grid"/>'
            f'<text x="{px(10**d):.1f}" y="{bottom + 16}" text-anchor="middle" class="tick">1e{d}</text>'
        )
    for d in range(y0, y1 + 1):
        parts.append(
            f'<line x1="{left}" x2="{right}" y1="{py(10**d):.1f}" y2="{py(10**d):.1f}" class="grid"/>'
            f'<text x="{left - 6}" y="{py(10**d) + 4:.1f}" text-anchor="end" class="tick">1e{d}</text>'
        )
    parts.append(
        f'<text x="{(left + right) / 2}" y="{height - 6}" text-anchor="middle" class="axis">'
        f'arithmetic intensity, FLOP/byte</text><text x="14" y="{(top + bottom) / 2}" class="axis" '
        f'transform="rotate(-90 14 {(top + bottom) / 2})" text-anchor="middle">{flops_unit}</text>'
    )
    # roofs of equal peak and bandwidth are one line named once; the names of the others are spread apart
    # where their peaks lie close (fp16 and bf16 tensor roofs a pixel or two apart wrote over each other)
    same: dict[tuple[float, float], list[str]] = {}
    for roof_class, peak, bw in sorted(roofs, key=str):
        same.setdefault((peak, bw), []).append(roof_class)
    lines = sorted(same.items(), key=lambda item: -item[0][0])
    label_ys = spread_labels([py(peak) - 5 for (peak, _), _ in lines], LABEL_GAP, top + 10, bottom - 4)
    for ((peak, bw), classes), label_y in zip(lines, label_ys, strict=True):
        parts.append(_roof(", ".join(classes), peak, bw, 10.0**x0, 10.0**x1, px, py, (flops_unit, bw_unit), label_y))
    biggest = max(r["device_ms_per_step"] for r in points)
    for r in sorted(points, key=lambda r: -r["device_ms_per_step"]):
        radius = 3 + 11 * math.sqrt(r["device_ms_per_step"] / biggest)
        tip = (
            f"{r['op']} {r['input_dims'] or ''}: {num(r['tflops_per_s'] * scale, 3)} {flops_unit} at "
            f"{num(r['intensity'], 2)} "
            f"FLOP/B, {num(r['pct_of_roofline'], 1)}% of roof, {num(r['device_ms_per_step'], 3)} ms/step"
        )
        parts.append(
            f'<circle cx="{px(r["intensity"]):.1f}" cy="{py(r["tflops_per_s"] * scale):.1f}" r="{radius:.1f}" '
            f'fill="{color_for(POINT_MEANINGS.get(r["bound"], str(r["bound"])))}" fill-opacity="0.55" stroke="{INK}" '
            f'stroke-width="0.5"><title>{esc(tip)}</title></circle>'
        )
    return "".join(parts) + "</svg>"


def spread_labels(ys: list[float], gap: float, low: float, high: float) -> list[float]:
    """Label baselines (top to bottom, in order) moved apart by at least `gap`, each as near its wish as that
    allows, within [low, high]: pushed down below the one above it, then up from the bottom where they ran out."""
    placed: list[float] = []
    for y in ys:
        placed.append(max(y, low, placed[-1] + gap) if placed else max(y, low))
    for i in range(len(placed) - 1, -1, -1):
        limit = high if i == len(placed) - 1 else placed[i + 1] - gap
        placed[i] = min(placed[i], limit)
    return placed


def _roof(
    roof_class: str,
    peak: float,
    bw: float,
    x_low: float,
    x_high: float,
    px,
    py,
    units: tuple[str, str],
    label_y: float | None = None,
) -> str:
    """The roof of one peak class (or several with the same peaks): bandwidth × intensity up to the ridge, the
    peak after it (in `units`), named at its end at `label_y` (default: just above the peak line)."""
    ridge = peak / bw
    color = INK
    start = max(x_low, 1e-12)
    path = (
        f"M{px(start):.1f},{py(max(bw * start, 1e-12)):.1f} L{px(ridge):.1f},{py(peak):.1f} "
        f"L{px(x_high):.1f},{py(peak):.1f}"
    )
    return (
        f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"><title>{esc(roof_class)} roof: '
        f"{num(peak, 1)} {units[0]}, {num(bw, 3)} {units[1]}, ridge at {num(ridge, 1)} FLOP/B</title></path>"
        f'<text x="{px(x_high) - 4:.1f}" y="{label_y if label_y is not None else py(peak) - 5:.1f}" '
        f'text-anchor="end" class="tick roof-label" fill="{color}">'
        f"{esc(roof_class)} {num(peak, 1)} {units[0]}</text>"
    )


def roofline_section(side: dict, width: int) -> str:
    """The report's roofline section: the chart and what it is of (empty without costed ops)."""
    # a side without its summary (a section drawn alone) is charted as a GPU's, as before a CPU had units
    profile = (side.get("summary") or {}).get("profile") or {}
    chart = roofline_chart(side.get("roofline") or [], width, on_cpu=is_cpu_profile(profile))
    if not chart:
        return ""
    return (
        "<h2>Roofline</h2>"
        + chart
        + legend([(f"{bound}-bound", color_for(meaning)) for bound, meaning in POINT_MEANINGS.items()])
        + '<p class="note">each point is one op and shape, sized by its device time per step; the lines are the '
        "device's roof per data type, each named at its end (docs/SCHEMA.md, the roofline table)</p>"
    )
