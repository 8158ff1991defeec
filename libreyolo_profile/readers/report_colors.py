"""The report's colours: one colour per meaning, whichever chart draws it (sql/palette.sql defines them).
A phase, a kernel category, a blame cause and a chart's own marks (the latency bars, the roofline's bounds,
a rank's wait) each have a meaning; names that mean one thing share its entry (the dataload phase and the
blame cause that is its time; the gemm category and the gemm/conv causes), and no colour stands for two
meanings, so a hue read in one chart means the same in every other. tests/test_report_colors.py holds the
palette to that: every meaning's colour differs from every other by at least MIN_DELTA_E (CIE76), and no
chart draws a colour that is not here.
"""

from __future__ import annotations

from libreyolo_profile.vocabulary import report_meanings

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
