"""One trace in, everything a profile holds out: metrics, tables, devices and window.

The same path serves our own captures and foreign traces, so every number has one definition.
"""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.sqlfiles import sql_text
from libreyolo_profile.store.ingest.timeline import compute_metrics, ingest
from libreyolo_profile.store.schema import TABLES
from libreyolo_profile.output.progress import TraceReadingProgress
from libreyolo_profile.store.decode.parse import damage_notes, parse_trace
from libreyolo_profile.errors import UnanalysableError

TABLE_QUERIES = {name: f"table_{name}.sql" for name in TABLES}


def analyse_trace(path: Path, kind_hint: str | None = None, images_per_step: int | None = None) -> dict:
    parsed = parse_trace(path, progress=TraceReadingProgress)
    con = ingest(parsed, kind_hint)
    try:
        durations = _duration_counts(con, parsed)
    finally:
        parsed.events = None  # DuckDB holds what it needs now; let the raw columns go
    try:
        if con.execute("SELECT count(*) FROM step_ranges").fetchone()[0] == 0:
            raise UnanalysableError(f"{path}: the trace holds no host ops, annotations or device work to analyse")
        con.execute("CREATE OR REPLACE TEMP TABLE trace_info AS SELECT CAST($rank AS BIGINT) AS rank", {"rank": parsed.rank})
        metrics = compute_metrics(con, images_per_step)
        kind, kind_inferred, phases_annotated = con.execute("SELECT * FROM profile_kind").fetchone()
        tables = {}
        for name, query in TABLE_QUERIES.items():
            cursor = con.execute(sql_text(query))
            columns = [d[0] for d in cursor.description]
            expected = [c[0] for c in TABLES[name]]
            assert columns == expected, f"{query} columns {columns} differ from schema {expected}"
            tables[name] = {"columns": columns, "rows": [list(r) for r in cursor.fetchall()]}
        cursor = con.execute(sql_text("devices.sql"))
        names = [d[0] for d in cursor.description]
        device_rows = [dict(zip(names, row)) for row in cursor.fetchall()]
    finally:
        con.close()
    properties = {d["device"]: d for d in parsed.devices}
    for row in device_rows:
        prop = properties.get(str(row["device"]), {})
        row["name"] = prop.get("name")
        row["total_mb"] = prop.get("total_mb")
    return {
        "kind": kind,
        "kind_inferred": bool(kind_inferred),
        "phases_annotated": bool(phases_annotated),
        "metrics": metrics,
        "tables": tables,
        "devices": device_rows,
        "device_properties": parsed.devices,
        "rank": parsed.rank,
        "world_size": parsed.world_size,
        "damage": damage_notes(parsed.stats) if parsed.stats is not None else [],
        "duration_events": durations[0],
        "usable_durations": durations[1],
    }


def _duration_counts(con, parsed) -> tuple[int, int]:
    """(duration events, those whose duration is usable: a positive finite number). The SQL reads an
    unusable duration (negative, NaN, missing) as 0, so without this a trace of nothing but broken
    durations would look like an idle GPU."""
    cursor = con.cursor()  # its own statement state: the ingest connection may hold a pending result
    try:
        cursor.register("duration_check_events", parsed.events)
        return cursor.execute("""
            SELECT count(*), count(*) FILTER (WHERE TRY_CAST(dur_text AS DECIMAL(38, 6)) > 0)
            FROM duration_check_events WHERE ph = 'X'""").fetchone()
    finally:
        cursor.close()
