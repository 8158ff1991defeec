"""The optional sections of a profile: the parts that may fail on a trace alone, each then empty or null with
the reason (the section_unavailable mark) while every other figure stands; store/ingest/analyse.py runs them.

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


ROOFLINE_METRICS = ("gemm_conv_peak_pct", "sol_step_ms", "sol_step_pct", "roofline_coverage_pct")

# The sections that may fail on a trace alone (an SQL error its data provokes): each is then empty or null with
# the reason, and every other figure stands. In run order: memory reads modules, advice reads the roofline.
# The core (decoding, steps, the device timeline, the blame, the metrics and tables built on them) is not here:
# it fails the profile.
OPTIONAL_SECTIONS = {
    "modules": Section("modules.sql", tables=("modules",)),
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
    ),
    "roofline": Section("roofline.sql", tables=("roofline",), metrics=ROOFLINE_METRICS),
    "advice": Section("advice.sql", metrics=("advice",)),
    "ranks": Section("rank_timeline.sql"),
}
