"""No NaN or Infinity in a profile: JSON has no such number and no reader may show one as a figure. Each one
computed is null in the document, and the non_finite_values mark and the metric's null reason say where it came
out, so nothing is swallowed silently."""

from __future__ import annotations

import math

from libreyolo_profile.store.document import marks as mark


def non_finite_metrics(analyses: list[dict]) -> dict[str, int]:
    """{metrics.<name>: in how many trials} of the metrics the SQL computed as NaN or Infinity (trial_metrics
    nulls them before any rule reads them; settle_non_finite says so)."""
    found: dict[str, int] = {}
    for a in analyses:
        for name, value in a["metrics"].items():
            if isinstance(value, float) and not math.isfinite(value):
                found[f"metrics.{name}"] = found.get(f"metrics.{name}", 0) + 1
    return found


NON_FINITE_REASON = "computed as NaN or Infinity on this trace (no number: a division by zero or an overflow)"


def settle_non_finite(doc: dict, computed: dict[str, int] | None = None) -> dict:
    """The document with every NaN and ±Infinity replaced by null, in place: JSON has no such number and no
    reader may show one as a figure. Each place one was found (and `computed`, those nulled earlier) is
    counted in the non_finite_values mark, and a metric's null reason says it. Returns `doc`."""
    places = dict(computed or {})
    for key, value in doc.items():
        if key == "tables" and isinstance(value, dict):
            _settle_tables(value, places)
        else:
            doc[key] = _finite(value, key, places)
    if places:
        doc.setdefault("marks", {})[mark.NON_FINITE] = mark.non_finite(places)
        reasons = doc.setdefault("null_reasons", {})
        for where in places:
            name = where.removeprefix("metrics.")
            if where.startswith("metrics.") and (doc.get("metrics") or {}).get(name) is None:
                reasons[name] = NON_FINITE_REASON
    return doc


def _finite(value, where: str, places: dict[str, int]):
    if isinstance(value, float) and not math.isfinite(value):
        places[where] = places.get(where, 0) + 1
        return None
    if isinstance(value, dict):
        return {k: _finite(v, f"{where}.{k}", places) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v, f"{where}[]", places) for v in value]
    return value


def _settle_tables(tables: dict, places: dict[str, int]) -> None:
    """Each table's non-finite cells to null, counted per table and column."""
    for name, table in tables.items():
        columns = table.get("columns") or []
        rows = table.get("rows") or []
        for r, row in enumerate(rows):
            bad = [i for i, cell in enumerate(row) if isinstance(cell, float) and not math.isfinite(cell)]
            for i in bad:
                where = f"tables.{name}.{columns[i] if i < len(columns) else i}"
                places[where] = places.get(where, 0) + 1
            if bad:
                rows[r] = [None if i in bad else cell for i, cell in enumerate(row)]
