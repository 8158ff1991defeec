"""The bottleneck verdict (SPEC §5, §11), decided in SQL: sql/verdict_rules.sql holds the rules that
overrule any blame and the threshold rules of a profile without one (a built-in import), and
sql/verdict_blame.sql the verdict whose blamed causes hold the most of the profiled steps' wall time. This
module hands them a profile's metrics and puts their rows into the sentence a screen shows; the causes,
verdicts, words and advice are the SQL's (libreyolo_profile/vocabulary.py), none is spelled here."""

from __future__ import annotations

import contextlib
import math

from libreyolo_profile.metric_catalog import measured_unit
from libreyolo_profile.sqlmodules import run_module
from libreyolo_profile.vocabulary import causes, thresholds, what_if_modelled

_QUOTED_PCT = 0.05  # a share that rounds to 0.0% says nothing: the reason leaves it out


def decide(
    m: dict, kind: str, on_gpu: bool, thrashing: str | None, unusable: str | None = None, source: str = "trace"
) -> dict:
    """The verdict for one profile's metrics: {bound, reason, next_step, evidence[, method]}. `thrashing`:
    why device memory thrashed; `unusable`: why the trace's times cannot be trusted at all; `source`:
    'builtin' for LibreYOLO's built-in profiler's output."""
    with _verdict_connection(m, kind, on_gpu, thrashing, unusable, source) as con:
        rules = _records(run_module(con, "verdict_rules.sql"))
        ranked = [] if rules[0]["over_blame"] else _records(run_module(con, "verdict_blame.sql"))
    if ranked:
        return _from_blame(m, kind, on_gpu, ranked)
    first = rules[0]
    return {
        "bound": first["verdict"],
        "reason": first["reason"],
        "next_step": first["next_step"],
        "evidence": {name: m.get(name) for name in first["evidence"]},
    }


def blame_bottleneck(m: dict, kind: str, on_gpu: bool, bound: str) -> tuple[float | None, float | None]:
    """For what-if: (the blame share of the verdict's causes, the device-busy share), % of the step;
    (None, None) without a blame. The first is None for a verdict what-if models directly."""
    with _verdict_connection(m, kind, on_gpu, None, None, "trace") as con:
        ranked = _records(run_module(con, "verdict_blame.sql"))
    if not ranked:
        return None, None
    device = ranked[0]["device_busy_pct"]
    if bound in what_if_modelled():
        return None, device
    return sum(r["total_pct"] for r in ranked if r["verdict"] == bound), device


@contextlib.contextmanager
def _verdict_connection(m: dict, kind: str, on_gpu: bool, thrashing, unusable, source: str):
    """A private DuckDB connection holding the verdict modules' inputs: the profile's numeric metrics, one
    row each, and what the profile is. Bound as DuckDB parameters, not Arrow tables: building those made a
    reader import pyarrow and, through its pandas probe, pandas (~0.4 s of a 0.55 s `what-if`)."""
    from libreyolo_profile.connections import scratch_connection

    numbers = {
        k: float(v)
        for k, v in m.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    }
    con = scratch_connection()
    try:
        con.execute(
            "CREATE TEMP TABLE verdict_metrics AS "
            "SELECT unnest(CAST($metric AS VARCHAR[])) AS metric, unnest(CAST($value AS DOUBLE[])) AS value",
            {"metric": list(numbers), "value": list(numbers.values())},
        )
        con.execute(
            "CREATE TEMP TABLE verdict_profile AS SELECT CAST($kind AS VARCHAR) AS kind, "
            "CAST($on_gpu AS BOOLEAN) AS on_gpu, CAST($unusable AS VARCHAR) AS unusable, "
            "CAST($thrashing AS VARCHAR) AS thrashing, CAST($source AS VARCHAR) AS source",
            {"kind": kind, "on_gpu": bool(on_gpu), "unusable": unusable or None}
            | {"thrashing": thrashing or None, "source": source},
        )
        yield con
    finally:
        con.close()


def _records(cursor) -> list[dict]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _from_blame(m: dict, kind: str, on_gpu: bool, ranked: list[dict]) -> dict:
    """The sentence of the verdict sql/verdict_blame.sql ranked first, with the runner-up and the next step."""
    top = ranked[0]
    # the ms of a share are of the blame's own (profiled) step, never the headline's unprofiled one
    step_ms = m.get("blame_step_ms") or m.get("profiled_step_ms") or m.get("step_ms")
    holders, unit = blame_holders(m), measured_unit(kind)
    quoted = " + ".join(_quoted_cause(c, step_ms, holders, unit, m) for c in _shown(top["causes"]))
    reason = _lead(top, unit) + quoted + (f" of a {_f(step_ms, 2)} ms profiled {unit}" if step_ms is not None else "")
    if top.get("evidence"):
        reason += f"; {top['evidence']}"
    if len(ranked) > 1:
        runner_up = ranked[1]
        shares = " + ".join(f"{c['cause']} {_f(c['share_pct'])}%" for c in _shown(runner_up["causes"]))
        reason += f"; next {runner_up['verdict']}: {shares}"
    evidence = [f"blame_{c['cause']}_pct" for r in ranked[:2] for c in r["causes"]]
    next_step, finding = _next_step(m, top, step_ms, holders, unit)
    figures = {name: m.get(name) for name in (*evidence, "step_ms", "blame_step_ms", "gpu_util_pct") if name in m}
    if on_gpu:
        figures["blame_device_busy_pct"] = top["device_busy_pct"]
    if finding:
        figures["advice_rule"] = finding["rule"]
        figures["advice_evidence"] = finding["evidence"]
        figures["advice_saving_ms"] = finding["saving_ms"]
    # how it was decided lives here and in the docs, not in the sentence the terminal shows
    return {"bound": top["verdict"], "reason": reason, "next_step": next_step, "evidence": figures, "method": method()}


def _shown(causes: list[dict]) -> list[dict]:
    return [c for c in causes if c["share_pct"] >= _QUOTED_PCT] or causes[:1]


def _lead(top: dict, unit: str) -> str:
    if top["idle_first"]:
        # the blame's device causes over the profiled steps: a whole of its own, not gpu_util_pct's window
        return (
            f"device work holds {_f(top['device_busy_pct'])}% of each profiled {unit} (blame_device_busy_pct, under "
            f"{thresholds()['gpu_util_pct']:.0f}%), and the largest cause of its idle time is "
        )
    return f"the largest share of each profiled {unit}'s wall time is "


def _quoted_cause(c: dict, step_ms, holders: dict, unit: str, m: dict) -> str:
    held = _held_by(holders.get(c["cause"]), unit)
    share = f"{c['cause']} {_f(c['share_pct'])}% ({_ms(c['share_pct'], step_ms)} ms"
    return f"{share}: {c['words']}{held}{_differs(c, m)})"


def _differs(c: dict, m: dict) -> str:
    """Where a screen prints a like-named metric that measures something else (sql/blame_causes.sql
    differs_from), the metric's figure and how it differs, so the two never read as one story told twice."""
    row = causes().get(c["cause"], {})
    metric = row.get("differs_from")
    value = m.get(metric) if metric else None
    if value is None or f"{value:.1f}" == _f(c["share_pct"]):
        return ""
    ms = m.get(metric.removesuffix("_pct") + "_ms") if metric.endswith("_pct") else None
    return f"; {metric}, {_f(value)}%" + (f" = {ms:.2f} ms," if ms is not None else ",") + f" {row['differs_how']}"


def method() -> str:
    return (
        "decided from the per-step blame (sql/blame.sql) of the profiled steps: the verdict whose causes take the "
        f"most time wins; below {thresholds()['gpu_util_pct']:.0f}% device-busy, among the causes of device idle time"
    )


def advice_findings(m: dict) -> list[dict]:
    """The advice rules this profile's evidence fired (sql/advice.sql), largest saving first."""
    raw = m.get("advice")
    if isinstance(raw, str):
        import json

        raw = json.loads(raw)
    return raw if isinstance(raw, list) else []


def _next_step(m: dict, top: dict, step_ms, holders: dict, unit: str = "step") -> tuple[str, dict | None]:
    """The verdict's next step from this profile's evidence: the fired advice rule of its verdict with the
    largest saving (its trigger and the saving quoted), else the verdict's advice with what triggered it —
    the largest blamed cause and what held it."""
    fired = [f for f in advice_findings(m) if top["verdict"] in f["bounds"].split(",")]
    if fired:
        f = fired[0]
        saving = (
            ""
            if f["saving_ms"] is None
            else f"{SAVING_LEAD}{f['saving_ms']:.2f} ms per profiled {unit} "
            f"({_f(f['saving_pct'])}% of it: {f.get('saving_basis') or f'the time that work held the {unit}'})"
        )
        return f"{f['advice']} — because {f['evidence']}{saving}", f
    cause = top["causes"][0]
    held = holders.get(cause["cause"])
    trigger = (
        f"{cause['cause']} {_f(cause['share_pct'])}% of the profiled {unit} ({_ms(cause['share_pct'], step_ms)} ms)"
    )
    if held and held.get("name"):
        trigger += f", {_most(held)} `{held['name']}` ({held['ms_per_step']:.2f} ms per {unit})"
    return f"{top['advice']} — because {trigger}", None


SAVING_LEAD = "; projected saving at most "  # the last clause of a next step that projects a saving


def disown_saving(verdict: dict, marks: dict) -> dict:
    """The verdict of a measurement that a noisy or contended mark disowns (its timings are not the work's
    alone) projects no saving: the next step's saving clause and the evidence's saving are left out, and
    it says why. Any other verdict is returned as it is."""
    from libreyolo_profile.store.document import marks as mark

    disowning = [name for name in (mark.NOISY, mark.CONTENDED) if name in (marks or {})]
    next_step = verdict.get("next_step") or ""
    at = next_step.rfind(SAVING_LEAD)
    if not disowning or at < 0:
        return verdict
    evidence = dict(verdict.get("evidence") or {}, advice_saving_ms=None)
    said = f"; no saving projected from a measurement marked {' and '.join(disowning)}"
    return dict(verdict, next_step=next_step[:at] + said, evidence=evidence)


def blame_holders(m: dict) -> dict[str, dict]:
    """cause → {name, ms_per_step, of_cause_pct}: what held most of a host cause's time (sql/blame.sql
    blame_holders, through the blame_holders metric column); empty where the profile has none."""
    raw = m.get("blame_holders")
    if isinstance(raw, str):
        import json

        raw = json.loads(raw)
    return raw if isinstance(raw, dict) else {}


def _held_by(holder: dict | None, unit: str = "step") -> str:
    if not holder or not holder.get("name"):
        return ""
    return (
        f"; {_most(holder)} `{holder['name']}`, {holder['ms_per_step']:.2f} ms per {unit} "
        f"({_f(holder['of_cause_pct'])}% of the cause)"
    )


def _most(holder: dict) -> str:
    """ "most of it in" only where the holder has more than half of the cause: else it is the largest part."""
    share = holder.get("of_cause_pct")
    return "most of it in" if share is not None and share > 50 else "the largest part in"


def _ms(share: float, step_ms) -> str:
    return "n/a" if step_ms is None else f"{share * step_ms / 100:.2f}"


def _f(value, digits=1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"
