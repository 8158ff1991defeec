"""The columns of the sidecar tables that attribute a profile's work: to the model's modules, to the
roofline (what each op could cost at the device's peaks) and to the allocator's memory.

Part of the catalogue store/schema.py gathers into TABLES (bump its TABLES_VERSION when a column here
changes meaning or type). Each column is (name, DuckDB/SQL type, unit, meaning).
"""

# table name -> [(column, type, unit, meaning)]
ATTRIBUTION_COLUMNS: dict[str, list[tuple[str, str, str, str]]] = {
    # sql/modules.sql: module ranges (measure/modules.py) or a foreign trace's nn.Module events
    "modules": [
        ("rank", "BIGINT", "", "rank of the process that recorded the trace (NULL when not distributed)"),
        (
            "phase",
            "VARCHAR",
            "",
            "forward or backward (a module's backward: from the gradient reaching its outputs until it reached its "
            "inputs)",
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
            "host time the module held itself: no module range that started later was open (forward: not in a child "
            "module); a thread's self times add up to its outermost ranges",
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
            "op name; one row per phase, op, recorded shape and dtype, and one per phase and op for the device work "
            "an op launched itself beside its costed sub-calls (input_dims NULL; no_model_reason says so); NULL: "
            "device work no op call launched, a row per launch phase and reason",
        ),
        (
            "launched_outside_steps",
            "BOOLEAN",
            "",
            "for the rows of device work no op call launched (op NULL): whether its launch lies outside every "
            "measured step (queued before the window or launched between steps); NULL on op rows",
        ),
        (
            "input_dims",
            "VARCHAR",
            "",
            "the trace's Input Dims as recorded, in Kineto's compact layout ([[4, 197, 768], [768, 768]]; NULL for "
            "ops without a cost model)",
        ),
        ("dtype", "VARCHAR", "", "the type the op computes in, its output's (float32, bfloat16 …)"),
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
            "device time of all its calls per measured step: their executions inside the window summed, as the "
            "kernels table counts them; the rows sum to the window's device time",
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
            "why FLOPs or the roof are NULL (no model, shapes not recorded, device not in the peak table), or why the "
            "row stands above its roof (its bytes within the device's last-level cache, a beaten CPU roof)",
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
            "absolute (allocator totals) | profiled (the host's totals: only blocks allocated while the profiler "
            "recorded) | relative (Bytes only: the rise above the window's start, at least that much)",
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
            "op/module rows: allocated − freed from the window's start up to the peak (relative levels: a device's "
            "rows add up to its peak)",
        ),
        (
            "live_at_peak_mb",
            "DOUBLE",
            "MiB",
            "op/module/device rows: allocated in the window and not freed by the peak (matched by Addr); NULL without "
            "Addr (the 2021 format)",
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
}
