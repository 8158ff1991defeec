"""The sections of `libreyolo profile report` and their order on its two pages: one profile's page, and
`report A --vs B`'s comparison with the two profiles side by side. Each section turns the data report.py
gathers (a side: its summary, steps, kernels, ops, roofline, memory, rank lanes, timeline) into HTML, with
report_page.py's cells and report_charts.py's charts; the step timeline's section is report_timeline.py's.
"""

from __future__ import annotations

from libreyolo_profile.metric_catalog import GPU, METRICS, is_cpu_profile, measured_unit, report_cards
from libreyolo_profile.readers.memory import (
    HANDED_ON,
    LEVEL_NOTES,
    device_name,
    mib,
    peak_phrase,
    running_phrase,
    when_phrase,
)
from libreyolo_profile.readers.model_identity import model_line
from libreyolo_profile.readers.modules import MODULE_PHASES, inclusive_note
from libreyolo_profile.readers.report_charts import (
    POINT_MEANINGS,
    SKEW,
    TRANSFER,
    WAIT,
    hbars,
    histogram,
    icicle,
    lanes_svg,
    legend,
    memory_chart_svg,
    roofline_chart,
    share_bar,
    step_bars,
    step_peak,
)
from libreyolo_profile.readers.report_page import (
    NARROW,
    WIDE,
    bar_cell,
    chip,
    color_for,
    esc,
    html_table,
    meaning_of,
    metric_unit,
    name_cell,
    num,
    page_html,
    td,
    value_text,
    where,
)
from libreyolo_profile.readers.report_timeline import timeline_section

# ---------------------------------------------------------------------------------------------
# the top of a profile: what was profiled, its marks, the verdict, the headline figures as cards, the blame,
# and every metric with the reason where one is null


SEVERE_MARKS = {"thrashing", "random_weights"}


def header(side: dict) -> str:
    s, meta = side["summary"], side["meta"]
    p, w, model = s["profile"], s["window"] or {}, s.get("model") or {}
    facts = [f"{p['kind']} profile", p.get("device_type") or "unknown device"]
    if meta.get("device_name"):
        facts.append(meta["device_name"])
    if model.get("family"):
        facts.append(model_line(model))
    lines = [
        f'<p class="sub"><b>{esc(" · ".join(str(f) for f in facts))}</b></p>',
        f'<p class="sub" data-provenance>{esc(s["provenance"]["line"])}</p>',
        f'<p class="sub">source: <code>{esc(p["path"])}</code> ({esc(p.get("source") or "profile")})</p>',
    ]
    if meta.get("created"):
        lines.append(
            f'<p class="sub">created {esc(meta["created"])}'
            + (f" by {esc(meta['producer'])}" if meta.get("producer") else "")
            + "</p>"
        )
    if meta.get("command"):
        # pre-wrap + overflow-wrap:anywhere: the line breaks between arguments first, inside a path only
        # when one argument is wider than the page
        lines.append(
            f'<p class="sub">command: <code class="command">{esc(" ".join(map(str, meta["command"])))}</code></p>'
        )
    if w.get("source"):
        lines.append(f'<p class="sub">window: {esc(w["source"])}</p>')
    return "".join(lines)


def marks(side: dict) -> str:
    items = side["summary"].get("marks") or {}
    if not items:
        return ""
    lis = "".join(
        f'<li class="{"severe" if name in SEVERE_MARKS else ""}" data-mark="{esc(name)}">'
        f"<b>{esc(name)}</b>{esc(text)}</li>"
        for name, text in items.items()
    )
    return f'<ul class="marks">{lis}</ul>'


def verdict(side: dict) -> str:
    v = side["summary"]["verdict"]
    return (
        f'<div class="verdict" data-bound="{esc(v.get("bound"))}"><div class="bound">{esc(v.get("bound"))}</div>'
        f'<div class="reason">{esc(v.get("reason"))}</div>'
        f'<div class="next">next: {esc(v.get("next_step"))}</div></div>'
    )


BLAME_STEPS_SHOWN = 10  # steps drawn as their own blame bar; the total bar covers them all


def blame_section(side: dict, width: int) -> str:
    """The blame (summary_document's "blame") as one 100 % bar per step and one for all steps, the
    verdict beside the total; empty where the profile has no blame."""
    s = side["summary"]
    blame, bound, noun = s.get("blame") or {}, s["verdict"].get("bound"), measured_unit(s["profile"]["kind"])
    if not blame or not blame.get("steps"):
        return ""

    def bar(causes: dict) -> str:
        return share_bar([(c, v, color_for(c)) for c, v in causes.items()], "blame", width=width)

    rows = "".join(
        f'<p class="note">{esc(noun)} {esc(row["step"])} · {esc(num(row["step_ms"]))} ms</p>' + bar(row["causes"])
        for row in blame["steps"][:BLAME_STEPS_SHOWN]
    )
    more = len(blame["steps"]) - BLAME_STEPS_SHOWN
    return (
        f"<h2>Blame: what held each {esc(noun)}'s critical path{esc(where(side))}</h2>"
        f'<p class="note">all {esc(noun)}s · verdict: <b data-blame-verdict="{esc(bound)}">{esc(bound)}</b></p>'
        + bar(blame["total"])
        + legend([(c, color_for(c)) for c in blame["total"]])
        + rows
        + (f'<p class="note">… {more} more {esc(noun)}s in the total</p>' if more > 0 else "")
    )


def cards(side: dict) -> str:
    s = side["summary"]
    metrics, reasons = s["metrics"], s["null_reasons"]
    out = []
    unprofiled = set(s["provenance"]["unprofiled_metrics"])
    for name in report_cards(s["profile"]["kind"]):  # sql/metric_catalog.sql card_order
        if name not in metrics or (is_cpu_profile(s["profile"]) and METRICS[name][2] == GPU):
            continue  # a GPU figure on a CPU profile is an empty card: the metrics table says why
        value = metrics[name]
        why = f'<div class="why">{esc(reasons.get(name, ""))}</div>' if value is None else ""
        note = (s.get("metric_notes") or {}).get(name)
        if note:
            why = f'<div class="why">{esc(note)}</div>'
        out.append(
            f'<div class="card" data-metric="{esc(name)}"><div class="k">{esc(name)}</div>'
            f'<div class="v">{esc(value_text(value, metric_unit(name)))}'
            f'<span class="u">{esc(metric_unit(name))}</span></div>{why}'
            f'<div class="why" data-source>{"unprofiled" if name in unprofiled else "profiled"}</div></div>'
        )
    return f'<div class="cards">{"".join(out)}</div>'


def all_metrics(side: dict) -> str:
    s = side["summary"]
    unprofiled = set(s["provenance"]["unprofiled_metrics"])
    rows = [
        [
            f'<td class="l"><code>{esc(n)}</code></td>',
            td(v, unit=metric_unit(n)),
            f'<td class="l">{esc(metric_unit(n))}</td>',
            f'<td class="l">{"unprofiled" if n in unprofiled else "profiled"}</td>',
            f'<td class="l">{esc(s["null_reasons"].get(n, ""))}</td>',
        ]
        for n, v in s["metrics"].items()
    ]
    columns = [("metric", "l"), ("value", ""), ("unit", "l"), ("measured", "l"), ("why null", "l")]
    table = html_table(columns, rows, "metrics")
    devices = ""
    others = (s.get("devices") or [])[1:]
    if others:
        devices = "<h3>Other devices (the headline figures are the busiest device's)</h3>" + html_table(
            [("device", "l"), ("name", "l"), ("busy ms", ""), ("util %", "")],
            [
                [
                    td(d.get("device"), "l"),
                    td(d.get("name") or "", "l"),
                    td(d.get("busy_ms")),
                    td(d.get("gpu_util_pct")),
                ]
                for d in others
            ],
        )
    return f"<details><summary>every metric, with the reason where one is null</summary>{table}</details>{devices}"


# ---------------------------------------------------------------------------------------------
# time: host time per step by phase with the GPU time laid over it, the phases' shares, and for an inference
# profile the latency distribution


def shows_gpu(side: dict) -> bool:
    return not is_cpu_profile(side["summary"]["profile"]) and any((st["kernel_ms"] or 0) > 0 for st in side["steps"])


def steps_section(side: dict, compact: bool = False, y_top: float | None = None) -> str:
    s = side["summary"]
    kind = s["profile"]["kind"]
    steps, phases = side["steps"], side["phase_order"]
    show_gpu = shows_gpu(side)
    unit_word = measured_unit(kind)
    title = "Per call: latency by stage" if kind == "infer" else "Per step: host wall time by phase"
    if show_gpu:
        title += ", GPU kernel time laid over it"
    title += where(side)
    if not steps:
        return f'<h2>{esc(title)}</h2><p class="note">no measured {unit_word}s in this profile</p>'
    used = [p for p in phases if any(st["phases"].get(p) for st in steps)]
    extra = [("GPU kernel time launched by the step", color_for("gpu_busy"), "overlay")] if show_gpu else []
    notes = []
    if side.get("ranks", 1) > 1:
        notes.append(f"showing rank {side.get('rank')} of {side['ranks']} ranks in the trace")
    if "phases_inferred" in (s.get("marks") or {}):
        notes.append("phases inferred from PyTorch's own marks")
    if show_gpu:
        notes.append(
            "the dark bar is the summed duration of the kernels the step launched (overlapping streams "
            "can exceed the step's wall time; GPU utilization uses their union)"
        )
    note = f'<p class="note">{esc("; ".join(notes))}</p>' if notes else ""
    return (
        f"<h2>{esc(title)}</h2>"
        + legend([(p, color_for(p)) for p in used], extra)
        + step_bars(steps, phases, show_gpu, unit_word, width=NARROW if compact else WIDE, y_top=y_top)
        + note
    )


def phases_section(side: dict, compact: bool) -> str:
    s = side["summary"]
    rows = s["phases"]
    if not rows:
        return ""
    kind = s["profile"]["kind"]
    word = "Stages" if kind == "infer" else "Phases"
    bar = share_bar(
        [(r["phase"], r["wall_ms"], color_for(r["phase"])) for r in rows],
        "phase-share",
        width=NARROW if compact else WIDE,
    )
    table = html_table(
        [
            (("stage" if kind == "infer" else "phase"), "l"),
            ("wall ms/step", ""),
            ("wall %", ""),
            ("GPU ms/step", ""),
            ("kernels/step", ""),
            ("ops/step", ""),
            ("launches/step", ""),
        ],
        [
            [
                f'<td class="l">{esc(r["phase"])}</td>',
                td(r["wall_ms"]),
                td(r["wall_pct"]),
                td(r["gpu_ms"]),
                td(r["kernels"], unit="count"),
                td(r["ops"], unit="count"),
                td(r["launches"], unit="count"),
            ]
            for r in rows
        ],
    )
    return f"<h3>{word}: share of the host wall time</h3>{bar}" + ("" if compact else table)


def latency_section(side: dict, compact: bool = False) -> str:
    s = side["summary"]
    if s["profile"]["kind"] != "infer" or not side["steps"]:
        return ""
    values, which = latency_calls(side)
    if not values:
        return ""
    m = s["metrics"]
    # the percentile lines are the headline's, so the bars are the same calls (the unprofiled ones
    # where the profile has them); with --repeat each trial's percentile is averaged, the bars pool all
    markers = [("p50", m.get("latency_p50_ms")), ("p90", m.get("latency_p90_ms")), ("p99", m.get("latency_p99_ms"))]
    pooled = "the mean of the trials' percentiles" if s["repeat_n"] > 1 else "these calls' percentiles"
    return (
        f"<h2>Latency distribution ({len(values):,} {which} call{'s' if len(values) != 1 else ''})</h2>"
        + histogram(values, markers, width=NARROW if compact else WIDE)
        + f'<p class="note">{esc(" · ".join(f"{q} {_ms(v)}" for q, v in markers))} ({esc(pooled)}); '
        f"every {esc(which)} call is counted</p>"
    )


def _ms(value) -> str:
    return "—" if value is None else f"{num(value)} ms"


def latency_calls(side: dict) -> tuple[list[float], str]:
    """The calls the latency histogram draws, and what they are: a measured profile's unprofiled calls
    (profile.json extra.unprofiled_latency_ms, the calls behind its percentiles), else the trace's."""
    unprofiled = [v for e in side.get("extra") or [] for v in (e or {}).get("unprofiled_latency_ms") or []]
    if unprofiled and side["summary"]["provenance"]["unprofiled_metrics"]:
        return unprofiled, "unprofiled"
    return [st["host_ms"] for st in side["steps"] if st["host_ms"] is not None], "profiled"


# ---------------------------------------------------------------------------------------------
# where the time goes: device time by kernel category, the top kernels by GPU time, the top framework ops by
# self CPU time; where in the model; memory; the roofline; a job's ranks


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


# ---------------------------------------------------------------------------------------------
# `report A --vs B`: compare's figures baseline against judged profile, the verdicts, the settings the two were
# measured with that differ, and the ops and kernels that moved


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


# ---------------------------------------------------------------------------------------------
# the two pages: their sections in order


def _unit(side: dict) -> str:
    return "call" if side["summary"]["profile"]["kind"] == "infer" else "step"


def single_page(side: dict) -> str:
    s = side["summary"]
    body = (
        "<h1>libreyolo profile report</h1>"
        + header(side)
        + marks(side)
        + verdict(side)
        + cards(side)
        + blame_section(side, WIDE)
        + ranks_section(side, WIDE)
        + steps_section(side)
        + timeline_section(side, WIDE, _unit(side))
        + phases_section(side, compact=False)
        + latency_section(side)
        + modules_section(side, WIDE)
        + memory_section(side, WIDE)
        + composition_section(side)
        + roofline_section(side, WIDE)
        + kernels_section(side, compact=False)
        + ops_section(side, compact=False)
        + "<h2>All metrics</h2>"
        + all_metrics(side)
    )
    return page_html(f"profile report · {s['profile']['kind']} · {s['verdict'].get('bound')}", body, side["producer"])


def _side_column(side: dict, label: str, y_top: float) -> str:
    return (
        f'<section class="side" data-side="{esc(label)}"><h2>{esc(label)}</h2>'
        + header(side)
        + marks(side)
        + verdict(side)
        + cards(side)
        + blame_section(side, NARROW)
        + steps_section(side, compact=True, y_top=y_top)
        + timeline_section(side, NARROW, _unit(side))
        + phases_section(side, compact=True)
        + latency_section(side, compact=True)
        + composition_section(side, compact=True)
        + kernels_section(side, compact=True)
        + ops_section(side, compact=True)
        + "</section>"
    )


def compare_page(judged: dict, baseline: dict, comparison: dict) -> str:
    """`report A --vs B`: A is judged against the baseline B (compare's "after" and "before"), so a
    delta is A minus B and a regression of A is coloured worse."""
    y_top = max(step_peak(side["steps"], shows_gpu(side)) for side in (judged, baseline))
    body = (
        "<h1>libreyolo profile report · compare</h1>"
        f'<p class="sub">{esc(JUDGED_LABEL)}: <code>{esc(judged["summary"]["profile"]["path"])}</code></p>'
        f'<p class="sub">{esc(BASELINE_LABEL)}: <code>{esc(baseline["summary"]["profile"]["path"])}</code></p>'
        + compare_table(comparison)
        + items_section(comparison)
        + '<p class="note">both step charts share one time scale</p>'
        + '<div class="sides">'
        + _side_column(judged, JUDGED_LABEL, y_top)
        + _side_column(baseline, BASELINE_LABEL, y_top)
        + "</div>"
    )
    return page_html(f"profile compare · {comparison['kind']}", body, judged["producer"])
