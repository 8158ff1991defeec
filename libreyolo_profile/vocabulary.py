"""The vocabulary the SQL defines, read once per process: blame causes (sql/blame_causes.sql), verdicts
(sql/verdicts.sql), thresholds (sql/verdict_thresholds.sql) and colours (sql/palette.sql). Python never
spells a cause or a verdict: it reads them here, so renaming one, or adding one, is a change to one row."""

from __future__ import annotations

import threading
from functools import cache

from libreyolo_profile.connections import scratch_connection
from libreyolo_profile.sqlmodules import run_module

# table → the module that creates it
_MODULES = {
    "blame_causes": "blame_causes.sql",
    "verdicts": "verdicts.sql",
    "verdict_thresholds": "verdict_thresholds.sql",
    "report_palette": "palette.sql",
    "terminal_palette": "palette.sql",
}
_LOCK = threading.Lock()


@cache
def rows(table: str) -> tuple[dict, ...]:
    """Every row of one vocabulary table, as dicts, in the order its module lists them."""
    with _LOCK:
        con = scratch_connection()
        try:
            run_module(con, _MODULES[table])
            cursor = con.execute(f"SELECT * FROM {table} ORDER BY rowid")
            names = [d[0] for d in cursor.description]
            return tuple(dict(zip(names, row, strict=True)) for row in cursor.fetchall())
        finally:
            con.close()


@cache
def causes() -> dict[str, dict]:
    """cause → its row (priority, profile, side, gpu_verdict, cpu_verdict, runs_ops, words)."""
    return {row["cause"]: row for row in rows("blame_causes")}


@cache
def verdicts() -> dict[str, dict]:
    """verdict → its row (advice, device_work, what_if_model, stage_metric, stage_order, yields_to_stage,
    untrusted_step)."""
    return {row["verdict"]: row for row in rows("verdicts")}


@cache
def thresholds() -> dict[str, float | int]:
    """name → value (counts as integers), in the order sql/verdict_thresholds.sql lists them."""
    return {
        row["name"]: int(row["value"]) if row["unit"] == "count" else row["value"] for row in rows("verdict_thresholds")
    }


def causes_running_ops(on_gpu: bool) -> tuple[str, ...]:
    """The causes in which the device (on a CPU, the CPU) was executing ops, in priority order."""
    profile = "gpu" if on_gpu else "cpu"
    return tuple(c for c, row in causes().items() if row["runs_ops"] and row["profile"] in (profile, "any"))


def what_if_modelled() -> frozenset[str]:
    """The verdicts what-if models directly (launches, GPU work, CPU ops) rather than capping by their share."""
    return frozenset(v for v, row in verdicts().items() if row["what_if_model"])


@cache
def report_meanings() -> dict[str, tuple[str, tuple[str, ...]]]:
    """meaning → (its report colour, the names that carry it), in sql/palette.sql's order."""
    found: dict[str, tuple[str, list[str]]] = {}
    for row in rows("report_palette"):
        found.setdefault(row["meaning"], (row["colour"], []))[1].append(row["name"])
    return {meaning: (colour, tuple(names)) for meaning, (colour, names) in found.items()}


@cache
def terminal_colours(kind: str) -> dict[str, str]:
    """name → the terminal charts' colour for one kind of name (phase | category | cause)."""
    return {row["name"]: row["colour"] for row in rows("terminal_palette") if row["kind"] == kind}
