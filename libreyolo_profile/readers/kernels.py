"""`libreyolo profile kernels`: individual GPU kernels (sql/kernels.sql)."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.metric_catalog import is_cpu_profile
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import close_match_hint, short_names, stderr_note, stdout_console, table
from libreyolo_profile.readers.common import OpenProfile, check_phase, opened, profile_identity, records
from libreyolo_profile.readers.provenance import profiled_label
from libreyolo_profile.sqlmodules import module_relation, run_module

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
    from libreyolo_profile.connections import scratch_connection

    con = scratch_connection()
    try:
        run_module(con, "kernel_categories.sql")
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
        raise UsageError(
            f"unknown kernel category '{category}'{close_match_hint(category.lower(), categories)}; "
            f"categories: {', '.join(categories)}"
        )


def kernel_relation(
    profile: OpenProfile,
    *,
    top: int | None = None,
    category: str | None = None,
    grep: str | None = None,
    tensorcore: bool = False,
    sort: str = "time",
    phase: str | None = None,
):
    """The kernels `kernels` shows, filtered and ordered by sql/kernels.sql, as a DuckDB relation: the one
    definition the CLI and the Python API (Profile.kernels) share. top None: every kernel. A bad sort,
    top, phase, category or regular expression is refused (UsageError) before anything runs."""
    if sort not in SORTS:
        raise UsageError(f"--sort must be one of {', '.join(SORTS)}, not '{sort}'")
    if top is not None and top < 1:
        raise UsageError(f"--top must be at least 1, not {top}")
    con = profile.con
    check_phase(con, phase)
    _check_category(category)
    _check_regex(con, grep)
    return module_relation(
        con,
        "kernels.sql",
        {"phase": phase, "category": category, "grep": grep, "tensorcore": tensorcore, "sort": sort, "top": top},
    )


def empty_reason(profile: OpenProfile, *, category, grep, tensorcore: bool, phase) -> str:
    """Why the filters left no kernel: each filter applied in turn (phase, category, Tensor Core, grep),
    naming the one that left none and how many kernels the earlier ones had left."""
    steps = [
        ("phase", phase, f"in phase {phase}", f"ran in phase {phase}"),
        ("category", category, f"in a category containing '{category}'", f"is in a category containing '{category}'"),
        ("tensorcore", tensorcore or None, "on Tensor Cores", "ran on Tensor Cores"),
        ("grep", grep, f"matching '{grep}'", f"matches --grep '{grep}'"),
    ]
    left = len(kernel_relation(profile).fetchall())
    if left == 0:
        return "no kernel matches: the profile holds no GPU kernels"
    applied, kept = {}, []
    for name, value, qualifier, predicate in steps:
        if value is None:
            continue
        applied[name] = value
        now = len(kernel_relation(profile, **applied).fetchall())
        if now == 0:
            hint = ""
            if name == "category":
                present = profile.con.execute("SELECT DISTINCT category FROM kernels ORDER BY 1").fetchall()
                hint = f" (categories present: {', '.join(r[0] for r in present)})"
            return f"no kernel matches: of the {left:,} distinct kernels {' and '.join(kept)}".rstrip() + (
                f", none {predicate}{hint}"
            )
        kept.append(qualifier)
        left = now
    return "no kernel matches the filters"


def _kernel_notes(profile: OpenProfile, rows: list, *, category, grep, tensorcore: bool, phase) -> list[str]:
    """What stderr says beside the kernels: that a CPU profile records none, or which filter left none."""
    if is_cpu_profile(profile.loaded.doc):
        return ["CPU profile: no GPU kernels were recorded; `libreyolo profile ops` shows where the time goes"]
    if not rows:
        return [empty_reason(profile, category=category, grep=grep, tensorcore=tensorcore, phase=phase)]
    return []


def _show_kernel_table(head, rows: list, phase: str | None) -> None:
    # with --phase the share is of that phase's device time (what a user narrowing to a phase compares
    # against), and both the title and the header say so
    # (with --phase the share column says whose: "% of forward")
    title = "GPU kernels per measured step" + (f" in phase {phase}" if phase else "")
    title += f" · {profiled_label(head)}"
    share_header = f"% of {phase}" if phase else "% of device time"
    stdout_console().print(
        table(
            title,
            [
                ("kernel", "left"),
                ("category", "left"),
                ("TC", "center"),
                ("ms/step", "right"),
                (share_header, "right"),
                ("calls/step", "right"),
                ("mean µs", "right"),
                ("phases", "left"),
            ],
            [
                [name, r[1], "✓" if r[2] else "", r[4], r[5], r[6], r[7], r[8]]
                for name, r in zip(short_names([r[0] for r in rows]), rows, strict=True)
            ],
        )
    )


def print_kernels(
    trace: Path | OpenProfile,
    *,
    top: int,
    category: str | None,
    grep: str | None,
    tensorcore: bool,
    sort: str,
    phase: str | None,
    as_json: bool,
) -> None:
    profile = opened(trace)
    loaded = profile.loaded
    filters = {"top": top, "category": category, "grep": grep, "tensorcore": tensorcore, "sort": sort, "phase": phase}
    relation = kernel_relation(profile, **filters)
    columns, rows = relation.columns, relation.fetchall()
    notes = _kernel_notes(profile, rows, category=category, grep=grep, tensorcore=tensorcore, phase=phase)
    for note in notes:
        stderr_note(note)
    if as_json:
        emit_json(
            {"profile": profile_identity(loaded), "filters": filters, "kernels": records(columns, rows), "notes": notes}
        )
        return
    if not rows:
        return  # the note above, on stderr, says which filter left nothing
    _show_kernel_table(loaded.head, rows, phase)
