"""A compared side's trial values as its profile files hold them (profile.json `trials`, profile_repeat.json
`repeat`, else the one scalar): handed to sql/compare.sql raw, each with what kind of JSON value it is, so
compare.sql judges every value and names the ones that are not evidence (readers/compare.py)."""

from __future__ import annotations

import math

from libreyolo_profile.readers.compare_pool import as_mapping

NOT_AN_OBJECT = object()  # a `trials` entry that is not an object: it holds no metric, only garbage


def json_kind(value) -> str:
    """What a JSON value is, as compare.sql's $sample_kind names it."""
    if value is None:
        return "null"
    if value is NOT_AN_OBJECT:
        return "trial entry that is not an object"
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
    """The metric's value in every trial, as the file holds it: repeat stats' values first, then
    `trials`, else the profile's one scalar. Nothing is dropped or converted here: compare.sql
    judges each value, so a NaN or a string in a trial is named, never skipped."""
    values = as_mapping(as_mapping(doc.get("repeat")).get(metric)).get("values")
    if isinstance(values, list) and len(values) >= 2:
        return values
    trials = doc.get("trials") if isinstance(doc.get("trials"), list) else []
    if len(trials) >= 2 and any(not isinstance(t, dict) or metric in t for t in trials):
        return [t.get(metric) if isinstance(t, dict) else NOT_AN_OBJECT for t in trials]
    return [as_mapping(doc.get("metrics")).get(metric)]


def trial_count(doc: dict) -> int:
    """How many trials a profile holds: the entries of its `trials` list or of its repeat values
    (never the `n` it claims)."""
    trials = doc.get("trials") if isinstance(doc.get("trials"), list) else []
    listed = [
        len(s["values"])
        for s in as_mapping(doc.get("repeat")).values()
        if isinstance(s, dict) and isinstance(s.get("values"), list)
    ]
    return max([len(trials), *listed, 1])
