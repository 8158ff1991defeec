"""The time sections of one profile's report (readers/report_page.py): host time per step by phase with
the GPU time laid over it, the phases' shares, and for an inference profile the latency distribution."""

from __future__ import annotations

from libreyolo_profile.metric_catalog import is_cpu_profile, measured_unit
from libreyolo_profile.readers.report_colors import color_for
from libreyolo_profile.readers.report_html import NARROW, WIDE, html_table, td, where
from libreyolo_profile.readers.report_svg import esc, histogram, legend, num, share_bar, step_bars


def shows_gpu(side: dict) -> bool:
    return not is_cpu_profile(side["summary"]["profile"]) and any((st["kernel_ms"] or 0) > 0 for st in side["steps"])


def steps_section(side: dict, compact: bool = False, y_top: float | None = None) -> str:
    s = side["summary"]
    kind = s["profile"]["kind"]
    steps, phases = side["steps"], side["phase_order"]
    show_gpu = shows_gpu(side)
    unit_word = measured_unit(kind)
    title = "Per call: latency by stage" if kind == "infer" else "Per step: host wall time by phase"
    if show_gpu:
        title += ", GPU kernel time laid over it"
    title += where(side)
    if not steps:
        return f'<h2>{esc(title)}</h2><p class="note">no measured {unit_word}s in this profile</p>'
    used = [p for p in phases if any(st["phases"].get(p) for st in steps)]
    extra = [("GPU kernel time launched by the step", color_for("gpu_busy"), "overlay")] if show_gpu else []
    notes = []
    if side.get("ranks", 1) > 1:
        notes.append(f"showing rank {side.get('rank')} of {side['ranks']} ranks in the trace")
    if "phases_inferred" in (s.get("marks") or {}):
        notes.append("phases inferred from PyTorch's own marks")
    if show_gpu:
        notes.append(
            "the dark bar is the summed duration of the kernels the step launched (overlapping streams "
            "can exceed the step's wall time; GPU utilization uses their union)"
        )
    note = f'<p class="note">{esc("; ".join(notes))}</p>' if notes else ""
    return (
        f"<h2>{esc(title)}</h2>"
        + legend([(p, color_for(p)) for p in used], extra)
        + step_bars(steps, phases, show_gpu, unit_word, width=NARROW if compact else WIDE, y_top=y_top)
        + note
    )


def phases_section(side: dict, compact: bool) -> str:
    s = side["summary"]
    rows = s["phases"]
    if not rows:
        return ""
    kind = s["profile"]["kind"]
    word = "Stages" if kind == "infer" else "Phases"
    bar = share_bar(
        [(r["phase"], r["wall_ms"], color_for(r["phase"])) for r in rows],
        "phase-share",
        width=NARROW if compact else WIDE,
    )
    table = html_table(
        [
            (("stage" if kind == "infer" else "phase"), "l"),
            ("wall ms/step", ""),
            ("wall %", ""),
            ("GPU ms/step", ""),
            ("kernels/step", ""),
            ("ops/step", ""),
            ("launches/step", ""),
        ],
        [
            [
                f'<td class="l">{esc(r["phase"])}</td>',
                td(r["wall_ms"]),
                td(r["wall_pct"]),
                td(r["gpu_ms"]),
                td(r["kernels"], unit="count"),
                td(r["ops"], unit="count"),
                td(r["launches"], unit="count"),
            ]
            for r in rows
        ],
    )
    return f"<h3>{word}: share of the host wall time</h3>{bar}" + ("" if compact else table)


def latency_section(side: dict, compact: bool = False) -> str:
    s = side["summary"]
    if s["profile"]["kind"] != "infer" or not side["steps"]:
        return ""
    values, which = latency_calls(side)
    if not values:
        return ""
    m = s["metrics"]
    # the percentile lines are the headline's, so the bars are the same calls (the unprofiled ones
    # where the profile has them); with --repeat each trial's percentile is averaged, the bars pool all
    markers = [("p50", m.get("latency_p50_ms")), ("p90", m.get("latency_p90_ms")), ("p99", m.get("latency_p99_ms"))]
    pooled = "the mean of the trials' percentiles" if s["repeat_n"] > 1 else "these calls' percentiles"
    return (
        f"<h2>Latency distribution ({len(values):,} {which} call{'s' if len(values) != 1 else ''})</h2>"
        + histogram(values, markers, width=NARROW if compact else WIDE)
        + f'<p class="note">{esc(" · ".join(f"{q} {_ms(v)}" for q, v in markers))} ({esc(pooled)}); '
        f"every {esc(which)} call is counted</p>"
    )


def _ms(value) -> str:
    return "—" if value is None else f"{num(value)} ms"


def latency_calls(side: dict) -> tuple[list[float], str]:
    """The calls the latency histogram draws, and what they are: a measured profile's unprofiled calls
    (profile.json extra.unprofiled_latency_ms, the calls behind its percentiles), else the trace's."""
    unprofiled = [v for e in side.get("extra") or [] for v in (e or {}).get("unprofiled_latency_ms") or []]
    if unprofiled and side["summary"]["provenance"]["unprofiled_metrics"]:
        return unprofiled, "unprofiled"
    return [st["host_ms"] for st in side["steps"] if st["host_ms"] is not None], "profiled"
