-- metric_catalog.sql — the metric vocabulary: every scalar metric of a profile (SPEC §4) with its type, unit,
-- meaning, the profiles it applies to, and where each screen shows it. One row per metric: sql/metrics.sql
-- defines the values, and Python reads the rows (libreyolo_profile/metric_catalog.py, through
-- libreyolo_profile/vocabulary.py), never spelling a unit, a meaning or a list of metrics itself. The rows
-- also name sql/metrics.sql's internal columns (inputs to other figures that `get` does not answer), so the
-- test that keeps the SQL and this table in step reads one list. docs/SCHEMA.md's metric reference is
-- generated from it (python tests/test_schema_docs.py).

-- metric_catalog: one row per metric, in the order `get` lists them.
CREATE OR REPLACE TEMP TABLE metric_catalog (
    -- the metric, as `get`, profile.json's metrics and the `profiles` view name it
    name            VARCHAR,
    -- trace: a column of sql/metrics.sql's result; measurement: the measurement adds it (the unprofiled
    -- timing, store/document/headline.py); document: the document adds it (the verdict, the thrashing flag:
    -- store/document/assemble.py, verdict.py); internal: a column of sql/metrics.sql's result that is an input
    -- to other figures, kept out of the document's metrics
    origin          VARCHAR,
    -- DOUBLE | VARCHAR | BOOLEAN | BIGINT: the column type it lands in (the `profiles` view, the head check)
    type            VARCHAR,
    -- its unit ('' for none): ms, µs, %, img/s, MiB, count
    unit            VARCHAR,
    -- the kinds of profile it applies to (train, infer); NULL for an internal column
    kinds           VARCHAR[],
    -- the device it needs: any | gpu (device kernels) | cpu (a CPU profile); NULL for an internal column
    device          VARCHAR,
    -- what it means, as docs/SCHEMA.md and the Python API say
    meaning         VARCHAR,
    -- a measured profile's headline takes it from the calls timed without the profiler
    -- (store/document/headline.py unprofiled_metrics); every other figure is the profiled trace's
    unprofiled      BOOLEAN,
    -- a percentile from fewer calls than this is null, with the reason (a p99 of 30 calls is just the slowest)
    min_calls       INTEGER,
    -- the range its value can take where its unit's (metric_units) does not fit; NULL: the unit's
    lowest          DOUBLE,
    highest         DOUBLE,
    -- its place among the metrics `summary` shows (and `summary --json`, the Python API's Profile.metrics
    -- carry), for the profiles it applies to; NULL: not shown
    summary_order   INTEGER,
    -- what a share is a share of, as the summary prints its unit ('% of step'); NULL: the bare unit
    share_of        VARCHAR,
    -- the summary's phases table shows the same number: not repeated as a metric row
    shown_as_phase  BOOLEAN,
    -- its place among the report's headline cards, for the profiles it applies to; NULL: no card
    card_order      INTEGER,
    -- its place among the metrics `compare` compares, for the profiles it applies to (a metric of every kind
    -- also for a profile of no known kind); NULL: compared only when a --fail-on rule names it
    compare_order   INTEGER,
    -- higher | lower: which change is the better one; NULL: neither
    better          VARCHAR
);
-- each row: name, origin, type, unit, kinds, device,
--           meaning,
--           unprofiled, min_calls, lowest, highest, summary_order, share_of, shown_as_phase, card_order,
--           compare_order, better
INSERT INTO metric_catalog VALUES
    ('step_ms', 'trace', 'DOUBLE', 'ms', ['train', 'infer'], 'any',
     'train: first step start → the host''s end of the last step, ÷ steps (one step: until the device is '
     || 'done; the drain after the last step is drain_ms); infer: mean call latency. Measured profiles: the '
     || 'calls timed without the profiler; traces: the profiled window',
     TRUE, NULL, NULL, NULL, 1, NULL, FALSE, 1, 3, 'lower'),
    ('throughput_img_s', 'trace', 'DOUBLE', 'img/s', ['train', 'infer'], 'any',
     'images per step ÷ step seconds (measured profiles: of the unprofiled calls)',
     TRUE, NULL, NULL, NULL, 2, NULL, FALSE, 5, 1, 'higher'),
    ('ms_per_img', 'trace', 'DOUBLE', 'ms', ['train', 'infer'], 'any',
     '1000 ÷ throughput',
     TRUE, NULL, NULL, NULL, 3, NULL, FALSE, NULL, 2, 'lower'),
    ('latency_p50_ms', 'trace', 'DOUBLE', 'ms', ['infer'], 'any',
     'median per-call latency',
     TRUE, NULL, NULL, NULL, 29, NULL, FALSE, 2, 10, 'lower'),
    ('latency_p90_ms', 'trace', 'DOUBLE', 'ms', ['infer'], 'any',
     '90th percentile per-call latency',
     TRUE, 20, NULL, NULL, 30, NULL, FALSE, 3, 11, 'lower'),
    ('latency_p99_ms', 'trace', 'DOUBLE', 'ms', ['infer'], 'any',
     '99th percentile per-call latency',
     TRUE, 100, NULL, NULL, 31, NULL, FALSE, 4, 12, 'lower'),
    ('preprocess_ms', 'trace', 'DOUBLE', 'ms', ['infer'], 'any',
     'mean preprocess time per call',
     TRUE, NULL, NULL, NULL, 32, NULL, TRUE, NULL, NULL, NULL),
    ('preprocess_pct', 'trace', 'DOUBLE', '%', ['infer'], 'any',
     'preprocess share of the mean latency',
     TRUE, NULL, NULL, NULL, 33, '% of call', TRUE, NULL, 13, NULL),
    ('forward_ms', 'trace', 'DOUBLE', 'ms', ['infer'], 'any',
     'mean forward time per call',
     TRUE, NULL, NULL, NULL, 34, NULL, TRUE, NULL, NULL, NULL),
    ('forward_pct', 'trace', 'DOUBLE', '%', ['infer'], 'any',
     'forward share of the mean latency',
     TRUE, NULL, NULL, NULL, 35, '% of call', TRUE, NULL, 14, NULL),
    ('postprocess_ms', 'trace', 'DOUBLE', 'ms', ['infer'], 'any',
     'mean postprocess (NMS) time per call',
     TRUE, NULL, NULL, NULL, 36, NULL, TRUE, NULL, NULL, NULL),
    ('postprocess_pct', 'trace', 'DOUBLE', '%', ['infer'], 'any',
     'postprocess share of the mean latency',
     TRUE, NULL, NULL, NULL, 37, '% of call', TRUE, NULL, 15, NULL),
    ('gpu_util_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     '|union of kernel intervals| ÷ window wall time (busiest device)',
     FALSE, NULL, NULL, NULL, 4, '% of window', FALSE, 6, 4, 'higher'),
    ('gpu_busy_ms', 'trace', 'DOUBLE', 'ms', ['train', 'infer'], 'gpu',
     'device busy time per step (busiest device)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('tensorcore_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'Tensor Core kernel time ÷ all kernel time, by kernel name (a heuristic)',
     FALSE, NULL, NULL, NULL, 5, '% of kernel time', FALSE, 7, NULL, NULL),
    ('gemm_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'GEMM/convolution share of kernel time (attention kernels, their own category, are not in it)',
     FALSE, NULL, NULL, NULL, 6, '% of kernel time', FALSE, NULL, NULL, NULL),
    ('memory_bound_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'elementwise, layout, norm, reduce and embedding-lookup share of kernel time',
     FALSE, NULL, NULL, NULL, 7, '% of kernel time', FALSE, NULL, NULL, NULL),
    ('communication_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'collective (nccl/rccl) share of kernel time',
     FALSE, NULL, NULL, NULL, 8, '% of kernel time', FALSE, NULL, NULL, NULL),
    ('memcpy_ms', 'trace', 'DOUBLE', 'ms', ['train', 'infer'], 'gpu',
     'device copy time per step (not kernel time)',
     FALSE, NULL, NULL, NULL, 19, NULL, FALSE, NULL, NULL, NULL),
    ('peak_vram_mb', 'trace', 'DOUBLE', 'MiB', ['train', 'infer'], 'gpu',
     'peak allocated device memory in the window',
     FALSE, NULL, NULL, NULL, 9, NULL, FALSE, 8, NULL, NULL),
    ('peak_mem_mb', 'trace', 'DOUBLE', 'MiB', ['train', 'infer'], 'any',
     'peak allocated memory on the profiled device (host allocator on CPU)',
     FALSE, NULL, NULL, NULL, 10, NULL, FALSE, 9, NULL, NULL),
    ('memory_level', 'trace', 'VARCHAR', '', ['train', 'infer'], 'any',
     'absolute: the peaks are allocator totals; profiled: the host''s totals, which count only blocks '
     || 'allocated while the profiler recorded; relative: the trace records Bytes only, so they are the rise '
     || 'above the window''s start (at least that much)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('steady_malloc_calls_per_step', 'trace', 'DOUBLE', 'count', ['train', 'infer'], 'gpu',
     'cudaMalloc/cudaFree-like calls per steady-state step (measured steps after the first)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('launches_per_step', 'trace', 'DOUBLE', 'count', ['train', 'infer'], 'any',
     'runtime launch calls per step (CPU: dispatched leaf ops)',
     FALSE, NULL, NULL, NULL, 13, NULL, FALSE, 11, 7, 'lower'),
    ('kernels_per_step', 'trace', 'DOUBLE', 'count', ['train', 'infer'], 'gpu',
     'device kernels executed per step',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('ops_per_step', 'trace', 'DOUBLE', 'count', ['train', 'infer'], 'any',
     'framework ops recorded per step',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('host_overhead_ms', 'trace', 'DOUBLE', 'ms', ['train', 'infer'], 'any',
     'per step, device idle in compute phases waiting for the host (CPU: compute-phase time outside the '
     || 'ops that execute work)',
     FALSE, NULL, NULL, NULL, 11, NULL, FALSE, NULL, 5, 'lower'),
    ('host_overhead_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'any',
     'host overhead ÷ step time',
     FALSE, NULL, NULL, NULL, 12, '% of step', FALSE, 10, 6, 'lower'),
    ('leaf_busy_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'cpu',
     'self time of the ops that execute work (leaf ops, and ops spending most of their time in themselves) '
     || '÷ step time (CPU profiles)',
     FALSE, NULL, NULL, NULL, 22, '% of step', FALSE, 13, NULL, NULL),
    ('sync_ms', 'trace', 'DOUBLE', 'ms', ['train', 'infer'], 'gpu',
     'per step, host time blocked in synchronizing calls',
     FALSE, NULL, NULL, NULL, 17, NULL, FALSE, NULL, NULL, NULL),
    ('sync_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'sync time ÷ step time',
     FALSE, NULL, NULL, NULL, 18, '% of step', FALSE, NULL, NULL, NULL),
    ('per_launch_host_us', 'trace', 'DOUBLE', 'µs', ['train', 'infer'], 'any',
     'host time per launch: (step host wall − sync) ÷ launches (CPU: framework time ÷ leaf ops)',
     FALSE, NULL, NULL, NULL, 14, NULL, FALSE, NULL, NULL, NULL),
    ('launch_api_us', 'trace', 'DOUBLE', 'µs', ['train', 'infer'], 'gpu',
     'mean duration of a kernel-launch API call',
     FALSE, NULL, NULL, NULL, 15, NULL, FALSE, NULL, NULL, NULL),
    ('steady_launch_us', 'trace', 'DOUBLE', 'µs', ['train', 'infer'], 'gpu',
     'steady-state launch cost: median kernel-launch call in the steps, each kernel''s first (cold) launch '
     || 'left out',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('kernel_gap_us', 'trace', 'DOUBLE', 'µs', ['train', 'infer'], 'gpu',
     'median idle gap between queued consecutive kernels on one stream',
     FALSE, NULL, NULL, NULL, 16, NULL, FALSE, NULL, NULL, NULL),
    ('drain_ms', 'trace', 'DOUBLE', 'ms', ['train', 'infer'], 'any',
     'the end-of-window drain: how long the device ran the last step''s work after the host finished '
     || 'that step (not in a multi-step step_ms when the device kept up with the host), and the closing '
     || 'stretch that recorded nothing but a wait (drain_unrecorded_ms, never in step_ms)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('drain_unrecorded_ms', 'trace', 'DOUBLE', 'ms', ['train', 'infer'], 'any',
     'of drain_ms, the last step''s closing stretch that recorded nothing but a closing synchronize or wait (the '
     || 'profiler stopping; the unrecorded_tail mark): left out of the step, its blame and step_ms',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_step_ms', 'trace', 'DOUBLE', 'ms', ['train', 'infer'], 'any',
     'the blame''s mean step wall time (blame table step_ms): what every blame share is of',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('host_work_ms', 'trace', 'DOUBLE', 'ms', ['train', 'infer'], 'gpu',
     'the host''s recorded work per step that does not wait on the device (syncs, blocking copies, polls '
     || 'left out; every thread, sql/blame.sql blame_host_floor): the host''s side of the critical path',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('host_work_without_launches', 'trace', 'VARCHAR', '', ['train', 'infer'], 'gpu',
     'JSON {kernel category: host_work_ms with that category''s launch calls left out}: what-if''s host '
     || 'floor',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('dataload_ms', 'trace', 'DOUBLE', 'ms', ['train'], 'any',
     'per step, time waiting for the next batch',
     TRUE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('dataload_pct', 'trace', 'DOUBLE', '%', ['train'], 'any',
     'dataload share of the step',
     TRUE, NULL, NULL, NULL, 20, '% of step', TRUE, 12, 8, 'lower'),
    ('to_device_ms', 'trace', 'DOUBLE', 'ms', ['train'], 'any',
     'per step, time copying the batch to the device',
     TRUE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('to_device_pct', 'trace', 'DOUBLE', '%', ['train'], 'any',
     'to_device share of the step',
     TRUE, NULL, NULL, NULL, 21, '% of step', TRUE, NULL, 9, 'lower'),
    ('blame_gemm_conv_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device busy with GEMM/convolution kernels (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_attention_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device busy with attention kernels (fmha, flash …) (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_memory_bound_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device busy with elementwise, layout, norm, reduce and optimizer kernels '
     || '(sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_device_other_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device busy with other kernels (nms/sort, unnamed) (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_communication_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device busy with collectives (nccl/rccl) no compute overlapped '
     || '(sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_memcpy_memset_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device busy with copies or memsets no kernel overlapped (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_sync_bubble_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device idle while the host blocked in a sync or a copy with pageable memory '
     || 'on either side (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_startup_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device idle while the host created streams, events, contexts or library '
     || 'handles (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_module_loading_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device idle while the host loaded modules (lazy loading in a kernel''s '
     || 'first launch) (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_allocator_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device idle while the host was in cudaMalloc/cudaFree (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_launching_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device idle while the host launched work (launch calls, dispatch of ops '
     || 'that launch) (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_preprocess_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device idle in a ## preprocess ## range or, inference, in host work before '
     || 'the call''s first launch (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_cpu_work_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'gpu',
     'share of step wall time: device idle while the host ran ops or runtime calls that launch nothing '
     || '(sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_cpu_gemm_conv_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'cpu',
     'share of step wall time: CPU executing GEMM/convolution ops (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_cpu_other_ops_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'cpu',
     'share of step wall time: CPU executing other ops (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_cpu_communication_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'cpu',
     'share of step wall time: CPU executing collective ops (gloo, c10d …), often on another thread '
     || '(sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_framework_overhead_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'cpu',
     'share of step wall time: CPU inside ops that do not execute work themselves (framework and dispatch) '
     || '(sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_dataload_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'any',
     'share of step wall time: device idle (CPU: any time) inside a dataload range, waiting for data '
     || '(sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_python_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'any',
     'share of step wall time: device idle (CPU: no op), host in a recorded Python frame or host range '
     || 'between ops: the model''s Python (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_unexplained_idle_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'any',
     'share of step wall time: nothing at all recorded on any host thread or the device (sql/blame.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('profiled_step_ms', 'measurement', 'DOUBLE', 'ms', ['train', 'infer'], 'any',
     'the profiled calls'' mean host time (infer; the first also pays the profiler''s start-up) or the '
     || 'profiled window''s wall ÷ steps (train): the profiled side of profiler_overhead_pct',
     FALSE, NULL, NULL, NULL, 23, NULL, FALSE, NULL, NULL, NULL),
    -- (profiled − unprofiled) ÷ unprofiled: a profiled run faster than the plain one is negative, and it cannot
    -- take less than no time (−100 %)
    ('profiler_overhead_pct', 'measurement', 'DOUBLE', '%', ['train', 'infer'], 'any',
     '(profiled_step_ms − step_ms) ÷ step_ms: how much slower the same work ran under the profiler',
     FALSE, NULL, -100.0, 1000000.0, 24, '% slower than unprofiled', FALSE, 14, NULL, NULL),
    -- a coefficient of variation has no upper bound of 100 %
    ('timing_cv_pct', 'measurement', 'DOUBLE', '%', ['train', 'infer'], 'any',
     'coefficient of variation of the unprofiled calls'' (steps'') times',
     TRUE, NULL, 0.0, 1000000.0, 25, '% of the mean', FALSE, NULL, NULL, NULL),
    ('other_cpu_pct', 'measurement', 'DOUBLE', '%', ['train', 'infer'], 'any',
     'CPU time other processes used while it measured, as a share of all the machine''s CPUs',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('steps', 'trace', 'DOUBLE', 'count', ['train', 'infer'], 'any',
     'measured steps (train) or calls (infer) in the window',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('window_ms', 'trace', 'DOUBLE', 'ms', ['train', 'infer'], 'any',
     'measured window wall time',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('images_per_step', 'trace', 'DOUBLE', 'count', ['train', 'infer'], 'any',
     'images one step or call consumed',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('gemm_conv_peak_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'any',
     'FLOP-weighted mean of achieved ÷ peak TFLOP/s over GEMM and convolution op calls (sql/roofline.sql; '
     || 'CPU: the measured peak)',
     FALSE, NULL, NULL, NULL, 26, '% of peak, FLOP-weighted', FALSE, NULL, NULL, NULL),
    ('sol_step_ms', 'trace', 'DOUBLE', 'ms', ['train', 'infer'], 'any',
     'speed-of-light step time: Σ roofline times (max(FLOPs ÷ peak, bytes ÷ bandwidth)) of the costed op '
     || 'calls per step; ops without a cost model add nothing',
     FALSE, NULL, NULL, NULL, 27, NULL, FALSE, NULL, NULL, NULL),
    ('sol_step_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'any',
     'sol_step_ms ÷ the profiled window''s step time',
     FALSE, NULL, NULL, NULL, 28, '% of profiled step', FALSE, NULL, NULL, NULL),
    ('roofline_coverage_pct', 'trace', 'DOUBLE', '%', ['train', 'infer'], 'any',
     'share of the op calls'' device time that has a roofline (a cost model and a roof)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('bound', 'document', 'VARCHAR', '', ['train', 'infer'], 'any',
     'the bottleneck verdict',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('bound_reason', 'document', 'VARCHAR', '', ['train', 'infer'], 'any',
     'why, with the numbers',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('thrashing', 'document', 'BOOLEAN', '', ['train', 'infer'], 'any',
     'true when the window ran under device-memory pressure',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    -- sql/metrics.sql's internal columns: inputs to the verdict, the thrashing flag, the window and the marks
    ('kind', 'internal', 'VARCHAR', '', NULL, NULL,
     'train | infer: what the trace''s steps are',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('window_source', 'internal', 'VARCHAR', '', NULL, NULL,
     'how the measured window was found',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('images_per_step_source', 'internal', 'VARCHAR', '', NULL, NULL,
     'where images_per_step came from',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('busiest_device', 'internal', 'BIGINT', '', NULL, NULL,
     'the busiest device''s id: the headline''s device',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('step_host_ms', 'internal', 'DOUBLE', 'ms', NULL, NULL,
     'mean host wall of one step on the launching thread',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('peak_reserved_mb', 'internal', 'DOUBLE', 'MiB', NULL, NULL,
     'peak reserved device memory (the thrashing signal)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('peak_host_mem_mb', 'internal', 'DOUBLE', 'MiB', NULL, NULL,
     'peak allocated host memory (peak_mem_mb on a CPU)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('device_malloc_calls', 'internal', 'BIGINT', 'count', NULL, NULL,
     'allocator calls inside the measured steps (a thrashing signal)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('steady_malloc_steps', 'internal', 'BIGINT', 'count', NULL, NULL,
     'steady-state steps that called the allocator at least once',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('negative_duration_events', 'internal', 'BIGINT', 'count', NULL, NULL,
     'events whose negative duration was clamped to 0',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('on_gpu', 'internal', 'BOOLEAN', '', NULL, NULL,
     'the trace holds device work (a GPU profile)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('roofline_null_reason', 'internal', 'VARCHAR', '', NULL, NULL,
     'why the roofline figures are null',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('empty_steps', 'internal', 'BIGINT', 'count', NULL, NULL,
     'ProfilerStep ranges dropped because nothing ran inside them',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('blame_holders', 'internal', 'VARCHAR', '', NULL, NULL,
     'JSON: where each cause''s time was spent (the verdict''s reason)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('advice', 'internal', 'VARCHAR', '', NULL, NULL,
     'JSON list of the advice rules the evidence fired (sql/advice.sql)',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL),
    ('empty_steps_ms', 'internal', 'DOUBLE', 'ms', NULL, NULL,
     'wall time of the dropped empty steps',
     FALSE, NULL, NULL, NULL, NULL, NULL, FALSE, NULL, NULL, NULL);

-- metric_units: the range a value in each unit can take (`compare --fail-on` bounds thresholds with it, and
-- sql/compare.sql refuses trial values outside it). Times, rates, sizes and counts cannot be negative; the
-- ceilings are far past any measurement (a day per step, a petabyte, a share a hundred times its whole), so
-- only garbage (1e308, a corrupted field) lies above them. A unit not listed ranges over every number.
CREATE OR REPLACE TEMP TABLE metric_units (
    -- the unit, as metric_catalog names it
    unit    VARCHAR,
    -- the lowest possible and the highest plausible value, in the unit
    lowest  DOUBLE,
    highest DOUBLE
);
INSERT INTO metric_units VALUES
    ('ms', 0.0, 86400000.0),
    ('µs', 0.0, 86400000000.0),
    ('img/s', 0.0, 1e9),
    ('%', 0.0, 1e4),
    ('MiB', 0.0, 1e9),
    ('count', 0.0, 1e12);
