"""A job's verdict: the straggler's when the other ranks wait for one rank (sql/job_ranks.sql decides it
and where its lateness arises; sql/straggler_verdict.sql the verdict and the advice that fits where),
otherwise the slowest rank's own verdict."""

from __future__ import annotations


def job_verdict(own: dict, metrics_rank: int, world: int, straggler: dict | None, ranks: list[dict]) -> dict:
    """The job's verdict from its slowest rank's own verdict (`own`) and the straggler row, if any."""
    if straggler is None:
        return {
            **own,
            "reason": f"rank {metrics_rank} (the longest step of {world} ranks; no rank is waited for): "
            + own["reason"],
        }
    rank = straggler["rank"]
    late = next(r for r in ranks if r["rank"] == rank)
    # when it entered against the first of the OTHER ranks (the straggler itself may have entered first)
    others = [r for r in ranks if r["rank"] != rank and r["entered_ms"] is not None]
    earliest = min(others, key=lambda r: (r["entered_ms"], r["rank"])) if others else None
    where = straggler["arises_in"]
    reason = (
        f"rank {rank} is the straggler: the other ranks spent {straggler['waited_on_pct']:.0f}% of their time "
        f"in collectives waiting for it ({straggler['waited_on_ms']:.2f} ms per step summed over them); it arrived "
        f"last at {straggler['last_arrivals']} of {straggler['matched_collectives']} matched collectives, "
        f"and at {straggler['held_longest_at']}, where they waited longest, {straggler['lateness_ms']:.2f} ms after "
        f"the others' median arrival. Its lateness arises {where}: "
        f"{_breakdown(straggler)}{_entered(late, earliest)}"
    )
    return {
        "bound": straggler["straggler_verdict"],
        "reason": reason,
        "next_step": straggler["straggler_advice"],
        "evidence": {
            "straggler_rank": rank,
            "waited_on_pct": straggler["waited_on_pct"],
            "waited_on_ms": straggler["waited_on_ms"],
            "last_arrivals": straggler["last_arrivals"],
            "matched_collectives": straggler["matched_collectives"],
            "lateness_ms": straggler["lateness_ms"],
            "held_longest_at": straggler["held_longest_at"],
            "arises_in": where,
            "before_step_ms": straggler["before_step_ms"],
            "dataload_excess_ms": straggler["dataload_excess_ms"],
            "sync_excess_ms": straggler["sync_excess_ms"],
            "unrecorded_excess_ms": straggler["unrecorded_excess_ms"],
            "compute_excess_ms": straggler["compute_excess_ms"],
            "slowest_rank_verdict": own["bound"],
        },
    }


def _breakdown(s: dict) -> str:
    parts = [
        ("before the step", s["before_step_ms"]),
        ("more dataloading", s["dataload_excess_ms"]),
        ("more sync", s["sync_excess_ms"]),
        ("more unrecorded host time (nothing recorded on any thread or the device)", s["unrecorded_excess_ms"]),
        ("more time in its own step up to the collective (compute, host work or idle)", s["compute_excess_ms"]),
    ]
    said = [f"{ms:.2f} ms {what}" for what, ms in parts if ms is not None and ms >= 0.005]
    return (", ".join(said) or "no part of it stands out") + " (against the others' median)"


def _entered(late: dict, earliest: dict | None) -> str:
    if earliest is None or late["entered_ms"] is None:
        return ""
    gap = late["entered_ms"] - earliest["entered_ms"]
    when = f"{gap:.2f} ms after" if gap >= 0 else f"{-gap:.2f} ms before"
    return f"; it entered the step {when} rank {earliest['rank']}, the first of the others"
