"""One trace in, everything a profile holds out: metrics, tables, devices and window.

The same path serves our own captures and foreign traces, so every number has one definition.
"""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UnanalysableError
from libreyolo_profile.output.progress import TraceReadingProgress
from libreyolo_profile.sqlmodules import run_module
from libreyolo_profile.store.decode.parse import damage_notes, parse_trace
from libreyolo_profile.store.ingest.timeline import compute_metrics, ingest
from libreyolo_profile.store.schema import JOB_TABLES, TABLES

# a job's tables need every rank: store/document/job.py builds them; one trace leaves them empty
TABLE_QUERIES = {name: f"table_{name}.sql" for name in TABLES if name not in JOB_TABLES}


def analyse_trace(
    path: Path,
    kind_hint: str | None = None,
    images_per_step: int | None = None,
    cpu_peak: dict | None = None,
    rank: int | None = None,
) -> dict:
    """cpu_peak: the CPU's measured roof (measure/cpu_peak.py), which only run/infer can give.
    rank: the rank a job import decided for this trace (store/document/job.py); else the trace's own."""
    parsed = parse_trace(path, progress=TraceReadingProgress)
    con = ingest(parsed, kind_hint)  # lets the raw columns go once DuckDB holds what it needs
    try:
        durations = con.execute("SELECT duration_events, usable FROM duration_counts").fetchone()
        if con.execute("SELECT count(*) FROM step_ranges").fetchone()[0] == 0:
            raise UnanalysableError(f"{path}: the trace holds no host ops, annotations or device work to analyse")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE trace_info AS SELECT CAST($rank AS BIGINT) AS rank",
            {"rank": parsed.rank if rank is None else rank},
        )
        register_roofline_inputs(con, parsed.devices, cpu_peak)
        metrics = compute_metrics(con, images_per_step)
        kind, kind_inferred, phases_annotated = con.execute("SELECT * FROM profile_kind").fetchone()
        tables = _sidecar_tables(con)
        timeline = _module_rows(con, "rank_timeline.sql")
        nesting_cut = _nesting_cut(con)  # read after the tables, since modules.sql runs with table_modules
        device_rows = _module_rows(con, "devices.sql")
    finally:
        con.close()
    _name_devices(device_rows, parsed.devices)
    return {
        "kind": kind,
        "kind_inferred": bool(kind_inferred),
        "phases_annotated": bool(phases_annotated),
        "metrics": metrics,
        "tables": tables,
        "devices": device_rows,
        "device_properties": parsed.devices,
        "rank": parsed.rank if rank is None else rank,
        "world_size": parsed.world_size,
        "distributed": parsed.distributed,
        "timeline": timeline,
        "damage": damage_notes(parsed.stats) if parsed.stats is not None else [],
        "nesting_cut": [list(row) for row in nesting_cut],
        "duration_events": durations[0],
        "usable_durations": durations[1],
    }


def _sidecar_tables(con) -> dict:
    """Every sidecar table of one trace, {name: {columns, rows}}; a job's tables empty. A table query whose
    columns are not the schema's is a bug, caught here."""
    tables = {}
    for name, query in TABLE_QUERIES.items():
        cursor = run_module(con, query)
        columns = [d[0] for d in cursor.description]
        expected = [c[0] for c in TABLES[name]]
        assert columns == expected, f"{query} columns {columns} differ from schema {expected}"
        tables[name] = {"columns": columns, "rows": [list(r) for r in cursor.fetchall()]}
    for name in JOB_TABLES:
        tables[name] = {"columns": [c[0] for c in TABLES[name]], "rows": []}
    return tables


def _module_rows(con, module: str) -> list[dict]:
    """The rows of a SQL module's last statement, each a dict by column name."""
    cursor = run_module(con, module)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _nesting_cut(con) -> list[tuple]:
    """Ranges nested past sql/ingest.sql's nesting_cap, left out: (what, how many, the cap)."""
    return con.execute(
        "SELECT what, events, (SELECT max_depth FROM nesting_cap) FROM nesting_cut ORDER BY what"
    ).fetchall()


def _name_devices(device_rows: list[dict], devices: list[dict]) -> None:
    """Each device row gets the name and memory the trace's deviceProperties give its device."""
    properties = {d["device"]: d for d in devices}
    for row in device_rows:
        prop = properties.get(str(row["device"]), {})
        row["name"] = prop.get("name")
        row["total_mb"] = prop.get("total_mb")


FOREIGN_CPU_PEAK = "a CPU trace from elsewhere: the CPU's peak was not measured (only run and infer measure it)"


def register_roofline_inputs(con, devices: list[dict], cpu_peak: dict | None) -> None:
    """The inputs sql/roofline.sql reads besides the trace: its deviceProperties and the CPU's measured peak."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE roofline_device_input (device VARCHAR, name VARCHAR, total_mb DOUBLE, "
        "num_sms BIGINT)"
    )
    rows = [(d.get("device"), d.get("name"), d.get("total_mb"), d.get("num_sms")) for d in devices]
    if rows:
        con.executemany("INSERT INTO roofline_device_input VALUES (?, ?, ?, ?)", rows)
    peak = cpu_peak or {}
    con.execute(
        "CREATE OR REPLACE TEMP TABLE roofline_cpu_input AS SELECT CAST($tflops AS DOUBLE) AS tflops, "
        "CAST($bw AS DOUBLE) AS tb_per_s, CAST($method AS VARCHAR) AS method, CAST($why AS VARCHAR) AS null_reason",
        {
            "tflops": peak.get("fp32_tflops"),
            "bw": peak.get("tb_per_s"),
            "method": peak.get("method"),
            "why": peak.get("null_reason") if cpu_peak else FOREIGN_CPU_PEAK,
        },
    )
