"""An independent reference for how a trace's later steps take the scalar lists (stride, padding …) that only
an earlier step recorded (docs/SCHEMA.md, "The roofline"), in plain Python over the raw events, written from
that text, not from sql/ingest.sql."""

from __future__ import annotations

import json
from collections import defaultdict


def complete_scalar_lists(events: list[dict]) -> None:
    """In place: an op call inside a ProfilerStep whose Input type has no ScalarList takes the Input type and
    Concrete Inputs of the call at the same place — same op, same Input Dims, as many such calls before it in
    its step — of the earliest step where that op with those dims recorded its lists, when its own types are
    those with '' for each ScalarList and every value it recorded is that call's."""
    steps = sorted(
        (e["ts"], e["ts"] + e["dur"])
        for e in events
        if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
    )
    places: dict[tuple, list[dict]] = defaultdict(list)
    for e in sorted(events, key=lambda e: e["ts"]):
        args = e.get("args", {})
        if e.get("ph") != "X" or "Input Dims" not in args or "Input type" not in args:
            continue
        step = next((n for n, (start, end) in enumerate(steps) if start <= e["ts"] < end), None)
        if step is not None:
            places[(step, e["name"], json.dumps(args["Input Dims"]))].append(e)
    earliest: dict[tuple, int] = {}
    for (step, name, dims), calls in sorted(places.items()):
        if any("ScalarList" in c["args"]["Input type"] for c in calls):
            earliest.setdefault((name, dims), step)
    for (_, name, dims), calls in places.items():
        first = places.get((earliest.get((name, dims)), name, dims), [])
        for later, model in zip(calls, first, strict=False):
            if _completes(later["args"], model["args"]):
                later["args"]["Input type"] = list(model["args"]["Input type"])
                later["args"]["Concrete Inputs"] = list(model["args"]["Concrete Inputs"])


def _completes(later: dict, model: dict) -> bool:
    types, model_types = later["Input type"], model["Input type"]
    if "ScalarList" in types or "ScalarList" not in model_types:
        return False
    if types != ["" if t == "ScalarList" else t for t in model_types]:
        return False
    values, model_values = later.get("Concrete Inputs", []), model.get("Concrete Inputs", [])
    return len(values) == len(model_values) and all(v in ("", m) for v, m in zip(values, model_values, strict=True))
