"""The tables of a LibreYOLO built-in profile (store/document/builtin.py) in our sidecar layout: its
per-phase kernel and op lists, its phase table, and the kernels categorised by our own rules.

It records no timeline, so its steps, blame and module tables stay empty; its op times are inclusive
(self time unknown), and its names are cut (ops at 70, kernels at 90 characters).
"""

from __future__ import annotations

from libreyolo_profile.store.document.builtin_metrics import number, phase_wall_ms
from libreyolo_profile.store.schema import TABLES


def _rows_by_phase(by_phase: dict, totals: dict, name_of, make_row, steps: int) -> list[list]:
    """Rows per phase from its per-phase lists, plus the part of each name's whole-window total that
    those (top-N) lists left out, as a row with phase NULL."""
    rows, in_phases = [], {}
    for phase, entries in by_phase.items():
        for entry in entries or []:
            name = name_of(entry)
            ms, calls = number(entry.get("ms_per_step")), number(entry.get("count_per_step"))
            seen = in_phases.setdefault(name, [0.0, 0.0])
            seen[0] += ms or 0.0
            seen[1] += calls or 0.0
            rows.append(make_row(phase, name, ms, calls, steps))
    for name, (ms, calls) in totals.items():
        seen = in_phases.get(name, [0.0, 0.0])
        rest_ms = ms - seen[0]
        rest_calls = calls - seen[1] if calls > seen[1] else None
        # its values are rounded to 0.1 µs per step: ignore rounding residue
        if rest_ms > max(1e-3, 0.01 * ms):
            rows.append(make_row(None, name, rest_ms, rest_calls, steps))
    return rows


def op_rows(raw: dict, steps: int) -> list[list]:
    """ops table rows. Its times are inclusive (total) time; self time is unknown."""
    return _rows_by_phase(
        raw.get("ops_by_phase") or {}, _totals(raw.get("ops"), "op"), lambda op: op.get("op"), _op_row, steps
    )


def _totals(entries, key: str) -> dict[str, list[float]]:
    """Its whole-window list by name → [ms per step, calls per step]. It cuts names (ops at 70, kernels at 90
    characters), so two entries can share a name: they are summed, as its per-phase lists do."""
    totals: dict[str, list[float]] = {}
    for entry in entries or []:
        name, ms = entry.get(key), number(entry.get("ms_per_step"))
        if ms is None:
            continue
        total = totals.setdefault(name, [0.0, 0.0])
        total[0] += ms
        total[1] += number(entry.get("count_per_step")) or 0.0
    return totals


def _op_row(phase, name, ms_per_step, calls_per_step, steps):
    calls = round(calls_per_step * steps) if calls_per_step is not None else None
    total = ms_per_step * steps if ms_per_step is not None else None
    # rank, phase, name, calls, calls_per_step, leaf_calls, self_ms, self_ms_per_step, total_ms, total_ms_per_step
    return [None, phase, name, calls, calls_per_step, None, None, None, total, ms_per_step]


def kernel_rows(raw: dict, steps: int) -> list[list]:
    """kernels table rows; their category and Tensor Core flag are left to categorise_and_share."""

    def name_of(k: dict) -> str:
        return k.get("raw_name") or k.get("kernel")

    named = [{**k, "name": name_of(k)} for k in raw.get("kernels") or []]
    return _rows_by_phase(raw.get("kernels_by_phase") or {}, _totals(named, "name"), name_of, _kernel_row, steps)


def _kernel_row(phase, name, ms_per_step, calls_per_step, steps):
    calls = round(calls_per_step * steps) if calls_per_step is not None else None
    mean_us = 1000.0 * ms_per_step / calls_per_step if ms_per_step is not None and calls_per_step else None
    activity = (
        "memcpy" if "memcpy" in (name or "").lower() else "memset" if "memset" in (name or "").lower() else "kernel"
    )
    # rank, device, phase, activity, category, tensorcore, name, launched_outside_steps, calls, calls_per_step,
    # total_ms, ms_per_step, mean_us, min_us, max_us, category_exclusive_ms_per_step (unknown: the built-in
    # profile has no timeline)  (category and tensorcore are filled by our rules below)
    return [
        None,
        None,
        phase,
        activity,
        None,
        None,
        name,
        False,
        calls,
        calls_per_step,
        ms_per_step * steps if ms_per_step is not None else None,
        ms_per_step,
        mean_us,
        None,
        None,
        None,
    ]


_K = {name: i for i, (name, _, _, _) in enumerate(TABLES["kernels"])}  # kernels row positions
_SHARES = ("gemm_pct", "memory_bound_pct", "communication_pct")  # what its kernel rows give by our definitions


def categorise_and_share(rows: list[list], on_cpu: bool) -> dict:
    """Fill each kernel row's category and Tensor Core flag by our rules, and return the shares of kernel
    time (gemm_pct, memory_bound_pct, communication_pct) on a GPU: the same SQL a trace goes through
    (sql/kernel_categories.sql, sql/tensorcore_rules.sql, sql/kernel_shares.sql), not its own figures."""
    if not rows:
        return {}
    from libreyolo_profile.connections import scratch_connection
    from libreyolo_profile.sqlmodules import run_module

    con = scratch_connection()
    try:
        run_module(con, "kernel_categories.sql")
        run_module(con, "tensorcore_rules.sql")
        pairs = sorted({(r[_K["activity"]], r[_K["name"]]) for r in rows}, key=str)
        found = {
            (activity, name): (category, tensorcore)
            for activity, name, category, tensorcore in con.execute(
                """
            SELECT activity, name, kernel_category(activity, name), is_tensorcore(activity, name)
            FROM (SELECT unnest($activities::VARCHAR[]) AS activity, unnest($names::VARCHAR[]) AS name)""",
                {"activities": [a for a, _ in pairs], "names": [n for _, n in pairs]},
            ).fetchall()
        }
        for row in rows:
            row[_K["category"]], row[_K["tensorcore"]] = found[(row[_K["activity"]], row[_K["name"]])]
        if on_cpu:
            return {}
        kernels = [r for r in rows if r[_K["activity"]] == "kernel"]
        con.execute(
            """CREATE TEMP TABLE kernel_time AS
                       SELECT NULL::INTEGER AS device, unnest($category::VARCHAR[]) AS category,
                              unnest($tensorcore::BOOLEAN[]) AS tensorcore, unnest($time::DOUBLE[]) AS time""",
            {
                "category": [r[_K["category"]] for r in kernels],
                "tensorcore": [r[_K["tensorcore"]] for r in kernels],
                "time": [r[_K["ms_per_step"]] for r in kernels],
            },
        )
        run_module(con, "kernel_shares.sql")
        shares = con.execute(f"SELECT {', '.join(_SHARES)} FROM kernel_shares").fetchone()
    finally:
        con.close()
    # no kernel time at all: no share can be told, and the metrics stay null
    return dict(zip(_SHARES, shares, strict=True)) if shares and any(v is not None for v in shares) else {}


def phase_rows(raw: dict, kind: str, on_cpu: bool, steps: int) -> list[list]:
    """phases table rows, one per phase over every measured step (a CPU launched no device work)."""
    walls = phase_wall_ms(raw, kind)
    rows = []
    for p in raw.get("phases") or []:
        phase = p.get("phase")
        wall = walls.get(phase)
        gpu = number(p.get("gpu_ms_per_step"))
        kernels = number(p.get("kernels_per_step"))
        ops = number(p.get("ops_per_step"))
        # rank, step (NULL: the row aggregates every measured step), phase, wall_ms, gpu_ms, kernels, ops, launches,
        # launched_outside_steps
        rows.append(
            [
                None,
                None,
                phase,
                wall * steps if wall is not None else None,
                0.0 if on_cpu else (gpu * steps if gpu is not None else None),
                0 if on_cpu else (round(kernels * steps) if kernels is not None else None),
                round(ops * steps) if ops is not None else None,
                0 if on_cpu else None,
                False,
            ]
        )
    return rows


def embedded_tables(raw: dict, kind: str, on_cpu: bool, steps: int, kernels: list[list], ops: list[list]) -> dict:
    """The tables the profile document embeds: what the built-in profile records, and empty ones for the rest."""
    columns = {t: [c[0] for c in cols] for t, cols in TABLES.items()}
    return {
        "kernels": {"columns": columns["kernels"], "rows": kernels},
        "ops": {"columns": columns["ops"], "rows": ops},
        "phases": {"columns": columns["phases"], "rows": phase_rows(raw, kind, on_cpu, steps)},
        "steps": {"columns": columns["steps"], "rows": []},
        "blame": {"columns": columns["blame"], "rows": []},  # needs the trace's timeline, which it does not record
        "modules": {"columns": columns["modules"], "rows": []},  # it records no module ranges
    }
