"""Where a figure on the screen comes from: the calls timed without the profiler (the headline of a
measured profile) or the profiled trace (the attribution: phases, blame, modules, ops, kernels).

A measured profile times the same calls twice. Its headline (step_ms, throughput, latency, the
stage means) is the unprofiled calls'; everything that says *where* the time went is read from the
trace, whose steps are slower by profiler_overhead_pct. A share of profiled time is quoted as a
share, or converted with the profiled step it came from, never multiplied into the headline.
With --repeat the tables hold the last trial's trace: its shares divide by that trial's own step.
"""

from __future__ import annotations

from libreyolo_profile.metric_catalog import UNPROFILED_HEADLINE, measured_unit


def headline_is_unprofiled(doc: dict) -> bool:
    """True when the profile's headline comes from calls timed without the profiler."""
    return (doc.get("timing") or {}).get("headline") == "unprofiled"


def is_unprofiled(name: str, doc: dict) -> bool:
    """Whether metric `name` of this profile was measured without the profiler."""
    return headline_is_unprofiled(doc) and name in UNPROFILED_HEADLINE


def trials(doc: dict) -> int:
    return max(len(doc.get("trials") or []), 1)


def traced_trial(doc: dict) -> dict:
    """The metrics of the trial whose trace the tables hold (the last one of a repeated run)."""
    return (doc.get("trials") or [doc.get("metrics") or {}])[-1]


def _noun(doc: dict, count) -> str:
    word = measured_unit(doc.get("kind"))
    return f"{count:,} {word}{'' if count == 1 else 's'}" if isinstance(count, int) else f"{word}s"


def unprofiled_label(doc: dict) -> str:
    """'unprofiled: 20 calls' / 'unprofiled: 20 calls × 3 trials, mean'; '' when there are none."""
    if not headline_is_unprofiled(doc):
        return ""
    per_trial = (doc.get("timing") or {}).get("unprofiled_calls_per_trial") or []
    label = f"unprofiled: {_noun(doc, per_trial[0] if per_trial else None)}"
    return label + (f" × {trials(doc)} trials, mean" if trials(doc) > 1 else "")


def profiled_label(doc: dict, tables: bool = True) -> str:
    """What a figure measured under the profiler is: 'profiled: 20 calls', 'profiled: last of 3 trials,
    20 calls' (a table of the last trial's trace), or 'profiled trace: 20 steps' for an imported trace."""
    steps = traced_trial(doc).get("steps")
    steps = int(steps) if isinstance(steps, (int, float)) else None
    if not headline_is_unprofiled(doc) and (doc.get("source") or {}).get("type") != "measured":
        return f"profiled trace: {_noun(doc, steps)}"
    if trials(doc) > 1:
        if tables:
            return f"profiled: last of {trials(doc)} trials, {_noun(doc, steps)}"
        return f"profiled: {_noun(doc, steps)} × {trials(doc)} trials, mean"
    return f"profiled: {_noun(doc, steps)}"


def header_line(doc: dict, wall_ms_text: str) -> str:
    """The summary's second line: which calls the headline is from and which the attribution is from."""
    steps = traced_trial(doc).get("steps")
    steps = int(steps) if isinstance(steps, (int, float)) else None
    profiled = _noun(doc, steps).replace(" call", " profiled call").replace(" step", " profiled step")
    if not headline_is_unprofiled(doc):
        source = "profiled trace" if (doc.get("source") or {}).get("type") != "measured" else "profiled window"
        line = f"every figure from the {source}: {_noun(doc, steps)} over {wall_ms_text} ms"
        return line + (f" (tables: last of {trials(doc)} trials; metrics: their mean)" if trials(doc) > 1 else "")
    per_trial = (doc.get("timing") or {}).get("unprofiled_calls_per_trial") or []
    unprofiled = _noun(doc, per_trial[0] if per_trial else None)
    unprofiled = unprofiled.replace(" call", " unprofiled call").replace(" step", " unprofiled step")
    if trials(doc) > 1:
        return (
            f"headline: {unprofiled} × {trials(doc)} trials (mean) · attribution: {profiled} over "
            f"{wall_ms_text} ms (last of {trials(doc)} trials)"
        )
    return f"headline: {unprofiled} · attribution: {profiled} over {wall_ms_text} ms"
