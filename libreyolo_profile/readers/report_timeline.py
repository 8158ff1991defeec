"""The report's step timeline: a few steps drawn lane by lane on one time scale — the critical path (the
blame's cause of each instant), the host phases, each device stream (compute, copies, communication) and
the busiest host threads — as inline SVG (report_charts.py's conventions: a viewBox, a <title> on every mark).

The profile's tables hold per-step sums, not the intervals a timeline draws: the timeline is the profile's
report_timeline section (store/sections.py), computed by the analysis where a measurement's report asks for
it, else from the profile's trace read again once (the trace given, or the one a profile directory keeps)
through the same ingest and blame SQL, and kept with the profile (store/disk/kept_sections.py).
sql/report_timeline.sql cuts each shown step into the page's columns, so the section is bounded by
steps × lanes × columns however long the trace is. Where no trace is at hand (a LibreYOLO
built-in profile, a measurement that did not keep its trace) the section says so instead of drawing.
"""

from __future__ import annotations

import json
from pathlib import Path

from libreyolo_profile.errors import ProfileError
from libreyolo_profile.readers.common import OpenProfile
from libreyolo_profile.readers.report_charts import legend, svg_open, tick_labels
from libreyolo_profile.readers.report_page import INK, color_for, esc, meaning_of, num
from libreyolo_profile.store.ingest.lazy_sections import REPORT_TIMELINE_FILE, REPORT_TIMELINE_PARAMS, section_files
from libreyolo_profile.store.schema import TRACE_FILE

SECTION = "report_timeline"  # store/sections.py
STEPS_CAP = REPORT_TIMELINE_PARAMS["steps_cap"]  # steps drawn at most: evenly spread ones and the slowest
BINS = REPORT_TIMELINE_PARAMS["bins"]  # columns across the longest shown step
MAX_STREAMS = REPORT_TIMELINE_PARAMS["max_streams"]  # more streams than this: one lane per device and kind of work
MAX_THREADS = REPORT_TIMELINE_PARAMS["max_threads"]  # host threads drawn: the busiest
BUILTIN_SOURCE = "libreyolo-builtin"  # store/document/builtin.py SOURCE_TYPE (importing it loads the whole converter)
LANE, GAP, HEAD, LEFT, AXIS = 13, 3, 18, 180, 22


def trace_of(profile: OpenProfile) -> tuple[Path | None, int | None, str | None]:
    """(the trace the side was analysed from, the rank its tables show, why there is none)."""
    loaded, head = profile.loaded, profile.head
    home = Path(loaded.home) if loaded.home is not None else None
    job, source = head.job, head.source
    rank = job.metrics_rank if job is not None else None
    candidates = []
    if job is not None and job.traces and rank is not None:
        kept = job.traces.get(str(rank))
        if kept:
            candidates.append(Path(kept) if Path(kept).is_absolute() or home is None else home / kept)
    if home is not None:
        candidates.append(home / TRACE_FILE)
    if source.type == "trace" and source.path:
        candidates.append(Path(source.path))
    for path in candidates:
        if path.is_file():
            return path, rank, None
    if source.type == BUILTIN_SOURCE:
        return None, rank, "a LibreYOLO built-in profile holds per-step sums, not the trace a timeline draws"
    if source.type == "trace" and source.path:
        return None, rank, f"its trace {source.path} is no longer there"
    return None, rank, "the profile kept no trace to draw it from (measured with --no-trace; --trace keeps it)"


def timeline(profile: OpenProfile) -> dict:
    """{"rows": sql/report_timeline.sql's rows, "rank": the rank drawn} or {"unavailable": why}. The rows are
    the profile's report_timeline section: kept with it once computed (store/disk/kept_sections.py), so only
    the first report of a profile reads its trace again, and a later one needs neither DuckDB nor pyarrow."""
    path, rank, why = trace_of(profile)
    if path is None:
        return {"unavailable": why}
    from libreyolo_profile.store.disk.kept_sections import kept_section

    home = kept_section(profile.doc, SECTION, rank)
    if home is None:
        home = _compute(profile, path, rank)
        if isinstance(home, str):
            return {"unavailable": home}
    data = json.loads((home / REPORT_TIMELINE_FILE).read_bytes())
    ranks = len(profile.head.job.ranks) if profile.head.job is not None else 0
    return {"rows": data["rows"], "rank": rank if rank is not None else data["trace_rank"], "job_ranks": ranks}


def _compute(profile: OpenProfile, path: Path, rank: int | None) -> Path | str:
    """The section computed from the trace and kept; why not, in a line, where it cannot be."""
    import duckdb

    from libreyolo_profile.store.decode.parse import parse_trace
    from libreyolo_profile.store.disk.kept_sections import keep_section
    from libreyolo_profile.store.ingest.timeline import ingest

    try:
        parsed = parse_trace(path, report=False)  # the first read already said what it repaired
        con = ingest(parsed, profile.head.kind)
    except (ProfileError, OSError, duckdb.Error) as error:
        return f"its trace {path} could not be read again ({_first_line(error)})"
    try:
        files = section_files(con, SECTION, parsed.rank)
    except duckdb.Error as error:  # the section fails alone, as the analysis's optional sections do
        return f"it could not be computed on this trace ({_first_line(error)})"
    finally:
        con.close()
    return keep_section(profile.doc, SECTION, rank, files)


def _time(ms: float) -> str:
    """A run's time: ms, or µs below 0.01 ms (a few kernels' worth read 0.000 ms)."""
    return f"{ms:,.3f} ms" if ms >= 0.01 else f"{ms * 1000:.2f} µs"


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _lanes(rows: list[dict]) -> list[tuple[str, str]]:
    """(lane, kind) in drawing order."""
    seen = {}
    for r in rows:
        seen.setdefault((r["lane_order"], r["lane"]), r["lane_kind"])
    return [(lane, kind) for (_, lane), kind in sorted(seen.items())]


def timeline_svg(rows: list[dict], unit_word: str, width: int) -> str:
    steps: dict[int, list[dict]] = {}
    for r in rows:
        steps.setdefault(r["step"], []).append(r)
    lanes = _lanes(rows)
    bins, bin_ms = rows[0]["bins"], rows[0]["bin_ms"]
    right = width - 12
    px = (right - LEFT) / bins  # one column's width
    block = HEAD + len(lanes) * (LANE + GAP) + 8
    height = AXIS + block * len(steps) + 6
    parts = [
        svg_open("timeline", width, height, f"{unit_word} timeline: critical path, host phases, device and host lanes")
    ]
    span_ms = bins * bin_ms
    ticks, labels = tick_labels(max(r["step_ms"] for r in rows))
    for t, label in zip(ticks, labels, strict=True):
        if t > span_ms * 1.0001:
            break
        x = LEFT + (right - LEFT) * t / span_ms
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{AXIS - 4}" y2="{height - 4}" class="grid"/>')
        parts.append(f'<text x="{x:.1f}" y="{AXIS - 8}" text-anchor="middle" class="tick">{esc(label)}</text>')
    parts.append(
        f'<text x="{LEFT - 8}" y="{AXIS - 8}" text-anchor="end" class="axis">ms into the {esc(unit_word)}</text>'
    )
    for i, (step, mine) in enumerate(steps.items()):
        top = AXIS + i * block
        first = mine[0]
        head = f"{unit_word} {step} · {num(first['step_ms'])} ms" + (
            " · the slowest" if first["slowest"] and first["steps_total"] > 1 else ""
        )
        parts.append(f'<text x="4" y="{top + 13}" class="label" font-weight="600">{esc(head)}</text>')
        end_x = LEFT + px * first["step_ms"] / bin_ms
        parts.append(
            f'<line x1="{min(end_x, right):.1f}" x2="{min(end_x, right):.1f}" y1="{top + 4}" '
            f'y2="{top + block - 6}" class="axisline"><title>{esc(unit_word)} {step} ends</title></line>'
        )
        for j, (lane, _kind) in enumerate(lanes):
            y = top + HEAD + j * (LANE + GAP)
            parts.append(
                f'<text x="{LEFT - 8}" y="{y + LANE - 2}" text-anchor="end" class="tick">{esc(lane)}</text>'
                # an outline, not a fill: unexplained idle's pale grey must show against the lane
                f'<rect x="{LEFT}" y="{y}" width="{right - LEFT}" height="{LANE}" fill="none" stroke="{INK}" '
                'stroke-opacity="0.15" stroke-width="0.6"/>'
            )
            for r in (r for r in mine if r["lane"] == lane):
                x0 = LEFT + r["bin_start"] * px
                w = max((r["bin_end"] - r["bin_start"]) * px, 0.6)
                opacity = "" if r["level"] == 4 else f' fill-opacity="{0.25 * r["level"] + 0.1:.2f}"'
                at = r["bin_start"] * bin_ms
                parts.append(
                    f'<rect class="lane-run" x="{x0:.2f}" y="{y}" width="{w:.2f}" height="{LANE}" '
                    f'fill="{color_for(r["key"])}"{opacity}><title>{esc(unit_word)} {step} · {esc(lane)} · '
                    f"{esc(r['key'])} {_time(r['key_ms'])} of the {_time(r['busy_ms'])} covered in "
                    f"{esc(num(at, 3))}–{esc(num(r['bin_end'] * bin_ms, 3))} ms</title></rect>"
                )
    parts.append("</svg>")
    return "".join(parts)


def timeline_section(side: dict, width: int, unit_word: str = "step") -> str:
    data = side.get("timeline") or {}
    title = f"Timeline: inside each {unit_word}"
    if "unavailable" in data:
        return f'<h2>{esc(title)}</h2><p class="note">not drawn: {esc(data["unavailable"])}</p>'
    rows = data.get("rows") or []
    if not rows:
        return f'<h2>{esc(title)}</h2><p class="note">not drawn: the trace holds no measured {esc(unit_word)}s</p>'
    shown = sorted({r["step"] for r in rows})
    total, streams, threads = rows[0]["steps_total"], rows[0]["streams_total"], rows[0]["threads_total"]
    notes = []
    if total > len(shown):
        slowest = next(r["step"] for r in rows if r["slowest"])
        notes.append(
            f"{len(shown)} of {total:,} {unit_word}s drawn: evenly spread from the first, and the slowest "
            f"({unit_word} {slowest})"
        )
    if streams > MAX_STREAMS:
        notes.append(f"{streams} device streams: one lane per device and kind of work")
    drawn_threads = len({r["lane"] for r in rows if r["lane_kind"] == "host"})
    if threads > drawn_threads:
        notes.append(f"the {drawn_threads} busiest of {threads} host threads drawn")
    if data.get("job_ranks"):
        notes.append(
            f"rank {data['rank']} of {data['job_ranks']} in the job, the rank its tables show (the rank lanes "
            "above have every rank)"
        )
    elif data.get("rank") is not None:
        notes.append(f"rank {data['rank']}")
    notes.append(
        f"one column is {num(rows[0]['bin_ms'], 3)} ms: each shows what covers most of it, lighter where "
        "little of the column is covered, so a cause too thin to win a column is not drawn (the blame above "
        "has them all; hover a run for its time)"
    )
    by_meaning: dict[str, list[str]] = {}  # one swatch per colour: its name, or the meaning names share
    for r in rows:
        names = by_meaning.setdefault(meaning_of(r["key"]), [])
        if r["key"] not in names:
            names.append(r["key"])
    swatches = [
        (names[0] if len(names) == 1 else meaning, color_for(names[0])) for meaning, names in by_meaning.items()
    ]
    return (
        f"<h2>{esc(title)}</h2>"
        + f'<p class="note">{esc("; ".join(notes))}</p>'
        + legend(swatches)
        + timeline_svg(rows, unit_word, width)
    )
