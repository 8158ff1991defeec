"""The top of one profile's report (readers/report_page.py): what was profiled, its marks, the verdict,
the headline figures as cards, the blame, and every metric with the reason where one is null."""

from __future__ import annotations

from libreyolo_profile.metric_catalog import GPU, METRICS, is_cpu_profile, measured_unit, report_cards
from libreyolo_profile.readers.model_identity import model_line
from libreyolo_profile.readers.report_html import html_table, metric_unit, td, value_text, where
from libreyolo_profile.readers.report_svg import blame_section, esc

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


def blame(side: dict, width: int) -> str:
    s = side["summary"]
    noun = measured_unit(s["profile"]["kind"])
    return blame_section(s.get("blame") or {}, s["verdict"].get("bound"), noun, width, where=where(side))


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
