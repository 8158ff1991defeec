"""Run the ingest SQL over a parsed trace: one DuckDB connection holding the derived timeline."""

from __future__ import annotations

import os

import duckdb
import pyarrow as pa

from libreyolo_profile.connections import without_progress_bar
from libreyolo_profile.sqlmodules import load_requirements, run_module
from libreyolo_profile.store.decode.events import EVENT_SCHEMA, ParsedTrace
from libreyolo_profile.store.decode.spill import release_pages
from libreyolo_profile.store.schema import phase_vocabulary

RAW_EVENTS_SCHEMA = EVENT_SCHEMA.append(pa.field("event_seq", pa.int64()))

# DuckDB spills past its memory limit instead of growing with the trace. The limit is sized from the memory
# this process may still take (memory_limit_bytes): a fixed 500 MB cost a 1 GB trace's first summary ~21% more
# CPU and ~2 GB of spill writes where the machine had the memory to spare; the trade is in
# docs/design/performance.md. Never below MEMORY_FLOOR (the old fixed limit), never above MEMORY_CEILING.
MEMORY_FLOOR = 500 * 10**6
MEMORY_CEILING = 2 << 30
MEMORY_SHARE = 4  # a quarter of what is available: concurrent analyses (import --jobs) each take theirs
MEMORY_LIMIT_ENV = "LIBREYOLO_PROFILE_ANALYSIS_MEMORY"  # bytes, overriding the sizing (benchmarks, tight hosts)


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


def memory_limit_bytes() -> int:
    """The analysis's DuckDB memory limit: a quarter of the memory available to this process (the kernel's
    MemAvailable, or less where a cgroup allows less), bounded by MEMORY_FLOOR and MEMORY_CEILING; or
    $LIBREYOLO_PROFILE_ANALYSIS_MEMORY bytes where that is set to a positive number."""
    override = os.environ.get(MEMORY_LIMIT_ENV, "").strip()
    if override.isdigit() and int(override) > 0:
        return int(override)
    available = available_memory_bytes()
    if available is None:
        return MEMORY_FLOOR
    return max(MEMORY_FLOOR, min(MEMORY_CEILING, available // MEMORY_SHARE))


def available_memory_bytes() -> int | None:
    """What this process may still take before the machine or its cgroup runs short: /proc/meminfo's
    MemAvailable, less where the cgroup (v2 memory.max, or v1 memory.limit_in_bytes) leaves less room
    above what it already uses. None where neither can be read (not Linux)."""
    available = _meminfo_available()
    room = _cgroup_room()
    if available is None or room is None:
        return available if room is None else room
    return min(available, room)


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_room() -> int | None:
    """The cgroup's limit less its usage, in bytes; None without a limit (or no cgroup to read)."""
    for limit_file, usage_file in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
    ):
        try:
            limit = open(limit_file).read().strip()
        except OSError:
            continue
        if not limit.isdigit() or int(limit) >= 1 << 60:  # "max", or v1's "no limit" (a page-rounded 2^63)
            return None
        try:
            usage = int(open(usage_file).read().strip())
        except (OSError, ValueError):
            usage = 0
        return max(int(limit) - usage, 0)
    return None


# A small trace's analysis is DuckDB's fixed cost per statement (~170 of them), not its rows. Under
# ONE_THREAD_EVENTS events it runs on one thread: a second one only hands tiny pipelines back and forth (~15% of
# the analysis's CPU on a 5,000-event trace, ~5% on a 109,000-event one; a 1 GB trace keeps both threads for its
# wall time). Under PLAIN_PLAN_EVENTS it also skips the two optimizers that cost more than they save at that
# size (~10-20% of the rest there); neither changes a result, only how it is computed, but without its join
# order a 109,000-event trace's analysis took 1.8x the CPU, so anything bigger keeps them. The figures are in
# docs/design/performance.md.
ONE_THREAD_EVENTS = 250_000
PLAIN_PLAN_EVENTS = 10_000


def _small_trace_settings(events: int | None) -> list[str]:
    if events is None or events >= ONE_THREAD_EVENTS:
        return []
    settings = ["SET threads = 1"]
    if events < PLAIN_PLAN_EVENTS:
        settings.append("SET disabled_optimizers = 'statistics_propagation,join_order'")
    return settings


def open_connection(events: int | None = None) -> duckdb.DuckDBPyConnection:
    """The analysis's connection; `events`, the trace's event count where known, picks its settings."""
    con = without_progress_bar(duckdb.connect(":memory:"))  # blame.sql on a busy machine passes its 2 s wait
    for setting in _small_trace_settings(events):
        con.execute(setting)
    con.execute("SET temp_directory = $dir", {"dir": _spill_directory()})
    con.execute("SET memory_limit = $limit", {"limit": f"{memory_limit_bytes() >> 20}MiB"})
    # the phase names live once, in store/schema.py; the SQL reads them as a table
    con.execute(
        "CREATE OR REPLACE TEMP TABLE phase_vocabulary AS SELECT unnest($kind) AS kind, unnest($phase) AS phase, "
        "unnest($position) AS position, unnest($compute) AS compute",
        phase_vocabulary(),
    )
    load_requirements(con, "ingest.sql")  # the rules and macros sql/ingest.sql declares in its header
    _inline_rule_patterns(con)
    return con


def _inline_rule_patterns(con) -> None:
    """kernel_category and is_tensorcore (sql/kernel_categories.sql, sql/tensorcore_rules.sql) made again with
    each rule's pattern written in as a constant, the rules and their order still read from their tables: DuckDB
    compiles a pattern read from a table once per row it tests, so the lookup compiled every rule again for
    every kernel name (~90 names × 36 rules, 0.1 of device_activity's 0.14 CPU-s on a 1 MB trace), and a
    constant pattern once. The same first match by rule_order, the same fallbacks ('other', false)."""

    def quoted(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    subject = {
        "own": "kernel_own_name(kernel_name)",
        "name": "kernel_name",
        "full": "kernel_name_stripped(kernel_name)",
    }
    rules = con.execute("SELECT match, pattern, category FROM kernel_category_rules ORDER BY rule_order").fetchall()
    categories = "".join(
        f" WHEN regexp_matches({subject.get(match, subject['full'])}, {quoted('(?i)' + pattern)})"
        f" THEN {quoted(category if category is not None else 'other')}"
        for match, pattern, category in rules
    )
    con.execute(
        "CREATE OR REPLACE TEMP MACRO kernel_category(activity, kernel_name) AS "
        f"CASE WHEN activity <> 'kernel' THEN activity{categories} ELSE 'other' END"
    )
    rules = con.execute("SELECT pattern, is_tensorcore FROM tensorcore_rules ORDER BY rule_order").fetchall()
    tensorcore = "".join(
        f" WHEN regexp_matches(kernel_name, {quoted('(?i)' + pattern)}) THEN {'true' if held else 'false'}"
        for pattern, held in rules
    )
    con.execute(
        "CREATE OR REPLACE TEMP MACRO is_tensorcore(activity, kernel_name) AS "
        f"activity = 'kernel' AND CASE{tensorcore} ELSE false END"
    )


def ingest(parsed: ParsedTrace, kind_hint: str | None) -> duckdb.DuckDBPyConnection:
    """Derive steps, phases, placed ops and device work from the raw events (sql/events.sql, then
    sql/ingest.sql). The decoder's columns are let go (parsed.events = None) as soon as the typed events
    hold what they need: on a big trace both at once were most of the peak memory."""
    con = open_connection(parsed.events.num_rows)
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
