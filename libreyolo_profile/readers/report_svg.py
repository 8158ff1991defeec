"""Inline SVG charts for the HTML report, drawn in Python: no chart library, no script, no fetch.

Every chart is an `<svg class="chart" data-chart="…">` sized by its viewBox (it scales to the
column it sits in); every mark carries a `<title>` so hovering shows the exact figure. Every
string that came from a trace goes through `esc`.
"""

from __future__ import annotations

import html
import math

from libreyolo_profile.output.textsafe import safe_text
from libreyolo_profile.readers.report_colors import INK, color_for

FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"


def esc(text) -> str:
    """HTML-escaped, and every control character but newline and tab made visible (`\\x1b`): a name
    from a trace can hold ESC or BEL, which `cat report.html` would hand to the terminal."""
    return html.escape(safe_text("" if text is None else text), quote=True)


def num(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


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


def _open(kind: str, width: int, height: int, label: str) -> str:
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
    parts = [_open("steps", width, height, f"host time per {unit_word} by phase")]
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
    parts = [_open(kind, width, height, "shares")]
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
    parts = [_open(kind, width, height, f"{kind} in {unit}")]
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
        _open("latency", width, height, "latency distribution"),
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


def blame_section(blame: dict, bound: str | None, noun: str, width: int, steps_shown: int = 10, where: str = "") -> str:
    """The blame (summary_document's "blame") as one 100 % bar per step and one for all steps, the
    verdict beside the total; empty where the profile has no blame."""
    if not blame or not blame.get("steps"):
        return ""

    def bar(causes: dict) -> str:
        return share_bar([(c, v, color_for(c)) for c, v in causes.items()], "blame", width=width)

    rows = "".join(
        f'<p class="note">{esc(noun)} {esc(row["step"])} · {esc(num(row["step_ms"]))} ms</p>' + bar(row["causes"])
        for row in blame["steps"][:steps_shown]
    )
    more = len(blame["steps"]) - steps_shown
    return (
        f"<h2>Blame: what held each {esc(noun)}'s critical path{esc(where)}</h2>"
        f'<p class="note">all {esc(noun)}s · verdict: <b data-blame-verdict="{esc(bound)}">{esc(bound)}</b></p>'
        + bar(blame["total"])
        + legend([(c, color_for(c)) for c in blame["total"]])
        + rows
        + (f'<p class="note">… {more} more {esc(noun)}s in the total</p>' if more > 0 else "")
    )
