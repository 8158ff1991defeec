"""Where a trace's analysis spends its time: every SQL statement of one `analyse_trace` (the work behind a
first `summary`, `import`, `run` and `infer`) timed, with the process's peak RSS while it ran.

    python benchmarks/bench_analysis_statements.py [--size 1000 | --trace PATH] [--top 25] [--memory-limit 500MB]

Without --trace, the trace is benchmarks/bench_ingest.py's: a real one
(../shared/traces/a100_cutlass_adam_rank0.json.gz) replicated to --size MB under /tmp. One in-process run;
the statements are split out of each SQL module with DuckDB's own parser and run one by one on the
analysis's connection, so their sum is the analysis's SQL time to within a statement's overhead.
--memory-limit replaces the analysis's DuckDB memory limit (store/ingest/timeline.py: memory_limit_bytes), to
show what the limit costs in time and saves in RSS.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
from bench_ingest import OUT, _tree_rss_kb, build_trace

DEFAULT_LIMIT = "the analysis's own (store/ingest/timeline.py: memory_limit_bytes)"
# the object a statement creates, for the table of statements
_CREATED = re.compile(r"\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(?:TABLE|VIEW|MACRO)\s+(\w+)", re.I)


class PeakRss:
    """This process's resident memory (its children's too, as bench_ingest.py counts it) sampled every 10 ms;
    `take()` gives the peak since the last take."""

    def __init__(self) -> None:
        self.peak_kb = 0
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while True:
            self.peak_kb = max(self.peak_kb, _tree_rss_kb(os.getpid()))
            time.sleep(0.01)

    def take(self) -> float:
        peak, self.peak_kb = self.peak_kb, 0
        return peak / 1024


@dataclass
class Statement:
    module: str
    what: str
    seconds: float
    cpu_seconds: float  # the process's CPU time (every DuckDB thread's) while it ran
    peak_mib: float


@dataclass
class Recorder:
    rss: PeakRss
    memory_limit: str | None
    modules: dict[str, str]  # module text -> module name
    statements: list[Statement] = field(default_factory=list)
    first_sql_at: float | None = None


class TimedConnection:
    """A DuckDB connection whose execute() runs a multi-statement text one statement at a time, timed."""

    def __init__(self, con: duckdb.DuckDBPyConnection, recorder: Recorder) -> None:
        self._con, self._rec = con, recorder

    def __getattr__(self, name: str):
        return getattr(self._con, name)

    def execute(self, text: str, params=None):
        rec = self._rec
        if rec.first_sql_at is None:
            rec.first_sql_at = time.perf_counter()
        if rec.memory_limit and text.lstrip().lower().startswith("set memory_limit"):
            params = {"limit": rec.memory_limit}
        module = rec.modules.get(text, "(python)")
        cursor = None
        for statement in duckdb.extract_statements(text):
            query = statement.query
            names = set(re.findall(r"\$(\w+)", query))
            mine = {k: v for k, v in (params or {}).items() if k in names} if isinstance(params, dict) else params
            rec.rss.take()
            started, cpu_started = time.perf_counter(), time.process_time()
            cursor = self._con.execute(query, mine) if mine else self._con.execute(query)
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
            created = _CREATED.search(query)
            what = created.group(1) if created else " ".join(query.split())[:48]
            rec.statements.append(Statement(module, what, seconds, cpu, rec.rss.take()))
        return cursor


def analyse(trace: Path, memory_limit: str | None, top: int) -> None:
    from libreyolo_profile import sqlmodules
    from libreyolo_profile.store.ingest.analyse import analyse_trace

    modules = {sqlmodules.module(name).text: name for name in sqlmodules.module_names()}
    recorder = Recorder(PeakRss(), memory_limit, modules)
    real_connect = duckdb.connect
    duckdb.connect = lambda *a, **k: TimedConnection(real_connect(*a, **k), recorder)
    started, cpu_started = time.perf_counter(), time.process_time()
    try:
        analyse_trace(trace)
    finally:
        duckdb.connect = real_connect
    total, cpu_total = time.perf_counter() - started, time.process_time() - cpu_started
    sql = sum(s.seconds for s in recorder.statements)
    sql_cpu = sum(s.cpu_seconds for s in recorder.statements)
    before = (recorder.first_sql_at or started) - started
    print(f"trace: {trace} ({trace.stat().st_size / 1e6:.0f} MB)")
    between = total - before - sql
    print(
        f"analyse_trace: {total:.2f} s = {before:.2f} s before the first statement (the parse) + {sql:.2f} s in "
        f"{len(recorder.statements)} SQL statements + {between:.2f} s Python between them"
    )
    print(f"CPU: {cpu_total:.2f} s, {sql_cpu:.2f} s of it in the SQL statements")
    print(
        f"peak RSS while SQL ran: {max(s.peak_mib for s in recorder.statements):.0f} MiB; "
        f"memory limit: {memory_limit or DEFAULT_LIMIT}"
    )
    print(f"\nslowest {top} statements:\n{'seconds':>8} {'peak MiB':>9}  {'module':<24} creates / runs")
    for s in sorted(recorder.statements, key=lambda s: s.seconds, reverse=True)[:top]:
        print(f"{s.seconds:8.3f} {s.peak_mib:9.0f}  {s.module:<24} {s.what}")
    per_module: dict[str, list] = defaultdict(lambda: [0.0, 0.0, 0])
    for s in recorder.statements:
        per_module[s.module][0] += s.seconds
        per_module[s.module][1] += s.cpu_seconds
        per_module[s.module][2] += 1
    print(f"\nper module:\n{'seconds':>8} {'CPU s':>7} {'statements':>10}  module")
    for name, (seconds, cpu, count) in sorted(per_module.items(), key=lambda kv: kv[1][1], reverse=True)[:top]:
        print(f"{seconds:8.3f} {cpu:7.3f} {count:10d}  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1000, help="MB of the replicated trace (default 1000)")
    parser.add_argument("--trace", type=Path, help="a trace of your own instead")
    parser.add_argument("--top", type=int, default=25, help="statements and modules listed (default 25)")
    parser.add_argument("--memory-limit", help="DuckDB memory limit for the analysis, e.g. 8GB")
    args = parser.parse_args()
    trace = args.trace or build_trace(args.size, OUT / f"trace_{args.size}mb.json")
    if not trace.is_file():
        sys.exit(f"not a file: {trace}")
    analyse(trace, args.memory_limit, args.top)


if __name__ == "__main__":
    main()
