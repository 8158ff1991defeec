"""`libreyolo profile kernels`: individual GPU kernels (sql/kernels.sql)."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.metric_catalog import is_cpu_profile
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import short_name, stderr_note, stdout_console, table
from libreyolo_profile.readers.common import check_phase, open_profile, profile_identity, records, run_sql

SORTS = ("time", "count", "name")


def _check_regex(con, pattern: str | None) -> None:
    if pattern is None:
        return
    try:
        con.execute("SELECT regexp_matches('', $p)", {"p": pattern}).fetchall()
    except Exception as exc:
        raise UsageError(f"invalid --grep regular expression '{pattern}': {str(exc).splitlines()[0]}") from None


def print_kernels(trace: Path, *, top: int, category: str | None, grep: str | None, tensorcore: bool, sort: str,
         phase: str | None, as_json: bool) -> None:
    if sort not in SORTS:
        raise UsageError(f"--sort must be one of {', '.join(SORTS)}, not '{sort}'")
    if top < 1:
        raise UsageError(f"--top must be at least 1, not {top}")
    profile = open_profile(trace)
    loaded, con = profile.loaded, profile.con
    check_phase(con, phase)
    _check_regex(con, grep)
    columns, rows = run_sql(con, "kernels.sql", {"phase": phase, "category": category, "grep": grep,
                                                 "tensorcore": tensorcore, "sort": sort, "top": top})
    notes = []
    cpu = is_cpu_profile(loaded.doc)
    if cpu:
        notes.append("CPU profile: no GPU kernels were recorded; `libreyolo profile ops` shows where the time goes")
    elif category is not None and not rows:
        present = [r[0] for r in con.execute("SELECT DISTINCT category FROM kernels ORDER BY 1").fetchall()]
        notes.append(f"no kernel category contains '{category}'; categories present: {', '.join(present)}")
    for note in notes:
        stderr_note(note)
    if as_json:
        emit_json({"profile": profile_identity(loaded),
                   "filters": {"top": top, "category": category, "grep": grep, "tensorcore": tensorcore,
                               "sort": sort, "phase": phase},
                   "kernels": records(columns, rows), "notes": notes})
        return
    if not rows:
        return
    stdout_console().print(table(
        "GPU kernels per measured step",
        [("kernel", "left"), ("category", "left"), ("TC", "center"), ("ms/step", "right"), ("share %", "right"),
         ("calls/step", "right"), ("mean µs", "right"), ("phases", "left")],
        [[short_name(r[0]), r[1], "✓" if r[2] else "", r[4], r[5], r[6], r[7], r[8]] for r in rows]))
