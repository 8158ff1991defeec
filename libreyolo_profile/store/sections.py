"""The optional sections of a profile: the parts that may fail on a trace alone, each then empty or null with
the reason (the section_unavailable mark) while every other figure stands; store/ingest/analyse.py runs them.

A section is computed by a trace's first read (`first_read`) only where that read needs it: the verdict, or a
figure the first `summary` or `get` prints. The others are computed when something asks for them
(analyse_trace's `sections`); docs/design/performance.md says which is which and what each costs.

Plain Python data on purpose, as store/schema.py is: the readers import it without DuckDB or pyarrow.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    """An optional part of a profile: the SQL module that computes it, the sidecar tables and metrics it gives."""

    module: str
    tables: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    # what of the first read needs it; empty: nothing does, and it is computed only when asked for
    first_read: str = ""


ROOFLINE_METRICS = ("gemm_conv_peak_pct", "sol_step_ms", "sol_step_pct", "roofline_coverage_pct")

# The sections that may fail on a trace alone (an SQL error its data provokes): each is then empty or null with
# the reason, and every other figure stands. In run order: memory reads modules, advice reads the roofline.
# The core (decoding, steps, the device timeline, the blame, the metrics and tables built on them) is not here:
# it fails the profile.
OPTIONAL_SECTIONS = {
    "modules": Section(
        "modules.sql",
        tables=("modules",),
        first_read="summary's first screen (its largest module) and the memory section (who allocated)",
    ),
    "memory": Section(
        "memory.sql",
        tables=("memory",),
        metrics=(
            "peak_vram_mb",
            "peak_reserved_mb",
            "peak_host_mem_mb",
            "peak_mem_mb",
            "memory_level",
            "steady_malloc_calls_per_step",
            "steady_malloc_steps",
        ),
        first_read="the verdict (device memory that thrashed) and summary's peak memory",
    ),
    "roofline": Section(
        "roofline.sql",
        tables=("roofline",),
        metrics=ROOFLINE_METRICS,
        first_read="the verdict (a CPU's dispatch or compute: gemm_conv_peak_pct), the advice, and summary's "
        "first screen (the most time over its roofline)",
    ),
    "advice": Section(
        "advice.sql",
        metrics=("advice",),
        first_read="the verdict's next step (its largest fired rule) and the no-device-events mark",
    ),
    # one rank's collectives and steps on the absolute clock: only a job (store/document/job.py) reads them
    "ranks": Section("rank_timeline.sql"),
    # more than the per-step tables hold, kept beside the profile once computed (store/ingest/lazy_sections.py,
    # store/disk/kept_sections.py): the report's step timeline, and every launch with the comm/compute overlap
    "report_timeline": Section("report_timeline.sql"),
    "launches": Section("launch_executions.sql"),
}
# the sections whose rows the analysis hands back as files to keep (store/ingest/lazy_sections.py)
KEPT = ("report_timeline", "launches")

# the sections a trace's first read computes; the rest wait until something asks for them
FIRST_READ = tuple(name for name, section in OPTIONAL_SECTIONS.items() if section.first_read)
