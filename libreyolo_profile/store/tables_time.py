"""The columns of the sidecar tables that say where a step's time went: the device's kernels, the host's
ops, each step's phases, the steps themselves and the blame that splits each step's wall time among causes.

Part of the catalogue store/schema.py gathers into TABLES (bump its TABLES_VERSION when a column here
changes meaning or type). Each column is (name, DuckDB/SQL type, unit, meaning).
"""

# table name -> [(column, type, unit, meaning)]
TIME_COLUMNS: dict[str, list[tuple[str, str, str, str]]] = {
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
            "device time inside the window (each execution clipped to it); summed over the kernels it is the kernel "
            "time every metric uses",
        ),
        ("ms_per_step", "DOUBLE", "ms", "device time per measured step"),
        ("mean_us", "DOUBLE", "µs", "mean execution time"),
        ("min_us", "DOUBLE", "µs", "shortest execution"),
        ("max_us", "DOUBLE", "µs", "longest execution"),
        (
            "category_exclusive_ms_per_step",
            "DOUBLE",
            "ms",
            "per step, inside the measured steps, the time this row's category alone ran on its device (the same on "
            "every row of the category): what removing it frees",
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
            "device kernel time launched from this phase, inside the window (all devices); summed over the rows it is "
            "the kernel time every metric uses",
        ),
        ("kernels", "BIGINT", "count", "kernels launched from this phase that ran inside the window"),
        ("ops", "BIGINT", "count", "framework ops recorded in this phase"),
        ("launches", "BIGINT", "count", "runtime launch calls issued in this phase"),
        (
            "launched_outside_steps",
            "BOOLEAN",
            "",
            "the row of kernels that ran in this step's span but whose launch is not inside a measured step (phase "
            "NULL)",
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
            "device kernel time that ran in the step's span (its start to the next step's start) but was launched "
            "outside every measured step; kernel_ms + outside_kernel_ms summed over the steps is the kernel time "
            "every metric uses",
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
            "the step's wall time: host start to the later of host end and its device work's end, never past the next "
            "step's start",
        ),
    ],
}
