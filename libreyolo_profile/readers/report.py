"""`libreyolo profile report`: one self-contained HTML file that shows a profile (or, with --vs,
two side by side with the compare table: the positional profile is the one judged, --vs the baseline).

The figures come from the readers' own SQL (summary_document, sql/ops.sql, sql/kernels.sql,
sql/report_steps.sql, compare_document), over each side opened once (readers/common.open_profile);
report_sections.py turns them into HTML (report_page.py is the page's frame, report_charts.py its charts).
Where the file goes: `--out`, else `report.html` beside a profile of ours in a writable directory, else
`./report.html` (a foreign trace, or a read-only profile: the reader never writes beside its input then).
Whichever it is, store/disk/atomic.py `write_output` guards it: never through a symlink, onto a non-regular
file or onto an input; an existing file that is not a report of ours only with --force.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from libreyolo_profile import __version__
from libreyolo_profile.errors import UsageError
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.readers import summary
from libreyolo_profile.readers.common import PHASES, OpenProfile, opened, records, run_sql
from libreyolo_profile.readers.memory import memory_chart
from libreyolo_profile.readers.report_timeline import SECTION as TIMELINE
from libreyolo_profile.readers.report_timeline import timeline
from libreyolo_profile.readers.roofline import roofline_rows
from libreyolo_profile.store.disk.atomic import write_output
from libreyolo_profile.store.disk.owned import COMPARE_FILE, REPORT_FILE, is_report
from libreyolo_profile.store.schema import PROFILE_FILE, REPEAT_FILE, TABLES, TRACE_FILE
from libreyolo_profile.store.workdir import cache_root

TOP = 15
# the files of a profile directory a report reads: never a place to write it
_PROFILE_INPUTS = (PROFILE_FILE, REPEAT_FILE, TRACE_FILE, *(f"{t}.parquet" for t in TABLES))


def _steps(con) -> tuple[list[dict], object, int]:
    """The per-step rows of sql/report_steps.sql folded into one dict per step."""
    columns, rows = run_sql(con, "report_steps.sql")
    steps: dict[int, dict] = {}
    rank, ranks = None, 1
    for row in records(columns, rows):
        rank, ranks = row["rank"], row["ranks"]
        step = steps.setdefault(
            row["step"],
            {
                "step": row["step"],
                "host_ms": row["host_ms"],
                "kernel_ms": row["kernel_ms"],
                "device_end_ms": row["device_end_ms"],
                "phases": {},
            },
        )
        if row["phase"] is not None:
            step["phases"][row["phase"]] = (step["phases"].get(row["phase"]) or 0.0) + (row["wall_ms"] or 0.0)
    return list(steps.values()), rank, ranks


def report_side(profile: OpenProfile) -> dict:
    """Everything one side of the report shows."""
    s = summary.summary_document(profile)
    loaded, con, head = profile.loaded, profile.con, profile.head
    steps, rank, ranks = _steps(con)
    k_cols, k_rows = run_sql(
        con,
        "kernels.sql",
        {"phase": None, "category": None, "grep": None, "tensorcore": False, "sort": "time", "top": TOP},
    )
    o_cols, o_rows = run_sql(con, "ops.sql", {"phase": None, "top": TOP})
    present = {p for st in steps for p in st["phases"]}
    order = PHASES[head.kind] + sorted(present - set(PHASES[head.kind]))
    return {
        "summary": s,
        "steps": steps,
        "extra": head.extra or [],
        "rank": rank,
        "ranks": ranks,
        "phase_order": order,
        "kernels": records(k_cols, k_rows),
        "ops": records(o_cols, o_rows),
        "roofline": roofline_rows(con),
        "memory": memory_chart(profile),
        "rank_lanes": records(*run_sql(con, "report_ranks.sql")),  # a job profile's lanes; empty otherwise
        "timeline": timeline(profile),  # a few steps lane by lane, from the trace (readers/report_timeline.py)
        "meta": {
            "created": head.created,  # as written
            "producer": head.producer,
            "command": head.command,
            "device_name": head.environment.device_name,
        },
        "producer": f"libreyolo-profile {__version__}",
        "home": loaded.home,
    }


def _ours(home: Path | None) -> bool:
    """A profile directory of ours on disk (not a foreign trace ingested into the cache)."""
    if home is None or not (home / PROFILE_FILE).is_file():
        return False
    try:
        Path(home).resolve().relative_to(cache_root().resolve())
        return False
    except ValueError:
        return True


def _writable(directory: Path) -> bool:
    # root passes os.access on a read-only directory: its mode bits say what the owner meant
    try:
        mode = os.stat(directory).st_mode
    except OSError:
        return False
    return os.access(directory, os.W_OK | os.X_OK) and bool(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def default_out(home: Path | None, name: str = REPORT_FILE) -> Path:
    if _ours(home) and _writable(home):
        return Path(home) / name
    return Path.cwd() / name


def report_inputs(*sources: Path | None, homes: tuple[Path | None, ...] = ()) -> list[Path]:
    """Every file the report reads: the paths given, and the profile files in each side's directory."""
    inputs = [Path(s) for s in sources if s is not None]
    for home in homes:
        if home is not None:
            inputs += [Path(home) / name for name in _PROFILE_INPUTS]
    return inputs


def write_html(text: str, out: Path, *, inputs: list[Path] = (), force: bool = False) -> Path:
    """Write atomically (a reader opening the file never sees half a report), never through a symlink,
    onto a non-regular file or onto an input, and over a file that is not a report only with `force`."""
    out = Path(out)
    if out.is_dir() and not out.is_symlink():
        raise UsageError(f"--out {out} is a directory: name the HTML file, e.g. {out / REPORT_FILE}")

    def write(path: Path) -> None:
        path.write_text(text, encoding="utf-8")

    return write_output(out, write, what="report", ours=is_report, inputs=inputs, force=force, mode=0o644)


def report_html(trace: Path | OpenProfile, vs: Path | OpenProfile | None = None) -> tuple[str, dict]:
    """(the HTML page, facts about it for --json). Each side is opened once: its summary, tables and
    the comparison all read the same opened profile."""
    from libreyolo_profile.readers import report_sections
    from libreyolo_profile.store.disk.kept_sections import asking

    with asking(TIMELINE):  # every side draws its timeline: a trace read for the first time computes it in the pass
        left_profile = opened(trace)
    left = report_side(left_profile)
    if vs is None:
        page = report_sections.single_page(left)
        return page, {
            "kind": left["summary"]["profile"]["kind"],
            "bound": left["summary"]["verdict"].get("bound"),
            "home": left["home"],
            "homes": (left["home"],),
        }
    from libreyolo_profile.readers import compare  # the compare reader owns the before/after arithmetic

    # the positional profile is the one judged and --vs its baseline: the baseline is compare's
    # "before", so a delta reads "this profile minus the baseline" and a regression reads worse
    with asking(TIMELINE):
        baseline_profile = opened(vs)
    # with the ops' and kernels' changes, as `compare --ops --kernels` diffs them (sql/compare_items.sql)
    comparison = compare.compare_document(baseline_profile.loaded, left_profile.loaded, items=("ops", "kernels"))
    baseline = report_side(baseline_profile)
    page = report_sections.compare_page(left, baseline, comparison)
    return page, {
        "kind": comparison["kind"],
        "bound": left["summary"]["verdict"].get("bound"),
        "vs_bound": baseline["summary"]["verdict"].get("bound"),
        "home": left["home"],
        "homes": (left["home"], baseline["home"]),
    }


def _charts(page: str) -> list[str]:
    import re

    return re.findall(r'<svg class="chart" data-chart="([^"]+)"', page)


def write_report_file(
    trace: Path, out: Path | None = None, vs: Path | None = None, as_json: bool = False, force: bool = False
) -> None:
    """`libreyolo profile report`: write the page, then print where it went."""
    page, facts = report_html(Path(trace), Path(vs) if vs is not None else None)
    target = (
        Path(out) if out is not None else default_out(facts["home"], COMPARE_FILE if vs is not None else REPORT_FILE)
    )
    written = write_html(page, target, inputs=report_inputs(trace, vs, homes=facts["homes"]), force=force)
    if as_json:
        emit_json(
            {
                "out": str(written.resolve()),
                "trace": str(trace),
                "vs": str(vs) if vs is not None else None,
                "kind": facts["kind"],
                "bound": facts["bound"],
                "vs_bound": facts.get("vs_bound"),
                "bytes": len(page.encode("utf-8")),
                "charts": _charts(page),
            }
        )
    else:
        from libreyolo_profile.output.textsafe import safe_line

        print(safe_line(written))  # a path from the user or the trace: keep its escapes inert


def write_report(profile_dir: Path, profile: OpenProfile | None = None) -> Path:
    """After a measurement (`run`, `infer`): the report beside a freshly written profile.json. Pass the
    profile already opened for the summary printed after it, so the directory is read once."""
    profile_dir = Path(profile_dir)
    page, _ = report_html(profile if profile is not None else profile_dir)
    return write_html(page, profile_dir / REPORT_FILE, inputs=report_inputs(homes=(profile_dir,)))
