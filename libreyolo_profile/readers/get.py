"""`libreyolo profile get`: one metric and nothing else, for script loops.

Reads only profile.json (no DuckDB, pyarrow or rich for a profile on disk): its cold start is
the product here.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.metric_catalog import METRICS, metric_note, null_reason
from libreyolo_profile.output.textsafe import print_document, safe_line
from libreyolo_profile.store.disk.loader import load_document


def _fields(doc: dict) -> dict[str, object]:
    metrics = doc.get("metrics", {})
    fields = {name: metrics.get(name) for name in METRICS if name in metrics}
    for name, stat in (doc.get("repeat") or {}).items():
        fields[f"{name}_std"] = stat.get("std")
        fields[f"{name}_n"] = stat.get("n")
    return fields


def _unit(field: str) -> str:
    for suffix in ("_std", "_n"):
        if field.endswith(suffix) and field[: -len(suffix)] in METRICS:
            return "count" if suffix == "_n" else METRICS[field[: -len(suffix)]][0]
    return METRICS.get(field, ("",))[0]


def _text(value, unit: str = "") -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if unit == "count" and isinstance(value, float) and value.is_integer():
        return str(int(value))  # a count: 500, never 500.0
    if isinstance(value, float):
        return repr(round(value, 6))
    return safe_line(value)


def _not_finite(value) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _why_null(field: str, value, doc: dict) -> str | None:
    """Why the printed value is null: profile.json holds NaN/Infinity (not a number JSON can carry),
    or the metric was not measured."""
    if _not_finite(value):
        spelled = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
        return f"the profile holds {spelled} for {field}, not a finite number"
    if value is None:
        return null_reason(field.removesuffix("_std").removesuffix("_n"), doc)
    return None


def print_field(trace: Path | str, field: str | None, as_json: bool) -> None:
    doc = load_document(Path(trace)).doc
    fields = _fields(doc)
    if field is None:
        if as_json:
            print_document({name: {"value": value, "unit": _unit(name)} for name, value in fields.items()}, indent=2)
        else:
            names = {name: safe_line(name) for name in fields}  # repeat stats' names come from the file
            width = max((len(n) for n in names.values()), default=0)
            for name, value in fields.items():
                shown = None if _not_finite(value) else value
                unit = _unit(name) if shown is not None else ""  # "null", never "null  ms"
                print(f"{names[name]:<{width}}  {_text(shown, unit)}  {unit}".rstrip())
        return
    if field not in fields:
        from libreyolo_profile.output.terminal import (
            close_match_hint,  # stdlib difflib only: get stays cold-start light
        )

        hint = close_match_hint(field, fields)
        # a close match is the answer; only without one is the list worth its length
        raise UsageError(
            f"unknown field '{field}'{hint}"
            + ("; `get <profile>` lists every field" if hint else f"; available: {', '.join(fields)}")
        )
    value = fields[field]
    reason = _why_null(field, value, doc)
    if _not_finite(value):
        value = None
    note = metric_note(field, doc)
    if as_json:
        answer = {"field": field, "value": value, "unit": _unit(field), "reason": reason}
        print_document({**answer, **({"note": note} if note else {})}, indent=None)
        return
    if reason:
        sys.stderr.write(safe_line(f"{field} is null: {reason}") + "\n")
    if note:
        sys.stderr.write(safe_line(f"{field} is {note}") + "\n")
    print(_text(value, _unit(field)))
