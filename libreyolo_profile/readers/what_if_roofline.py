"""`libreyolo profile what-if --op-at-roofline PCT`: the step if every costed op ran at PCT% of its
roofline (sql/what_if_roofline.sql holds the arithmetic). Kept apart from what_if.py's removal models."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.metric_catalog import is_cpu_profile
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import fmt, stdout_console
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.readers.common import open_profile, profile_identity, records, run_sql
from libreyolo_profile.vocabulary import causes_running_ops

SHOWN = 8


def _cap_ms(m, on_cpu: bool) -> float | None:
    """`m`: the head's metrics, typed (Loaded.head.metrics)."""
    # the causes in which the device (on a CPU, the CPU) executed ops: the most faster ops can take off
    shares = [getattr(m, f"blame_{cause}_pct", None) for cause in causes_running_ops(on_gpu=not on_cpu)]
    if not m.step_ms or any(s is None for s in shares):
        return None
    cap = m.step_ms * sum(shares) / 100
    # faster device work cannot take the step below the host's recorded work that does not wait on the device
    # (host_work_ms, sql/blame.sql blame_host_floor): what the removal models' floor holds too
    host_work = None if on_cpu else m.host_work_ms
    return cap if host_work is None else max(0.0, min(cap, m.step_ms - host_work))


def op_at_roofline_document(trace: Path, pct: float) -> dict:
    if not 0 < pct <= 100:
        raise UsageError(f"--op-at-roofline {pct:g}: a share of the roof, more than 0 and at most 100")
    profile = open_profile(trace)
    doc, m = profile.doc, profile.head.metrics
    if not m.step_ms:
        raise UsageError("what-if --op-at-roofline: this profile has no step_ms to project")
    cap = _cap_ms(m, is_cpu_profile(doc))
    rows = records(*run_sql(profile.con, "what_if_roofline.sql", {"pct": pct, "step_ms": m.step_ms, "cap_ms": cap}))
    saved = rows[0]["saved_ms"] if rows else 0.0
    return {
        "profile": profile_identity(profile.loaded),
        "model": (
            f"each costed op below {pct:g}% of its roofline takes roofline time ÷ {pct:g}%; the rest keep their time"
        ),
        "inputs": {"step_ms": m.step_ms, "pct": pct, "device_bound_ms": cap},
        "ops": rows[:SHOWN] if rows else [],
        "baseline": {"step_ms": m.step_ms},
        "projected": {"step_ms": rows[0]["projected_step_ms"] if rows else m.step_ms},
        "saved_ms": saved,
        "uncapped_saved_ms": rows[0]["uncapped_ms"] if rows else 0.0,
        "caveat": (
            "device times come from the profiled window and step_ms from the headline; the saving is capped "
            "at the time the blame has the device (CPU: the CPU) executing ops"
            + (
                ", and never takes the step below the host's work that does not wait on the device (host_work_ms)"
                if not is_cpu_profile(doc) and m.host_work_ms is not None
                else ""
            )
            + ("" if cap is not None else " — no blame here, so it is not capped")
        ),
    }


def print_op_at_roofline(trace: Path, pct: float, as_json: bool) -> None:
    w = op_at_roofline_document(trace, pct)
    if as_json:
        emit_json(w)
        return
    console = stdout_console()
    say = lambda text: console.print(safe_line(text), highlight=False, markup=False)  # noqa: E731
    say(f"what-if · ops at {pct:g}% of their roofline · {w['profile']['path']}")
    say(f"model: {w['model']}")
    for r in w["ops"]:
        say(
            f"  {r['op']} {r['input_dims'] or ''}: {fmt(r['device_us'], 2)} → {fmt(r['projected_us'], 2)} µs per call, "
            f"saves {fmt(r['saved_ms_per_step'], 3)} ms/step"
        )
    say(
        f"step: {fmt(w['baseline']['step_ms'], 3)} ms → {fmt(w['projected']['step_ms'], 3)} ms "
        f"(saving {fmt(w['saved_ms'], 3)} ms, uncapped {fmt(w['uncapped_saved_ms'], 3)} ms)"
    )
    say(f"caveat: {w['caveat']}")
