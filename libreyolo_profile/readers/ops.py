"""`libreyolo profile ops`: aten and autograd ops by self CPU time (sql/ops.sql)."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import short_name, stdout_console, table
from libreyolo_profile.readers.common import OpenProfile, check_phase, opened, profile_identity, records
from libreyolo_profile.readers.provenance import profiled_label
from libreyolo_profile.sqlmodules import module_relation


def op_relation(profile: OpenProfile, *, top: int | None = None, phase: str | None = None):
    """The ops `ops` shows (sql/ops.sql, by self CPU time) as a DuckDB relation: the one definition the CLI
    and the Python API (Profile.ops) share. top None: every op; a bad top or phase is a UsageError."""
    if top is not None and top < 1:
        raise UsageError(f"--top must be at least 1, not {top}")
    check_phase(profile.con, phase)
    return module_relation(profile.con, "ops.sql", {"phase": phase, "top": top})


def print_ops(trace: Path | OpenProfile, *, top: int, phase: str | None, as_json: bool) -> None:
    profile = opened(trace)
    loaded = profile.loaded
    relation = op_relation(profile, top=top, phase=phase)
    columns, rows = relation.columns, relation.fetchall()
    if as_json:
        emit_json(
            {
                "profile": profile_identity(loaded),
                "filters": {"top": top, "phase": phase},
                "ops": records(columns, rows),
            }
        )
        return
    stdout_console().print(
        table(
            f"Framework ops per step, by self CPU time · {profiled_label(loaded.head)}",
            [
                ("op", "left"),
                ("self ms", "right"),
                ("self %", "right"),
                ("total ms", "right"),
                ("calls", "right"),
                ("self µs/call", "right"),
                ("phases", "left"),
            ],
            [[short_name(r[0], 70), r[1], r[2], r[3], r[4], r[5], r[6]] for r in rows],
        )
    )
