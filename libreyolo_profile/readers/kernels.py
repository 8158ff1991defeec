"""`libreyolo profile kernels`: individual GPU kernels (sql/kernels.sql)."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.metric_catalog import is_cpu_profile
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import close_match_hint, short_name, stderr_note, stdout_console, table
from libreyolo_profile.readers.common import check_phase, open_profile, profile_identity, records, run_sql

SORTS = ("time", "count", "name")


def _check_regex(con, pattern: str | None) -> None:
    if pattern is None:
        return
    try:
        con.execute("SELECT regexp_matches('', $p)", {"p": pattern}).fetchall()
    except Exception as exc:
        raise UsageError(f"invalid --grep regular expression '{pattern}': {str(exc).splitlines()[0]}") from None


def known_categories() -> list[str]:
    """Every category a kernel can get (sql/kernel_categories.sql, plus memcpy, memset and other)."""
    import duckdb

    from libreyolo_profile.sqlfiles import sql_text

    con = duckdb.connect(":memory:")
    try:
        con.execute(sql_text("kernel_categories.sql"))
        rules = [row[0] for row in con.execute("SELECT DISTINCT category FROM kernel_category_rules").fetchall()]
    finally:
        con.close()
    return sorted(set(rules) | {"memcpy", "memset", "other"})


def _check_category(category: str | None) -> None:
    """--category is a substring of a category name (`gem` finds gemm); one that is part of no
    category can only be a typo, so it is refused with the categories and the nearest one."""
    if category is None:
        return
    categories = known_categories()
    if not any(category.lower() in known for known in categories):
        raise UsageError(f"unknown kernel category '{category}'{close_match_hint(category.lower(), categories)}; "
                         f"categories: {', '.join(categories)}")


def print_kernels(trace: Path, *, top: int, category: str | None, grep: str | None, tensorcore: bool, sort: str,
         phase: str | None, as_json: bool) -> None:
    if sort not in SORTS:
        raise UsageError(f"--sort must be one of {', '.join(SORTS)}, not '{sort}'")
    if top < 1:
        raise UsageError(f"--top must be at least 1, not {top}")
    profile = open_profile(trace)
    loaded, con = profile.loaded, profile.con
    check_phase(con, phase)
    _check_category(category)
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
    # with --phase the share is of that phase's device time (what a user narrowing to a phase compares
    # against), and both the title and the header say so
    title = "GPU kernels per measured step" + (f" in phase {phase}, % of that phase's device time" if phase else "")
    share_header = f"% of {phase}" if phase else "% of device time"
    stdout_console().print(table(
        title,
        [("kernel", "left"), ("category", "left"), ("TC", "center"), ("ms/step", "right"), (share_header, "right"),
         ("calls/step", "right"), ("mean µs", "right"), ("phases", "left")],
        [[short_name(r[0]), r[1], "✓" if r[2] else "", r[4], r[5], r[6], r[7], r[8]] for r in rows]))
