"""`libreyolo profile launches`: how the kernels were launched (launch delay, slow launch calls, kernels
shorter than their launch, long kernels) and how deep each stream's queue ran (sql/launches.sql), as HTA's
cuda_kernel_launch_stats and queue length analysis. A profile's tables keep no single launch: its launches
section does (every launched execution, store/ingest/lazy_sections.py), computed from the profile's own trace
(a foreign trace, a measurement's profile_trace.json, or a job's rank traces) through the same ingest SQL the
profile was built by, once, and kept with the profile (store/disk/kept_sections.py); later reads open it."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.readers.common import OpenProfile, opened, profile_identity, records
from libreyolo_profile.store.disk.loader import Loaded
from libreyolo_profile.store.schema import PROFILE_FILE, REPEAT_FILE, TRACE_FILE

# HTA's cuda_kernel_launch_stats defaults: a launch call longer than 50 µs is slow, a kernel starting more
# than 100 µs after its launch waited on a busy stream or a device behind the host
DELAY_CUTOFF_US = 100.0
CALL_CUTOFF_US = 50.0
# launch_flags' words (sql/launches.sql), short for the table's last column
WHY = {"launch_delay": "delay", "slow_launch": "slow call", "short_kernel": "short", "long_kernel": "long"}
SECTION = "launches"  # store/sections.py
NO_LAUNCHES = "no device work with a recorded launch in this trace (a CPU-only trace, or launches not recorded)"


def trace_sources(loaded: Loaded) -> dict[int | None, Path]:
    """{rank: the trace holding its events} for a profile: a job's rank traces, a foreign trace, or a
    measurement's profile_trace.json. UsageError, in one line, when the profile keeps no trace to read."""
    head = loaded.head
    if head.job is not None and head.job.traces:  # its keys are ranks' digits (the head check)
        sources = {int(rank): Path(path) for rank, path in head.job.traces.items()}
    elif loaded.path.is_file() and loaded.path.name not in (PROFILE_FILE, REPEAT_FILE, TRACE_FILE):
        sources = {head.rank: loaded.path}  # the trace itself was opened
    elif loaded.home is not None and (Path(loaded.home) / TRACE_FILE).is_file():
        sources = {head.rank: Path(loaded.home) / TRACE_FILE}
    elif head.source.type == "trace" and head.source.path:
        sources = {head.rank: Path(head.source.path)}
    else:
        sources = {}
    missing = [str(p) for p in sources.values() if not p.is_file()]
    if not sources or missing:
        what = f"its trace {', '.join(missing)} is gone" if missing else "it keeps no trace (measured with --no-trace?)"
        raise UsageError(
            f"{loaded.path}: launches and queues need the trace's events, and {what}; open the trace itself"
        )
    return sources


def trace_timeline(path: Path, kind: str | None):
    """The trace's events ingested into a DuckDB connection of its own (sql/events.sql, sql/ingest.sql), as
    the profile was built from them."""
    from libreyolo_profile.output.progress import TraceReadingProgress
    from libreyolo_profile.store.decode.parse import parse_trace
    from libreyolo_profile.store.ingest.timeline import ingest

    return ingest(parse_trace(path, progress=TraceReadingProgress), kind)


class Timelines:
    """A profile's launches section, one per rank (store/ingest/lazy_sections.py: every launched execution, the
    window, the comm/compute overlap): kept with the profile once computed from the rank's trace
    (store/disk/kept_sections.py), so only the first ask reads the trace; each rank's tables on a DuckDB
    connection of its own, with sql/launches.sql run on them when first asked for."""

    def __init__(self, loaded: Loaded):
        self.loaded = loaded
        self.sources = trace_sources(loaded)
        self._cons: dict = {}
        self._ran: set = set()

    def home(self, rank) -> Path:
        """The directory holding the rank's launches section, computed from its trace where not yet kept."""
        from libreyolo_profile.store.disk.kept_sections import keep_section, kept_section
        from libreyolo_profile.store.ingest.lazy_sections import section_files

        doc = self.loaded.doc
        home = kept_section(doc, SECTION, rank)
        if home is not None:
            return home
        con = trace_timeline(self.sources[rank], self.loaded.head.kind)
        try:
            files = section_files(con, SECTION, rank)
        finally:
            con.close()
        return keep_section(doc, SECTION, rank, files)

    def con(self, rank, module: str | None = "launches.sql"):
        """The rank's section as tables (launch_executions, launch_window, comm_overlap), `module` run on them
        (once; None: the tables alone)."""
        if rank not in self._cons:
            from libreyolo_profile.connections import scratch_connection
            from libreyolo_profile.store.ingest.lazy_sections import read_launch_tables

            con = scratch_connection()
            read_launch_tables(con, self.home(rank))
            self._cons[rank] = con
        if module is not None and (rank, module) not in self._ran:
            from libreyolo_profile.sqlmodules import run_module

            run_module(self._cons[rank], module)
            self._ran.add((rank, module))
        return self._cons[rank]

    def arrow(self, module: str | None, call: str, params: dict | None = None):
        """Every rank's rows of one object (a table, or a table macro's call) after `module`, the rank first, as
        one Arrow table: each rank's section answers on its own connection."""
        import pyarrow as pa

        tables = []
        for rank in self.sources:
            con = self.con(rank, module)
            query = f"SELECT * FROM {call}"
            table = (con.sql(query, params=params) if params else con.sql(query)).to_arrow_table()
            tables.append(table.add_column(0, "rank", pa.array([rank] * table.num_rows, pa.int64())))
        return pa.concat_tables(tables)

    def rows(self, module: str | None, call: str, params: dict | None = None) -> tuple[list[str], list[tuple]]:
        """The same rows as (columns, tuples), as run_sql gives them, without Arrow."""
        columns, rows = ["rank"], []
        for rank in self.sources:
            cursor = self.con(rank, module).execute(f"SELECT * FROM {call}", params or {})
            columns = ["rank", *(d[0] for d in cursor.description)]
            rows += [(rank, *row) for row in cursor.fetchall()]
        return columns, rows

    def close(self) -> None:
        for con in self._cons.values():
            con.close()
        self._cons.clear()
        self._ran.clear()


def launch_document(
    source: Path | OpenProfile,
    *,
    top: int = 10,
    delay_cutoff_us: float = DELAY_CUTOFF_US,
    call_cutoff_us: float = CALL_CUTOFF_US,
    timelines: Timelines | None = None,
) -> dict:
    """What `launches --json` prints: per stream the launch statistics and queue, the top outliers."""
    check_cutoffs(delay_cutoff_us, call_cutoff_us)
    if top < 1:
        raise UsageError(f"--top must be at least 1, not {top}")
    from libreyolo_profile.store.disk.kept_sections import asking

    with asking(SECTION):  # a trace read for the first time computes its launches in the same pass
        profile = opened(source)
    own = timelines is None
    timelines = Timelines(profile.loaded) if own else timelines
    try:
        cutoffs = {"delay": delay_cutoff_us, "call": call_cutoff_us}
        stats = records(*timelines.rows("launches.sql", "launch_stats($delay, $call)", cutoffs))
        queues = records(*timelines.rows("launches.sql", "queue_summary"))
        outliers = records(*timelines.rows("launches.sql", "launch_outliers($delay, $call)", cutoffs))
    finally:
        if own:
            timelines.close()
    outliers.sort(key=lambda r: -r["delay_us"])
    return {
        "profile": profile_identity(profile.loaded),
        "traces": {str(rank): str(path) for rank, path in timelines.sources.items()},
        "cutoffs": {"launch_delay_us": delay_cutoff_us, "slow_launch_us": call_cutoff_us},
        "null_reason": None if stats or queues else NO_LAUNCHES,
        "streams": stats,
        "queues": queues,
        "outliers": len(outliers),
        "top_outliers": outliers[:top],
    }


def _stream_order(key: tuple) -> tuple:
    """(rank, device, stream) in number order: streams are recorded as text."""
    rank, device, stream = key
    number = str(stream).isdigit()
    return (
        rank is not None,
        rank or 0,
        device is not None,
        device or 0,
        not number,
        int(stream) if number else 0,
        str(stream),
    )


def check_cutoffs(delay_cutoff_us: float, call_cutoff_us: float) -> None:
    for name, value in (("--delay-cutoff-us", delay_cutoff_us), ("--call-cutoff-us", call_cutoff_us)):
        if not value >= 0:
            raise UsageError(f"{name} must be 0 or more µs, not {value}")


def print_launches(
    source: Path | OpenProfile,
    *,
    top: int = 10,
    delay_cutoff_us: float = DELAY_CUTOFF_US,
    call_cutoff_us: float = CALL_CUTOFF_US,
    as_json: bool = False,
) -> None:
    from libreyolo_profile.output.json_out import emit_json
    from libreyolo_profile.output.terminal import fmt_sig, stdout_console, table

    def us(value) -> str:  # µs span decades (a 4 µs call, a 3 s delay), and most traces write them whole
        return fmt_sig(value, trim=True)

    launches = launch_document(source, top=top, delay_cutoff_us=delay_cutoff_us, call_cutoff_us=call_cutoff_us)
    if as_json:
        emit_json(launches)
        return
    console = stdout_console()
    if launches["null_reason"]:
        console.print(f"launches: null — {launches['null_reason']}", markup=False, highlight=False)
        return
    ranked = any(r["rank"] is not None for r in launches["streams"] + launches["queues"])
    where = [("rank", "right")] if ranked else []
    queues = {(r["rank"], r["device"], r["stream"]): r for r in launches["queues"]}
    stats = {(r["rank"], r["device"], r["stream"]): r for r in launches["streams"]}
    rows = []
    for key in sorted(set(queues) | set(stats), key=_stream_order):
        s, q = stats.get(key, {}), queues.get(key, {})
        rows.append(
            [*([key[0]] if ranked else []), key[1], key[2], s.get("kernels"), us(s.get("delay_p50_us")),
             us(s.get("delay_p95_us")), us(s.get("call_p50_us")), q.get("max_queued"), q.get("mean_queued")]
        )  # fmt: skip
    console.print(
        table(
            f"Launches per stream · kernels launched in the measured steps; a delay over {delay_cutoff_us:g} µs "
            f"or a launch call over {call_cutoff_us:g} µs stands out",
            [
                *where,
                ("device", "right"),
                ("stream", "right"),
                ("kernels", "right"),
                ("delay p50 µs", "right"),
                ("p95 µs", "right"),
                ("call p50 µs", "right"),
                ("max queue", "right"),
                ("mean queue", "right"),
            ],
            rows,
        )  # fmt: skip
    )
    kinds = ("launch_delay", "slow_launch", "short_kernel", "long_kernel")
    counts = {k: sum(r[k] for r in launches["streams"]) for k in kinds}
    console.print(
        f"outliers: {launches['outliers']} kernels · "
        + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items()),
        markup=False,
        highlight=False,
    )
    if launches["top_outliers"]:
        console.print(
            table(
                f"Top {len(launches['top_outliers'])} by launch delay",
                [
                    *where,
                    ("kernel", "left"),
                    ("delay µs", "right"),
                    ("call µs", "right"),
                    ("kernel µs", "right"),
                    ("why", "left"),
                ],
                [
                    [
                        *([r["rank"]] if ranked else []),
                        r["name"],
                        us(r["delay_us"]),
                        us(r["call_us"]),
                        us(r["duration_us"]),
                        ", ".join(WHY[w] for w in r["outliers"]),
                    ]
                    for r in launches["top_outliers"]
                ],
            )  # fmt: skip
        )
