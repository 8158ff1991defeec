"""A compared side's trial values as its profile files hold them (the `trials` list; a `repeat` block's values
only where there is no trials list; else the one scalar): handed to sql/compare.sql raw, each with what kind
of JSON value it is, so compare.sql judges every value and names the ones that are not evidence
(readers/compare.py). A `repeat` block is a summary of the trials: one that disagrees with them (another n,
other values, a mean or spread they do not give) is not evidence, and the gate says so (issue 54)."""

from __future__ import annotations

import math
import statistics

from libreyolo_profile.readers.compare_pool import as_mapping
from libreyolo_profile.readers.gate_rules import plausible

NOT_AN_OBJECT = object()  # a `trials` entry that is not an object: it holds no metric, only garbage


class Disagreeing:
    """A `repeat` block whose summary of a metric is not what the profile's own trials give: garbage."""

    def __init__(self, metric: str, why: str):
        self.words = f"repeat.{metric}, a summary that disagrees with the profile's own trials ({why})"


def json_kind(value) -> str:
    """What a JSON value is, as compare.sql's $sample_kind names it."""
    if value is None:
        return "null"
    if value is NOT_AN_OBJECT:
        return "trial entry that is not an object"
    if isinstance(value, Disagreeing):
        return value.words
    if isinstance(value, bool):
        return "boolean"
    return (
        "number"
        if isinstance(value, (int, float))
        else "string"
        if isinstance(value, str)
        else "list"
        if isinstance(value, list)
        else "object"
        if isinstance(value, dict)
        else type(value).__name__
    )


def as_double(value) -> float | None:
    """A JSON number as a DOUBLE; an integer past the float range is ±Infinity (compare.sql refuses it)."""
    if json_kind(value) != "number":
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def raw_trials(doc: dict, metric: str) -> list:
    """The metric's value in every trial, as the file holds it: the `trials` list's (after a Disagreeing value
    when the `repeat` block does not summarise them); the repeat values only where there is no trials list;
    else the profile's one scalar. Nothing is dropped or converted here: compare.sql judges each value, so a
    NaN or a string in a trial is named, never skipped."""
    stat = as_mapping(as_mapping(doc.get("repeat")).get(metric))
    trials = doc.get("trials") if isinstance(doc.get("trials"), list) else []
    if trials:  # the trials are the evidence; a summary is checked against them, never used instead
        listed = [t.get(metric) if isinstance(t, dict) else NOT_AN_OBJECT for t in trials]
        why = _disagreement(stat, listed, plausible(metric)) if stat else None
        holds = len(trials) >= 2 and any(not isinstance(t, dict) or metric in t for t in trials)
        if why:  # named first, and the trials still counted for what they hold
            return [Disagreeing(metric, why), *(listed if holds else [as_mapping(doc.get("metrics")).get(metric)])]
        if holds:
            return listed
    elif isinstance(stat.get("values"), list) and len(stat["values"]) >= 2:
        return stat["values"]
    return [as_mapping(doc.get("metrics")).get(metric)]


def _disagreement(stat: dict, listed: list, bounds: tuple[float, float]) -> str | None:
    """How a repeat block's n, values, mean or std differ from what the trials give; None when they agree
    (a trial value that is not a plausible number is compare.sql's to name, not a disagreement)."""
    values, n = stat.get("values"), stat.get("n")
    if values is not None and (not isinstance(values, list) or len(values) != len(listed)):
        return f"{_count(values)} values for {len(listed)} trials"
    if n is not None and n != len(listed):
        return f"n {n!r} for {len(listed)} trials"
    numbers = [as_double(v) for v in listed]
    if any(x is None or not math.isfinite(x) or not bounds[0] <= x <= bounds[1] for x in numbers):
        return None
    if values is not None and any(as_double(v) != x for v, x in zip(values, numbers, strict=True)):
        return "its values are not the trials' values"
    given = [("mean", statistics.fmean(numbers))] + ([("std", statistics.stdev(numbers))] if len(numbers) > 1 else [])
    for name, actual in given:
        claimed = stat.get(name)
        shown = as_double(claimed)
        if claimed is not None and (shown is None or not math.isclose(shown, actual, rel_tol=1e-9, abs_tol=1e-12)):
            return f"{name} {claimed!r}, the trials give {actual:.6g}"
    return None


def _count(values) -> str:
    return str(len(values)) if isinstance(values, list) else f"a {json_kind(values)} of"


def trial_count(doc: dict) -> int:
    """How many trials a profile holds: the entries of its `trials` list, else of its repeat values (never
    the `n` it claims)."""
    trials = doc.get("trials") if isinstance(doc.get("trials"), list) else []
    if trials:
        return len(trials)
    listed = [
        len(s["values"])
        for s in as_mapping(doc.get("repeat")).values()
        if isinstance(s, dict) and isinstance(s.get("values"), list)
    ]
    return max([*listed, 1])
