"""Names, units and meanings of the scalar metrics `get` answers (SPEC §4), and where each screen shows them.

Their values are defined once, in sql/metrics.sql; what each one is (its type, unit, meaning, the profiles
and device it applies to, its range, its place on the summary, the report's cards and `compare`, the better
direction of a change) is one row of sql/metric_catalog.sql, read here (libreyolo_profile/vocabulary.py keeps
the rows in the user's cache, so `get` reads them without DuckDB).

A new metric touches exactly two places:
  1. sql/metrics.sql: one column of its result (its definition, with a comment);
  2. sql/metric_catalog.sql: one row of metric_catalog.
tests/test_metric_catalog.py keeps the two in step; docs/SCHEMA.md's reference is generated from the rows.
"""

from __future__ import annotations

from libreyolo_profile.vocabulary import rows

ANY, GPU = "any", "gpu"

_ROWS = {row["name"]: row for row in rows("metric_catalog")}
_ANSWERED = {name: row for name, row in _ROWS.items() if row["origin"] != "internal"}

# name -> (unit, kinds it applies to, device it needs, meaning): every metric `get` answers, in its order
METRICS: dict[str, tuple[str, tuple[str, ...], str, str]] = {
    name: (row["unit"], tuple(row["kinds"]), row["device"], row["meaning"]) for name, row in _ANSWERED.items()
}
# Columns of sql/metrics.sql's result that are inputs to other figures (the verdict, thrashing, the
# window), not `get` fields: the document keeps them out of `metrics`.
INTERNAL_COLUMNS = frozenset(name for name, row in _ROWS.items() if row["origin"] == "internal")
# Metrics no trace holds: the measurement adds the unprofiled timing, the document the verdict and the flag.
FROM_OUTSIDE_THE_TRACE = frozenset(name for name, row in _ANSWERED.items() if row["origin"] != "trace")
# The metrics the document itself adds (the verdict, the thrashing flag): not numbers a measurement holds.
FROM_THE_DOCUMENT = frozenset(name for name, row in _ANSWERED.items() if row["origin"] == "document")
# The headline of a measured profile: the figures it takes from the calls timed without the profiler
# (store/document/headline.py, unprofiled_metrics). Every other figure is the profiled trace's.
UNPROFILED_HEADLINE = frozenset(name for name, row in _ANSWERED.items() if row["unprofiled"])
# A percentile from fewer calls than this is null, with the reason (store/document/headline.py).
PERCENTILE_MIN_CALLS: dict[str, int] = {
    name: row["min_calls"] for name, row in _ANSWERED.items() if row["min_calls"] is not None
}
KINDS = tuple(dict.fromkeys(kind for row in _ANSWERED.values() for kind in row["kinds"]))


def metric_row(name: str) -> dict:
    """The metric's whole row of sql/metric_catalog.sql."""
    return _ROWS[name]


def _applies(row: dict, kind: str | None) -> bool:
    """Whether a metric applies to a profile of this kind; for no known kind, only a metric of every kind."""
    return kind in row["kinds"] if kind in KINDS else set(row["kinds"]) == set(KINDS)


def _placed(column: str, kind: str | None = None, every_kind: bool = False) -> list[str]:
    """The metrics a screen shows (a non-null `column`), in its order; for a kind, only those that apply."""
    placed = [row for row in _ANSWERED.values() if row[column] is not None]
    placed = placed if every_kind else [row for row in placed if _applies(row, kind)]
    return [row["name"] for row in sorted(placed, key=lambda row: row[column])]


def summary_metrics(kind: str | None) -> list[str]:
    """The metrics `summary` shows for a profile of this kind, in its order."""
    return _placed("summary_order", kind)


def report_cards(kind: str | None) -> list[str]:
    """The metrics the report's headline cards show for a profile of this kind, in their order."""
    return _placed("card_order", kind)


def compared_metrics(kind: str | None) -> list[tuple[str, bool | None]]:
    """The metrics `compare` compares for profiles of this kind, each with True when higher is better, False
    when lower is, None when neither is."""
    return [(name, better(name)) for name in _placed("compare_order", kind)]


def better(name: str) -> bool | None:
    """True when a rise of the metric is better, False when a fall is, None when neither is."""
    return {"higher": True, "lower": False}.get(_ROWS[name]["better"])


def share_of(name: str) -> str | None:
    """What a share is a share of, as the summary prints its unit ('% of step'); None: the bare unit."""
    return _ROWS[name]["share_of"]


def shown_as_phase(name: str) -> bool:
    """The summary's phases table already shows this figure, with the same number."""
    return bool(_ROWS[name]["shown_as_phase"])


def plausible(name: str) -> tuple[float, float]:
    """(lowest possible, highest plausible) value of the metric, in its unit: its own range where it has one,
    else its unit's (sql/metric_catalog.sql metric_units), else every number."""
    row = _ROWS[name]
    if row["lowest"] is not None:
        return row["lowest"], row["highest"]
    units = {unit["unit"]: (unit["lowest"], unit["highest"]) for unit in rows("metric_units")}
    return units.get(row["unit"], (float("-inf"), float("inf")))


def measured_unit(kind: str | None) -> str:
    """What one measured step of a profile of this kind is called on screen: an inference profile's is a call."""
    return "call" if kind == "infer" else "step"


def is_cpu_profile(doc: dict) -> bool:
    """A profile of work on the CPU, where GPU figures do not apply: the one test every reader uses."""
    return doc.get("device_type") == "cpu"


# The figures a relative memory level (memory_level = relative: a trace of `[memory]` Bytes only) qualifies.
RELATIVE_PEAKS = ("peak_vram_mb", "peak_mem_mb")


def metric_note(name: str, doc: dict) -> str | None:
    """What a printed value needs said beside it: a peak that is not the allocator's whole total."""
    metrics = doc.get("metrics", {})
    value, level = metrics.get(name), metrics.get("memory_level")
    if name not in RELATIVE_PEAKS or value is None:
        return None
    shown = f"{value:,.1f}" if abs(value) >= 1 or value == 0 else f"{value:.3g}"
    if level == "relative":
        return (
            f"relative: at least {shown} MiB above the window's start (the trace's [memory] "
            "events carry Bytes only, no allocator totals)"
        )
    if level == "profiled":
        return (
            f"at least {shown} MiB: the host allocator's total counts only the blocks allocated "
            "while the profiler recorded memory"
        )
    return None


def null_reason(name: str, doc: dict) -> str:
    """Why a metric is null in this profile, in one sentence."""
    unit, kinds, device, _ = METRICS.get(name, ("", KINDS, ANY, ""))
    if doc.get("kind") not in kinds:
        return f"{name} applies to {' and '.join(kinds)} profiles; this is a {doc.get('kind')} profile"
    if device == GPU and is_cpu_profile(doc):
        return "CPU profile: no device kernels were recorded, so GPU figures cannot be measured"
    reasons = doc.get("null_reasons", {})
    if name in reasons:
        return reasons[name]
    return "not measured in this profile"


def metric_sql_type(name: str) -> str:
    """BOOLEAN, VARCHAR or DOUBLE: the one definition of a metric's type."""
    return _ROWS[name]["type"]
