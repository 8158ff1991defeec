"""`libreyolo profile get`: one metric and nothing else, for script loops.

Reads only profile.json (no DuckDB, pyarrow or rich for a profile on disk): its cold start is
the product here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.metric_catalog import METRICS, null_reason
from libreyolo_profile.store.loader import load_document


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


def _text(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(round(value, 6))
    return str(value)


def main(trace: Path | str, field: str | None, as_json: bool) -> None:
    doc = load_document(Path(trace)).doc
    fields = _fields(doc)
    if field is None:
        if as_json:
            print(json.dumps({name: {"value": value, "unit": _unit(name)} for name, value in fields.items()},
                             indent=2, default=str))
        else:
            width = max(len(n) for n in fields)
            for name, value in fields.items():
                print(f"{name:<{width}}  {_text(value)}  {_unit(name)}".rstrip())
        return
    if field not in fields:
        raise UsageError(f"unknown field '{field}'; available: {', '.join(fields)}")
    value = fields[field]
    reason = null_reason(field.removesuffix("_std").removesuffix("_n"), doc) if value is None else None
    if as_json:
        print(json.dumps({"field": field, "value": value, "unit": _unit(field), "reason": reason}, default=str))
        return
    if reason:
        sys.stderr.write(f"{field} is null: {reason}\n")
    print(_text(value))
