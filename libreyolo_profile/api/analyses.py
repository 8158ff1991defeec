"""The daily analyses as one-liners on a Profile (docs/PYTHON.md): temporal, idle and kernel breakdowns over
the profile's tables (sql/time_breakdown.sql, sql/kernel_breakdown.sql), launch outliers, queue length and
communication/computation overlap from the profile's launches section (sql/launches.sql over it; the section,
computed once from the trace by sql/launch_executions.sql and sql/comm_overlap.sql, is what `launches` reads),
and the op/kernel diff `compare --ops/--kernels` prints (sql/compare_ops.sql, sql/compare_kernels.sql). Each
answer is a DuckDB relation; every SQL module runs through the loader (libreyolo_profile/sqlmodules.py)."""

from __future__ import annotations

import warnings

from libreyolo_profile.errors import UsageError
from libreyolo_profile.readers.launches import CALL_CUTOFF_US, DELAY_CUTOFF_US, Timelines, check_cutoffs
from libreyolo_profile.sqlmodules import run_module

DIFFS = {"ops": "compare_ops.sql", "kernels": "compare_kernels.sql"}


def table_macro(con, module: str, call: str, params: dict | None = None):
    """`SELECT * FROM call` as a relation on the profile's connection, after `module` created the macro."""
    run_module(con, module)
    return con.sql(f"SELECT * FROM {call}", params=params) if params else con.sql(f"SELECT * FROM {call}")


def arrow_relation(table, name: str):
    """An Arrow table as a relation on a locked in-memory connection of its own (api/readonly.py)."""
    import duckdb

    from libreyolo_profile.api.readonly import locked
    from libreyolo_profile.connections import without_progress_bar

    con = without_progress_bar(duckdb.connect(":memory:"))
    con.from_arrow(table).to_table(name)
    return locked(con).table(name)


def timeline_relation(timelines: Timelines, module: str | None, call: str, name: str, params: dict | None = None):
    """Every rank's rows of `call` on its launches section (after `module`), the rank first, as one relation."""
    return arrow_relation(timelines.arrow(module, call, params), name)


def cutoffs(delay_cutoff_us: float, call_cutoff_us: float) -> dict:
    check_cutoffs(delay_cutoff_us, call_cutoff_us)
    return {"delay": float(delay_cutoff_us), "call": float(call_cutoff_us)}


def diff_relation(before, after, what: str):
    """Per op (what="ops") or kernel ("kernels"), the change from `before` to `after` (opened profiles), the
    rows `compare --ops/--kernels` prints (sql/compare_items.sql), the largest change first."""
    from libreyolo_profile.connections import scratch_connection
    from libreyolo_profile.readers.compare_items import item_params, shown_rank
    from libreyolo_profile.store.disk.loader import sidecar_dir

    if what not in DIFFS:
        raise UsageError(f"unknown diff '{what}': ops or kernels")
    sources = [
        (side, str(sidecar_dir(p.loaded) / f"{what}.parquet"), shown_rank(p.loaded))
        for side, p in (("before", before), ("after", after))
    ]
    con = scratch_connection()
    try:
        with warnings.catch_warnings():  # the module's last statement is the answer: its rows, once, as Arrow
            warnings.simplefilter("ignore", UserWarning)
            table = run_module(con, DIFFS[what], item_params(sources)).to_arrow_table()
    finally:
        con.close()
    return arrow_relation(table, f"{what}_diff")


__all__ = ["CALL_CUTOFF_US", "DELAY_CUTOFF_US", "Timelines", "arrow_relation", "cutoffs", "diff_relation"]
