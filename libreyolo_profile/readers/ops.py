"""`libreyolo profile ops`: aten and autograd ops by self CPU time (sql/ops.sql)."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import short_name, stdout_console, table
from libreyolo_profile.readers.common import check_phase, open_profile, profile_identity, records, run_sql


def print_ops(trace: Path, *, top: int, phase: str | None, as_json: bool) -> None:
    if top < 1:
        raise UsageError(f"--top must be at least 1, not {top}")
    profile = open_profile(trace)
    loaded, con = profile.loaded, profile.con
    check_phase(con, phase)
    columns, rows = run_sql(con, "ops.sql", {"phase": phase, "top": top})
    if as_json:
        emit_json({"profile": profile_identity(loaded), "filters": {"top": top, "phase": phase},
                   "ops": records(columns, rows)})
        return
    stdout_console().print(table(
        "Framework ops per measured step, by self (exclusive) CPU time",
        [("op", "left"), ("self ms", "right"), ("self %", "right"), ("total ms", "right"),
         ("calls", "right"), ("self µs/call", "right"), ("phases", "left")],
        [[short_name(r[0], 70), r[1], r[2], r[3], r[4], r[5], r[6]] for r in rows]))
