"""The HTML report's memory chart: per device the allocator's level through the window, the phases
of each step as bands behind it, reserved memory dashed where recorded, and the peak marked with
what ran then (readers/memory.py memory_chart). Inline SVG like the rest of the report (report_svg.py)."""

from __future__ import annotations

from libreyolo_profile.readers.memory import (
    HANDED_ON,
    LEVEL_NOTES,
    device_name,
    mib,
    peak_phrase,
    running_phrase,
    when_phrase,
)
from libreyolo_profile.readers.report_colors import INK, color_for
from libreyolo_profile.readers.report_svg import _open, _y_axis, esc, nice_ticks, num

HEIGHT = 260


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
    left, right, top, bottom = 64, width - 12, 14, HEIGHT - 40
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
        _open(
            f"memory-{device['allocator']}-{device['device']}",
            width,
            HEIGHT,
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
        f'<text x="{(left + right) / 2:.1f}" y="{HEIGHT - 8}" text-anchor="middle" class="axis">'
        f"ms into the window (0 – {num(end)} ms)</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


def memory_section(side: dict, width: int) -> str:
    """'Memory': one chart per device with allocator events; nothing when the profile has none."""
    chart = side.get("memory") or {}
    devices = chart.get("devices") or []
    if not devices:
        return ""
    html = ["<h2>Memory: the allocator through the window</h2>"]
    for d in devices:
        note = LEVEL_NOTES.get(d["levels"], "").replace(" — ", " ", 1).rstrip() + (
            "." if d["levels"] in LEVEL_NOTES else ""
        )
        ops = ", ".join(f"{esc(o['op'])} ({mib(o['net_mb'])} MiB handed on)" for o in d["top_ops"][:3])
        html.append(
            f"<h3>{esc(device_name(d))}</h3><p>Peak {esc(peak_phrase(d))}, {esc(when_phrase(d))}: "
            f"{esc(running_phrase(d))}.{esc(note)} Top allocating ops: {ops or '—'}. Bands: the phases of "
            "each step; dashed: reserved (where recorded).</p>"
        )
        if ops:
            html.append(f'<p class="note">{esc(HANDED_ON)}</p>')
        html.append(memory_chart_svg(d, chart.get("bands") or [], width))
    return "".join(html)
