"""The comparison table of `report A --vs B` (readers/report_page.py compare_page): compare's figures
baseline against judged profile, the verdicts, and the settings the two were measured with that differ."""

from __future__ import annotations

from libreyolo_profile.readers.report_html import html_table, td
from libreyolo_profile.readers.report_svg import esc

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
    from libreyolo_profile.readers.compare_render import measured_differently, setting_text

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
