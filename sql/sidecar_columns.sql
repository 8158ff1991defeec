-- sidecar_columns.sql — the sidecar tables' vocabulary: every parquet table a profile directory holds and
-- every column of it, with its type, unit and meaning. One row per table and per column: sql/table_<name>.sql
-- computes the table (its select list in this order), store/schema.py builds the sidecar schemas from these
-- rows (the parquet writer, the loader's and the cross-run footer checks, the views) and docs/SCHEMA.md's
-- tables block is generated from them (python tests/test_schema_docs.py). Bump store/schema.py
-- TABLES_VERSION when a column changes meaning or type; adding a column is compatible.

-- sidecar_tables: one row per table, in the order docs/SCHEMA.md lists them.
CREATE OR REPLACE TEMP TABLE sidecar_tables (
    -- the table, as its parquet file (<name>.parquet), its SQL (sql/table_<name>.sql) and the views name it
    name      VARCHAR,
    -- only a job profile (several ranks' traces, store/document/job.py) fills it; empty otherwise
    job_only  BOOLEAN
);
INSERT INTO sidecar_tables VALUES
    ('kernels', FALSE),
    ('ops', FALSE),
    ('phases', FALSE),
    ('steps', FALSE),
    ('blame', FALSE),
    ('modules', FALSE),
    ('roofline', FALSE),
    ('memory', FALSE),
    ('collectives', TRUE),
    ('ranks', TRUE);

-- sidecar_columns: one row per column of each table, in the table's column order.
CREATE OR REPLACE TEMP TABLE sidecar_columns (
    -- the table (sidecar_tables.name)
    table_name   VARCHAR,
    -- the column
    column_name  VARCHAR,
    -- its DuckDB/SQL type: BOOLEAN | INTEGER | BIGINT | DOUBLE | VARCHAR (store/schema.py PARQUET_TYPES maps
    -- each to the parquet physical type the writer gives it)
    type         VARCHAR,
    -- its unit ('' for none): ms, µs, ns, %, count, MiB, GFLOP, FLOP/byte, TFLOP/s, TB/s …
    unit         VARCHAR,
    -- what it means, as docs/SCHEMA.md says
    meaning      VARCHAR
);
INSERT INTO sidecar_columns VALUES
    -- kernels
    ('kernels', 'rank', 'BIGINT', '', 'rank of the process that recorded the trace (NULL when not distributed)'),
    ('kernels', 'device', 'INTEGER', '', 'device id the work ran on'),
    ('kernels', 'phase', 'VARCHAR', '',
     'phase whose host code launched it (NULL when its launch is not inside a measured step)'),
    ('kernels', 'activity', 'VARCHAR', '', 'kind of device activity: kernel, memcpy or memset'),
    ('kernels', 'category', 'VARCHAR', '', 'category from sql/kernel_categories.sql'),
    ('kernels', 'tensorcore', 'BOOLEAN', '', 'Tensor Core kernel by name (sql/tensorcore_rules.sql)'),
    ('kernels', 'name', 'VARCHAR', '', 'kernel name as the profiler recorded it'),
    ('kernels', 'launched_outside_steps', 'BOOLEAN', '',
     'ran inside the window, but its launch is not inside a measured step (queued before the capture '
     || 'began)'),
    ('kernels', 'calls', 'BIGINT', 'count', 'executions in the window'),
    ('kernels', 'calls_per_step', 'DOUBLE', 'count', 'executions per measured step'),
    ('kernels', 'total_ms', 'DOUBLE', 'ms',
     'device time inside the window (each execution clipped to it); summed over the kernels it is the '
     || 'kernel time every metric uses'),
    ('kernels', 'ms_per_step', 'DOUBLE', 'ms', 'device time per measured step'),
    ('kernels', 'mean_us', 'DOUBLE', 'µs', 'mean execution time'),
    ('kernels', 'min_us', 'DOUBLE', 'µs', 'shortest execution'),
    ('kernels', 'max_us', 'DOUBLE', 'µs', 'longest execution'),
    ('kernels', 'category_exclusive_ms_per_step', 'DOUBLE', 'ms',
     'per step, inside the measured steps, the time this row''s category alone ran on its device (the same '
     || 'on every row of the category): what removing it frees'),
    -- ops
    ('ops', 'rank', 'BIGINT', '', 'rank of the process that recorded the trace (NULL when not distributed)'),
    ('ops', 'phase', 'VARCHAR', '', 'phase the op ran in'),
    ('ops', 'name', 'VARCHAR', '', 'op name (aten::…, autograd …)'),
    ('ops', 'calls', 'BIGINT', 'count', 'calls in the window'),
    ('ops', 'calls_per_step', 'DOUBLE', 'count', 'calls per measured step'),
    ('ops', 'leaf_calls', 'BIGINT', 'count', 'calls that dispatched no further op'),
    ('ops', 'self_ms', 'DOUBLE', 'ms', 'exclusive CPU time in the window (the op minus the ops it called)'),
    ('ops', 'self_ms_per_step', 'DOUBLE', 'ms', 'exclusive CPU time per measured step'),
    ('ops', 'total_ms', 'DOUBLE', 'ms', 'inclusive CPU time in the window'),
    ('ops', 'total_ms_per_step', 'DOUBLE', 'ms', 'inclusive CPU time per measured step'),
    -- phases
    ('phases', 'rank', 'BIGINT', '', 'rank of the process that recorded the trace (NULL when not distributed)'),
    ('phases', 'step', 'BIGINT', '', 'measured step (or call), 1-based'),
    ('phases', 'phase', 'VARCHAR', '', 'phase name'),
    ('phases', 'wall_ms', 'DOUBLE', 'ms',
     'host wall time of the phase in this step (time inside the step that no phase range covers counts as '
     || 'forward); the phases of a step add up to it'),
    ('phases', 'gpu_ms', 'DOUBLE', 'ms',
     'device kernel time launched from this phase, inside the window (all devices); summed over the rows '
     || 'it is the kernel time every metric uses'),
    ('phases', 'kernels', 'BIGINT', 'count', 'kernels launched from this phase that ran inside the window'),
    ('phases', 'ops', 'BIGINT', 'count', 'framework ops recorded in this phase'),
    ('phases', 'launches', 'BIGINT', 'count', 'runtime launch calls issued in this phase'),
    ('phases', 'launched_outside_steps', 'BOOLEAN', '',
     'the row of kernels that ran in this step''s span but whose launch is not inside a measured step '
     || '(phase NULL)'),
    -- steps
    ('steps', 'rank', 'BIGINT', '', 'rank of the process that recorded the trace (NULL when not distributed)'),
    ('steps', 'step', 'BIGINT', '', 'measured step (or call), 1-based'),
    ('steps', 'start_ms', 'DOUBLE', 'ms', 'start relative to the window start'),
    ('steps', 'host_ms', 'DOUBLE', 'ms', 'host wall time of the step (infer: the call''s latency)'),
    ('steps', 'device_end_ms', 'DOUBLE', 'ms', 'from the step''s start until the device finished its work'),
    ('steps', 'images', 'BIGINT', 'count', 'images the step consumed (NULL when unknown)'),
    ('steps', 'runtime_launches', 'BIGINT', 'count', 'runtime launch calls (kernel, graph, async memcpy/memset)'),
    ('steps', 'leaf_ops', 'BIGINT', 'count', 'dispatched leaf ops'),
    ('steps', 'ops', 'BIGINT', 'count', 'framework ops recorded'),
    ('steps', 'kernels', 'BIGINT', 'count', 'device kernels executed'),
    ('steps', 'kernel_ms', 'DOUBLE', 'ms', 'device kernel time launched by the step, inside the window'),
    ('steps', 'sync_ms', 'DOUBLE', 'ms', 'host time blocked in synchronizing calls'),
    ('steps', 'outside_kernel_ms', 'DOUBLE', 'ms',
     'device kernel time that ran in the step''s span (its start to the next step''s start) but was '
     || 'launched outside every measured step; kernel_ms + outside_kernel_ms summed over the steps is the '
     || 'kernel time every metric uses'),
    -- blame: sql/blame.sql: the vocabulary of causes and the priority rule where they overlap
    ('blame', 'rank', 'BIGINT', '', 'rank of the process that recorded the trace (NULL when not distributed)'),
    ('blame', 'step', 'BIGINT', '', 'measured step (or call), 1-based'),
    ('blame', 'cause', 'VARCHAR', '',
     'what held the step''s critical path (sql/blame.sql; causes with no time have no row)'),
    ('blame', 'side', 'VARCHAR', '',
     'device: the device was busy with this work; host: the device was idle (or there is none)'),
    ('blame', 'ns', 'BIGINT', 'ns',
     'time blamed on the cause in this step; a step''s rows add up to its wall time exactly'),
    ('blame', 'ms', 'DOUBLE', 'ms', 'the same time in ms'),
    ('blame', 'share_pct', 'DOUBLE', '%', 'share of the step''s wall time (the whole named in `whole`)'),
    ('blame', 'whole', 'VARCHAR', '', 'what share_pct is a share of: step_ms, the step''s wall time in this table'),
    ('blame', 'step_ms', 'DOUBLE', 'ms',
     'the step''s wall time: host start to the later of host end and its device work''s end, never past '
     || 'the next step''s start'),
    -- modules: sql/modules.sql: module ranges (measure/modules.py) or a foreign trace's nn.Module events
    ('modules', 'rank', 'BIGINT', '', 'rank of the process that recorded the trace (NULL when not distributed)'),
    ('modules', 'phase', 'VARCHAR', '',
     'forward or backward (a module''s backward: from the gradient reaching its outputs until it reached '
     || 'its inputs)'),
    ('modules', 'path', 'VARCHAR', '',
     'dotted module path under the model''s class name (foreign traces: <Class>_<n> names nested as '
     || 'recorded)'),
    ('modules', 'parent', 'VARCHAR', '', 'the parent module''s path (NULL at depth 0)'),
    ('modules', 'depth', 'BIGINT', '',
     'levels below the model (0: the model itself, 1: backbone/neck/head, 2: their blocks)'),
    ('modules', 'module_type', 'VARCHAR', '', 'the module''s class name'),
    ('modules', 'source', 'VARCHAR', '',
     'ranges (our record_function ranges) or python_function (a foreign trace''s nn.Module events)'),
    ('modules', 'calls', 'BIGINT', 'count', 'calls in the window'),
    ('modules', 'calls_per_step', 'DOUBLE', 'count', 'calls per measured step'),
    ('modules', 'total_ms', 'DOUBLE', 'ms', 'host wall time inside the module''s calls'),
    ('modules', 'total_ms_per_step', 'DOUBLE', 'ms', 'host wall time inside the module''s calls per measured step'),
    ('modules', 'self_ms', 'DOUBLE', 'ms',
     'host time the module held itself: no module range that started later was open (forward: not in a '
     || 'child module); a thread''s self times add up to its outermost ranges'),
    ('modules', 'self_ms_per_step', 'DOUBLE', 'ms', 'self host time per measured step'),
    ('modules', 'share_pct', 'DOUBLE', '%',
     'share of the whole model''s time in this phase (NULL when the model itself was not recorded)'),
    ('modules', 'device_ms', 'DOUBLE', 'ms',
     'device kernel time launched inside the module''s calls (NULL without device kernels)'),
    ('modules', 'device_ms_per_step', 'DOUBLE', 'ms',
     'device kernel time launched inside the module per measured step'),
    ('modules', 'device_self_ms', 'DOUBLE', 'ms',
     'device kernel time launched while the module held the host itself (NULL without device kernels)'),
    ('modules', 'device_self_ms_per_step', 'DOUBLE', 'ms', 'device self kernel time per measured step'),
    ('modules', 'kernels', 'BIGINT', 'count', 'kernels launched inside the module''s calls'),
    ('modules', 'start_ms', 'DOUBLE', 'ms', 'start of the module''s first call relative to the window start'),
    -- roofline: sql/roofline_costs.sql + sql/roofline.sql: FLOPs and bytes from the recorded shapes, the roof from
    -- sql/device_peaks.sql (GPU) or the measured CPU peak
    ('roofline', 'rank', 'BIGINT', '', 'rank of the process that recorded the trace (NULL when not distributed)'),
    ('roofline', 'phase', 'VARCHAR', '', 'phase the calls ran in'),
    ('roofline', 'op', 'VARCHAR', '',
     'op name; one row per phase, op, recorded shape and dtype, and one per phase and op for the device '
     || 'work an op launched itself beside its costed sub-calls (input_dims NULL; no_model_reason says so); '
     || 'NULL: device work no op call launched, a row per launch phase and reason'),
    ('roofline', 'launched_outside_steps', 'BOOLEAN', '',
     'for the rows of device work no op call launched (op NULL): whether its launch lies outside every '
     || 'measured step (queued before the window or launched between steps); NULL on op rows'),
    ('roofline', 'input_dims', 'VARCHAR', '',
     'the trace''s Input Dims as recorded, in Kineto''s compact layout ([[4, 197, 768], [768, 768]]; NULL '
     || 'for ops without a cost model)'),
    ('roofline', 'dtype', 'VARCHAR', '', 'the type the op computes in, its output''s (float32, bfloat16 …)'),
    ('roofline', 'model', 'VARCHAR', '', 'the cost formula''s family (sql/roofline_models.sql; NULL: no model)'),
    ('roofline', 'calls', 'BIGINT', 'count', 'calls in the window'),
    ('roofline', 'calls_per_step', 'DOUBLE', 'count', 'calls per measured step'),
    ('roofline', 'gflops', 'DOUBLE', 'GFLOP', 'FLOPs of one call (NULL without a model, never a made-up 0)'),
    ('roofline', 'mb_moved', 'DOUBLE', 'MB',
     'bytes one call moves, inputs read once and outputs written once (10^6 bytes)'),
    ('roofline', 'intensity', 'DOUBLE', 'FLOP/byte', 'arithmetic intensity: gflops ÷ mb_moved × 1000'),
    ('roofline', 'device_us', 'DOUBLE', 'µs',
     'mean device time of one call: the union of the device work it launched (CPU: its wall time)'),
    ('roofline', 'device_ms_per_step', 'DOUBLE', 'ms',
     'device time of all its calls per measured step: their executions inside the window summed, as the '
     || 'kernels table counts them; the rows sum to the window''s device time'),
    ('roofline', 'time_share_pct', 'DOUBLE', '%',
     'share of the window''s device time (every execution in it: the op rows and the work no op launched)'),
    ('roofline', 'tflops_per_s', 'DOUBLE', 'TFLOP/s', 'achieved compute rate'),
    ('roofline', 'tb_per_s', 'DOUBLE', 'TB/s', 'achieved memory rate'),
    ('roofline', 'device_model', 'VARCHAR', '',
     'the device named from the trace''s deviceProperties (sql/device_peaks.sql), or CPU (measured)'),
    ('roofline', 'roof_class', 'VARCHAR', '',
     'the peak class of the roof: fp64, fp32, tf32 (FP32 on Tensor Cores), bf16, fp16, fp8, fp4'),
    ('roofline', 'peak_tflops', 'DOUBLE', 'TFLOP/s', 'the device''s dense peak for that class'),
    ('roofline', 'peak_tb_per_s', 'DOUBLE', 'TB/s', 'the device''s memory bandwidth'),
    ('roofline', 'peak_source', 'VARCHAR', '', 'the datasheet (or the CPU measurement''s method) the peaks come from'),
    ('roofline', 'roofline_us', 'DOUBLE', 'µs', 'max(FLOPs ÷ peak, bytes ÷ bandwidth) of one call'),
    ('roofline', 'pct_of_roofline', 'DOUBLE', '%', 'roofline time ÷ measured device time'),
    ('roofline', 'bound', 'VARCHAR', '', 'compute or memory: which roof binds (NULL without a roof)'),
    ('roofline', 'above_roof_ms_per_step', 'DOUBLE', 'ms',
     'device time above the roofline time, all calls per measured step'),
    ('roofline', 'no_model_reason', 'VARCHAR', '',
     'why FLOPs or the roof are NULL (no model, shapes not recorded, device not in the peak table), or why '
     || 'the row stands above its roof (its bytes within the device''s last-level cache, a beaten CPU roof)'),
    -- memory: sql/memory.sql: the allocator's `[memory]` events in the window; one `record` kind per row
    ('memory', 'rank', 'BIGINT', '', 'rank of the process that recorded the trace (NULL when not distributed)'),
    ('memory', 'record', 'VARCHAR', '',
     'device (the peak and totals) | point (the timeline) | op | module | step | band (a phase''s time '
     || 'range)'),
    ('memory', 'allocator', 'VARCHAR', '',
     'whose allocator: cpu (the host''s) | cuda | type <n> (the profiler''s Device Type); NULL on band '
     || 'rows'),
    ('memory', 'device', 'INTEGER', '', 'device id (-1: the host); NULL on band rows'),
    ('memory', 'levels', 'VARCHAR', '',
     'absolute (allocator totals) | profiled (the host''s totals: only blocks allocated while the profiler '
     || 'recorded) | relative (Bytes only: the rise above the window''s start, at least that much)'),
    ('memory', 'step', 'BIGINT', '', 'measured step: at the instant (device, point) or of the row (step, band)'),
    ('memory', 'phase', 'VARCHAR', '', 'phase at the instant (band: the band''s phase)'),
    ('memory', 'op', 'VARCHAR', '', 'outermost op running on the allocating thread (op rows: the op of the figures)'),
    ('memory', 'leaf_op', 'VARCHAR', '', 'innermost op running then: the one that called the allocator'),
    ('memory', 'module', 'VARCHAR', '',
     'innermost module range open on the allocating thread (module rows: the module)'),
    ('memory', 'ts_ms', 'DOUBLE', 'ms', 'instant relative to the window start (device: of the peak; band: its start)'),
    ('memory', 'end_ms', 'DOUBLE', 'ms', 'band rows: the band''s end relative to the window start'),
    ('memory', 'allocated_mb', 'DOUBLE', 'MiB',
     'allocated after the event (device: the peak); relative levels: above the window''s start'),
    ('memory', 'reserved_mb', 'DOUBLE', 'MiB',
     'reserved by the caching allocator after the event (device: its peak); NULL where not recorded'),
    ('memory', 'peak', 'BOOLEAN', '', 'point rows: true at the peak (device rows: true)'),
    ('memory', 'events', 'BIGINT', 'count', 'allocator events in the row'),
    ('memory', 'allocations', 'BIGINT', 'count', 'allocations (Bytes > 0) in the row'),
    ('memory', 'frees', 'BIGINT', 'count', 'frees (Bytes < 0) in the row'),
    ('memory', 'alloc_mb', 'DOUBLE', 'MiB', 'bytes allocated in the row'),
    ('memory', 'freed_mb', 'DOUBLE', 'MiB', 'bytes freed in the row'),
    ('memory', 'net_mb', 'DOUBLE', 'MiB', 'allocated − freed in the row'),
    ('memory', 'net_to_peak_mb', 'DOUBLE', 'MiB',
     'op/module rows: allocated − freed from the window''s start up to the peak (relative levels: a '
     || 'device''s rows add up to its peak)'),
    ('memory', 'live_at_peak_mb', 'DOUBLE', 'MiB',
     'op/module/device rows: allocated in the window and not freed by the peak (matched by Addr); NULL '
     || 'without Addr (the 2021 format)'),
    ('memory', 'runtime_mallocs', 'BIGINT', 'count',
     'step rows: the process''s cudaMalloc-like calls in the step (device rows: in all measured steps)'),
    ('memory', 'runtime_frees', 'BIGINT', 'count',
     'step rows: the process''s cudaFree-like calls in the step (device rows: in all measured steps)'),
    -- collectives: sql/collectives.sql: a job profile's collectives matched across its ranks (empty in a one-trace
    -- profile)
    ('collectives', 'rank', 'BIGINT', '', 'rank of the process that recorded the trace'),
    ('collectives', 'process_group', 'VARCHAR', '',
     'process group: ''pg <name>'' as recorded, else ''stream <n>'' (the rank''s n-th communication stream '
     || 'by first use)'),
    ('collectives', 'step', 'BIGINT', '',
     'the rank''s measured step whose host code launched it (0: outside the measured steps)'),
    ('collectives', 'step_mark', 'BIGINT', '',
     'the step across ranks: its ProfilerStep#N number where recorded, else the measured step (0: outside '
     || 'them)'),
    ('collectives', 'collective', 'VARCHAR', '',
     'the collective''s kind from its kernel name (allreduce, alltoall, sendrecv …)'),
    ('collectives', 'seq', 'BIGINT', '',
     'its place among the same kind of its group in that step, in issue order, 1-based'),
    ('collectives', 'nelems', 'BIGINT', 'count',
     'input elements as recorded (NULL where the trace does not record them)'),
    ('collectives', 'kernel', 'VARCHAR', '', 'the kernel name as recorded'),
    ('collectives', 'matched_ranks', 'BIGINT', 'count',
     'ranks whose trace holds this collective (below the world size: some ranks'' traces miss it)'),
    ('collectives', 'sizes_agree', 'BOOLEAN', '', 'false when the ranks recorded different message sizes for it'),
    ('collectives', 'start_ms', 'DOUBLE', 'ms',
     'the rank''s arrival (kernel start) on the job''s clock, relative to the earliest rank''s first step '
     || 'start'),
    ('collectives', 'dur_ms', 'DOUBLE', 'ms', 'the kernel''s duration on this rank'),
    ('collectives', 'skew_ms', 'DOUBLE', 'ms', 'the last rank''s arrival minus the first rank''s'),
    ('collectives', 'last_rank', 'BIGINT', '', 'the rank that arrived last (NULL when no other rank matched)'),
    ('collectives', 'wait_ms', 'DOUBLE', 'ms',
     'time inside the collective before the last rank arrived (NULL when no other rank matched)'),
    ('collectives', 'transfer_ms', 'DOUBLE', 'ms',
     'time inside the collective after the last rank arrived (NULL when no other rank matched)'),
    ('collectives', 'exposed_wait_ms', 'DOUBLE', 'ms', 'the part of the wait no compute of this rank overlapped'),
    -- ranks: sql/job_ranks.sql: a job profile's ranks side by side (empty in a one-trace profile)
    ('ranks', 'rank', 'BIGINT', '', 'rank of the process that recorded the trace'),
    ('ranks', 'steps', 'BIGINT', 'count', 'measured steps of the rank'),
    ('ranks', 'step_ms', 'DOUBLE', 'ms', 'mean step wall time (sql/blame.sql''s step)'),
    ('ranks', 'device_busy_pct', 'DOUBLE', '%', 'share of the step the rank''s device was busy'),
    ('ranks', 'compute_ms', 'DOUBLE', 'ms',
     'device time per step in work that is neither a collective nor a copy; null on a rank with no device '
     || '(CPU)'),
    ('ranks', 'exposed_comm_ms', 'DOUBLE', 'ms',
     'collective time per step no compute overlapped (the blame''s communication)'),
    ('ranks', 'exposed_comm_pct', 'DOUBLE', '%', 'exposed communication''s share of the step'),
    ('ranks', 'collectives', 'BIGINT', 'count', 'collectives in the rank''s trace'),
    ('ranks', 'collective_ms', 'DOUBLE', 'ms', 'device time per step inside collectives'),
    ('ranks', 'collective_wait_ms', 'DOUBLE', 'ms',
     'time per step inside collectives waiting for a later rank to arrive (NULL when nothing matched)'),
    ('ranks', 'exposed_wait_ms', 'DOUBLE', 'ms', 'the part of that wait no compute overlapped'),
    ('ranks', 'transfer_ms', 'DOUBLE', 'ms', 'time per step inside collectives after the last rank arrived'),
    ('ranks', 'dataload_ms', 'DOUBLE', 'ms', 'time per step the device idled in dataloading (the blame''s dataload)'),
    ('ranks', 'sync_ms', 'DOUBLE', 'ms',
     'time per step the device idled while the host was blocked in a sync (the blame''s sync_bubble)'),
    ('ranks', 'entered_ms', 'DOUBLE', 'ms', 'its first step''s start after the earliest rank''s, on the job''s clock'),
    ('ranks', 'last_arrivals', 'BIGINT', 'count', 'matched collectives at which it arrived last'),
    ('ranks', 'waited_on_ms', 'DOUBLE', 'ms', 'the other ranks'' wait for it per step, summed over them'),
    ('ranks', 'waited_on_pct', 'DOUBLE', '%',
     'that wait as a share of the other ranks'' time in the matched collectives'),
    ('ranks', 'clock_offset_ms', 'DOUBLE', 'ms',
     'shift applied to its clock to put it on the job''s (sql/collectives.sql)'),
    ('ranks', 'clock_method', 'VARCHAR', '', 'how its clock was checked or aligned'),
    ('ranks', 'verdict', 'VARCHAR', '', 'its own verdict, as a single-rank profile of its trace would read'),
    ('ranks', 'straggler', 'BOOLEAN', '', 'true for the rank the others wait for (sql/job_ranks.sql: job_straggler)');

