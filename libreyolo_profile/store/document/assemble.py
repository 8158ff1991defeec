"""Assemble the self-contained profile document (profile.json): `assemble` lays out every profile,
ours, a foreign trace's and a converted built-in one; `build_document` turns analysed trials into
its inputs."""

from __future__ import annotations

import math
import uuid
from datetime import datetime, timezone

from libreyolo_profile import __version__
from libreyolo_profile.errors import UnanalysableError
from libreyolo_profile.metric_catalog import INTERNAL_COLUMNS, METRICS, is_cpu_profile
from libreyolo_profile.store.document import headline
from libreyolo_profile.store.document import marks as mark
from libreyolo_profile.store.document.capture import TrialCapture
from libreyolo_profile.store.document.finite import non_finite_metrics, settle_non_finite
from libreyolo_profile.store.document.memory_evidence import peak_null_reasons, thrashing_evidence
from libreyolo_profile.store.document.parts import DocumentParts
from libreyolo_profile.store.document.verdict import advice_findings, decide
from libreyolo_profile.store.document.window import PROFILED_RUNS
from libreyolo_profile.store.schema import PROFILE_SCHEMA, REPEAT_SCHEMA, SCHEMA_VERSION, TABLES_VERSION
from libreyolo_profile.store.sections import OPTIONAL_SECTIONS, ROOFLINE_METRICS
from libreyolo_profile.vocabulary import thresholds


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def trial_metrics(analysis: dict, capture: TrialCapture | None) -> dict:
    """The metrics of one trial: the trace's (sql/metrics.sql, every rule the trace alone decides),
    then the measurement overrides: what only the measurement could know."""
    m = {k: _clean(v) for k, v in analysis["metrics"].items()}
    headline.apply_headline(m, capture)
    if capture is not None:
        _measurement_overrides(m, capture)
    return m


def _measurement_overrides(m: dict, capture: TrialCapture) -> None:
    """torch's own allocator counters, where the measurement read them, over the trace's allocator events
    (which need profile_memory and can miss the peak)."""
    if capture.peak_vram_mb is not None:
        m["peak_vram_mb"] = capture.peak_vram_mb
        if m.get("on_gpu"):
            m["peak_mem_mb"] = capture.peak_vram_mb  # on a GPU the profiled device's peak is the VRAM peak
    if capture.peak_reserved_mb is not None:
        m["peak_reserved_mb"] = capture.peak_reserved_mb
    if capture.peak_mem_mb is not None:
        m["peak_mem_mb"] = capture.peak_mem_mb


def _null_reasons(m: dict, analysis: dict) -> dict:
    reasons = {}
    if m.get("images_per_step") is None:
        text = (
            "images per step unknown: the trace records no input shapes (record_shapes was off) and no batch "
            "size was given"
        )
        for name in ("throughput_img_s", "ms_per_img", "images_per_step"):
            reasons[name] = text
    reasons.update(peak_null_reasons(m))
    if m.get("on_gpu"):
        if m.get("kernel_gap_us") is None:
            reasons["kernel_gap_us"] = "no kernel was queued behind another on one stream in the measured steps"
        if m.get("launch_api_us") is None:
            reasons["launch_api_us"] = "no kernel-launch API call was recorded inside the measured steps"
    else:
        if m.get("host_overhead_ms") is None:
            reasons["host_overhead_ms"] = reasons["host_overhead_pct"] = reasons["per_launch_host_us"] = reasons[
                "leaf_busy_pct"
            ] = "the trace records no framework ops inside its steps"
    roofline_reasons(m, reasons)
    unprofiled = (
        "not measured: a foreign trace carries no unprofiled timing"
        if analysis.get("foreign")
        else "not measured: --no-overhead timed no calls without the profiler"
    )
    for name in ("profiler_overhead_pct", "timing_cv_pct"):
        if m.get(name) is None:
            reasons[name] = unprofiled
    if m.get("other_cpu_pct") is None:
        reasons["other_cpu_pct"] = (
            "not measured: a foreign trace does not record the machine's load"
            if analysis.get("foreign")
            else "this system has no /proc/stat to read it from"
        )
    return reasons


def roofline_reasons(m: dict, reasons: dict) -> None:
    """Why a roofline metric is null: the roof is unknown (sql/roofline.sql says why), or no op call was costed."""
    why = m.get("roofline_null_reason") or "no op call in the window has a cost model and a roof (record_shapes off?)"
    for name in ROOFLINE_METRICS:
        if m.get(name) is None:
            reasons[name] = why


def _unusable_durations(analysis: dict) -> None:
    """Refuse a trace none of whose duration events has a usable duration: they all read as 0, so every
    step time, share and utilization would be made up (exit 1, with the reason)."""
    total, usable = analysis.get("duration_events"), analysis.get("usable_durations")
    if total and not usable:
        raise UnanalysableError(mark.durations_unusable(total))


def _repeat_stats(trials: list[dict]) -> dict:
    """The spread over trials of every metric each trial has a number for."""
    series = {}
    for name in METRICS:
        values = [t.get(name) for t in trials]
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if numbers and len(numbers) == len(values):
            series[name] = numbers
    return headline.trial_spread(series)


def build_document(
    analyses: list[dict],
    captures: list[TrialCapture | None],
    *,
    source: dict,
    command: list[str] | None = None,
    settings: dict | None = None,
    environment: dict | None = None,
    model: dict | None = None,
    marks: dict | None = None,
    device_type: str | None = None,
) -> dict:
    """The profile of analysed trials (sql/metrics.sql over each trial's trace) and their captures."""
    last = analyses[-1]
    kind = last["kind"]
    computed_non_finite = non_finite_metrics(analyses)
    per_trial = [trial_metrics(a, c) for a, c in zip(analyses, captures, strict=False)]
    thin = _thin_percentiles(per_trial, captures)
    on_gpu = bool(per_trial[-1].get("on_gpu"))
    device_type = device_type or ("gpu" if on_gpu else "cpu")
    total_mb = _device_total_mb(last, captures)
    metrics, repeat = _mean_over_trials(per_trial)
    thrashing = _thrashing(per_trial, captures, total_mb)
    unusable = _unusable_durations(last)
    verdict = decide(metrics, kind, on_gpu, thrashing, unusable)
    all_marks = _trace_marks(dict(marks or {}), last, metrics, thrashing, unusable)
    section_reasons = _unavailable_sections(analyses, all_marks, metrics)
    noise = headline.noise_evidence(kind, captures, per_trial, thresholds())
    if noise:
        all_marks[mark.NOISY] = mark.noisy(noise)
    null_reasons = {**_document_null_reasons(metrics, source, thin, captures), **section_reasons}
    parts = DocumentParts(
        kind=kind,
        kind_inferred=last["kind_inferred"],
        device_type=device_type,
        metrics=metrics,
        verdict=verdict,
        thrashing=bool(thrashing),
        marks=all_marks,
        null_reasons=null_reasons,
        trials=per_trial,
        repeat=repeat,
        window_source=metrics.get("window_source"),
        images_per_step_source=metrics.get("images_per_step_source"),
        devices=last["devices"],
        rank=last["rank"],
        world_size=last["world_size"],
        tables=last["tables"],
        source=source,
        command=command,
        settings=settings or {},
        environment=environment or {},
        model=model or {},
        generation=uuid.uuid4().hex,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        producer=f"libreyolo-profile {__version__}",
        extra=[c.extra for c in captures if c is not None and c.extra] or None,
        timing=headline.timing_record(kind, captures),
        non_finite=computed_non_finite,
    )
    return assemble(parts)


def _unavailable_sections(analyses: list[dict], all_marks: dict, metrics: dict) -> dict:
    """The optional sections the trials could not compute, marked in `all_marks` (section_unavailable); returns
    why each of their null metrics `get` answers is null (the advice, an input of the verdict, has the mark)."""
    unavailable = {name: why for a in analyses for name, why in (a.get("unavailable") or {}).items()}
    if unavailable:
        all_marks[mark.SECTION_UNAVAILABLE] = mark.section_unavailable(unavailable)
    return {
        name: f"the {section} section could not be computed: {why}"
        for section, why in unavailable.items()
        for name in OPTIONAL_SECTIONS[section].metrics
        if name in METRICS and metrics.get(name) is None
    }


def _thin_percentiles(per_trial: list[dict], captures: list[TrialCapture | None]) -> dict:
    """The latency percentiles each trial dropped for standing on too few calls, with why."""
    thin = {}
    for m, c in zip(per_trial, captures, strict=False):
        thin.update(headline.drop_thin_percentiles(m, headline.calls_behind_percentiles(c, m.get("steps"))))
    return thin


def _device_total_mb(last: dict, captures: list[TrialCapture | None]) -> float | None:
    """The profiled device's memory: the measurement's own reading, else the last trace's deviceProperties."""
    total_mb = next((d.get("total_mb") for d in last["devices"]), None)
    if captures[-1] is not None and captures[-1].device_total_mb:
        total_mb = captures[-1].device_total_mb
    return total_mb


def _mean_over_trials(per_trial: list[dict]) -> tuple[dict, dict]:
    """(the profile's scalars, their spread): the mean over trials of each metric every trial has a number
    for, the last trial's value for the rest."""
    metrics = dict(per_trial[-1])
    repeat = _repeat_stats(per_trial) if len(per_trial) > 1 else {}
    for name, stat in repeat.items():
        metrics[name] = stat["mean"]
    return metrics, repeat


def _thrashing(per_trial: list[dict], captures: list[TrialCapture | None], total_mb: float | None) -> str | None:
    """Why the first trial that ran under device-memory pressure did (thrashing_evidence), or None."""
    thrashing = None
    for m, c in zip(per_trial, captures, strict=False):
        thrashing = thrashing or thrashing_evidence(m, c, total_mb)
    return thrashing


def _trace_marks(all_marks: dict, last: dict, metrics: dict, thrashing: str | None, unusable: str | None) -> dict:
    """`all_marks` (the caller's own) with the marks of what the last trial's trace and metrics show."""
    if last.get("damage"):
        all_marks[mark.DAMAGE_MARK] = mark.trace_damaged(last["damage"])
    if last.get("nesting_cut"):
        all_marks[mark.NESTING_CUT] = mark.nesting_cut(last["nesting_cut"])
    if thrashing:
        all_marks[mark.THRASHING] = mark.thrashing(thrashing)
    if last["kind_inferred"]:
        all_marks[mark.KIND_INFERRED] = mark.kind_inferred(last["kind"])
    if metrics.get("empty_steps"):
        all_marks[mark.EMPTY_STEPS] = mark.empty_steps(metrics["empty_steps"], metrics.get("empty_steps_ms") or 0.0)
    if metrics.get("drain_unrecorded_ms"):  # only a closing stretch past drain_unrecorded_pct is cut (sql/ingest.sql)
        tail_ms = metrics["drain_unrecorded_ms"]
        all_marks[mark.UNRECORDED_TAIL] = mark.unrecorded_tail(tail_ms, metrics.get("drain_ms") or tail_ms)
    if not last["phases_annotated"]:
        all_marks[mark.PHASES_INFERRED] = mark.phases_inferred()
    if not str(metrics.get("window_source", "")).startswith("ProfilerStep"):
        all_marks[mark.WINDOW_FALLBACK] = mark.window_fallback(metrics.get("window_source"))
    return all_marks


def _document_null_reasons(metrics: dict, source: dict, thin: dict, captures: list[TrialCapture | None]) -> dict:
    """Why each null metric is null, the thin percentiles' reasons among them."""
    reasons = _null_reasons(metrics, {"foreign": source.get("type") != "measured"})
    reasons.update({name: why for name, why in thin.items() if metrics.get(name) is None})
    rss = [c.extra.get("peak_rss_mb") for c in captures if c is not None and c.extra.get("peak_rss_mb")]
    if metrics.get("peak_mem_mb") is None and rss and "peak_mem_mb" in reasons:
        # not the allocator's peak, but the nearest honest figure: say what it is, keep the metric null
        reasons["peak_mem_mb"] += f"; the process's peak RSS was {max(rss):.0f} MiB (extra.peak_rss_mb)"
    return reasons


# the head of every profile.json: its layout's schema id and versions
_LAYOUT_VERSIONS = {"schema": PROFILE_SCHEMA, "schema_version": SCHEMA_VERSION, "tables_version": TABLES_VERSION}


def assemble(parts: DocumentParts) -> dict:
    """The one layout of profile.json (docs/SCHEMA.md) of `parts` (store/document/parts.py); `parts.marks`: the
    source's own; `parts.non_finite`: see finite.py."""
    p = parts
    return settle_non_finite(
        {
            **_LAYOUT_VERSIONS,
            "generation": p.generation,
            "kind": p.kind,
            "kind_inferred": p.kind_inferred,
            "device_type": p.device_type,
            "created": p.created,
            "producer": p.producer,
            "source": p.source,
            "command": p.command,
            "settings": p.settings,
            "environment": p.environment,
            "model": p.model,
            "window": _window(p.metrics, p.window_source, p.images_per_step_source),
            "rank": p.rank,
            "world_size": p.world_size,
            "job": None,  # a job profile's ranks, clocks and straggler (store/document/job.py)
            "devices": p.devices,
            "metrics": _public_metrics(p.metrics, p.verdict, p.thrashing),
            "timing": p.timing or {"headline": "trace", "overhead_method": None},
            "null_reasons": p.null_reasons,
            "verdict": p.verdict,
            "thresholds": thresholds(),
            "marks": _with_shared_marks(p.marks, p.device_type, p.metrics, p.kind),
            "trials": [{k: v for k, v in t.items() if k in METRICS} for t in p.trials],
            "repeat": p.repeat,
            "extra": p.extra,
            "tables": p.tables,
        },
        p.non_finite,
    )


def _public_metrics(metrics: dict, verdict: dict, thrashing: bool | None) -> dict:
    """The document's metrics: sql/metrics.sql's internal columns left out, the verdict's bound and the
    thrashing flag added."""
    public = {k: v for k, v in metrics.items() if k not in INTERNAL_COLUMNS}
    public.update(bound=verdict["bound"], bound_reason=verdict["reason"], thrashing=thrashing)
    return public


def _window(metrics: dict, window_source, images_per_step_source) -> dict:
    """The measured window: its steps and wall time, and where they and the images per step came from."""
    return {
        "steps": metrics.get("steps"),
        "wall_ms": metrics.get("window_ms"),
        "source": window_source,
        "images_per_step_source": images_per_step_source,
    }


def _with_shared_marks(marks: dict, device_type: str, metrics: dict, kind: str) -> dict:
    """The source's own marks plus the ones every profile shares: a CPU profile (no accelerator present), or
    an accelerator declared whose device work was not recorded (sql/advice.sql's no_device_events), a tiny window."""
    all_marks = dict(marks)
    unrecorded = [f["evidence"] for f in advice_findings(metrics) if f["rule"] == mark.NO_DEVICE_EVENTS]
    if unrecorded:
        all_marks[mark.NO_DEVICE_EVENTS] = mark.no_device_events(unrecorded[0])
    elif is_cpu_profile({"device_type": device_type}):
        all_marks[mark.CPU_PROFILE] = mark.cpu_profile()
    steps, wall_ms = metrics.get("steps") or 0, metrics.get("window_ms") or 0
    # an inference call repeats the same work: its attribution settles within infer's default window
    # (store/document/window.py), where training steps differ step to step
    fewest = PROFILED_RUNS if kind == "infer" else thresholds()["tiny_steps"]
    shortest_ms = thresholds()["tiny_window_ms"]
    if mark.is_tiny_window(steps, wall_ms, fewest, shortest_ms):
        all_marks[mark.TINY_WINDOW] = mark.tiny_window(steps, wall_ms, fewest, shortest_ms, kind)
    return all_marks


def repeat_document(doc: dict) -> dict:
    """profile_repeat.json: the profile plus, per metric, mean, std, n and the trial values."""
    return {**doc, "schema": REPEAT_SCHEMA}
