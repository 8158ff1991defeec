"""The comparison table of `report A --vs B` (readers/report_page.py compare_page): compare's figures
baseline against judged profile, the verdicts, and the settings the two were measured with that differ."""

from __future__ import annotations

from libreyolo_profile.readers.report_html import html_table, name_cell, td
from libreyolo_profile.readers.report_svg import esc, num

ITEMS_TOP = 15  # rows per table of the ops' and kernels' changes; every row is in `compare --ops --kernels --json`
# `report A --vs B`: A is the profile judged (compare's "after"), B the baseline (its "before")
JUDGED_LABEL = "this profile (after)"
BASELINE_LABEL = "baseline, --vs (before)"


def compare_table(c: dict) -> str:
    tested = c["significance"]["tested"]
    rows = []
    for r in c["metrics"]:
        if tested and r.get("significant"):
            sig = {
                "after": '<span class="better">yes, better</span>',
                "before": '<span class="worse">yes, worse</span>',
            }.get(r.get("better"), "yes")
        elif tested and r.get("significant") is False:
            sig = "no"
        else:
            sig = "—"
        direction = {"after": "better", "before": "worse"}.get(r.get("better"), "")
        rows.append(
            [
                f'<td class="l"><code>{esc(r["metric"])}</code></td>',
                f'<td class="l">{esc(r.get("unit"))}</td>',
                td(r["before"], unit=r.get("unit")),
                td(r["after"], unit=r.get("unit")),
                td(r["delta"], direction, r.get("unit")),
                td(r["delta_pct"], direction),
                f"<td>{sig}</td>",
                f'<td class="l">{esc(r.get("note") or "")}</td>',
            ]
        )
    v = c["verdict"]
    verdict_line = (
        f"<p>verdict: <b>{esc(v['before'])}</b> (baseline) → <b>{esc(v['after'])}</b> (this profile) "
        f"({'changed' if v['changed'] else 'unchanged'})</p>"
    )
    return (
        f"<h2>{esc(BASELINE_LABEL)} → {esc(JUDGED_LABEL)}</h2>"
        + html_table(
            [
                ("metric", "l"),
                ("unit", "l"),
                (BASELINE_LABEL, ""),
                (JUDGED_LABEL, ""),
                ("Δ (this − baseline)", ""),
                ("Δ %", ""),
                ("significant", ""),
                ("note", "l"),
            ],
            rows,
            "compare",
        )
        + verdict_line
        + settings_differ_html(c)
        + f'<p class="note">{esc(c["significance"]["sentence"])}</p>'
    )


def settings_differ_html(c: dict) -> str:
    """The settings the two sides were measured with that differ (compare's own list), or a line saying
    none does."""
    from libreyolo_profile.readers.compare import measured_differently, setting_text

    differ = measured_differently(c)
    if not differ:
        return '<p class="note" data-settings-differ="0">measured with the same settings</p>'
    rows = [
        [
            f'<td class="l"><code>{esc(k)}</code></td>',
            f'<td class="l">{esc(setting_text(b))}</td>',
            f'<td class="l">{esc(setting_text(a))}</td>',
        ]
        for k, (b, a) in differ.items()
    ]
    return (
        f'<h3 data-settings-differ="{len(differ)}">measured differently: the Δ includes every setting below</h3>'
        + html_table([("setting", "l"), (BASELINE_LABEL, "l"), (JUDGED_LABEL, "l")], rows, "settings")
    )


def _signed(value, digits: int = 3) -> str:
    return "—" if value is None else f"{value:+.{digits}f}"


def items_section(c: dict) -> str:
    """Which ops and kernels got slower or faster, appeared or vanished: compare --ops / --kernels's rows
    (readers/compare_items.py), the largest |Δ| per measured step first; empty where the comparison has none."""
    parts = []
    for what, noun in (("ops", "op"), ("kernels", "kernel")):
        changes = c.get(what)
        if not changes or not changes["rows"]:
            continue
        rows = changes["rows"]
        counts = {
            "slower": sum(r["presence"] == "both" and (r["delta_ms"] or 0) > 0 for r in rows),
            "faster": sum(r["presence"] == "both" and (r["delta_ms"] or 0) < 0 for r in rows),
            "new": sum(r["presence"] == "new" for r in rows),
            "gone": sum(r["presence"] == "gone" for r in rows),
        }
        body = []
        for r in rows[:ITEMS_TOP]:
            if r["presence"] == "new":
                change = '<span class="worse">new</span>'
            elif r["presence"] == "gone":
                change = '<span class="better">gone</span>'
            elif (r["delta_ms"] or 0) > 0:
                change = '<span class="worse">slower</span>'
            elif (r["delta_ms"] or 0) < 0:
                change = '<span class="better">faster</span>'
            else:
                change = "same"
            tone = "worse" if (r["delta_ms"] or 0) > 0 else "better" if (r["delta_ms"] or 0) < 0 else ""
            body.append(
                [
                    name_cell(r["name"]),
                    f'<td class="l">{esc(r["detail"] or "")}</td>',
                    f'<td class="l" data-presence="{esc(r["presence"])}">{change}</td>',
                    td(r["before_ms"]),
                    td(r["after_ms"]),
                    f'<td class="{tone}">{esc(_signed(r["delta_ms"]))}</td>',
                    f"<td>{esc('—' if r['delta_pct'] is None else _signed(r['delta_pct'], 1))}</td>",
                    f"<td>{esc(num(r['before_calls'], 1))} → {esc(num(r['after_calls'], 1))}</td>",
                ]
            )
        more = len(rows) - len(body)
        said = (
            f"{len(rows):,} {what} on either side: {counts['slower']} slower, {counts['faster']} faster, "
            f"{counts['new']} new (only in this profile), {counts['gone']} gone (only in the baseline)"
            + (f"; the {len(body)} largest changes shown, all in `compare --{what} --json`" if more > 0 else "")
        )
        parts.append(
            f'<h3 data-items="{what}">{esc(what.capitalize())} that moved · {esc(changes["measure"])} per '
            "measured step</h3>"
            + f'<p class="note">{esc(said)}</p>'
            + html_table(
                [
                    (noun, "l"),
                    ("phases" if what == "ops" else "category", "l"),
                    ("change", "l"),
                    ("baseline ms", ""),
                    ("this ms", ""),
                    ("Δ ms", ""),
                    ("Δ %", ""),
                    ("calls/step", ""),
                ],
                body,
                f"items {what}",
            )
            + f'<p class="note">{esc(changes["sentence"])}</p>'
        )
    if not parts:
        return ""
    return "<h2>Ops and kernels: what got slower, appeared or vanished</h2>" + "".join(parts)
