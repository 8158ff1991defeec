"""The page of `libreyolo profile report`: one self-contained HTML file (inline CSS, inline SVG, no script,
no external URL; a Content-Security-Policy forbids any fetch). This module is its frame (the head, the
stylesheet, the footer), the HTML every section and chart writes with (escaping, figures as text, table
cells, a category chip, the chart widths) and the report's colours. Every string from a trace or profile is
escaped (`esc`); cells come back as already-escaped HTML. The charts are report_charts.py's, the sections
and their order report_sections.py's.
"""

from __future__ import annotations

import html

from libreyolo_profile.metric_catalog import METRICS
from libreyolo_profile.output.terminal import fmt_count
from libreyolo_profile.output.textsafe import safe_text
from libreyolo_profile.vocabulary import report_meanings

# ---------------------------------------------------------------------------------------------
# the colours: one per meaning, whichever chart draws it (sql/palette.sql defines them). A phase, a kernel
# category, a blame cause and a chart's own marks (the latency bars, the roofline's bounds, a rank's wait) each
# have a meaning; names that mean one thing share its entry (the dataload phase and the blame cause that is its
# time; the gemm category and the gemm/conv causes), and no colour stands for two meanings, so a hue read in
# one chart means the same in every other. tests/test_report_colors.py holds the palette to that: every
# meaning's colour differs from every other by at least MIN_DELTA_E (CIE76), and no chart draws a colour that
# is not here.

# meaning: (colour, the names that carry it: train and infer phases, kernel categories, blame causes, marks);
# the palette is sql/palette.sql's
MEANINGS: dict[str, tuple[str, tuple[str, ...]]] = report_meanings()

MIN_DELTA_E = 12.0  # the least CIE76 distance between two meanings' colours

COLORS = {name: colour for colour, names in MEANINGS.values() for name in names}

# text, axes, grid, roof lines, outlines, markers: the page's ink, not a meaning (a label says what it is)
INK = "#1d2329"

# names the report does not know (a category a later version adds): lighter greys, none a meaning's colour
FALLBACK = ("#d0d3d4", "#c4c9cc", "#dcdde0")


def color_for(name: str) -> str:
    """The colour of a phase, category, cause or mark name; an unknown name gets a fallback grey."""
    if name in COLORS:
        return COLORS[name]
    return FALLBACK[sum(map(ord, str(name))) % len(FALLBACK)]


def meaning_of(name: str) -> str:
    """The meaning a name's colour stands for (a legend's word for it); the name itself when it has none."""
    return next((meaning for meaning, (_, names) in MEANINGS.items() if name in names), name)


# ---------------------------------------------------------------------------------------------
# HTML: escaped text, figures, table cells


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


WIDE, NARROW = 900, 600  # chart viewBox widths: full page, one side of the compare view

NAME_CHARS = 150


def metric_unit(metric: str) -> str:
    return METRICS.get(metric, ("",))[0]


def value_text(value, unit: str | None = None) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if unit == "count" and isinstance(value, (int, float)):
        return fmt_count(value)  # 706 kernels, not 706.00
    if isinstance(value, (int, float)):
        return num(float(value))
    return "—" if value is None else str(value)


def html_table(headers: list[tuple[str, str]], rows: list[list[str]], cls: str = "") -> str:
    """headers: (text, css class); cells are already-escaped HTML."""
    head = "".join(f'<th class="{c}">{esc(h)}</th>' for h, c in headers)
    body = "".join("<tr>" + "".join(cells) + "</tr>" for cells in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def td(value, cls: str = "", unit: str | None = None) -> str:
    return f'<td class="{cls}">{esc(value_text(value, unit))}</td>'


def name_cell(name: str) -> str:
    shown = name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"
    return f'<td class="name" title="{esc(name)}">{esc(shown)}</td>'


def bar_cell(pct: float | None, color: str) -> str:
    width = max(0.0, min(100.0, pct or 0.0))
    return f'<td class="bar"><span style="width:{width:.1f}%;background:{color}"></span></td>'


def chip(category: str) -> str:
    return f'<span class="chip" style="background:{color_for(category)}">{esc(category)}</span>'


def where(side: dict) -> str:
    """' · profiled: 20 calls': which calls a section's figures were read from (readers/provenance.py)."""
    label = (side["summary"].get("provenance") or {}).get("tables")
    return f" · {label}" if label else ""


# ---------------------------------------------------------------------------------------------
# the frame: head, stylesheet, footer


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


def page_html(title: str, body: str, producer: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta name="generator" content="libreyolo-profile report">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body><main>{body}"
        f"<footer>written by {esc(producer)} · self-contained: no scripts, fonts or network requests; "
        "charts are inline SVG (hover a bar for its figure)</footer></main></body></html>\n"
    )
