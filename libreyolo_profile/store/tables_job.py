"""The columns of the sidecar tables only a job profile (several ranks' traces, store/document/job.py)
fills: its collectives matched across the ranks and its ranks side by side; both are empty in a
one-trace profile.

Part of the catalogue store/schema.py gathers into TABLES (bump its TABLES_VERSION when a column here
changes meaning or type). Each column is (name, DuckDB/SQL type, unit, meaning).
"""

# table name -> [(column, type, unit, meaning)]
JOB_COLUMNS: dict[str, list[tuple[str, str, str, str]]] = {
    # sql/collectives.sql: a job profile's collectives matched across its ranks (empty in a one-trace profile)
    "collectives": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace"),
        (
            "process_group",
            "VARCHAR",
            "",
            "process group: 'pg <name>' as recorded, else 'stream <n>' (the rank's n-th communication stream by first "
            "use)",
        ),
        ("step", "BIGINT", "", "the rank's measured step whose host code launched it (0: outside the measured steps)"),
        (
            "step_mark",
            "BIGINT",
            "",
            "the step across ranks: its ProfilerStep#N number where recorded, else the measured step (0: outside them)",
        ),
        ("collective", "VARCHAR", "", "the collective's kind from its kernel name (allreduce, alltoall, sendrecv …)"),
        ("seq", "BIGINT", "", "its place among the same kind of its group in that step, in issue order, 1-based"),
        ("nelems", "BIGINT", "count", "input elements as recorded (NULL where the trace does not record them)"),
        ("kernel", "VARCHAR", "", "the kernel name as recorded"),
        (
            "matched_ranks",
            "BIGINT",
            "count",
            "ranks whose trace holds this collective (below the world size: some ranks' traces miss it)",
        ),
        ("sizes_agree", "BOOLEAN", "", "false when the ranks recorded different message sizes for it"),
        (
            "start_ms",
            "DOUBLE",
            "ms",
            "the rank's arrival (kernel start) on the job's clock, relative to the earliest rank's first step start",
        ),
        ("dur_ms", "DOUBLE", "ms", "the kernel's duration on this rank"),
        ("skew_ms", "DOUBLE", "ms", "the last rank's arrival minus the first rank's"),
        ("last_rank", "BIGINT", "", "the rank that arrived last (NULL when no other rank matched)"),
        (
            "wait_ms",
            "DOUBLE",
            "ms",
            "time inside the collective before the last rank arrived (NULL when no other rank matched)",
        ),
        (
            "transfer_ms",
            "DOUBLE",
            "ms",
            "time inside the collective after the last rank arrived (NULL when no other rank matched)",
        ),
        ("exposed_wait_ms", "DOUBLE", "ms", "the part of the wait no compute of this rank overlapped"),
    ],
    # sql/job_ranks.sql: a job profile's ranks side by side (empty in a one-trace profile)
    "ranks": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace"),
        ("steps", "BIGINT", "count", "measured steps of the rank"),
        ("step_ms", "DOUBLE", "ms", "mean step wall time (sql/blame.sql's step)"),
        ("device_busy_pct", "DOUBLE", "%", "share of the step the rank's device was busy"),
        (
            "compute_ms",
            "DOUBLE",
            "ms",
            "device time per step in work that is neither a collective nor a copy; null on a rank with no device (CPU)",
        ),
        (
            "exposed_comm_ms",
            "DOUBLE",
            "ms",
            "collective time per step no compute overlapped (the blame's communication)",
        ),
        ("exposed_comm_pct", "DOUBLE", "%", "exposed communication's share of the step"),
        ("collectives", "BIGINT", "count", "collectives in the rank's trace"),
        ("collective_ms", "DOUBLE", "ms", "device time per step inside collectives"),
        (
            "collective_wait_ms",
            "DOUBLE",
            "ms",
            "time per step inside collectives waiting for a later rank to arrive (NULL when nothing matched)",
        ),
        ("exposed_wait_ms", "DOUBLE", "ms", "the part of that wait no compute overlapped"),
        ("transfer_ms", "DOUBLE", "ms", "time per step inside collectives after the last rank arrived"),
        ("dataload_ms", "DOUBLE", "ms", "time per step the device idled in dataloading (the blame's dataload)"),
        (
            "sync_ms",
            "DOUBLE",
            "ms",
            "time per step the device idled while the host was blocked in a sync (the blame's sync_bubble)",
        ),
        ("entered_ms", "DOUBLE", "ms", "its first step's start after the earliest rank's, on the job's clock"),
        ("last_arrivals", "BIGINT", "count", "matched collectives at which it arrived last"),
        ("waited_on_ms", "DOUBLE", "ms", "the other ranks' wait for it per step, summed over them"),
        ("waited_on_pct", "DOUBLE", "%", "that wait as a share of the other ranks' time in the matched collectives"),
        ("clock_offset_ms", "DOUBLE", "ms", "shift applied to its clock to put it on the job's (sql/collectives.sql)"),
        ("clock_method", "VARCHAR", "", "how its clock was checked or aligned"),
        ("verdict", "VARCHAR", "", "its own verdict, as a single-rank profile of its trace would read"),
        ("straggler", "BOOLEAN", "", "true for the rank the others wait for (sql/job_ranks.sql: job_straggler)"),
    ],
}
