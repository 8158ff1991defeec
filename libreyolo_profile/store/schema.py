"""The versioned schemas of profile.json and of the parquet sidecars.

Plain Python data on purpose: `get` and the docs import this without pyarrow or DuckDB.
Column types are DuckDB/SQL type names; every engine that reads parquet maps them the same way.
Bump TABLES_VERSION when a column changes meaning or type; adding a column is compatible.
"""

PROFILE_SCHEMA = "libreyolo-profile/profile"
REPEAT_SCHEMA = "libreyolo-profile/repeat"
SCHEMA_VERSION = 1  # profile.json / profile_repeat.json layout
TABLES_VERSION = 9  # the sidecar tables below (2: the blame table; 3: the modules table; 4: the roofline table; 5: the memory table; 6: every execution in the window in kernels; 7: in phases and steps too, and the blame names its whole; 8: rank in every table, a job's collectives and ranks tables; 9: the roofline holds the work no op launched, its shares of the window's device time)
BUILTIN_SCHEMA = "libreyolo.profile.analysis/v1"  # LibreYOLO's own built-in profiler

PROFILE_FILE = "profile.json"
REPEAT_FILE = "profile_repeat.json"
TRACE_FILE = "profile_trace.json"

# Parquet key-value metadata: the generation of the profile.json a sidecar was written for.
GENERATION_KEY = "libreyolo_profile.generation"

# The phases of a step, per kind, in display order (our `## phase ##` annotations name them).
# The ingest SQL reads them as the table phase_vocabulary (store/ingest/timeline.py builds it from here).
PHASES_BY_KIND: dict[str, tuple[str, ...]] = {
    "train": ("dataload", "to_device", "forward", "backward", "optimizer"),
    "infer": ("preprocess", "forward", "postprocess"),
}
# The kinds of profile we write: a profile directory is named after its kind, so a document whose kind
# is anything else is refused when read (store/disk/loader.py), never made into a path.
KINDS: tuple[str, ...] = tuple(PHASES_BY_KIND)
# The phases that issue the model's device work (host overhead is measured inside them).
COMPUTE_PHASES: tuple[str, ...] = ("forward", "backward", "optimizer")


def phase_vocabulary() -> dict[str, list]:
    """PHASES_BY_KIND and COMPUTE_PHASES as parallel columns (kind, phase, position, compute), the
    parameters that build the SQL table phase_vocabulary, so the SQL never spells the lists again."""
    rows = [
        (kind, phase, position, phase in COMPUTE_PHASES)
        for kind, phases in PHASES_BY_KIND.items()
        for position, phase in enumerate(phases, 1)
    ]
    return {name: [row[i] for row in rows] for i, name in enumerate(("kind", "phase", "position", "compute"))}


# table name -> [(column, type, unit, meaning)]
TABLES: dict[str, list[tuple[str, str, str, str]]] = {
    "kernels": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace (NULL when not distributed)"),
        ("device", "INTEGER", "", "device id the work ran on"),
        (
            "phase",
            "VARCHAR",
            "",
            "phase whose host code launched it (NULL when its launch is not inside a measured step)",
        ),
        ("activity", "VARCHAR", "", "kind of device activity: kernel, memcpy or memset"),
        ("category", "VARCHAR", "", "category from sql/kernel_categories.sql"),
        ("tensorcore", "BOOLEAN", "", "Tensor Core kernel by name (sql/tensorcore_rules.sql)"),
        ("name", "VARCHAR", "", "kernel name as the profiler recorded it"),
        (
            "launched_outside_steps",
            "BOOLEAN",
            "",
            "ran inside the window, but its launch is not inside a measured step (queued before the capture began)",
        ),
        ("calls", "BIGINT", "count", "executions in the window"),
        ("calls_per_step", "DOUBLE", "count", "executions per measured step"),
        (
            "total_ms",
            "DOUBLE",
            "ms",
            "device time inside the window (each execution clipped to it); summed over the kernels it is the kernel time every metric uses",
        ),
        ("ms_per_step", "DOUBLE", "ms", "device time per measured step"),
        ("mean_us", "DOUBLE", "µs", "mean execution time"),
        ("min_us", "DOUBLE", "µs", "shortest execution"),
        ("max_us", "DOUBLE", "µs", "longest execution"),
        (
            "category_exclusive_ms_per_step",
            "DOUBLE",
            "ms",
            "per step, inside the measured steps, the time this row's category alone ran on its device (the same on every row of the category): what removing it frees",
        ),
    ],
    "ops": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace (NULL when not distributed)"),
        ("phase", "VARCHAR", "", "phase the op ran in"),
        ("name", "VARCHAR", "", "op name (aten::…, autograd …)"),
        ("calls", "BIGINT", "count", "calls in the window"),
        ("calls_per_step", "DOUBLE", "count", "calls per measured step"),
        ("leaf_calls", "BIGINT", "count", "calls that dispatched no further op"),
        ("self_ms", "DOUBLE", "ms", "exclusive CPU time in the window (the op minus the ops it called)"),
        ("self_ms_per_step", "DOUBLE", "ms", "exclusive CPU time per measured step"),
        ("total_ms", "DOUBLE", "ms", "inclusive CPU time in the window"),
        ("total_ms_per_step", "DOUBLE", "ms", "inclusive CPU time per measured step"),
    ],
    "phases": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace (NULL when not distributed)"),
        ("step", "BIGINT", "", "measured step (or call), 1-based"),
        ("phase", "VARCHAR", "", "phase name"),
        (
            "wall_ms",
            "DOUBLE",
            "ms",
            (
                "host wall time of the phase in this step (time inside the step that no phase range covers counts "
                "as forward); the phases of a step add up to it"
            ),
        ),
        (
            "gpu_ms",
            "DOUBLE",
            "ms",
            "device kernel time launched from this phase, inside the window (all devices); summed over the rows it is the kernel time every metric uses",
        ),
        ("kernels", "BIGINT", "count", "kernels launched from this phase that ran inside the window"),
        ("ops", "BIGINT", "count", "framework ops recorded in this phase"),
        ("launches", "BIGINT", "count", "runtime launch calls issued in this phase"),
        (
            "launched_outside_steps",
            "BOOLEAN",
            "",
            "the row of kernels that ran in this step's span but whose launch is not inside a measured step (phase NULL)",
        ),
    ],
    "steps": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace (NULL when not distributed)"),
        ("step", "BIGINT", "", "measured step (or call), 1-based"),
        ("start_ms", "DOUBLE", "ms", "start relative to the window start"),
        ("host_ms", "DOUBLE", "ms", "host wall time of the step (infer: the call's latency)"),
        ("device_end_ms", "DOUBLE", "ms", "from the step's start until the device finished its work"),
        ("images", "BIGINT", "count", "images the step consumed (NULL when unknown)"),
        ("runtime_launches", "BIGINT", "count", "runtime launch calls (kernel, graph, async memcpy/memset)"),
        ("leaf_ops", "BIGINT", "count", "dispatched leaf ops"),
        ("ops", "BIGINT", "count", "framework ops recorded"),
        ("kernels", "BIGINT", "count", "device kernels executed"),
        ("kernel_ms", "DOUBLE", "ms", "device kernel time launched by the step, inside the window"),
        ("sync_ms", "DOUBLE", "ms", "host time blocked in synchronizing calls"),
        (
            "outside_kernel_ms",
            "DOUBLE",
            "ms",
            "device kernel time that ran in the step's span (its start to the next step's start) but was launched outside every measured step; kernel_ms + outside_kernel_ms summed over the steps is the kernel time every metric uses",
        ),
    ],
    # sql/blame.sql: the vocabulary of causes and the priority rule where they overlap
    "blame": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace (NULL when not distributed)"),
        ("step", "BIGINT", "", "measured step (or call), 1-based"),
        ("cause", "VARCHAR", "", "what held the step's critical path (sql/blame.sql; causes with no time have no row)"),
        (
            "side",
            "VARCHAR",
            "",
            "device: the device was busy with this work; host: the device was idle (or there is none)",
        ),
        ("ns", "BIGINT", "ns", "time blamed on the cause in this step; a step's rows add up to its wall time exactly"),
        ("ms", "DOUBLE", "ms", "the same time in ms"),
        ("share_pct", "DOUBLE", "%", "share of the step's wall time (the whole named in `whole`)"),
        ("whole", "VARCHAR", "", "what share_pct is a share of: step_ms, the step's wall time in this table"),
        (
            "step_ms",
            "DOUBLE",
            "ms",
            "the step's wall time: host start to the later of host end and its device work's end, never past the next step's start",
        ),
    ],
    # sql/modules.sql: module ranges (measure/modules.py) or a foreign trace's nn.Module events
    "modules": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace (NULL when not distributed)"),
        (
            "phase",
            "VARCHAR",
            "",
            "forward or backward (a module's backward: from the gradient reaching its outputs until it reached its inputs)",
        ),
        (
            "path",
            "VARCHAR",
            "",
            "dotted module path under the model's class name (foreign traces: <Class>_<n> names nested as recorded)",
        ),
        ("parent", "VARCHAR", "", "the parent module's path (NULL at depth 0)"),
        ("depth", "BIGINT", "", "levels below the model (0: the model itself, 1: backbone/neck/head, 2: their blocks)"),
        ("module_type", "VARCHAR", "", "the module's class name"),
        (
            "source",
            "VARCHAR",
            "",
            "ranges (our record_function ranges) or python_function (a foreign trace's nn.Module events)",
        ),
        ("calls", "BIGINT", "count", "calls in the window"),
        ("calls_per_step", "DOUBLE", "count", "calls per measured step"),
        ("total_ms", "DOUBLE", "ms", "host wall time inside the module's calls"),
        ("total_ms_per_step", "DOUBLE", "ms", "host wall time inside the module's calls per measured step"),
        (
            "self_ms",
            "DOUBLE",
            "ms",
            "host time the module held itself: no module range that started later was open (forward: not in a child module); a thread's self times add up to its outermost ranges",
        ),
        ("self_ms_per_step", "DOUBLE", "ms", "self host time per measured step"),
        (
            "share_pct",
            "DOUBLE",
            "%",
            "share of the whole model's time in this phase (NULL when the model itself was not recorded)",
        ),
        (
            "device_ms",
            "DOUBLE",
            "ms",
            "device kernel time launched inside the module's calls (NULL without device kernels)",
        ),
        ("device_ms_per_step", "DOUBLE", "ms", "device kernel time launched inside the module per measured step"),
        (
            "device_self_ms",
            "DOUBLE",
            "ms",
            "device kernel time launched while the module held the host itself (NULL without device kernels)",
        ),
        ("device_self_ms_per_step", "DOUBLE", "ms", "device self kernel time per measured step"),
        ("kernels", "BIGINT", "count", "kernels launched inside the module's calls"),
        ("start_ms", "DOUBLE", "ms", "start of the module's first call relative to the window start"),
    ],
    # sql/roofline_costs.sql + sql/roofline.sql: FLOPs and bytes from the recorded shapes, the roof
    # from sql/device_peaks.sql (GPU) or the measured CPU peak
    "roofline": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace (NULL when not distributed)"),
        ("phase", "VARCHAR", "", "phase the calls ran in"),
        (
            "op",
            "VARCHAR",
            "",
            "op name; one row per phase, op, recorded shape and dtype, and one per phase and op for the device work an op launched itself beside its costed sub-calls (input_dims NULL; no_model_reason says so); NULL: device work no op call launched, a row per launch phase and reason",
        ),
        (
            "launched_outside_steps",
            "BOOLEAN",
            "",
            "for the rows of device work no op call launched (op NULL): whether its launch lies outside every measured step (queued before the window or launched between steps); NULL on op rows",
        ),
        (
            "input_dims",
            "VARCHAR",
            "",
            "the trace's Input Dims as recorded, in Kineto's compact layout ([[4, 197, 768], [768, 768]]; NULL for ops without a cost model)",
        ),
        ("dtype", "VARCHAR", "", "type of the op's first tensor input (float32, bfloat16 …)"),
        ("model", "VARCHAR", "", "the cost formula's family (sql/roofline_models.sql; NULL: no model)"),
        ("calls", "BIGINT", "count", "calls in the window"),
        ("calls_per_step", "DOUBLE", "count", "calls per measured step"),
        ("gflops", "DOUBLE", "GFLOP", "FLOPs of one call (NULL without a model, never a made-up 0)"),
        ("mb_moved", "DOUBLE", "MB", "bytes one call moves, inputs read once and outputs written once (10^6 bytes)"),
        ("intensity", "DOUBLE", "FLOP/byte", "arithmetic intensity: gflops ÷ mb_moved × 1000"),
        (
            "device_us",
            "DOUBLE",
            "µs",
            "mean device time of one call: the union of the device work it launched (CPU: its wall time)",
        ),
        (
            "device_ms_per_step",
            "DOUBLE",
            "ms",
            "device time of all its calls per measured step: their executions inside the window summed, as the kernels table counts them; the rows sum to the window's device time",
        ),
        (
            "time_share_pct",
            "DOUBLE",
            "%",
            "share of the window's device time (every execution in it: the op rows and the work no op launched)",
        ),
        ("tflops_per_s", "DOUBLE", "TFLOP/s", "achieved compute rate"),
        ("tb_per_s", "DOUBLE", "TB/s", "achieved memory rate"),
        (
            "device_model",
            "VARCHAR",
            "",
            "the device named from the trace's deviceProperties (sql/device_peaks.sql), or CPU (measured)",
        ),
        (
            "roof_class",
            "VARCHAR",
            "",
            "the peak class of the roof: fp64, fp32, tf32 (FP32 on Tensor Cores), bf16, fp16, fp8, fp4",
        ),
        ("peak_tflops", "DOUBLE", "TFLOP/s", "the device's dense peak for that class"),
        ("peak_tb_per_s", "DOUBLE", "TB/s", "the device's memory bandwidth"),
        ("peak_source", "VARCHAR", "", "the datasheet (or the CPU measurement's method) the peaks come from"),
        ("roofline_us", "DOUBLE", "µs", "max(FLOPs ÷ peak, bytes ÷ bandwidth) of one call"),
        ("pct_of_roofline", "DOUBLE", "%", "roofline time ÷ measured device time"),
        ("bound", "VARCHAR", "", "compute or memory: which roof binds (NULL without a roof)"),
        ("above_roof_ms_per_step", "DOUBLE", "ms", "device time above the roofline time, all calls per measured step"),
        (
            "no_model_reason",
            "VARCHAR",
            "",
            "why FLOPs or the roof are NULL (no model, shapes not recorded, device not in the peak table)",
        ),
    ],
    # sql/memory.sql: the allocator's `[memory]` events in the window; one `record` kind per row
    "memory": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace (NULL when not distributed)"),
        (
            "record",
            "VARCHAR",
            "",
            "device (the peak and totals) | point (the timeline) | op | module | step | band (a phase's time range)",
        ),
        (
            "allocator",
            "VARCHAR",
            "",
            "whose allocator: cpu (the host's) | cuda | type <n> (the profiler's Device Type); NULL on band rows",
        ),
        ("device", "INTEGER", "", "device id (-1: the host); NULL on band rows"),
        (
            "levels",
            "VARCHAR",
            "",
            "absolute (allocator totals) | profiled (the host's totals: only blocks allocated while the profiler recorded) | relative (Bytes only: the rise above the window's start, at least that much)",
        ),
        ("step", "BIGINT", "", "measured step: at the instant (device, point) or of the row (step, band)"),
        ("phase", "VARCHAR", "", "phase at the instant (band: the band's phase)"),
        ("op", "VARCHAR", "", "outermost op running on the allocating thread (op rows: the op of the figures)"),
        ("leaf_op", "VARCHAR", "", "innermost op running then: the one that called the allocator"),
        ("module", "VARCHAR", "", "innermost module range open on the allocating thread (module rows: the module)"),
        ("ts_ms", "DOUBLE", "ms", "instant relative to the window start (device: of the peak; band: its start)"),
        ("end_ms", "DOUBLE", "ms", "band rows: the band's end relative to the window start"),
        (
            "allocated_mb",
            "DOUBLE",
            "MiB",
            "allocated after the event (device: the peak); relative levels: above the window's start",
        ),
        (
            "reserved_mb",
            "DOUBLE",
            "MiB",
            "reserved by the caching allocator after the event (device: its peak); NULL where not recorded",
        ),
        ("peak", "BOOLEAN", "", "point rows: true at the peak (device rows: true)"),
        ("events", "BIGINT", "count", "allocator events in the row"),
        ("allocations", "BIGINT", "count", "allocations (Bytes > 0) in the row"),
        ("frees", "BIGINT", "count", "frees (Bytes < 0) in the row"),
        ("alloc_mb", "DOUBLE", "MiB", "bytes allocated in the row"),
        ("freed_mb", "DOUBLE", "MiB", "bytes freed in the row"),
        ("net_mb", "DOUBLE", "MiB", "allocated − freed in the row"),
        (
            "net_to_peak_mb",
            "DOUBLE",
            "MiB",
            "op/module rows: allocated − freed from the window's start up to the peak (relative levels: a device's rows add up to its peak)",
        ),
        (
            "live_at_peak_mb",
            "DOUBLE",
            "MiB",
            "op/module/device rows: allocated in the window and not freed by the peak (matched by Addr); NULL without Addr (the 2021 format)",
        ),
        (
            "runtime_mallocs",
            "BIGINT",
            "count",
            "step rows: the process's cudaMalloc-like calls in the step (device rows: in all measured steps)",
        ),
        (
            "runtime_frees",
            "BIGINT",
            "count",
            "step rows: the process's cudaFree-like calls in the step (device rows: in all measured steps)",
        ),
    ],
    # sql/collectives.sql: a job profile's collectives matched across its ranks (empty in a one-trace profile)
    "collectives": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace"),
        (
            "process_group",
            "VARCHAR",
            "",
            "process group: 'pg <name>' as recorded, else 'stream <n>' (the rank's n-th communication stream by first use)",
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


# The tables only a job profile (several ranks' traces, store/document/job.py) fills; empty otherwise.
JOB_TABLES: tuple[str, ...] = ("collectives", "ranks")

# The parquet physical type our sidecar writer (store/disk/sidecars.py) gives each column type: a sidecar
# is trusted only when its footer lists exactly these (store/crossrun/footers.py, store/disk/loader.py).
PARQUET_TYPES = {
    "BOOLEAN": "BOOLEAN",
    "INTEGER": "INT32",
    "BIGINT": "INT64",
    "DOUBLE": "DOUBLE",
    "VARCHAR": "BYTE_ARRAY",
}


def parquet_columns(table: str) -> list[tuple[str, str]]:
    """(column, parquet physical type) of a sidecar of `table`, in order."""
    return [(name, PARQUET_TYPES[sql_type]) for name, sql_type, _, _ in TABLES[table]]
