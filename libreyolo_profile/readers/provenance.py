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


def headline_is_unprofiled(head) -> bool:
    """True when the profile's headline comes from calls timed without the profiler; `head`: the typed head
    (Loaded.head)."""
    return head.timing.headline == "unprofiled"


def is_unprofiled(name: str, head) -> bool:
    """Whether metric `name` of this profile was measured without the profiler."""
    return headline_is_unprofiled(head) and name in UNPROFILED_HEADLINE


def trials(head) -> int:
    return max(len(head.trials), 1)


def traced_trial(head):
    """The metrics of the trial whose trace the tables hold (the last one of a repeated run), typed."""
    return (head.trials or [head.metrics])[-1]


def _noun(head, count) -> str:
    word = measured_unit(head.kind)
    return f"{count:,} {word}{'' if count == 1 else 's'}" if isinstance(count, int) else f"{word}s"


def _traced_steps(head) -> int | None:
    steps = traced_trial(head).steps
    return int(steps) if isinstance(steps, (int, float)) else None


def unprofiled_label(head) -> str:
    """'unprofiled: 20 calls' / 'unprofiled: 20 calls × 3 trials, mean'; '' when there are none."""
    if not headline_is_unprofiled(head):
        return ""
    per_trial = head.timing.unprofiled_calls_per_trial or []
    label = f"unprofiled: {_noun(head, per_trial[0] if per_trial else None)}"
    return label + (f" × {trials(head)} trials, mean" if trials(head) > 1 else "")


def profiled_label(head, tables: bool = True) -> str:
    """What a figure measured under the profiler is: 'profiled: 20 calls', 'profiled: last of 3 trials,
    20 calls' (a table of the last trial's trace), or 'profiled trace: 20 steps' for an imported trace."""
    steps = _traced_steps(head)
    if not headline_is_unprofiled(head) and head.source.type != "measured":
        return f"profiled trace: {_noun(head, steps)}"
    if trials(head) > 1:
        if tables:
            return f"profiled: last of {trials(head)} trials, {_noun(head, steps)}"
        return f"profiled: {_noun(head, steps)} × {trials(head)} trials, mean"
    return f"profiled: {_noun(head, steps)}"


def header_line(head, wall_ms_text: str) -> str:
    """The summary's second line: which calls the headline is from and which the attribution is from."""
    steps = _traced_steps(head)
    profiled = _noun(head, steps).replace(" call", " profiled call").replace(" step", " profiled step")
    if not headline_is_unprofiled(head):
        source = "profiled trace" if head.source.type != "measured" else "profiled window"
        line = f"every figure from the {source}: {_noun(head, steps)} over {wall_ms_text} ms"
        return line + (f" (tables: last of {trials(head)} trials; metrics: their mean)" if trials(head) > 1 else "")
    per_trial = head.timing.unprofiled_calls_per_trial or []
    unprofiled = _noun(head, per_trial[0] if per_trial else None)
    unprofiled = unprofiled.replace(" call", " unprofiled call").replace(" step", " unprofiled step")
    if trials(head) > 1:
        return (
            f"headline: {unprofiled} × {trials(head)} trials (mean) · attribution: {profiled} over "
            f"{wall_ms_text} ms (last of {trials(head)} trials)"
        )
    return f"headline: {unprofiled} · attribution: {profiled} over {wall_ms_text} ms"
