"""`compare` of two job profiles: the job's straggler and each rank before and after (sql/compare_ranks.sql)."""

from __future__ import annotations

from libreyolo_profile.output.terminal import stdout_console, table
from libreyolo_profile.readers.common import records, run_sql, sidecar_dir
from libreyolo_profile.store.disk.loader import Loaded

COLUMNS = [
    ("rank", "right", "rank"),
    ("step ms before", "right", "step_ms_before"),
    ("step ms after", "right", "step_ms_after"),
    ("Δ step ms", "right", "step_ms_delta"),
    ("exposed comm ms before", "right", "exposed_comm_ms_before"),
    ("exposed comm ms after", "right", "exposed_comm_ms_after"),
    ("wait ms before", "right", "collective_wait_ms_before"),
    ("wait ms after", "right", "collective_wait_ms_after"),
    ("straggler", "left", "straggler"),
]


def compare_ranks(before: Loaded, after: Loaded) -> dict | None:
    """Both sides' ranks side by side; None unless both are job profiles."""
    from libreyolo_profile.connections import scratch_connection

    if before.head.job is None or after.head.job is None:
        return None
    con = scratch_connection()
    try:
        for side, loaded in (("before", before), ("after", after)):
            con.execute(  # temporary: the scratch database's main schema is shared by its connections
                f"CREATE TEMP TABLE ranks_{side} AS SELECT * FROM read_parquet($file)",
                {"file": str(sidecar_dir(loaded) / "ranks.parquet")},
            )
        rows = records(*run_sql(con, "compare_ranks.sql"))
    finally:
        con.close()
    straggler = {
        side: (loaded.head.job.straggler or {}).get("rank") for side, loaded in (("before", before), ("after", after))
    }
    return {"straggler": straggler, "ranks": rows}


def straggler_cell(row: dict) -> str:
    marks = {(True, True): "before and after", (True, False): "before", (False, True): "after"}
    return marks.get((row["straggler_before"], row["straggler_after"]), "")


def show_compare_ranks(r: dict) -> None:
    console = stdout_console()
    rows = [{**row, "straggler": straggler_cell(row)} for row in r["ranks"]]
    console.print(
        table(
            "Ranks of the two jobs (per measured step)",
            [(h, j) for h, j, _ in COLUMNS],
            [[row[k] for _, _, k in COLUMNS] for row in rows],
            optional=("exposed comm ms before", "exposed comm ms after"),  # at 80 columns: --json keeps them
        )
    )
    said = {side: "none" if rank is None else f"rank {rank}" for side, rank in r["straggler"].items()}
    console.print(f"straggler: {said['before']} before, {said['after']} after", markup=False)
