"""`libreyolo profile phases`: GPU ms, wall ms, kernels and ops per phase (sql/phases.sql)."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.metric_catalog import is_cpu_profile
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import stdout_console, table
from libreyolo_profile.readers.common import PHASES, OpenProfile, opened, profile_identity, records
from libreyolo_profile.readers.provenance import headline_is_unprofiled, profiled_label, traced_trial
from libreyolo_profile.sqlmodules import module_relation


def phase_relation(loaded, con):
    """The phases `phases` shows (sql/phases.sql) as a DuckDB relation: the one definition the CLI, the
    summary and the Python API (Profile.phases) share."""
    doc, head = loaded.doc, loaded.head
    # the phases come from the trace, so their shares divide by the trace's own step time: a trace's
    # step_ms (what its preprocess_pct, dataload_pct … divide by too); for a measured profile, whose
    # step_ms is the unprofiled headline, its trace's step ranges (blame_step_ms) — not the host-timed
    # profiled calls, whose first one also pays the profiler's start-up outside any step. A repeated
    # run's tables hold its last trial's trace, so they divide by that trial's steps.
    metrics = traced_trial(head)
    traced_step_ms = metrics.step_ms
    if headline_is_unprofiled(head):
        traced_step_ms = metrics.blame_step_ms or traced_step_ms
    return module_relation(
        con,
        "phases.sql",
        {
            "phases": PHASES[head.kind],
            "steps": metrics.steps,
            "on_gpu": not is_cpu_profile(doc),
            "step_ms": traced_step_ms,
        },
    )


def phase_rows(loaded, con) -> tuple[list[str], list[tuple]]:
    relation = phase_relation(loaded, con)
    return relation.columns, relation.fetchall()


def launches_label(on_cpu: bool) -> str:
    """What a launch is on this device, for a column header: the same concept launches_per_step counts."""
    return "launches (leaf ops)" if on_cpu else "launches"


def print_phases(trace: Path | OpenProfile, as_json: bool) -> None:
    profile = opened(trace)
    loaded, con = profile.loaded, profile.con
    columns, rows = phase_rows(loaded, con)
    inferred = "phases_inferred" in loaded.head.marks
    if as_json:
        emit_json({"profile": profile_identity(loaded), "phases_inferred": inferred, "phases": records(columns, rows)})
        return
    on_cpu = is_cpu_profile(loaded.doc)
    title = "Phases per measured step" + (" (inferred from PyTorch's own marks)" if inferred else "")
    title += f" · {profiled_label(loaded.head)}"
    # the host-wall share adds up to 100 across phases; the device columns do not exist on a CPU
    shown = [
        ("phase", "left", "phase"),
        ("GPU ms", "right", "gpu_ms"),
        ("wall ms", "right", "wall_ms"),
        ("% of host wall", "right", "wall_pct"),
        ("kernels", "right", "kernels"),
        ("ops", "right", "ops"),
        (launches_label(on_cpu), "right", "launches"),
    ]
    if on_cpu:
        shown = [c for c in shown if c[2] not in ("gpu_ms", "kernels")]
    rows_by_name = records(columns, rows)
    stdout_console().print(
        table(
            title,
            [(header, justify) for header, justify, _ in shown],
            [[r[key] for _, _, key in shown] for r in rows_by_name],
        )
    )
