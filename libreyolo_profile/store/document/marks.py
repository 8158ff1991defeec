"""Every mark a profile can carry: its name and the sentence it says. One home, so a reader, a test or
the docs find every mark here, and the same condition always says the same words.

A mark is a caveat on the whole profile, stored in profile.json's `marks` as {name: sentence}.
Plain Python, no imports: the loader reads DAMAGE_MARK on every cached read.
"""

from __future__ import annotations

# -- marks of any profile (store/document/assemble.py) ------------------------------------------------

DAMAGE_MARK = "trace_damaged"  # what reading the trace repaired, left out or recovered; repeated on every read
CPU_PROFILE = "cpu_profile"
NO_DEVICE_EVENTS = "no_device_events"  # an accelerator declared, its device work not recorded (sql/advice.sql)
TINY_WINDOW = "tiny_window"
THRASHING = "thrashing"
KIND_INFERRED = "kind_inferred"
PHASES_INFERRED = "phases_inferred"
WINDOW_FALLBACK = "window_fallback"
NESTING_CUT = "nesting_cut"  # ranges nested deeper than sql/ingest.sql's nesting_cap were left out
EMPTY_STEPS = "empty_steps"
UNRECORDED_TAIL = "unrecorded_tail"  # the last step closed on a stretch recording nothing but a wait (sql/ingest.sql)
SECTION_UNAVAILABLE = "section_unavailable"  # an optional section could not be computed on this trace; the rest stands
NON_FINITE = "non_finite_values"  # NaN or Infinity computed somewhere, stored as null (store/document/assemble.py)

# -- marks a measurement adds (measure/) -----------------------------------------------------------------

RANDOM_WEIGHTS = "random_weights"
DEPARTS_FROM_TRAINER = "departs_from_trainer"
NOISY = "noisy"  # the machine was busy or the timing scattered while it measured (store/document/headline.py)
CONTENDED = "contended"  # our threads waited for CPUs others held, or outnumbered the free ones (measure/noise.py)
# a mark's line on the first screen (`mark <name>: <sentence>`) that must fit a terminal whole
MARK_LINE_COLUMNS = 80

# -- marks of a profile converted from LibreYOLO's built-in profiler (store/document/builtin.py) ---------

IMPORTED_BUILTIN = "imported_builtin"
OPS_TOTAL_ONLY = "ops_total_only"
BUILTIN_NAMES_CUT = "builtin_names_cut"
BUILTIN_LATENCY_SUBSET = "builtin_latency_subset"
BUILTIN_GPU_DEFINITIONS = "builtin_gpu_definitions"
BUILTIN_MEMORY_PRESSURE = "builtin_memory_pressure"


def trace_damaged(notes: list[str]) -> str:
    # writer conventions read differently (ROCm's sizes as text) are said here too, so not "damaged" alone
    return "reading the trace repaired, converted or left out: " + "; ".join(notes)


def durations_unusable(total: int) -> str:
    """Not a mark: why a trace is refused (store/document/assemble.py), said in one place all the same."""
    return (
        f"none of the trace's {total:,} duration events has a usable duration (each is negative, NaN, zero or "
        "missing): step times, utilization and shares cannot be computed"
    )


def cpu_profile() -> str:
    return (
        "CPU profile: GPU figures (utilization, Tensor Cores, VRAM, kernels) do not apply; "
        "see `ops` for where the time goes"
    )


def no_device_events(evidence: str) -> str:
    return (
        f"no device events: {evidence}. The device activity was not recorded (ProfilerActivity.CUDA off, or "
        "CUPTI in counter mode): GPU figures (utilization, kernels, Tensor Cores) are unknown and the verdict "
        "reads only the host"
    )


def is_tiny_window(steps: int, wall_ms: float, fewest: int, shortest_ms: float) -> bool:
    return steps < fewest or wall_ms < shortest_ms


def tiny_window(steps: int, wall_ms: float, fewest: int, shortest_ms: float, kind: str = "train") -> str:
    noun = "call" if kind == "infer" else "step"  # an inference profile measures calls
    return (
        f"tiny window: {round(steps):,} profiled {noun}{'' if round(steps) == 1 else 's'} over {wall_ms:.1f} ms "
        f"(fewer than {fewest} {noun}s or under {shortest_ms:.0f} ms): figures are noisy"
    )


def thrashing(evidence: str) -> str:
    return f"device memory was thrashing ({evidence}): utilization and throughput cannot be trusted"


def kind_inferred(kind: str) -> str:
    return f"kind inferred as {kind}: the trace " + (
        "holds autograd backward work or gradient collectives (DDP's reducer, an all_reduce beside the steps)"
        if kind == "train"
        else "holds no backward work and no gradient collectives"
    )


def phases_inferred() -> str:
    return (
        "phases inferred from PyTorch's own marks (DataLoader, Optimizer, autograd, host-to-device copies); "
        "the rest of each step counts as forward"
    )


def nesting_cut(cuts: list) -> str:
    """`cuts`: (which ranges, how many were left out, the depth cap) from sql/ingest.sql's nesting_cut."""
    return (
        "ranges nested deeper than the cap were left out: "
        + "; ".join(f"{count:,} {what} below {cap} levels" for what, count, cap in cuts)
        + "; their time counts as self time of the deepest range kept around them"
    )


def empty_steps(count: int, ms: float) -> str:
    return (
        f"{count} ProfilerStep range(s) ({ms:.3f} ms in all) dropped: nothing ran inside them (no op, runtime "
        "call or Python frame on any thread), so they are not steps"
    )


def unrecorded_tail(tail_ms: float, drain_ms: float) -> str:
    return (
        f"the last step closed on {tail_ms:.2f} ms in which nothing was recorded but the closing synchronize or a "
        f"wait (the profiler stopping): left out of the step, its blame and step_ms, and reported as end-of-window "
        f"drain beside them (drain_ms {drain_ms:.2f})"
    )


def section_unavailable(reasons: dict[str, str]) -> str:
    """`reasons`: {section: why it could not be computed} (store/sections.py OPTIONAL_SECTIONS)."""
    return "sections left out, each null or empty, the rest of the profile unaffected: " + "; ".join(
        f"{section}: {why}" for section, why in sorted(reasons.items())
    )


def non_finite(places: dict[str, int]) -> str:
    """`places`: {where in the profile: how many NaN or Infinity values were computed there}."""
    return "values that came out NaN or Infinity, stored as null: " + "; ".join(
        f"{where} ({count:,})" for where, count in sorted(places.items())
    )


def window_fallback(source) -> str:
    return f"window: {source}"


def random_weights(why: str, model_name: str, seed: int) -> str:
    """A measurement that found no weights file and ran randomly initialized weights of `model_name`
    (family and size, e.g. LibreYOLOX-s)."""
    return (
        f"randomly initialized {model_name} weights (seed {seed}): timing is representative, detections "
        f"and NMS work are not ({why})"
    )


def random_weights_named(weights) -> str:
    """A built-in profile whose weights file name says the weights were random."""
    return f"the weights file name ({weights}) says randomly initialized weights"


def departs_from_trainer(departures: dict[str, str]) -> str:
    """A `run` whose step differs from LibreYOLO's trainer by the options asked for: {flag: what it changes}."""
    return "the measured training step departs from LibreYOLO's trainer: " + "; ".join(
        f"{flag}: {what}" for flag, what in departures.items()
    )


def imported_builtin() -> str:
    return (
        "imported from LibreYOLO's built-in profiler (schema libreyolo.profile.analysis/v1): step time, "
        "throughput, latency, stage and phase times are its measurements; its verdict, host overhead and, on a "
        "CPU, its kernel/launch counts are not carried over; the verdict was recomputed by our rules"
    )


def ops_total_only() -> str:
    return (
        "op times are the built-in profiler's inclusive (total) time per op name, which double-counts nested "
        "ops; self time cannot be recovered and is null; ops left out of its per-phase top-40 lists have phase "
        "NULL"
    )


def builtin_names_cut() -> str:
    return (
        "the built-in profiler cuts kernel names at 90 characters and op names at 70: entries sharing a cut "
        "name are summed, and a cut kernel name is categorized as cut"
    )


def builtin_latency_subset(calls) -> str:
    return (
        f"latency percentiles come from the built-in profiler's {calls} unsynchronised calls and stage means "
        "from its separately synchronised calls (not every measured call)"
    )


def builtin_gpu_definitions() -> str:
    return (
        "GPU utilization is the built-in profiler's summed kernel time ÷ step time (not the union of kernel "
        "intervals), and launches per step is its kernel count"
    )


def builtin_memory_pressure(mallocs_per_step) -> str:
    return (
        f"the built-in profiler flagged memory pressure ({mallocs_per_step} cudaMalloc/free per step); our "
        "thrashing rule needs reserved memory, which it does not record"
    )


def noisy(findings: list[str]) -> str:
    return (
        "noisy measurement: "
        + "; ".join(findings)
        + ": timings and differences from this profile are less certain than their spread says"
    )


def contended(found: dict) -> str:
    """One short sentence, so that `mark contended: …` fits MARK_LINE_COLUMNS: what fought, and the remedy
    (settings.contention holds the figures). `found`: measure/noise.py contention()."""
    wait, threads, free = found["run_queue_wait_pct"], found["torch_threads"], found["free_cpus"]
    if found["remedy"] == "a quieter machine":  # one thread already: fewer cannot help
        return f"waited {min(wait, 9999):.0f}% of run time for a CPU: measure on a quiet machine"
    if found["starved"]:
        return f"threads waited {min(wait, 9999):.0f}% of run time for a CPU: use --threads 1"
    return f"{threads} torch threads, {free:.1f} CPUs free: use --threads 1"
