"""The HTML report's rank lanes for a job profile: one lane per rank on the job's clock, its steps behind,
each collective drawn as its wait for the last rank then its transfer (in communication's colour), and above
the lanes each collective's skew, first arrival to last (sql/report_ranks.sql); a legend names the
colours. Inline SVG like the rest (report_svg.py)."""

from __future__ import annotations

from libreyolo_profile.readers.report_colors import color_for, meaning_of
from libreyolo_profile.readers.report_svg import _open, esc, legend, num

LANE, TOP, LEFT, STEP_LANE = 22, 34, 140, "#e8ebef"  # the steps' lane is the page's grey, not a meaning
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
    height = TOP + LANE * len(ranks) + 28
    right = width - 12

    def x(t: float) -> float:
        return LEFT + (right - LEFT) * max(t, 0) / end

    parts = [_open("ranks", width, height, "one lane per rank: steps, collectives' wait and transfer, skew")]
    for first, last, label in _skews(rows):
        parts.append(
            f'<rect x="{x(first):.1f}" y="8" width="{max(x(last) - x(first), 1):.1f}" height="6" fill="{SKEW}">'
            f"<title>{esc(label)}: skew {num(last - first)} ms</title></rect>"
        )
    parts.append(f'<text x="{LEFT - 6}" y="15" text-anchor="end" font-size="11">skew</text>')
    for lane, rank in enumerate(ranks):
        y = TOP + lane * LANE
        mine = [r for r in rows if r["rank"] == rank]
        straggler = any(r["what"] == "steps" and r["straggler"] for r in mine)
        label = f"rank {rank}" + (" (straggler)" if straggler else "")
        weight = ' font-weight="bold"' if straggler else ""
        parts.append(f'<text x="{LEFT - 6}" y="{y + 14}" text-anchor="end" font-size="11"{weight}>{esc(label)}</text>')
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
        f'<text x="{(LEFT + right) / 2:.1f}" y="{height - 8}" text-anchor="middle" class="axis">'
        f"ms on the job's clock from the earliest rank's first step (0 – {num(end)} ms)</text></svg>"
    )
    return "".join(parts)


def ranks_section(side: dict, width: int) -> str:
    """'Ranks': the lanes of a job profile; nothing for one trace."""
    rows = side.get("rank_lanes") or []
    if not rows:
        return ""
    return (
        "<h2>Ranks: one lane per rank on the job's clock</h2><p>Light grey: the rank's measured steps. Each "
        "collective: its wait for the last rank to arrive, then its transfer. Above the lanes: each collective's "
        "skew, first arrival to last.</p>"
        + legend(
            [
                (meaning_of("rank_wait"), WAIT),
                (meaning_of("rank_transfer"), TRANSFER),  # the transfer is the collective's communication
                (meaning_of("rank_skew"), SKEW),
            ]
        )
        + lanes_svg(rows, width)
    )
