"""Run the ingest SQL over a parsed trace: one DuckDB connection holding the derived timeline."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from libreyolo_profile.connections import without_progress_bar
from libreyolo_profile.sqlmodules import load_requirements, run_module
from libreyolo_profile.store.decode.events import EVENT_SCHEMA, ParsedTrace
from libreyolo_profile.store.decode.spill import release_pages
from libreyolo_profile.store.schema import phase_vocabulary

RAW_EVENTS_SCHEMA = EVENT_SCHEMA.append(pa.field("event_seq", pa.int64()))

# DuckDB spills past this instead of growing with the trace. The first summary of a 1 GB trace peaked at
# 2.4 GB without a limit; with the decoder's pages let go as they are read, at 1,233 MiB with "1GB" and at
# 963 MiB with this, 3 s slower (32 s; benchmarks/bench_ingest.py).
MEMORY_LIMIT = "500MB"


def _spill_directory() -> str:
    """Where DuckDB spills: a subdirectory (DuckDB makes it on the first spill, removes it on close)
    of this process's own work directory in the cache, so concurrent processes never share spill
    files and a killed one's are swept by the next run. An in-memory database spills to ./.tmp by
    default: never into the cwd, and with no writable place at all, no spilling."""
    from libreyolo_profile.errors import ProfileError
    from libreyolo_profile.store.workdir import work_dir

    try:
        return str(work_dir("duckdb") / "spill")
    except (OSError, ProfileError):
        return ""


def open_connection() -> duckdb.DuckDBPyConnection:
    con = without_progress_bar(duckdb.connect(":memory:"))  # blame.sql on a busy machine passes its 2 s wait
    con.execute("SET temp_directory = $dir", {"dir": _spill_directory()})
    con.execute("SET memory_limit = $limit", {"limit": MEMORY_LIMIT})
    # the phase names live once, in store/schema.py; the SQL reads them as a table
    con.execute(
        "CREATE OR REPLACE TEMP TABLE phase_vocabulary AS SELECT unnest($kind) AS kind, unnest($phase) AS phase, "
        "unnest($position) AS position, unnest($compute) AS compute",
        phase_vocabulary(),
    )
    load_requirements(con, "ingest.sql")  # the rules and macros sql/ingest.sql declares in its header
    return con


def ingest(parsed: ParsedTrace, kind_hint: str | None) -> duckdb.DuckDBPyConnection:
    """Derive steps, phases, placed ops and device work from the raw events (sql/events.sql, then
    sql/ingest.sql). The decoder's columns are let go (parsed.events = None) as soon as the typed events
    hold what they need: on a big trace both at once were most of the peak memory."""
    con = open_connection()
    table, parsed.events = parsed.events, None
    con.register("raw_event_times", table.select(["ph", "name", "ts_text", "dur_text"]))
    con.register("raw_events", pa.RecordBatchReader.from_batches(RAW_EVENTS_SCHEMA, _numbered_batches(table)))
    run_module(con, "events.sql")
    con.unregister("raw_events")
    con.unregister("raw_event_times")
    del table
    con.execute("CREATE TEMP TABLE ingest_params AS SELECT CAST($kind AS VARCHAR) AS kind_hint", {"kind": kind_hint})
    run_module(con, "ingest.sql")
    return con


def _numbered_batches(table):
    """The decoder's batches in its order, each numbered (event_seq) and its mapped pages let go once
    DuckDB has read it: `row_number() OVER ()` in SQL follows the order a parallel scan delivers rows in,
    which varies run to run, and every tie broken by event id (nesting of equal ranges, which op owns an
    instant) varied with it."""
    first = 0
    for batch in table.to_batches():
        seq = pa.array(range(first, first + batch.num_rows), pa.int64())
        yield pa.RecordBatch.from_arrays([*batch.columns, seq], schema=RAW_EVENTS_SCHEMA)
        release_pages(batch)
        first += batch.num_rows


def compute_metrics(con: duckdb.DuckDBPyConnection, images_per_step: int | None) -> dict:
    """Every scalar metric of the window, by sql/metrics.sql (the one definition)."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE metric_inputs AS SELECT CAST($n AS BIGINT) AS images_per_step",
        {"n": images_per_step},
    )
    cursor = run_module(con, "metrics.sql")  # after the modules its header requires
    names = [d[0] for d in cursor.description]
    row = cursor.fetchone()
    return dict(zip(names, row, strict=True))
