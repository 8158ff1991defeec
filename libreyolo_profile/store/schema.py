"""The versioned schemas of profile.json and of the parquet sidecars.

Plain Python data on purpose: `get` and the docs import this without pyarrow or DuckDB.
Column types are DuckDB/SQL type names; every engine that reads parquet maps them the same way.
Bump TABLES_VERSION when a column changes meaning or type; adding a column is compatible.
"""

PROFILE_SCHEMA = "libreyolo-profile/profile"
REPEAT_SCHEMA = "libreyolo-profile/repeat"
SCHEMA_VERSION = 1  # profile.json / profile_repeat.json layout
TABLES_VERSION = 3  # the sidecar tables below (2: the blame table; 3: the modules table)
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
# The phases that issue the model's device work (host overhead is measured inside them).
COMPUTE_PHASES: tuple[str, ...] = ("forward", "backward", "optimizer")


def phase_vocabulary() -> dict[str, list]:
    """PHASES_BY_KIND and COMPUTE_PHASES as parallel columns (kind, phase, position, compute), the
    parameters that build the SQL table phase_vocabulary, so the SQL never spells the lists again."""
    rows = [(kind, phase, position, phase in COMPUTE_PHASES)
            for kind, phases in PHASES_BY_KIND.items() for position, phase in enumerate(phases, 1)]
    return {name: [row[i] for row in rows] for i, name in enumerate(("kind", "phase", "position", "compute"))}


# table name -> [(column, type, unit, meaning)]
TABLES: dict[str, list[tuple[str, str, str, str]]] = {
    "kernels": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace (NULL when not distributed)"),
        ("device", "INTEGER", "", "device id the work ran on"),
        ("phase", "VARCHAR", "", "phase whose host code launched it"),
        ("activity", "VARCHAR", "", "kind of device activity: kernel, memcpy or memset"),
        ("category", "VARCHAR", "", "category from sql/kernel_categories.sql"),
        ("tensorcore", "BOOLEAN", "", "Tensor Core kernel by name (sql/tensorcore_rules.sql)"),
        ("name", "VARCHAR", "", "kernel name as the profiler recorded it"),
        ("calls", "BIGINT", "count", "executions in the window"),
        ("calls_per_step", "DOUBLE", "count", "executions per measured step"),
        ("total_ms", "DOUBLE", "ms", "device time in the window"),
        ("ms_per_step", "DOUBLE", "ms", "device time per measured step"),
        ("mean_us", "DOUBLE", "µs", "mean execution time"),
        ("min_us", "DOUBLE", "µs", "shortest execution"),
        ("max_us", "DOUBLE", "µs", "longest execution"),
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
        ("wall_ms", "DOUBLE", "ms", "host wall time of the phase in this step; the phases of a step add up to it"),
        ("gpu_ms", "DOUBLE", "ms", "device kernel time launched from this phase (all devices)"),
        ("kernels", "BIGINT", "count", "kernels launched from this phase"),
        ("ops", "BIGINT", "count", "framework ops recorded in this phase"),
        ("launches", "BIGINT", "count", "runtime launch calls issued in this phase"),
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
        ("kernel_ms", "DOUBLE", "ms", "device kernel time launched by the step"),
        ("sync_ms", "DOUBLE", "ms", "host time blocked in synchronizing calls"),
    ],
    # sql/blame.sql: the vocabulary of causes and the priority rule where they overlap
    "blame": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace (NULL when not distributed)"),
        ("step", "BIGINT", "", "measured step (or call), 1-based"),
        ("cause", "VARCHAR", "", "what held the step's critical path (sql/blame.sql; causes with no time have no row)"),
        ("side", "VARCHAR", "", "device: the device was busy with this work; host: the device was idle (or there is none)"),
        ("ns", "BIGINT", "ns", "time blamed on the cause in this step; a step's rows add up to its wall time exactly"),
        ("ms", "DOUBLE", "ms", "the same time in ms"),
        ("share_pct", "DOUBLE", "%", "share of the step's wall time"),
        ("step_ms", "DOUBLE", "ms", "the step's wall time: host start to the later of host end and its device work's end, never past the next step's start"),
    ],
    # sql/modules.sql: module ranges (measure/modules.py) or a foreign trace's nn.Module events
    "modules": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace (NULL when not distributed)"),
        ("phase", "VARCHAR", "", "forward or backward (a module's backward: from the gradient reaching its outputs until it reached its inputs)"),
        ("path", "VARCHAR", "", "dotted module path under the model's class name (foreign traces: <Class>_<n> names nested as recorded)"),
        ("parent", "VARCHAR", "", "the parent module's path (NULL at depth 0)"),
        ("depth", "BIGINT", "", "levels below the model (0: the model itself, 1: backbone/neck/head, 2: their blocks)"),
        ("module_type", "VARCHAR", "", "the module's class name"),
        ("source", "VARCHAR", "", "ranges (our record_function ranges) or python_function (a foreign trace's nn.Module events)"),
        ("calls", "BIGINT", "count", "calls in the window"),
        ("calls_per_step", "DOUBLE", "count", "calls per measured step"),
        ("total_ms", "DOUBLE", "ms", "host wall time inside the module's calls"),
        ("total_ms_per_step", "DOUBLE", "ms", "host wall time inside the module's calls per measured step"),
        ("self_ms", "DOUBLE", "ms", "host time the module held itself: no module range that started later was open (forward: not in a child module); a thread's self times add up to its outermost ranges"),
        ("self_ms_per_step", "DOUBLE", "ms", "self host time per measured step"),
        ("share_pct", "DOUBLE", "%", "share of the whole model's time in this phase (NULL when the model itself was not recorded)"),
        ("device_ms", "DOUBLE", "ms", "device kernel time launched inside the module's calls (NULL without device kernels)"),
        ("device_ms_per_step", "DOUBLE", "ms", "device kernel time launched inside the module per measured step"),
        ("device_self_ms", "DOUBLE", "ms", "device kernel time launched while the module held the host itself (NULL without device kernels)"),
        ("device_self_ms_per_step", "DOUBLE", "ms", "device self kernel time per measured step"),
        ("kernels", "BIGINT", "count", "kernels launched inside the module's calls"),
        ("start_ms", "DOUBLE", "ms", "start of the module's first call relative to the window start"),
    ],
}
