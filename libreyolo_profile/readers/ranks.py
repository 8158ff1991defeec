"""`libreyolo profile ranks`: a job profile's ranks side by side, and the straggler (sql/ranks.sql)."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import stdout_console, table
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.readers.common import OpenProfile, opened, profile_identity, records, run_sql

SHOWN = [
    ("rank", "right", "rank"),
    ("step ms", "right", "step_ms"),
    ("device busy %", "right", "device_busy_pct"),
    ("compute ms", "right", "compute_ms"),
    ("exposed comm ms", "right", "exposed_comm_ms"),
    ("exposed comm %", "right", "exposed_comm_pct"),
    ("collective wait ms", "right", "collective_wait_ms"),
    ("dataload ms", "right", "dataload_ms"),
    ("entered ms", "right", "entered_ms"),
    ("last at", "right", "last_arrivals"),
    ("verdict", "left", "verdict"),
]


# at 80 columns (a CI log, a pipe) these go first, in this order, so no number is cut; --json keeps them
NARROW_LEAVES_OUT = ("exposed comm %", "compute ms", "dataload ms", "device busy %", "entered ms")


def rank_rows(con) -> list[dict]:
    return records(*run_sql(con, "ranks.sql"))


def straggler_evidence(head) -> dict | None:
    """The straggler and its evidence (sql/job_ranks.sql's job_straggler, kept in the profile's job);
    `head`: the typed head (Loaded.head)."""
    found = head.job.straggler if head.job is not None else None
    if not found:
        return None
    return {
        "rank": found["rank"],
        "evidence": head.verdict.reason,
        **{k: v for k, v in found.items() if k != "rank"},
    }


def ranks_document(source: Path | OpenProfile) -> dict:
    profile = opened(source)
    rows = rank_rows(profile.con)
    head = profile.head
    if not rows:
        raise UsageError(
            f"{profile.loaded.path}: not a job profile (one trace, one rank); "
            "import the ranks' traces together with `libreyolo profile import --job TRACE…` (Python: lp.import_job)"
        )
    return {
        "profile": profile_identity(profile.loaded),
        "world_size": head.world_size,
        "rank_source": head.job.rank_source if head.job is not None else None,
        "metrics_rank": head.job.metrics_rank if head.job is not None else None,
        "ranks": rows,
        "straggler": straggler_evidence(head),
        "verdict": {"bound": head.verdict.bound, "reason": head.verdict.reason, "next_step": head.verdict.next_step},
    }


def render_ranks(r: dict) -> None:
    console = stdout_console()
    console.print(
        table(
            f"Ranks of the job ({r['world_size']} ranks; ranks from the {r['rank_source']}; per measured step)",
            [(header, justify) for header, justify, _ in SHOWN],
            [[row[key] for _, _, key in SHOWN] for row in r["ranks"]],
            optional=NARROW_LEAVES_OUT,
        )
    )
    s = r["straggler"]
    if s is None:
        console.print("straggler: none — no rank held the others in their collectives", markup=False)
    else:
        console.print(f"straggler: rank {s['rank']} — {safe_line(s['evidence'])}", markup=False)
        if r["verdict"].get("next_step"):
            console.print(f"next: {safe_line(r['verdict']['next_step'])}", markup=False)
    clocks = {row["clock_method"] for row in r["ranks"]}
    console.print("clocks: " + "; ".join(sorted(c for c in clocks if c)), markup=False)
    console.print(
        f"the job's metrics, and every other table a reader shows, are rank {r['metrics_rank']}'s (the longest "
        "step); `libreyolo profile query` reads every rank",
        markup=False,
    )


def print_ranks(source: Path | OpenProfile, as_json: bool) -> None:
    r = ranks_document(source)
    if as_json:
        emit_json(r)
    else:
        render_ranks(r)
