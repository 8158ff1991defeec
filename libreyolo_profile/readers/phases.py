"""`libreyolo profile phases`: GPU ms, wall ms, kernels and ops per phase (sql/phases.sql)."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.metric_catalog import is_cpu_profile
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import stdout_console, table
from libreyolo_profile.readers.common import PHASES, open_profile, profile_identity, records, run_sql


def phase_rows(loaded, con) -> tuple[list[str], list[tuple]]:
    doc = loaded.doc
    # the phases come from the trace: their shares divide by the trace's own step time (the profiled
    # one), not by the headline, which a measured profile takes from calls timed without the profiler
    metrics = doc["metrics"]
    traced_step_ms = metrics.get("profiled_step_ms", metrics.get("step_ms"))
    return run_sql(con, "phases.sql", {"phases": PHASES[doc["kind"]], "steps": metrics["steps"],
                                       "on_gpu": not is_cpu_profile(doc), "step_ms": traced_step_ms})


def launches_label(on_cpu: bool) -> str:
    """What a launch is on this device, for a column header: the same concept launches_per_step counts."""
    return "launches (leaf ops)" if on_cpu else "launches"


def print_phases(trace: Path, as_json: bool) -> None:
    profile = open_profile(trace)
    loaded, con = profile.loaded, profile.con
    columns, rows = phase_rows(loaded, con)
    inferred = "phases_inferred" in loaded.doc.get("marks", {})
    if as_json:
        emit_json({"profile": profile_identity(loaded), "phases_inferred": inferred, "phases": records(columns, rows)})
        return
    on_cpu = is_cpu_profile(loaded.doc)
    title = "Phases per measured step" + (" (inferred from PyTorch's own marks)" if inferred else "")
    # the host-wall share adds up to 100 across phases; the device columns do not exist on a CPU
    shown = [("phase", "left", "phase"), ("GPU ms", "right", "gpu_ms"), ("wall ms", "right", "wall_ms"),
             ("% of host wall", "right", "wall_pct"), ("kernels", "right", "kernels"), ("ops", "right", "ops"),
             (launches_label(on_cpu), "right", "launches")]
    if on_cpu:
        shown = [c for c in shown if c[2] not in ("gpu_ms", "kernels")]
    rows_by_name = records(columns, rows)
    stdout_console().print(table(title, [(header, justify) for header, justify, _ in shown],
                                 [[r[key] for _, _, key in shown] for r in rows_by_name]))
