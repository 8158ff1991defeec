"""`libreyolo profile phases`: GPU ms, wall ms, kernels and ops per phase (sql/phases.sql)."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.metric_catalog import is_cpu_profile
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import stdout_console, table
from libreyolo_profile.readers.common import PHASES, open_profile, profile_identity, records, run_sql


def phase_rows(loaded, con) -> tuple[list[str], list[tuple]]:
    doc = loaded.doc
    return run_sql(con, "phases.sql", {"phases": PHASES[doc["kind"]], "steps": doc["metrics"]["steps"],
                                       "on_gpu": not is_cpu_profile(doc)})


def print_phases(trace: Path, as_json: bool) -> None:
    profile = open_profile(trace)
    loaded, con = profile.loaded, profile.con
    columns, rows = phase_rows(loaded, con)
    inferred = "phases_inferred" in loaded.doc.get("marks", {})
    if as_json:
        emit_json({"profile": profile_identity(loaded), "phases_inferred": inferred, "phases": records(columns, rows)})
        return
    title = "Phases per measured step" + (" (inferred from PyTorch's own marks)" if inferred else "")
    stdout_console().print(table(title, [("phase", "left"), ("GPU ms", "right"), ("wall ms", "right"),
                                         ("wall %", "right"), ("kernels", "right"), ("ops", "right"),
                                         ("launches", "right")],
                                 [list(r) for r in rows]))
