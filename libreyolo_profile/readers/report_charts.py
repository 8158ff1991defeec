"""The report's charts, inline SVG drawn in Python: no chart library, no script, no fetch.

Every chart is an `<svg class="chart" data-chart="…">` sized by its viewBox (it scales to the column it sits
in); every mark carries a `<title>` so hovering shows the exact figure. Every string that came from a trace
goes through `esc` (report_page.py). The primitives come first (ticks, axes, a 100 % bar, horizontal bars, a
histogram, a legend), then the charts of one meaning each: the steps, the module icicle, the memory level,
the roofline and a job's rank lanes. The figures are the readers' (sql/, readers/memory.py, readers/modules.py);
nothing is computed here but positions.
"""

from __future__ import annotations

import math

from libreyolo_profile.readers.memory import device_name, peak_phrase, running_phrase, when_phrase
from libreyolo_profile.readers.report_page import INK, color_for, esc, num

FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"


def nice_step(raw: float) -> float:
    """The smallest 1, 2, 2.5 or 5 × 10^k at least `raw`."""
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least `top`."""
    if top <= 0 or not math.isfinite(top):
        return [0.0, 1.0]
    step = nice_step(top / count)
    ticks = [0.0]
    while ticks[-1] < top - 1e-12:
        ticks.append(ticks[-1] + step)
    return ticks


def tick_digits(ticks: list[float]) -> int:
    """The decimals that tell neighbouring ticks apart: from the step between them, not from their size
    (ticks 0, 0.02, 0.04 printed with one decimal all read "0.0")."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else (ticks[0] or 1.0)
    if step <= 0 or not math.isfinite(step):
        return 1
    digits = max(0, -math.floor(math.log10(step) + 1e-9))
    while digits < 9 and abs(round(step, digits) - step) > step * 1e-6:  # 2.5 × 10^k needs one more
        digits += 1
    return digits


def tick_labels(top: float, count: int = 5) -> tuple[list[float], list[str]]:
    """Round ticks from 0 to at least `top`, and their labels with the digits their step needs."""
    ticks = nice_ticks(top, count)
    digits = tick_digits(ticks)
    return ticks, [f"{t:,.{digits}f}" for t in ticks]


def svg_open(kind: str, width: int, height: int, label: str) -> str:
    return (
        f'<svg class="chart" data-chart="{esc(kind)}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{esc(label)}" preserveAspectRatio="xMinYMin meet" style="{FONT}">'
    )


def _y_axis(
    ticks: list[float],
    left: int,
    right: int,
    top: int,
    bottom: int,
    unit: str,
    label=None,
    low: float = 0.0,
) -> list[str]:
    """Grid lines and labels at `ticks`, the axis running from `low` (its bottom) to the last tick."""
    parts = []
    if label is None:
        digits = tick_digits(ticks)

        def label(t: float) -> str:
            return f"{t:,.{digits}f}"

    span = (ticks[-1] - low) or 1.0
    for t in ticks:
        y = bottom - (bottom - top) * (t - low) / span
        parts.append(f'<line x1="{left}" x2="{right}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{esc(label(t))}</text>')
    parts.append(
        f'<text x="{left - 44}" y="{top + (bottom - top) / 2:.1f}" class="axis" text-anchor="middle" '
        f'transform="rotate(-90 {left - 44} {top + (bottom - top) / 2:.1f})">{esc(unit)}</text>'
    )
    return parts


def step_peak(steps: list[dict], show_gpu: bool) -> float:
    return max([s["host_ms"] or 0 for s in steps] + ([s["kernel_ms"] or 0 for s in steps] if show_gpu else []) + [0])


def step_bars(
    steps: list[dict],
    phases: list[str],
    show_gpu: bool,
    unit_word: str = "step",
    width: int = 900,
    height: int = 280,
    y_top: float | None = None,
) -> str:
    """Per step: host wall time stacked by phase; the device kernel time the step launched laid
    over it as a narrower dark bar (GPU profiles only). `y_top` shares one scale between charts."""
    left, right, top, bottom = 64, width - 12, 14, height - 40
    n = len(steps)
    peak = max(step_peak(steps, show_gpu), y_top or 0)
    ticks = nice_ticks(peak * 1.02)
    span = ticks[-1] or 1.0
    scale = (bottom - top) / span
    parts = [svg_open("steps", width, height, f"host time per {unit_word} by phase")]
    parts += _y_axis(ticks, left, right, top, bottom, "ms")
    slot = (right - left) / max(n, 1)
    bar = min(max(slot * 0.78, 0.6), 90.0)  # a lone step stays a bar, not a wall
    label_every = max(1, math.ceil(n / 25))
    for i, s in enumerate(steps):
        x = left + i * slot + (slot - bar) / 2
        parts += _host_segments(s, phases, unit_word, x, bar, bottom, scale, span)
        if show_gpu and s.get("kernel_ms"):
            parts.append(_gpu_overlay(s, unit_word, x, bar, bottom, scale))
        if i % label_every == 0 or i == n - 1:
            parts.append(
                f'<text x="{left + i * slot + slot / 2:.1f}" y="{bottom + 15}" text-anchor="middle" '
                f'class="tick">{s["step"]}</text>'
            )
    parts.append(f'<line x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}" class="axisline"/>')
    parts.append(
        f'<text x="{(left + right) / 2:.0f}" y="{height - 6}" text-anchor="middle" class="axis">'
        f"measured {esc(unit_word)}</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


def _host_segments(
    s: dict, phases: list[str], unit_word: str, x: float, bar: float, bottom: int, scale: float, span: float
) -> list[str]:
    """One step's host wall time as a bar: its phases stacked from the axis up, in `phases` order."""
    parts = []
    y = bottom
    for phase in phases:
        ms = s["phases"].get(phase) or 0.0
        if ms <= 0:
            continue
        h = ms * scale
        y -= h
        parts.append(
            f'<rect class="seg" x="{x:.2f}" y="{y:.2f}" width="{bar:.2f}" height="{h:.2f}" '
            f'fill="{color_for(phase)}"><title>{esc(unit_word)} {s["step"]} · '
            f"{esc(phase)}: {esc(num(ms))} ms</title></rect>"
        )
    rest = (s["host_ms"] or 0.0) - sum(v or 0.0 for v in s["phases"].values())
    if rest > 1e-6 * span and not s["phases"]:
        # a step without phase rows still shows its host time
        h = rest * scale
        parts.append(
            f'<rect class="seg" x="{x:.2f}" y="{bottom - h:.2f}" width="{bar:.2f}" height="{h:.2f}" '
            f'fill="{color_for("no_phases")}"><title>{esc(unit_word)} {s["step"]}: {esc(num(rest))} ms '
            "(no phases)</title></rect>"
        )
    return parts


def _gpu_overlay(s: dict, unit_word: str, x: float, bar: float, bottom: int, scale: float) -> str:
    """The device kernel time the step launched: a narrower dark bar centred on its host bar."""
    h = s["kernel_ms"] * scale
    w = max(bar * 0.38, 0.5)
    return (
        f'<rect class="gpu" x="{x + (bar - w) / 2:.2f}" y="{bottom - h:.2f}" width="{w:.2f}" '
        f'height="{h:.2f}" fill="{color_for("gpu_busy")}" fill-opacity="0.62"><title>{esc(unit_word)} '
        f"{s['step']} · GPU kernel time launched: {esc(num(s['kernel_ms']))} ms</title></rect>"
    )


def legend(items: list[tuple[str, str]], extra: list[tuple[str, str, str]] = ()) -> str:
    """A legend as HTML: (label, colour) swatches; extra = (label, colour, css class)."""
    spans = [f'<span class="key"><i style="background:{c}"></i>{esc(label)}</span>' for label, c in items]
    spans += [
        f'<span class="key"><i class="{cls}" style="background:{c}"></i>{esc(label)}</span>' for label, c, cls in extra
    ]
    return f'<div class="legend">{"".join(spans)}</div>'


def share_bar(segments: list[tuple[str, float, str]], kind: str, width: int = 900, height: int = 34) -> str:
    """One 100 % bar split into segments (label, value, colour); labels inside where they fit."""
    total = sum(v for _, v, _ in segments if v and v > 0)
    parts = [svg_open(kind, width, height, "shares")]
    x = 0.0
    for label, value, color in segments:
        if not value or value <= 0 or total <= 0:
            continue
        w = width * value / total
        pct = 100.0 * value / total
        parts.append(
            f'<rect class="seg" x="{x:.2f}" y="2" width="{w:.2f}" height="{height - 4}" fill="{color}">'
            f"<title>{esc(label)}: {esc(num(pct, 1))} %</title></rect>"
        )
        text = f"{label} {pct:.0f}%"
        if w > 7.2 * len(text) + 8:
            parts.append(f'<text x="{x + 6:.1f}" y="{height / 2 + 4:.1f}" class="inbar">{esc(text)}</text>')
        x += w
    if total <= 0:
        parts.append(f'<text x="6" y="{height / 2 + 4:.1f}" class="tick">no time recorded</text>')
    parts.append("</svg>")
    return "".join(parts)


def hbars(
    rows: list[tuple[str, float, str, str]],
    kind: str,
    unit: str,
    width: int = 900,
    row_height: int = 24,
    label_width: int = 150,
) -> str:
    """Horizontal bars, one per row: (label, value, colour, value text shown at the bar's end)."""
    height = row_height * max(len(rows), 1) + 8
    peak = max([v for _, v, _, _ in rows if v] + [0]) or 1.0
    plot = width - label_width - 190
    parts = [svg_open(kind, width, height, f"{kind} in {unit}")]
    for i, (label, value, color, text) in enumerate(rows):
        y = 4 + i * row_height
        w = max(plot * (value or 0) / peak, 0.0)
        parts.append(
            f'<text x="{label_width - 8}" y="{y + row_height * 0.68:.1f}" text-anchor="end" class="label">'
            f"{esc(label)}</text>"
        )
        parts.append(
            f'<rect class="bar" x="{label_width}" y="{y + 3}" width="{w:.2f}" height="{row_height - 7}" '
            f'fill="{color}"><title>{esc(label)}: {esc(text)}</title></rect>'
        )
        parts.append(
            f'<text x="{label_width + w + 6:.1f}" y="{y + row_height * 0.68:.1f}" class="tick">{esc(text)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def histogram(values: list[float], markers: list[tuple[str, float | None]], width: int = 900, height: int = 240) -> str:
    """Counts of `values` (ms) in equal bins, with vertical marker lines (label, ms) for percentiles."""
    left, right, top, bottom = 64, width - 12, 18 + 13 * len(markers), height - 40
    lo, hi = min(values), max(values)
    bins = max(1, min(40, math.ceil(math.sqrt(len(values))) + (1 if len(values) > 3 else 0)))
    if hi - lo <= 1e-9:
        lo, hi, bins = lo - 0.5, hi + 0.5, 1
    pad = (hi - lo) * 0.02
    lo, hi = max(0.0, lo - pad), hi + pad
    step = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(int((v - lo) / step), bins - 1)] += 1
    ticks = nice_ticks(max(counts))
    span = ticks[-1] or 1
    parts = [
        svg_open("latency", width, height, "latency distribution"),
        *_y_axis(ticks, left, right, top, bottom, "calls", label=lambda t: f"{t:g}"),
    ]

    def xof(ms: float) -> float:
        return left + (right - left) * (ms - lo) / (hi - lo)

    for i, count in enumerate(counts):
        if not count:
            continue
        x0, x1 = xof(lo + i * step), xof(lo + (i + 1) * step)
        h = (bottom - top) * count / span
        parts.append(
            f'<rect class="bin" x="{x0 + 0.5:.2f}" y="{bottom - h:.2f}" width="{max(x1 - x0 - 1, 0.5):.2f}" '
            f'height="{h:.2f}" fill="{color_for("latency_calls")}"><title>{esc(num(lo + i * step))}–'
            f"{esc(num(lo + (i + 1) * step))} ms: "
            f"{count} call{'s' if count != 1 else ''}</title></rect>"
        )
    for j, (label, ms) in enumerate(markers):
        if ms is None:
            continue
        x = min(max(xof(ms), left), right)
        parts.append(
            f'<line class="marker" x1="{x:.1f}" x2="{x:.1f}" y1="{4 + 13 * j:.1f}" y2="{bottom}" stroke="{INK}" '
            f'stroke-dasharray="4 3"><title>{esc(label)}: {esc(num(ms))} ms</title></line>'
        )
        parts.append(f'<text x="{x + 3:.1f}" y="{13 + 13 * j:.1f}" class="tick marker-label">{esc(label)}</text>')
    tick = nice_step((hi - lo) / 6)
    digits = tick_digits([0.0, tick])  # 7.40, 7.42, 7.44 ms, never 7.4 three times
    for k in range(math.ceil(lo / tick), math.floor(hi / tick) + 1):
        ms = k * tick
        parts.append(
            f'<text x="{xof(ms):.1f}" y="{bottom + 15}" text-anchor="middle" class="tick">{ms:,.{digits}f}</text>'
        )
    parts.append(f'<line x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}" class="axisline"/>')
    parts.append(
        f'<text x="{(left + right) / 2:.0f}" y="{height - 6}" text-anchor="middle" class="axis">'
        "latency per call (ms)</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# the module icicle: one per pass (the model on top, its parts below it, their largest blocks below those),
# each box as wide as the module's host time, from the summary's module tree (readers/modules.py top_modules)


ICICLE_ROW_HEIGHT = 30


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
    height = ICICLE_ROW_HEIGHT * depth + 4
    color = color_for(phase)
    parts = [
        f'<svg class="chart" data-chart="modules-{esc(phase)}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{esc(phase)} pass by module" preserveAspectRatio="xMinYMin meet" style="{FONT}">'
    ]

    def draw(row: dict, x: float, w: float, level: int, overlapping: float | None = None) -> None:
        """`overlapping`: the summed share of the row and its siblings where their ranges overlap (backward
        under autograd) and add up to more than their parent: each box is then named by its time, since
        side-by-side shares of one whole would add up past 100%."""
        y = 2 + level * ICICLE_ROW_HEIGHT
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
            f'<rect class="seg" x="{x:.2f}" y="{y}" width="{max(w - 1, 0):.2f}" height="{ICICLE_ROW_HEIGHT - 3}" '
            f'fill="{color}" fill-opacity="{opacity:.2f}"><title>{esc(title)}</title></rect>'
        )
        if w > 7.0 * len(text) + 8:
            parts.append(
                f'<text x="{x + 5:.1f}" y="{y + ICICLE_ROW_HEIGHT * 0.6:.1f}" class="inbar">{esc(text)}</text>'
            )
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


# ---------------------------------------------------------------------------------------------
# the memory chart: per device the allocator's level through the window, the phases of each step as bands
# behind it, reserved memory dashed where recorded, and the peak marked with what ran then
# (readers/memory.py memory_chart)


MEMORY_HEIGHT = 260


def _step_path(points: list[dict], key: str, x, y) -> str:
    """A level holds until the next event: horizontal, then vertical."""
    kept = [p for p in points if p[key] is not None]
    if not kept:
        return ""
    d = [f"M{x(kept[0]['ts_ms']):.1f},{y(kept[0][key]):.1f}"]
    for p in kept[1:]:
        d.append(f"H{x(p['ts_ms']):.1f}V{y(p[key]):.1f}")
    return "".join(d)


def _phase_bands(bands: list[dict], x, top: int, bottom: int) -> list[str]:
    """The phases of each step as faint bands behind the level (a band without an end is left out)."""
    parts = []
    for b in bands:
        if b["end_ms"] is None:
            continue
        title = f"step {b['step']} {b['phase']}: {num(b['start_ms'])}–{num(b['end_ms'])} ms"
        parts.append(
            f'<rect class="band" x="{x(b["start_ms"]):.1f}" y="{top}" '
            f'width="{max(x(b["end_ms"]) - x(b["start_ms"]), 0):.2f}" height="{bottom - top}" '
            f'fill="{color_for(b["phase"])}" fill-opacity="0.13"><title>{esc(title)}</title></rect>'
        )
    return parts


def _peak_marker(device: dict, px: float, py: float, middle: float, top: int) -> list[str]:
    """The peak as a dot with what ran then, labelled on the side of it with more room."""
    label = f"peak: {peak_phrase(device)}"
    anchor = "end" if px > middle else "start"
    return [
        f'<circle class="peak" cx="{px:.1f}" cy="{py:.1f}" r="4" fill="{INK}">'
        f"<title>{esc(label)}, {esc(when_phrase(device))}: {esc(running_phrase(device))}</title></circle>",
        f'<text x="{px + (-8 if anchor == "end" else 8):.1f}" y="{max(py - 6, top + 10):.1f}" '
        f'text-anchor="{anchor}" class="tick">{esc(label)}</text>',
    ]


def memory_chart_svg(device: dict, bands: list[dict], width: int) -> str:
    left, right, top, bottom = 64, width - 12, 14, MEMORY_HEIGHT - 40
    points = device["points"]
    end = max([p["ts_ms"] for p in points] + [b["end_ms"] or 0 for b in bands] + [1e-9])
    low = min([0.0] + [p["allocated_mb"] for p in points])
    high = max([p["allocated_mb"] for p in points] + [p["reserved_mb"] or 0 for p in points] + [1e-9])
    ticks = nice_ticks((high - low) * 1.05)
    span = ticks[-1] or 1.0

    def x(t: float) -> float:
        return left + (right - left) * t / end

    def y(v: float) -> float:
        return bottom - (bottom - top) * (v - low) / span

    relative = device["levels"] == "relative"
    unit = "MiB above start" if relative else "MiB"
    parts = [
        svg_open(
            f"memory-{device['allocator']}-{device['device']}",
            width,
            MEMORY_HEIGHT,
            f"allocated memory over the window, {device_name(device)}",
        )
    ]
    parts += _phase_bands(bands, x, top, bottom)
    parts += _y_axis(
        [low + t for t in ticks],
        left,
        right,
        top,
        bottom,
        unit,  # digits from the ticks' step: 0.00, 0.02 …
    )
    reserved = _step_path(points, "reserved_mb", x, y)
    if reserved:
        parts.append(
            f'<path class="reserved" d="{reserved}" fill="none" stroke="{INK}" stroke-opacity="0.55" '
            'stroke-dasharray="4 3"/>'
        )
    parts.append(
        f'<path class="allocated" d="{_step_path(points, "allocated_mb", x, y)}" fill="none" '
        f'stroke="{INK}" stroke-width="1.2"/>'
    )
    parts += _peak_marker(device, x(device["peak_ms"]), y(device["peak_mb"]), (left + right) / 2, top)
    parts.append(
        f'<text x="{(left + right) / 2:.1f}" y="{MEMORY_HEIGHT - 8}" text-anchor="middle" class="axis">'
        f"ms into the window (0 – {num(end)} ms)</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# the roofline: arithmetic intensity against achieved TFLOP/s, log-log, the device's roof (the bandwidth slope
# up to each peak) and every costed op shape as a point sized by its time (the roofline table,
# sql/roofline_reader.sql)


# a point by its bound, in the colours of those meanings (report_page.py); a roof is ink, named by its label
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

    parts = [svg_open("roofline", width, height, f"roofline: arithmetic intensity against achieved {flops_unit}")]
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


# ---------------------------------------------------------------------------------------------
# a job's rank lanes: one lane per rank on the job's clock, its steps behind, each collective drawn as its wait
# for the last rank then its transfer (in communication's colour), and above the lanes each collective's skew,
# first arrival to last (sql/report_ranks.sql)


RANK_LANE, RANK_TOP, RANK_LEFT, STEP_LANE = 22, 34, 140, "#e8ebef"  # the steps' lane is the page's grey, not a meaning

WAIT, TRANSFER, SKEW = color_for("rank_wait"), color_for("rank_transfer"), color_for("rank_skew")


def _skews(rows: list[dict]) -> list[tuple[float, float, str]]:
    """(first arrival, last arrival, label) per collective matched across ranks."""
    spans: dict[str, list[float]] = {}
    for r in rows:
        if r["what"] == "collective" and r["last_rank"] is not None:
            spans.setdefault(r["collective"], []).append(r["start_ms"])
    return [(min(v), max(v), k) for k, v in spans.items() if len(v) > 1]


def lanes_svg(rows: list[dict], width: int) -> str:
    ranks = sorted({r["rank"] for r in rows})
    end = max([r["end_ms"] or 0 for r in rows] + [1e-9])
    height = RANK_TOP + RANK_LANE * len(ranks) + 28
    right = width - 12

    def x(t: float) -> float:
        return RANK_LEFT + (right - RANK_LEFT) * max(t, 0) / end

    parts = [svg_open("ranks", width, height, "one lane per rank: steps, collectives' wait and transfer, skew")]
    for first, last, label in _skews(rows):
        parts.append(
            f'<rect x="{x(first):.1f}" y="8" width="{max(x(last) - x(first), 1):.1f}" height="6" fill="{SKEW}">'
            f"<title>{esc(label)}: skew {num(last - first)} ms</title></rect>"
        )
    parts.append(f'<text x="{RANK_LEFT - 6}" y="15" text-anchor="end" font-size="11">skew</text>')
    for lane, rank in enumerate(ranks):
        y = RANK_TOP + lane * RANK_LANE
        mine = [r for r in rows if r["rank"] == rank]
        straggler = any(r["what"] == "steps" and r["straggler"] for r in mine)
        label = f"rank {rank}" + (" (straggler)" if straggler else "")
        weight = ' font-weight="bold"' if straggler else ""
        parts.append(
            f'<text x="{RANK_LEFT - 6}" y="{y + 14}" text-anchor="end" font-size="11"{weight}>{esc(label)}</text>'
        )
        for r in mine:
            s, e = x(r["start_ms"]), x(r["end_ms"])
            if r["what"] == "steps":
                width_s = max(e - s, 1)
                parts.append(f'<rect x="{s:.1f}" y="{y + 2}" width="{width_s:.1f}" height="16" fill="{STEP_LANE}"/>')
                continue
            waited = x(r["start_ms"] + (r["wait_ms"] or 0))
            tip = (
                f"{r['collective']}: arrived {num(r['start_ms'])} ms, waited {num(r['wait_ms'])} ms for rank "
                f"{r['last_rank']}, transferred {num(r['transfer_ms'])} ms"
            )
            parts.append(
                f'<g><title>{esc(tip)}</title><rect x="{s:.1f}" y="{y + 4}" width="{max(waited - s, 0):.1f}" '
                f'height="12" fill="{WAIT}"/><rect x="{waited:.1f}" y="{y + 4}" width="{max(e - waited, 1):.1f}" '
                f'height="12" fill="{TRANSFER}"/></g>'
            )
    parts.append(
        f'<text x="{(RANK_LEFT + right) / 2:.1f}" y="{height - 8}" text-anchor="middle" class="axis">'
        f"ms on the job's clock from the earliest rank's first step (0 – {num(end)} ms)</text></svg>"
    )
    return "".join(parts)
