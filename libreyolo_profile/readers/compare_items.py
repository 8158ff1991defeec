"""`compare --ops` / `--kernels`: which ops or kernels moved between the two sides, the largest change
first (sql/compare_ops.sql, sql/compare_kernels.sql over each side's profiles' tables; the diff itself and
its significance rule are sql/compare_items.sql and sql/compare_rule.sql)."""

from __future__ import annotations

from libreyolo_profile.errors import UsageError
from libreyolo_profile.readers.common import records, run_sql
from libreyolo_profile.store.disk.loader import Loaded, sidecar_dir

ITEMS = {"ops": "compare_ops.sql", "kernels": "compare_kernels.sql"}
MEASURE = {
    "ops": "self CPU time, as `ops` ranks them",
    "kernels": "device time (kernels, memcpy, memset)",
}
SINGLE_PROFILE = (
    "each profile's tables hold one trial (the last one under --repeat), so a per-item change is tested only "
    "between directories of ≥ 2 profiles per side"
)


def shown_rank(loaded: Loaded):
    """The rank a job profile's one-profile readers show (readers/common.open_profile); None: every row."""
    job = loaded.head.job
    return job.metrics_rank if job is not None else None


def item_changes(what: str, before: list[Loaded], after: list[Loaded]) -> dict:
    """Every op (or kernel) of either side with its change, and how it was judged: the rows of
    sql/compare_items.sql plus what was measured and whether significance was tested."""
    from libreyolo_profile.connections import scratch_connection

    if what not in ITEMS:
        raise UsageError(f"unknown item kind '{what}': ops or kernels")
    # a side's profiles, each table once (the same file twice would count its items twice)
    sides = {
        side: {str(sidecar_dir(m) / f"{what}.parquet"): shown_rank(m) for m in members}
        for side, members in (("before", before), ("after", after))
    }
    sources = [(side, file, rank) for side, files in sides.items() for file, rank in files.items()]
    con = scratch_connection()
    try:
        rows = records(*run_sql(con, ITEMS[what], item_params(sources)))
    finally:
        con.close()
    n_before, n_after = len(sides["before"]), len(sides["after"])
    tested = n_before >= 2 and n_after >= 2
    return {
        "measure": MEASURE[what],
        "tested": tested,
        "sentence": (
            f"per {what[:-1]}: significant when |Δ| > 2·√(SE_b² + SE_a²), SE = s/√n over each side's "
            f"profiles; n_before = {n_before}, n_after = {n_after}"
            if tested
            else SINGLE_PROFILE
        ),
        "rows": rows,
    }


def requested_changes(items: tuple[str, ...], before: list[Loaded], after: list[Loaded]) -> dict:
    """{"ops": …, "kernels": …} for compare's document: each requested kind's changes (a kind not asked for
    is absent, so a comparison without --ops/--kernels is the document it always was)."""
    return {what: item_changes(what, before, after) for what in ITEMS if what in items}


def item_params(sources: list[tuple[str, str, int | None]]) -> dict:
    """sql/compare_items.sql's parameters from (side, sidecar file, rank) per profile; each file read once."""
    return {
        "side": [side for side, _, _ in sources],
        "source": [file for _, file, _ in sources],
        "rank": [rank for _, _, rank in sources],
        "files": list(dict.fromkeys(file for _, file, _ in sources)),
    }
