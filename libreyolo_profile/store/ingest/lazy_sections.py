"""The analysis sections computed only when something asks for them (store/sections.py, an empty first_read)
whose rows are more than the profile's per-step tables hold: the report's step timeline and the launches.
Each is computed over a trace's ingested timeline (the analysis's own connection, or a trace read again
once) and handed back as files, which store/disk/kept_sections.py keeps with the profile, so a later read
opens them instead of the trace.

- report_timeline: sql/report_timeline.sql's rows, bounded by steps × lanes × columns (the parameters
  below), as JSON: the report reads them without DuckDB's Arrow side, pyarrow or pandas.
- launches: every launched execution and the window's length (sql/launch_executions.sql) and the per-device
  communication/computation overlap (sql/comm_overlap.sql), as parquet written by DuckDB: `launches` and the
  Python API's launch_outliers, queue_length and overlap compute their answers from these, at any cutoff.
"""

from __future__ import annotations

import json
from pathlib import Path

# the report timeline's bounds (sql/report_timeline.sql's report_timeline_params)
REPORT_TIMELINE_PARAMS = {
    "steps_cap": 6,  # steps drawn at most: evenly spread ones and the slowest
    "bins": 720,  # columns across the longest shown step (the wide page's plot is 720 units wide)
    "max_streams": 6,  # more streams than this: one lane per device and kind of work
    "max_threads": 3,  # host threads drawn: the busiest
}
REPORT_TIMELINE_FILE = "report_timeline.json"
# the launches section's tables, one parquet file each
LAUNCH_TABLES = {"launch_executions": "launch_executions.sql", "launch_window": "launch_executions.sql",
                 "comm_overlap": "comm_overlap.sql"}  # fmt: skip
SECTION_FILES = {
    "report_timeline": (REPORT_TIMELINE_FILE,),
    "launches": tuple(f"{table}.parquet" for table in LAUNCH_TABLES),
}


def section_files(con, name: str, trace_rank: int | None) -> dict[str, bytes]:
    """{file name: its bytes} of section `name` over the timeline ingested on `con` (sql/ingest.sql ran);
    trace_rank: the rank the trace records. A duckdb.Error is the section's data failing on this trace."""
    from libreyolo_profile.sqlmodules import run_module

    if name == "report_timeline":
        con.execute(
            "CREATE OR REPLACE TEMP TABLE report_timeline_params AS SELECT $steps_cap AS steps_cap, $bins AS bins, "
            "$max_streams AS max_streams, $max_threads AS max_threads",
            REPORT_TIMELINE_PARAMS,
        )
        cursor = run_module(con, "report_timeline.sql")
        columns = [d[0] for d in cursor.description]
        rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
        text = json.dumps({"rows": rows, "trace_rank": trace_rank}, separators=(",", ":"), allow_nan=False)
        return {REPORT_TIMELINE_FILE: text.encode()}
    if name == "launches":
        for module in dict.fromkeys(LAUNCH_TABLES.values()):
            run_module(con, module)
        files = {}
        from libreyolo_profile.store.workdir import scratch

        with scratch("launches") as work:
            for table in LAUNCH_TABLES:
                target = work / f"{table}.parquet"
                quoted = str(target).replace("'", "''")
                con.execute(f"COPY {table} TO '{quoted}' (FORMAT parquet)")
                files[target.name] = target.read_bytes()
        return files
    raise AssertionError(f"no lazy section {name!r}")


def read_launch_tables(con, directory: Path) -> None:
    """The launches section's tables, kept in `directory`, as temp tables on `con` (sql/launches.sql's inputs,
    and comm_overlap)."""
    for table in LAUNCH_TABLES:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT * FROM read_parquet($f)",
            {"f": str(directory / f"{table}.parquet")},
        )
