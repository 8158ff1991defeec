"""The HTML of `libreyolo profile report`: one self-contained page (inline CSS, inline SVG, no script,
no external URL; a Content-Security-Policy forbids any fetch), built from the data
`report.py` gathers. Every string from a trace or profile is escaped (`esc`)."""

from __future__ import annotations

from libreyolo_profile.metric_catalog import GPU, METRICS, is_cpu_profile, measured_unit
from libreyolo_profile.output.terminal import fmt_count
from libreyolo_profile.readers.model_identity import model_line
from libreyolo_profile.readers.report_colors import color_for
from libreyolo_profile.readers.report_memory import memory_section
from libreyolo_profile.readers.report_modules import modules_section
from libreyolo_profile.readers.report_ranks import ranks_section
from libreyolo_profile.readers.report_roofline import roofline_section
from libreyolo_profile.readers.report_svg import (
    blame_section,
    esc,
    hbars,
    histogram,
    legend,
    num,
    share_bar,
    step_bars,
    step_peak,
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

HEADLINE = {
    "train": [
        "step_ms",
        "throughput_img_s",
        "gpu_util_pct",
        "tensorcore_pct",
        "peak_vram_mb",
        "peak_mem_mb",
        "host_overhead_pct",
        "launches_per_step",
        "dataload_pct",
        "leaf_busy_pct",
        "profiler_overhead_pct",
    ],
    "infer": [
        "step_ms",
        "latency_p50_ms",
        "latency_p90_ms",
        "latency_p99_ms",
        "throughput_img_s",
        "gpu_util_pct",
        "tensorcore_pct",
        "peak_vram_mb",
        "peak_mem_mb",
        "host_overhead_pct",
        "launches_per_step",
        "leaf_busy_pct",
        "profiler_overhead_pct",
    ],
}
TOP_ROWS, TOP_ROWS_COMPACT = 15, 8
WIDE, NARROW = 900, 600  # chart viewBox widths: full page, one side of the compare view
NAME_CHARS = 150

STYLE = """
:root{--fg:#1d2329;--mute:#5f6b76;--line:#dde2e7;--card:#f6f8fa;--warn:#fff4d6;--warnline:#e8b93c;
--bad:#fde8e6;--badline:#d0453a;--good:#1e8e4f;--worse:#c0392b}
*{box-sizing:border-box}
body{margin:0;color:var(--fg);background:#fff;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}
main{max-width:1240px;margin:0 auto;padding:22px 26px 40px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
.sub{color:var(--mute);margin:0 0 2px;overflow-wrap:anywhere}
.sub code.command{white-space:pre-wrap;overflow-wrap:anywhere}
.marks{margin:12px 0;padding:0;list-style:none}
.marks li{background:var(--warn);border-left:4px solid var(--warnline);padding:6px 10px;margin:4px 0;border-radius:3px}
.marks li.severe{background:var(--bad);border-color:var(--badline)}
.marks b{font-family:ui-monospace,Menlo,Consolas,monospace;font-weight:600;margin-right:6px}
.verdict{border:1px solid var(--line);border-left:6px solid var(--mute);border-radius:4px;padding:10px 14px;
margin:14px 0;background:var(--card)}
.verdict .bound{font-size:20px;font-weight:700;letter-spacing:.2px}
.verdict .next{color:var(--mute);margin-top:4px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px;margin:10px 0}
.card{background:var(--card);border:1px solid var(--line);border-radius:5px;padding:8px 10px}
.card .k{color:var(--mute);font-size:12px;font-family:ui-monospace,Menlo,Consolas,monospace}
.card .v{font-size:20px;font-weight:650}.card .u{font-size:12px;color:var(--mute);margin-left:3px}
.card .why{font-size:11.5px;color:var(--mute);line-height:1.3;margin-top:2px}
svg.chart{width:100%;height:auto;display:block;margin:4px 0}
svg .grid{stroke:#e7ebef;stroke-width:1}svg .axisline{stroke:#8a949e;stroke-width:1}
svg .tick{font-size:11px;fill:#5f6b76}svg .axis{font-size:12px;fill:#3d4650}svg .label{font-size:12px;fill:#1d2329}
svg .inbar{font-size:12px;fill:#fff;font-weight:600}
svg .marker-label{fill:var(--fg);font-weight:600}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12.5px;color:var(--mute);margin:2px 0 4px}
.legend .key i{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.legend .key i.overlay{opacity:.62;width:6px}
table{border-collapse:collapse;width:100%;font-size:13px;margin:6px 0}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:right;vertical-align:top}
th{background:var(--card);font-weight:600}
th:first-child,td:first-child,td.l,th.l{text-align:left}
td.name{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;word-break:break-all;text-align:left;max-width:560px;min-width:240px}
td.bar{width:130px;text-align:left}
td.bar span{display:inline-block;height:10px;border-radius:2px;vertical-align:middle}
.chip{display:inline-block;padding:0 6px;border-radius:8px;color:#fff;font-size:11.5px}
.note{color:var(--mute);font-size:12.5px;margin:4px 0}
.better{color:var(--good);font-weight:600}.worse{color:var(--worse);font-weight:600}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:26px}
.sides>section{min-width:0}
details summary{cursor:pointer;color:var(--mute);margin:8px 0}
footer{margin-top:34px;color:var(--mute);font-size:12px;border-top:1px solid var(--line);padding-top:8px}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
"""

SEVERE_MARKS = {"thrashing", "random_weights"}
# `report A --vs B`: A is the profile judged (compare's "after"), B the baseline (its "before")
JUDGED_LABEL = "this profile (after)"
BASELINE_LABEL = "baseline, --vs (before)"


def _page(title: str, body: str, producer: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta name="generator" content="libreyolo-profile report">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body><main>{body}"
        f"<footer>written by {esc(producer)} · self-contained: no scripts, fonts or network requests; "
        "charts are inline SVG (hover a bar for its figure)</footer></main></body></html>\n"
    )


def _unit(metric: str) -> str:
    return METRICS.get(metric, ("",))[0]


def _value(value, unit: str | None = None) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if unit == "count" and isinstance(value, (int, float)):
        return fmt_count(value)  # 706 kernels, not 706.00
    if isinstance(value, (int, float)):
        return num(float(value))
    return "—" if value is None else str(value)


def _table(headers: list[tuple[str, str]], rows: list[list[str]], cls: str = "") -> str:
    """headers: (text, css class); cells are already-escaped HTML."""
    head = "".join(f'<th class="{c}">{esc(h)}</th>' for h, c in headers)
    body = "".join("<tr>" + "".join(cells) + "</tr>" for cells in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _td(value, cls: str = "", unit: str | None = None) -> str:
    return f'<td class="{cls}">{esc(_value(value, unit))}</td>'


def _name_cell(name: str) -> str:
    shown = name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"
    return f'<td class="name" title="{esc(name)}">{esc(shown)}</td>'


def _bar_cell(pct: float | None, color: str) -> str:
    width = max(0.0, min(100.0, pct or 0.0))
    return f'<td class="bar"><span style="width:{width:.1f}%;background:{color}"></span></td>'


def _chip(category: str) -> str:
    return f'<span class="chip" style="background:{color_for(category)}">{esc(category)}</span>'


# ---------------------------------------------------------------------------------------------
# sections of one profile


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


def where(side: dict) -> str:
    """' · profiled: 20 calls': which calls a section's figures were read from (readers/provenance.py)."""
    label = (side["summary"].get("provenance") or {}).get("tables")
    return f" · {label}" if label else ""


def blame(side: dict, width: int) -> str:
    s = side["summary"]
    noun = measured_unit(s["profile"]["kind"])
    return blame_section(s.get("blame") or {}, s["verdict"].get("bound"), noun, width, where=where(side))


def cards(side: dict) -> str:
    s = side["summary"]
    metrics, reasons = s["metrics"], s["null_reasons"]
    out = []
    unprofiled = set(s["provenance"]["unprofiled_metrics"])
    for name in HEADLINE[s["profile"]["kind"]]:
        if name not in metrics or (is_cpu_profile(s["profile"]) and METRICS[name][2] == GPU):
            continue  # a GPU figure on a CPU profile is an empty card: the metrics table says why
        value = metrics[name]
        why = f'<div class="why">{esc(reasons.get(name, ""))}</div>' if value is None else ""
        note = (s.get("metric_notes") or {}).get(name)
        if note:
            why = f'<div class="why">{esc(note)}</div>'
        out.append(
            f'<div class="card" data-metric="{esc(name)}"><div class="k">{esc(name)}</div>'
            f'<div class="v">{esc(_value(value, _unit(name)))}'
            f'<span class="u">{esc(_unit(name))}</span></div>{why}'
            f'<div class="why" data-source>{"unprofiled" if name in unprofiled else "profiled"}</div></div>'
        )
    return f'<div class="cards">{"".join(out)}</div>'


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
    table = _table(
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
                _td(r["wall_ms"]),
                _td(r["wall_pct"]),
                _td(r["gpu_ms"]),
                _td(r["kernels"], unit="count"),
                _td(r["ops"], unit="count"),
                _td(r["launches"], unit="count"),
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
    table = _table(
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
                f'<td class="l">{_chip(r["category"])}</td>',
                _td(r["ms_per_step"]),
                _td(r["share_pct"]),
                _td(r.get("kernel_share_pct")),
                _td(r["calls_per_step"], unit="count"),
                _td(r["tensorcore_pct"]),
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
        return f"<h2>Top kernels by GPU time{esc(where(side))}</h2>" + _table(
            [("kernel", "l"), ("category", "l"), ("ms/step", ""), ("% of device time", "")],
            [
                [
                    _name_cell(r["name"]),
                    f'<td class="l">{_chip(r["category"])}</td>',
                    _td(r["ms_per_step"]),
                    _td(r["share_pct"]),
                ]
                for r in rows
            ],
            "kernels",
        )
    body = [
        [
            _name_cell(r["name"]),
            f'<td class="l">{_chip(r["category"])}</td>',
            _td(r["ms_per_step"]),
            _td(r["share_pct"]),
            _bar_cell(r["share_pct"], color_for(r["category"])),
            _td(r["calls_per_step"], unit="count"),
            _td(r["mean_us"]),
            _td("yes" if r["tensorcore"] else ""),
        ]
        for r in rows
    ]
    return f"<h2>Top kernels by GPU time{esc(where(side))}</h2>" + _table(
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
        return f"<h2>Top framework ops by self CPU time{esc(where(side))}</h2>" + _table(
            [("op", "l"), ("self ms/step", ""), ("self %", ""), ("total ms/step", "")],
            [
                [_name_cell(r["name"]), _td(r["self_ms_per_step"]), _td(r["self_pct"]), _td(r["total_ms_per_step"])]
                for r in rows
            ],
            "ops",
        )
    body = [
        [
            _name_cell(r["name"]),
            _td(r["self_ms_per_step"]),
            _td(r["self_pct"]),
            _bar_cell(r["self_pct"], color_for("op_self_share")),
            _td(r["total_ms_per_step"]),
            _td(r["calls_per_step"], unit="count"),
            _td(r["self_us_per_call"]),
        ]
        for r in rows
    ]
    return (
        f"<h2>Top framework ops by self CPU time{esc(where(side))}</h2>"
        + _table(
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


def all_metrics(side: dict) -> str:
    s = side["summary"]
    unprofiled = set(s["provenance"]["unprofiled_metrics"])
    rows = [
        [
            f'<td class="l"><code>{esc(n)}</code></td>',
            _td(v, unit=_unit(n)),
            f'<td class="l">{esc(_unit(n))}</td>',
            f'<td class="l">{"unprofiled" if n in unprofiled else "profiled"}</td>',
            f'<td class="l">{esc(s["null_reasons"].get(n, ""))}</td>',
        ]
        for n, v in s["metrics"].items()
    ]
    columns = [("metric", "l"), ("value", ""), ("unit", "l"), ("measured", "l"), ("why null", "l")]
    table = _table(columns, rows, "metrics")
    devices = ""
    others = (s.get("devices") or [])[1:]
    if others:
        devices = "<h3>Other devices (the headline figures are the busiest device's)</h3>" + _table(
            [("device", "l"), ("name", "l"), ("busy ms", ""), ("util %", "")],
            [
                [
                    _td(d.get("device"), "l"),
                    _td(d.get("name") or "", "l"),
                    _td(d.get("busy_ms")),
                    _td(d.get("gpu_util_pct")),
                ]
                for d in others
            ],
        )
    return f"<details><summary>every metric, with the reason where one is null</summary>{table}</details>{devices}"


def single_page(side: dict) -> str:
    s = side["summary"]
    body = (
        "<h1>libreyolo profile report</h1>"
        + header(side)
        + marks(side)
        + verdict(side)
        + cards(side)
        + blame(side, WIDE)
        + ranks_section(side, WIDE)
        + steps_section(side)
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
    return _page(f"profile report · {s['profile']['kind']} · {s['verdict'].get('bound')}", body, side["producer"])


# ---------------------------------------------------------------------------------------------
# the compare view


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
                _td(r["before"], unit=r.get("unit")),
                _td(r["after"], unit=r.get("unit")),
                _td(r["delta"], direction, r.get("unit")),
                _td(r["delta_pct"], direction),
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
        + _table(
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
        + _table([("setting", "l"), (BASELINE_LABEL, "l"), (JUDGED_LABEL, "l")], rows, "settings")
    )


def _side_column(side: dict, label: str, y_top: float) -> str:
    return (
        f'<section class="side" data-side="{esc(label)}"><h2>{esc(label)}</h2>'
        + header(side)
        + marks(side)
        + verdict(side)
        + cards(side)
        + blame(side, NARROW)
        + steps_section(side, compact=True, y_top=y_top)
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
        + '<p class="note">both step charts share one time scale</p>'
        + '<div class="sides">'
        + _side_column(judged, JUDGED_LABEL, y_top)
        + _side_column(baseline, BASELINE_LABEL, y_top)
        + "</div>"
    )
    return _page(f"profile compare · {comparison['kind']}", body, judged["producer"])
