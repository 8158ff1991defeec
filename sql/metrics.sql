-- metrics.sql — the one definition of every scalar metric of a profile (SPEC §4).
-- requires: intervals.sql, ingest.sql, runtime_calls.sql, kernel_shares.sql, blame.sql, advice.sql, roofline.sql, memory.sql
-- inputs: metric_inputs, phase_vocabulary (store/ingest/timeline.py creates them)
--
-- Answers: for the measured window of one trace, how long a step takes, how busy the device was,
-- what the host spent launching and waiting, and the shares the verdict reads.
-- Binds: nothing; reads the tables built by ingest.sql, kernel_shares (sql/kernel_shares.sql, run
-- first), launch_roles, phase_vocabulary, plus metric_inputs, which the caller creates with one row:
-- images_per_step BIGINT (NULL: infer it from the trace).
-- "Busiest device" = the device with the most kernel busy time; its figures are the headline.
-- Output: one row; each column is a metric named as `libreyolo profile get` names it, or one of the
-- internal columns (inputs to other figures): each is one row of sql/metric_catalog.sql.
-- Creates device_figures too: the per-device figures the profile's `devices` list shows (sql/devices.sql).

-- busy_pct: a device's busy time as a share of the window, % (gpu_util_pct, per device and headline).
CREATE OR REPLACE TEMP MACRO busy_pct(busy_ns, window_ns) AS 100.0 * busy_ns / window_ns;

-- blame_pct: one cause's share of the measured steps' wall time, % (sql/blame.sql, run first, defines the
-- causes; a cause with no row holds 0 ms). `blamed` is a row of metric_values' `blamed`: every cause's
-- blamed ns, summed once, and the steps' wall ns (one relation, not two subqueries per cause: the join
-- order of forty subqueries cost more than the rest of the statement).
CREATE OR REPLACE TEMP MACRO blame_pct(blamed, blamed_cause) AS
    100.0 * coalesce(blamed.ns_by_cause[blamed_cause], 0) / blamed.window_ns;

-- busy_islands: per device, the union of kernel intervals inside the window (memcpy/memset are not
-- kernels here), as disjoint islands (sql/intervals.sql interval_islands). Kernels queued before the
-- capture count here, in no step.
CREATE OR REPLACE TEMP TABLE busy_islands AS
WITH w AS (SELECT start_ns, end_ns FROM measurement_window),
k AS (
    SELECT a.device AS grp, greatest(a.ts, w.start_ns) AS s, least(a.ts + a.dur, w.end_ns) AS e, a.launch_ts
    FROM placed_activity a, w
    WHERE a.kind = 'kernel' AND a.ts < w.end_ns AND a.ts + a.dur > w.start_ns
)
SELECT grp AS device, island, min(s) AS s, max(e) AS e, arg_min(launch_ts, s) AS first_launch_ts
FROM interval_islands(k) GROUP BY grp, island;

-- compute_segments: host time inside the phases that issue the model's device work.
CREATE OR REPLACE TEMP TABLE compute_segments AS
SELECT seg_start, seg_end FROM segments WHERE phase IN (SELECT phase FROM phase_vocabulary WHERE compute);

-- host_idle: per device, idle gaps before each busy island whose first kernel the host launched
-- only after the device had gone idle (the device was waiting for the host), and the idle tail
-- after the device's last island up to the window's end (the host issued nothing more), clipped
-- to the compute phases.
CREATE OR REPLACE TEMP TABLE host_idle AS
WITH gaps AS (
    SELECT device,
           coalesce(lag(e) OVER (PARTITION BY device ORDER BY s), (SELECT start_ns FROM measurement_window)) AS gap_start,
           s AS gap_end, first_launch_ts
    FROM busy_islands
),
tail AS (
    SELECT device, max(e) AS gap_start, (SELECT end_ns FROM measurement_window) AS gap_end
    FROM busy_islands GROUP BY device
),
host_caused AS (
    SELECT device, gap_start, gap_end FROM gaps
    WHERE first_launch_ts IS NOT NULL AND first_launch_ts > gap_start AND gap_end > gap_start
    UNION ALL
    SELECT device, gap_start, gap_end FROM tail WHERE gap_end > gap_start
)
SELECT h.device, sum(interval_overlap_length(h.gap_start, h.gap_end, c.seg_start, c.seg_end)) AS idle_ns
FROM host_caused h JOIN compute_segments c ON intervals_overlap(h.gap_start, h.gap_end, c.seg_start, c.seg_end)
GROUP BY h.device;

-- kernel_gaps: per stream, the idle gap between consecutive kernels when the next one was
-- already queued (launched before the previous one ended): the device's fixed per-kernel cost.
CREATE OR REPLACE TEMP TABLE kernel_gaps AS
WITH ordered AS (
    SELECT device, ts, launch_ts,
           lag(ts + dur) OVER (PARTITION BY device, stream ORDER BY ts, event_id) AS prev_end
    FROM placed_activity WHERE kind = 'kernel' AND step IS NOT NULL
)
SELECT device, ts - prev_end AS gap_ns FROM ordered
WHERE prev_end IS NOT NULL AND launch_ts < prev_end AND ts >= prev_end;

-- device_figures: per device, the figures the headline takes from the busiest one; each share of
-- kernel time comes from kernel_shares (sql/kernel_shares.sql).
CREATE OR REPLACE TEMP TABLE device_figures AS
WITH w AS (SELECT start_ns, end_ns FROM measurement_window),
work AS (
    SELECT a.device,
           sum(CASE WHEN a.kind = 'kernel' THEN least(a.ts + a.dur, w.end_ns) - greatest(a.ts, w.start_ns) END) AS kernel_ns,
           sum(CASE WHEN a.kind = 'memcpy' THEN least(a.ts + a.dur, w.end_ns) - greatest(a.ts, w.start_ns) END) AS memcpy_ns,
           count(*) FILTER (WHERE a.kind = 'kernel') AS kernels
    FROM placed_activity a, w
    WHERE a.ts < w.end_ns AND a.ts + a.dur > w.start_ns
    GROUP BY a.device
),
summary AS (
    SELECT work.*,
           (SELECT sum(e - s) FROM busy_islands b WHERE b.device = work.device) AS busy_ns,
           coalesce((SELECT idle_ns FROM host_idle h WHERE h.device = work.device), 0) AS host_idle_ns,
           (SELECT median(gap_ns) FROM kernel_gaps g WHERE g.device = work.device) AS kernel_gap_ns
    FROM work
    WHERE work.kernels > 0
)
SELECT summary.*,
       -- |union of kernel intervals| ÷ window wall, %
       busy_pct(summary.busy_ns, (SELECT end_ns - start_ns FROM measurement_window)) AS gpu_util_pct,
       ks.tensorcore_pct, ks.gemm_pct, ks.memory_bound_pct, ks.communication_pct
FROM summary LEFT JOIN kernel_shares ks USING (device);

-- cpu_execution: on a CPU profile, per compute-phase segment, the self time of the ops that execute
-- work (see op_tree.executes); what is left of the segment is framework and Python time.
CREATE OR REPLACE TEMP TABLE cpu_execution AS
SELECT o.phase IN (SELECT phase FROM phase_vocabulary WHERE compute) AS in_compute, sum(o.self_ns) AS self_ns
FROM placed_ops o WHERE o.executes AND o.step IS NOT NULL
GROUP BY ALL;

-- step_stats: one row per measured step (the steps table).
CREATE OR REPLACE TEMP TABLE step_stats AS
SELECT s.step, s.start_ns, s.host_end_ns,
       greatest(s.host_end_ns, coalesce((SELECT max(a.ts + a.dur) FROM placed_activity a WHERE a.step = s.step), s.host_end_ns)) AS device_end_ns,
       s.host_end_ns - s.start_ns AS host_ns,
       (SELECT count(*) FROM placed_runtime r WHERE r.step = s.step AND r.role IN (SELECT role FROM launch_roles)) AS runtime_launches,
       (SELECT count(*) FROM placed_ops o WHERE o.step = s.step AND o.is_leaf) AS leaf_ops,
       (SELECT count(*) FROM placed_ops o WHERE o.step = s.step) AS ops,
       (SELECT count(*) FROM placed_activity a WHERE a.step = s.step AND a.kind = 'kernel') AS kernels,
       (SELECT coalesce(sum(a.dur), 0) FROM placed_activity a WHERE a.step = s.step AND a.kind = 'kernel') AS kernel_ns,
       (SELECT coalesce(sum(r.dur), 0) FROM placed_runtime r WHERE r.step = s.step AND r.role = 'sync') AS sync_ns
FROM step_ranges s;

-- images_per_step: what the caller measured, else the batch dimension of the first convolution
-- (or linear layer) of the first step, read from the op's recorded input shapes.
CREATE OR REPLACE TEMP TABLE images_per_step AS
SELECT coalesce((SELECT images_per_step FROM metric_inputs), inferred) AS images,
       CASE WHEN (SELECT images_per_step FROM metric_inputs) IS NOT NULL THEN 'measured'
            WHEN inferred IS NOT NULL THEN 'inferred from the input shape of the first ' || inferred_from
       END AS source
FROM (
    SELECT TRY_CAST(regexp_extract(arg_min(input_dims, (CASE WHEN name IN ('aten::conv2d', 'aten::convolution') THEN 0 ELSE 1 END, ts)), '^\[\[(\d+)', 1) AS BIGINT) AS inferred,
           arg_min(name, (CASE WHEN name IN ('aten::conv2d', 'aten::convolution') THEN 0 ELSE 1 END, ts)) AS inferred_from
    FROM placed_ops WHERE step = (SELECT min(step) FROM step_ranges) AND input_dims IS NOT NULL
) AS first_layer;

CREATE OR REPLACE TEMP TABLE phase_walls AS
SELECT phase, sum(seg_end - seg_start) AS wall_ns FROM segments GROUP BY phase;

CREATE OR REPLACE TEMP TABLE metric_values AS
WITH w AS (SELECT start_ns, end_ns, end_ns - start_ns AS window_ns, steps, window_source,
                  host_end_ns - start_ns AS host_span_ns, drain_ns, tail_ns, device_bound FROM measurement_window),
k AS (SELECT kind FROM profile_kind),
busiest AS (SELECT * FROM device_figures ORDER BY busy_ns DESC NULLS LAST, device LIMIT 1),
steps AS (
    SELECT avg(host_ns) AS host_ns, avg(sync_ns) AS sync_ns, avg(runtime_launches) AS runtime_launches,
           avg(leaf_ops) AS leaf_ops, avg(ops) AS ops, avg(kernels) AS kernels,
           quantile_cont(host_ns, 0.50) AS p50, quantile_cont(host_ns, 0.90) AS p90, quantile_cont(host_ns, 0.99) AS p99
    FROM step_stats
),
has_device AS (SELECT EXISTS (SELECT 1 FROM placed_activity WHERE kind IN ('kernel', 'memcpy', 'memset')) AS yes),
leaf AS (SELECT coalesce((SELECT self_ns FROM cpu_execution WHERE in_compute), 0) AS in_compute_ns),
-- wall time of each stage over the window, ns (one row; a stage with no time holds 0)
stage AS (
    SELECT coalesce(sum(wall_ns) FILTER (WHERE phase = 'preprocess'), 0) AS preprocess_ns,
           coalesce(sum(wall_ns) FILTER (WHERE phase = 'forward'), 0) AS forward_ns,
           coalesce(sum(wall_ns) FILTER (WHERE phase = 'postprocess'), 0) AS postprocess_ns,
           coalesce(sum(wall_ns) FILTER (WHERE phase = 'dataload'), 0) AS dataload_ns,
           coalesce(sum(wall_ns) FILTER (WHERE phase = 'to_device'), 0) AS to_device_ns
    FROM phase_walls
),
-- the allocator's peaks (sql/memory.sql memory_devices), MiB: the accelerators' largest, then the host's;
-- and what those peaks are (absolute | profiled | relative), read below as memory_level
memory_peaks AS (
    SELECT max(peak_bytes) FILTER (WHERE device_type <> 'cpu') / 1048576.0 AS vram_mb,
           max(peak_reserved_bytes) FILTER (WHERE device_type <> 'cpu') / 1048576.0 AS reserved_mb,
           max(peak_bytes) FILTER (WHERE device_type = 'cpu') / 1048576.0 AS host_mb,
           CASE WHEN bool_or(levels = 'relative') FILTER (WHERE device_type <> 'cpu') THEN 'relative'
                ELSE any_value(levels) FILTER (WHERE device_type <> 'cpu') END AS device_levels,
           any_value(levels) FILTER (WHERE device_type = 'cpu') AS host_levels
    FROM memory_devices
),
-- each cause's blamed ns (sql/blame.sql blame_rows) and the measured steps' wall ns, ns: for blame_pct
blamed AS (
    SELECT coalesce(map_from_entries(list((cause, ns))), MAP {}) AS ns_by_cause,
           (SELECT nullif(sum(end_ns - start_ns), 0) FROM blame_windows) AS window_ns
    FROM (SELECT cause, sum(ns) AS ns FROM blame_rows GROUP BY cause)
),
base AS (
    SELECT k.kind, w.steps, w.window_source, w.window_ns, w.window_ns / 1e6 AS window_ms,
           -- train: a stopwatch around the measured steps in steady state. Host-bound (the device kept up):
           -- first start → the host's end of the last step, ÷ steps, the device's drain after it beside
           -- (drain_ms). Device-bound, or one step: the whole window (host start → device done) ÷ steps, as
           -- the device's lag is the steps' own time, and after one step nothing follows to hide it.
           CASE WHEN k.kind = 'infer' THEN steps.host_ns / 1e6
                WHEN w.steps > 1 AND NOT w.device_bound THEN w.host_span_ns / 1e6 / w.steps
                ELSE w.window_ns / 1e6 / w.steps END AS step_ms,
           w.drain_ns, w.tail_ns,
           (SELECT images FROM images_per_step) AS images_per_step,
           has_device.yes AS has_device
    FROM w, k, steps, has_device
)
SELECT
    -- kind of profile: train | infer
    base.kind,
    -- measured steps (train) or calls (infer) in the window
    base.steps,
    -- how the window was found
    base.window_source,
    -- window wall time, ms: first step start → host and device done with the last step
    base.window_ms,
    -- train: window ÷ steps; infer: mean per-call latency; ms
    base.step_ms,
    -- images per step, and where that number came from
    base.images_per_step,
    (SELECT source FROM images_per_step) AS images_per_step_source,
    -- the device's end-of-window drain: how long it went on running the last step's work after the
    -- host finished that step, ms (train: not in step_ms when there is more than one step and the device kept up)
    base.drain_ns / 1e6 AS drain_ms,
    -- of drain_ms, the last step's closing stretch that recorded nothing but a wait (sql/ingest.sql step_tail), ms
    base.tail_ns / 1e6 AS drain_unrecorded_ms,
    -- the blame's mean step wall time (sql/blame.sql blame_windows), ms: what the blame's shares are of
    (SELECT avg(end_ns - start_ns) / 1e6 FROM blame_windows) AS blame_step_ms,
    -- ProfilerStep ranges dropped because nothing ran inside them (sql/ingest.sql dropped_steps)
    (SELECT steps FROM dropped_steps) AS empty_steps,
    (SELECT ms FROM dropped_steps) AS empty_steps_ms,
    -- images per step ÷ step seconds, img/s
    base.images_per_step / (base.step_ms / 1000) AS throughput_img_s,
    -- 1000 ÷ throughput, ms
    base.step_ms / base.images_per_step AS ms_per_img,
    -- percentiles of per-call latency over every measured call (linear interpolation), ms
    CASE WHEN base.kind = 'infer' THEN steps.p50 / 1e6 END AS latency_p50_ms,
    CASE WHEN base.kind = 'infer' THEN steps.p90 / 1e6 END AS latency_p90_ms,
    CASE WHEN base.kind = 'infer' THEN steps.p99 / 1e6 END AS latency_p99_ms,
    -- per-call stage means, ms, and their shares of the mean latency, % (they add up to 100)
    CASE WHEN base.kind = 'infer' THEN stage.preprocess_ns / 1e6 / base.steps END AS preprocess_ms,
    CASE WHEN base.kind = 'infer' THEN stage.forward_ns / 1e6 / base.steps END AS forward_ms,
    CASE WHEN base.kind = 'infer' THEN stage.postprocess_ns / 1e6 / base.steps END AS postprocess_ms,
    -- per-step phase means of a training step, ms
    CASE WHEN base.kind = 'train' THEN stage.dataload_ns / 1e6 / base.steps END AS dataload_ms,
    CASE WHEN base.kind = 'train' THEN stage.to_device_ns / 1e6 / base.steps END AS to_device_ms,
    -- |union of kernel intervals| ÷ window wall, % (busiest device)
    CASE WHEN base.has_device THEN busy_pct(coalesce(busiest.busy_ns, 0), base.window_ns) END AS gpu_util_pct,
    -- device busy time per step, ms (busiest device)
    CASE WHEN base.has_device THEN coalesce(busiest.busy_ns, 0) / 1e6 / base.steps END AS gpu_busy_ms,
    -- Tensor Core kernel time ÷ all kernel time (communication included), % — a kernel-name heuristic
    CASE WHEN base.has_device THEN busiest.tensorcore_pct END AS tensorcore_pct,
    -- shares of kernel time: GEMM/conv, memory-bound, collectives (sql/kernel_categories.sql
    -- kernel_category_shares), %
    CASE WHEN base.has_device THEN busiest.gemm_pct END AS gemm_pct,
    CASE WHEN base.has_device THEN busiest.memory_bound_pct END AS memory_bound_pct,
    CASE WHEN base.has_device THEN busiest.communication_pct END AS communication_pct,
    -- device copy time per step, ms (not counted as kernel time)
    CASE WHEN base.has_device THEN coalesce(busiest.memcpy_ns, 0) / 1e6 / base.steps END AS memcpy_ms,
    -- peak allocated memory in the window, from the allocator's events (sql/memory.sql: the memory
    -- table's device rows; on a relative device, the rise above the window's start), MiB; the
    -- largest over the accelerators, then the host allocator's
    memory_peaks.vram_mb AS peak_vram_mb,
    memory_peaks.reserved_mb AS peak_reserved_mb,
    memory_peaks.host_mb AS peak_host_mem_mb,
    -- absolute | profiled | relative: whether those peaks are allocator totals, the host's totals of
    -- what was allocated while the profiler recorded, or rises above the window's start (a trace of
    -- Bytes only); the accelerators' where there are any (relative if any of them is), else the host's
    coalesce(memory_peaks.device_levels, memory_peaks.host_levels) AS memory_level,
    -- the process's cudaMalloc/cudaFree-like calls per steady-state step (every measured step after
    -- the first; NULL with one step), count
    (SELECT (sum(mallocs) + sum(frees)) / count(*) FROM memory_step_calls WHERE step > 1) AS steady_malloc_calls_per_step,
    -- the steady-state steps that called the allocator at least once, count (repeated: ≥ 2)
    (SELECT count(*) FILTER (WHERE mallocs + frees > 0) FROM memory_step_calls WHERE step > 1) AS steady_malloc_steps,
    -- launches per step: runtime launch calls (kernel, graph, async memcpy/memset); on CPU, dispatched leaf ops
    CASE WHEN base.has_device THEN steps.runtime_launches ELSE steps.leaf_ops END AS launches_per_step,
    -- kernels executed per step and framework ops recorded per step
    CASE WHEN base.has_device THEN steps.kernels END AS kernels_per_step,
    steps.ops AS ops_per_step,
    -- per step, device idle inside compute phases waiting for the host to issue work (GPU), or
    -- compute-phase time not covered by leaf-op execution (CPU: framework and Python time); ms
    CASE WHEN base.has_device THEN coalesce(busiest.host_idle_ns, 0) / 1e6 / base.steps
         ELSE greatest((SELECT coalesce(sum(seg_end - seg_start), 0) FROM compute_segments) - leaf.in_compute_ns, 0) / 1e6 / base.steps
    END AS host_overhead_ms,
    -- self time of the ops that execute work ÷ step wall time (CPU profiles), % (capped at 100)
    CASE WHEN NOT base.has_device THEN least(100.0, 100.0 * (SELECT coalesce(sum(self_ns), 0) FROM cpu_execution) / (base.step_ms * 1e6 * base.steps)) END AS leaf_busy_pct,
    -- per step, host time blocked in synchronizing runtime calls, ms
    CASE WHEN base.has_device THEN steps.sync_ns / 1e6 END AS sync_ms,
    -- mean duration of a kernel-launch API call, µs
    CASE WHEN base.has_device THEN (SELECT avg(dur) / 1e3 FROM placed_runtime WHERE role = 'kernel_launch' AND step IS NOT NULL) END AS launch_api_us,
    -- steady-state launch cost: the median kernel-launch call inside the steps, each kernel name's first
    -- launch (lazy module loading, a cold start) left out, µs
    CASE WHEN base.has_device THEN (
        SELECT median(r.dur) / 1e3 FROM placed_runtime r
        WHERE r.role = 'kernel_launch' AND r.step IS NOT NULL
          AND r.correlation NOT IN (SELECT arg_min(correlation, launch_ts) FROM placed_activity
                                    WHERE kind = 'kernel' AND launch_ts IS NOT NULL AND correlation IS NOT NULL GROUP BY name))
    END AS steady_launch_us,
    -- median queued kernel-to-kernel gap on one stream, µs (busiest device)
    CASE WHEN base.has_device THEN busiest.kernel_gap_ns / 1e3 END AS kernel_gap_us,
    -- allocator calls inside measured steps (one thrashing signal)
    (SELECT count(*) FROM placed_runtime WHERE role IN ('malloc', 'free') AND step IS NOT NULL) AS device_malloc_calls,
    -- mean host wall of one step on the launching thread, ms
    steps.host_ns / 1e6 AS step_host_ms,
    -- per-step blame (sql/blame.sql): each cause's share of the measured steps' wall time, %; GPU causes
    CASE WHEN base.has_device THEN blame_pct(blamed, 'gemm_conv') END AS blame_gemm_conv_pct,
    CASE WHEN base.has_device THEN blame_pct(blamed, 'attention') END AS blame_attention_pct,
    CASE WHEN base.has_device THEN blame_pct(blamed, 'memory_bound') END AS blame_memory_bound_pct,
    CASE WHEN base.has_device THEN blame_pct(blamed, 'device_other') END AS blame_device_other_pct,
    CASE WHEN base.has_device THEN blame_pct(blamed, 'communication') END AS blame_communication_pct,
    CASE WHEN base.has_device THEN blame_pct(blamed, 'memcpy_memset') END AS blame_memcpy_memset_pct,
    CASE WHEN base.has_device THEN blame_pct(blamed, 'sync_bubble') END AS blame_sync_bubble_pct,
    CASE WHEN base.has_device THEN blame_pct(blamed, 'startup') END AS blame_startup_pct,
    CASE WHEN base.has_device THEN blame_pct(blamed, 'module_loading') END AS blame_module_loading_pct,
    CASE WHEN base.has_device THEN blame_pct(blamed, 'allocator') END AS blame_allocator_pct,
    CASE WHEN base.has_device THEN blame_pct(blamed, 'launching') END AS blame_launching_pct,
    CASE WHEN base.has_device THEN blame_pct(blamed, 'preprocess') END AS blame_preprocess_pct,
    CASE WHEN base.has_device THEN blame_pct(blamed, 'cpu_work') END AS blame_cpu_work_pct,
    -- CPU-profile causes
    CASE WHEN NOT base.has_device THEN blame_pct(blamed, 'cpu_gemm_conv') END AS blame_cpu_gemm_conv_pct,
    CASE WHEN NOT base.has_device THEN blame_pct(blamed, 'cpu_other_ops') END AS blame_cpu_other_ops_pct,
    CASE WHEN NOT base.has_device THEN blame_pct(blamed, 'cpu_communication') END AS blame_cpu_communication_pct,
    CASE WHEN NOT base.has_device THEN blame_pct(blamed, 'framework_overhead') END AS blame_framework_overhead_pct,
    -- causes of both kinds of profile
    blame_pct(blamed, 'dataload') AS blame_dataload_pct,
    blame_pct(blamed, 'python') AS blame_python_pct,
    blame_pct(blamed, 'unexplained_idle') AS blame_unexplained_idle_pct,
    -- roofline (sql/roofline.sql): FLOP-weighted achieved ÷ peak TFLOP/s of GEMM and convolution calls, %
    roofline.gemm_conv_peak_pct,
    -- the step's speed of light: Σ roofline times of the costed op calls per step, ms
    roofline.sol_step_ms,
    -- the costed calls' share of the device time of all op calls, %
    roofline.roofline_coverage_pct,
    roofline.roofline_null_reason,
    -- per host cause, what held most of its time (sql/blame.sql blame_holders), as JSON
    -- {cause: {"name": …, "ms_per_step": …, "of_cause_pct": …}}: the frame, op or call a reason names
    (SELECT to_json(map_from_entries(list((cause, {'name': name, 'ms_per_step': ns / 1e6 / base.steps,
                                                   'of_cause_pct': share}) ORDER BY cause)))
     FROM (SELECT cause, name, ns, 100.0 * ns / sum(ns) OVER (PARTITION BY cause) AS share FROM blame_holders
           QUALIFY row_number() OVER (PARTITION BY cause ORDER BY ns DESC, name) = 1)) AS blame_holders,
    -- the host's recorded work per step that does not wait on the device (sql/blame.sql blame_host_floor), ms:
    -- the host's side of the critical path, what-if's floor; NULL without device work
    CASE WHEN base.has_device THEN (SELECT ms_per_step FROM blame_host_floor WHERE category IS NULL) END AS host_work_ms,
    -- the same with one kernel category's launch calls left out, as JSON {category: ms}
    CASE WHEN base.has_device THEN (SELECT to_json(map_from_entries(list((category, ms_per_step) ORDER BY category)))
                                    FROM blame_host_floor WHERE category IS NOT NULL) END AS host_work_without_launches,
    -- the advice rules this profile's evidence fired (sql/advice.sql advice_findings), as a JSON list
    (SELECT to_json(list({'rule': rule, 'bounds': bounds, 'evidence': evidence, 'advice': advice,
                          'saving_ms': saving_ms, 'saving_pct': saving_pct, 'saving_basis': saving_basis}
                         ORDER BY saving_ms DESC NULLS LAST, rule))
     FROM advice_findings) AS advice,
    -- the busiest device's id
    busiest.device AS busiest_device,
    -- events dropped or repaired: negative durations clamped to 0
    (SELECT negative_duration_events FROM ingest_stats) AS negative_duration_events
FROM base, steps, leaf, blamed, stage, memory_peaks
LEFT JOIN busiest ON true
LEFT JOIN roofline_summary AS roofline ON true;

-- metric_rates: the measured values above plus the shares and rates derived from them.
CREATE OR REPLACE TEMP TABLE metric_rates AS
SELECT
    *,
    -- stage shares of the mean latency (infer), %
    100.0 * preprocess_ms / step_ms AS preprocess_pct,
    100.0 * forward_ms / step_ms AS forward_pct,
    100.0 * postprocess_ms / step_ms AS postprocess_pct,
    -- shares of the step spent waiting for data and copying it to the device (train), %
    100.0 * dataload_ms / step_ms AS dataload_pct,
    100.0 * to_device_ms / step_ms AS to_device_pct,
    -- host overhead and synchronization as shares of the step, %
    100.0 * host_overhead_ms / step_ms AS host_overhead_pct,
    100.0 * sync_ms / step_ms AS sync_pct,
    -- host time per launch, µs: GPU (step wall on the launching thread − sync) ÷ launches;
    -- CPU: the framework time outside leaf ops ÷ dispatched leaf ops (the per-op dispatch cost)
    CASE WHEN gpu_util_pct IS NOT NULL THEN (step_host_ms - sync_ms) * 1000 / nullif(launches_per_step, 0)
         ELSE host_overhead_ms * 1000 / nullif(launches_per_step, 0) END AS per_launch_host_us,
    -- speed-of-light step time ÷ the profiled window's step time, %
    100.0 * sol_step_ms / step_ms AS sol_step_pct
FROM metric_values;

-- The result, with the rules the trace alone decides:
-- on_gpu: the trace holds device work (a GPU profile); a CPU profile's GPU figures are NULL.
-- peak_mem_mb: the profiled device's allocator peak: the device's on a GPU, the host's on a CPU.
-- On a CPU with no dispatched leaf op inside the steps, CPU overhead cannot be told from work:
-- host_overhead_ms/_pct, per_launch_host_us and leaf_busy_pct are NULL.
-- (A measurement may override peak_vram_mb and peak_mem_mb: store/document/assemble.py.)
WITH judged AS (
    SELECT *, coalesce(isfinite(gpu_util_pct), false) AS on_gpu,
           coalesce(isfinite(gpu_util_pct), false) OR coalesce(launches_per_step, 0) <> 0 AS overhead_told_apart
    FROM metric_rates
)
SELECT * EXCLUDE (overhead_told_apart) REPLACE (
        CASE WHEN overhead_told_apart THEN host_overhead_ms END AS host_overhead_ms,
        CASE WHEN overhead_told_apart THEN leaf_busy_pct END AS leaf_busy_pct,
        CASE WHEN overhead_told_apart THEN host_overhead_pct END AS host_overhead_pct,
        CASE WHEN overhead_told_apart THEN per_launch_host_us END AS per_launch_host_us),
    CASE WHEN on_gpu THEN peak_vram_mb ELSE peak_host_mem_mb END AS peak_mem_mb
FROM judged;
