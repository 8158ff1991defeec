"""Where one profile's time goes, in its report (readers/report_page.py): device time by kernel
category, the top kernels by GPU time and the top framework ops by self CPU time."""

from __future__ import annotations

from libreyolo_profile.metric_catalog import is_cpu_profile
from libreyolo_profile.readers.report_colors import color_for
from libreyolo_profile.readers.report_html import NARROW, WIDE, bar_cell, chip, html_table, name_cell, td, where
from libreyolo_profile.readers.report_svg import esc, hbars, num, share_bar

TOP_ROWS, TOP_ROWS_COMPACT = 15, 8


def composition_section(side: dict, compact: bool = False) -> str:
    s = side["summary"]
    cats = s["categories"]
    if not cats:
        why = (
            "CPU profile: no device kernels were recorded; the time goes to the framework ops below"
            if is_cpu_profile(s["profile"])
            else "no device kernels were recorded in the window"
        )
        return f'<h2>Kernel composition by category</h2><p class="note">{esc(why)}</p>'
    rows = [
        (
            r["category"],
            r["ms_per_step"] or 0.0,
            color_for(r["category"]),
            f"{num(r['ms_per_step'])} ms/step · {num(r['share_pct'], 1)} %",
        )
        for r in cats
    ]
    table = html_table(
        [
            ("category", "l"),
            ("ms/step", ""),
            ("% of device time (kernels + copies)", ""),
            ("% of kernel time", ""),
            ("calls/step", ""),
            ("on Tensor Cores %", ""),
        ],
        [
            [
                f'<td class="l">{chip(r["category"])}</td>',
                td(r["ms_per_step"]),
                td(r["share_pct"]),
                td(r.get("kernel_share_pct")),
                td(r["calls_per_step"], unit="count"),
                td(r["tensorcore_pct"]),
            ]
            for r in cats
        ],
    )
    width = NARROW if compact else WIDE
    return (
        f"<h2>Kernel composition by category{esc(where(side))}</h2>"
        + share_bar(
            [(r["category"], r["ms_per_step"], color_for(r["category"])) for r in cats],
            "category-share",
            width=width,
        )
        + hbars(rows, "categories", "ms per step", width=width, label_width=110 if compact else 150)
        + ("" if compact else table)
        + '<p class="note">Tensor Core detection is a kernel-name heuristic</p>'
    )


def kernels_section(side: dict, compact: bool) -> str:
    rows = side["kernels"][: TOP_ROWS_COMPACT if compact else TOP_ROWS]
    if not rows:
        return ""
    if compact:
        return f"<h2>Top kernels by GPU time{esc(where(side))}</h2>" + html_table(
            [("kernel", "l"), ("category", "l"), ("ms/step", ""), ("% of device time", "")],
            [
                [
                    name_cell(r["name"]),
                    f'<td class="l">{chip(r["category"])}</td>',
                    td(r["ms_per_step"]),
                    td(r["share_pct"]),
                ]
                for r in rows
            ],
            "kernels",
        )
    body = [
        [
            name_cell(r["name"]),
            f'<td class="l">{chip(r["category"])}</td>',
            td(r["ms_per_step"]),
            td(r["share_pct"]),
            bar_cell(r["share_pct"], color_for(r["category"])),
            td(r["calls_per_step"], unit="count"),
            td(r["mean_us"]),
            td("yes" if r["tensorcore"] else ""),
        ]
        for r in rows
    ]
    return f"<h2>Top kernels by GPU time{esc(where(side))}</h2>" + html_table(
        [
            ("kernel", "l"),
            ("category", "l"),
            ("ms/step", ""),
            ("% of device time", ""),
            ("", "l"),
            ("calls/step", ""),
            ("mean µs", ""),
            ("TC", ""),
        ],
        body,
        "kernels",
    )


def ops_section(side: dict, compact: bool) -> str:
    rows = side["ops"][: TOP_ROWS_COMPACT if compact else TOP_ROWS]
    if not rows:
        return '<h2>Top framework ops by self CPU time</h2><p class="note">the trace records no framework ops</p>'
    if compact:
        return f"<h2>Top framework ops by self CPU time{esc(where(side))}</h2>" + html_table(
            [("op", "l"), ("self ms/step", ""), ("self %", ""), ("total ms/step", "")],
            [
                [name_cell(r["name"]), td(r["self_ms_per_step"]), td(r["self_pct"]), td(r["total_ms_per_step"])]
                for r in rows
            ],
            "ops",
        )
    body = [
        [
            name_cell(r["name"]),
            td(r["self_ms_per_step"]),
            td(r["self_pct"]),
            bar_cell(r["self_pct"], color_for("op_self_share")),
            td(r["total_ms_per_step"]),
            td(r["calls_per_step"], unit="count"),
            td(r["self_us_per_call"]),
        ]
        for r in rows
    ]
    return (
        f"<h2>Top framework ops by self CPU time{esc(where(side))}</h2>"
        + html_table(
            [
                ("op", "l"),
                ("self ms/step", ""),
                ("self %", ""),
                ("", "l"),
                ("total ms/step", ""),
                ("calls/step", ""),
                ("self µs/call", ""),
            ],
            body,
            "ops",
        )
        + '<p class="note">ranked by exclusive time, so nested ops are not counted twice; '
        "total (inclusive) time beside it</p>"
    )
