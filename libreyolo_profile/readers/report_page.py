"""The HTML of `libreyolo profile report`: one self-contained page (inline CSS, inline SVG, no script,
no external URL; a Content-Security-Policy forbids any fetch), built from the data
`report.py` gathers. Every string from a trace or profile is escaped (`esc`).

This module is the page itself (its head, stylesheet and the order of its sections); the sections are
drawn by report_overview.py, report_timing.py, report_breakdown.py, report_compare.py and the other
report_*.py modules."""

from __future__ import annotations

from libreyolo_profile.readers.report_breakdown import composition_section, kernels_section, ops_section
from libreyolo_profile.readers.report_compare import BASELINE_LABEL, JUDGED_LABEL, compare_table, items_section
from libreyolo_profile.readers.report_html import NARROW, WIDE
from libreyolo_profile.readers.report_memory import memory_section
from libreyolo_profile.readers.report_modules import modules_section
from libreyolo_profile.readers.report_overview import all_metrics, blame, cards, header, marks, verdict
from libreyolo_profile.readers.report_ranks import ranks_section
from libreyolo_profile.readers.report_roofline import roofline_section
from libreyolo_profile.readers.report_svg import esc, step_peak
from libreyolo_profile.readers.report_timeline import timeline_section
from libreyolo_profile.readers.report_timing import latency_section, phases_section, shows_gpu, steps_section

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

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
        + blame(side, WIDE)
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
    return _page(f"profile report · {s['profile']['kind']} · {s['verdict'].get('bound')}", body, side["producer"])


def _side_column(side: dict, label: str, y_top: float) -> str:
    return (
        f'<section class="side" data-side="{esc(label)}"><h2>{esc(label)}</h2>'
        + header(side)
        + marks(side)
        + verdict(side)
        + cards(side)
        + blame(side, NARROW)
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
    return _page(f"profile compare · {comparison['kind']}", body, judged["producer"])
