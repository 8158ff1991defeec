-- roofline.sql — how far each op is from the device's limit: per op call its device time, the
-- requires: intervals.sql, ingest.sql, window_executions.sql, roofline_models.sql, roofline_costs.sql, device_peaks.sql
-- inputs: roofline_device_input, roofline_cpu_input (store/ingest/analyse.py registers them)
-- roof of its device and data type, and the time the roof allows.
--
-- Answers nothing by itself: it builds roofline_units, roofline_rows (the `roofline` table,
-- sql/table_roofline.sql) and roofline_summary (the roofline metrics, sql/metrics.sql).
-- Binds: nothing. Reads roofline_costs (sql/roofline_costs.sql), placed_ops, placed_activity,
-- measurement_window, device_models and device_peaks (sql/device_peaks.sql), and two inputs the
-- caller registers (store/ingest/analyse.py):
--   roofline_device_input  device VARCHAR, name VARCHAR, total_mb DOUBLE, num_sms BIGINT
--                          (the trace's deviceProperties)
--   roofline_cpu_input     tflops DOUBLE, tb_per_s DOUBLE, method VARCHAR, null_reason VARCHAR
--                          (the CPU peak run/infer measured; one row, NULLs with the reason otherwise)
-- A unit is an op call that is costed as a whole: the outermost call of a modeled op (its modeled
-- children are part of it), or the outermost call of an op with no model that holds no modeled op.
-- A unit's device time is the union of the device work (kernels, memcpys, memsets) launched
-- inside it on its thread, clipped to the measured window (sql/window_executions.sql); on a CPU profile
-- (no device work at all) it is the call's wall time. On a GPU profile a unit that launched no device
-- work has no row; the work no unit launched is roofline_unlaunched's, so the table's rows together
-- hold every execution in the window.

CREATE OR REPLACE TEMP TABLE roofline_units AS
WITH on_gpu AS (SELECT EXISTS (SELECT 1 FROM placed_activity WHERE kind IN ('kernel', 'memcpy', 'memset')) AS yes),
plain AS (
    SELECT o.* FROM placed_ops o
    WHERE o.step IS NOT NULL AND o.name NOT IN (SELECT op FROM roofline_models)
),
-- The modeled and plain calls of each thread in one order: by start, the longer first, then the shallower.
-- A call contains another when it starts no later and ends no earlier, so containment reads off running
-- extremes of the modeled calls' ends in this order, with no pairwise join (O(n log n), not O(n²)):
-- `modeled_end_before`, the latest end of a modeled call ordered before this one (one of them contains
-- this call when it reaches this call's end, and, for a call of no length, passes its instant: one that
-- ends at it is a sibling); `modeled_end_after`, the earliest end of a modeled call ordered after it, one
-- of no length counted a nanosecond later (one lies inside this call when that end is no later than
-- this call's). Both are running extremes over the rows before: `modeled_end_after` in the reverse order,
-- since a frame that ends UNBOUNDED FOLLOWING took DuckDB 4.5x as long (0.22 s against 0.05 s over the
-- 231,000 calls of one 5-step CPU training trace).
calls AS (
    SELECT event_id, pid, tid, ts, dur, depth, true AS is_modeled FROM roofline_costs
    UNION ALL
    SELECT event_id, pid, tid, ts, dur, depth, false FROM plain
),
call_ends AS (
    SELECT event_id, is_modeled, ts, ts + dur AS e,
           max(CASE WHEN is_modeled THEN ts + dur END) OVER (
               thread_order ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS modeled_end_before,
           min(CASE WHEN is_modeled THEN ts + dur + CASE WHEN dur = 0 THEN 1 ELSE 0 END END) OVER (
               reverse_thread_order ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS modeled_end_after
    FROM calls
    WINDOW thread_order AS (PARTITION BY pid, tid
                            ORDER BY ts NULLS LAST, dur DESC NULLS LAST, depth NULLS LAST, event_id NULLS LAST),
           -- thread_order backwards, NULLs included (event_id is unique: no ties either way)
           reverse_thread_order AS (PARTITION BY pid, tid
                                    ORDER BY ts DESC NULLS FIRST, dur NULLS FIRST, depth DESC NULLS FIRST,
                                             event_id DESC NULLS FIRST)
),
-- inside a modeled call: contained by one
enclosed AS (SELECT event_id, is_modeled FROM call_ends WHERE modeled_end_before >= e AND modeled_end_before > ts),
-- the outermost modeled calls: inside no other modeled call
modeled AS (
    SELECT c.* FROM roofline_costs c
    WHERE c.event_id NOT IN (SELECT event_id FROM enclosed WHERE is_modeled)
),
touching AS (
    -- plain calls that hold a modeled call, or sit inside one
    SELECT event_id FROM call_ends WHERE NOT is_modeled AND modeled_end_after <= e
    UNION
    SELECT event_id FROM enclosed WHERE NOT is_modeled
),
free AS (SELECT * FROM plain WHERE event_id NOT IN (SELECT event_id FROM touching)),
units AS (
    SELECT event_id, op, pid, tid, ts, dur, step, phase, shape_dims, family, dtype, peak_class, flops, bytes,
           no_model_reason
    FROM modeled
    UNION ALL
    SELECT event_id, name, pid, tid, ts, dur, step, phase, NULL, NULL, NULL, NULL, NULL, NULL, 'no cost model for this op'
    FROM free WHERE parent_id IS NULL OR parent_id NOT IN (SELECT event_id FROM free)
),
-- each execution to the unit whose time holds its launch on the launch's thread. Units of one thread are
-- disjoint (each is outermost of its kind), so that is the last unit of length starting at or before the
-- launch, if the launch is before its end: one ASOF lookup per execution, not every unit against every
-- launch of its thread (a 1 GB trace has millions of both).
timed_units AS (SELECT event_id, pid, tid, ts, dur FROM units WHERE dur > 0),
work AS (
    SELECT u.event_id, a.device, a.s, a.e, a.tensorcore
    FROM window_executions a ASOF JOIN timed_units u
      ON a.launch_pid = u.pid AND a.launch_tid = u.tid AND a.launch_ts >= u.ts
    WHERE a.launch_ts < u.ts + u.dur
),
union_input AS (SELECT event_id AS grp, s, e FROM work),
device_time AS (
    SELECT u.event_id, u.device_ns, w.device, w.tensorcore
    FROM (SELECT grp AS event_id, sum(e - s) AS device_ns FROM interval_union(union_input) GROUP BY grp) u
    JOIN (SELECT event_id, any_value(device) AS device, bool_or(tensorcore) AS tensorcore FROM work GROUP BY event_id) w
      USING (event_id)
),
executed AS (SELECT event_id, sum(e - s) AS executed_ns FROM work GROUP BY event_id)
SELECT u.*,
       CASE WHEN on_gpu.yes THEN CAST(t.device AS VARCHAR) ELSE 'cpu' END AS device,
       -- the call's device time (the union of its executions: what its rates are of), ns
       CASE WHEN on_gpu.yes THEN t.device_ns ELSE u.dur END AS device_ns,
       -- its executions' times summed, as the kernels table counts them (more than device_ns only
       -- where its own executions overlapped, on two streams), ns
       CASE WHEN on_gpu.yes THEN x.executed_ns ELSE u.dur END AS executed_ns,
       coalesce(t.tensorcore, false) AS tensorcore
FROM units u LEFT JOIN device_time t USING (event_id) LEFT JOIN executed x USING (event_id), on_gpu
WHERE NOT on_gpu.yes OR t.device_ns > 0;

-- roofline_unlaunched: the device work inside the window that no unit launched, per device, launch phase,
-- holder and why. Most of it is an op's own launches beside its costed sub-calls (a compiled graph's
-- own kernels next to the modeled ops it calls: the op holds a modeled call, so it is no unit, and what
-- it launched itself is costed by nobody); it keeps that op's name. The rest was launched by no op
-- call in a step: queued before the window or launched between steps, or a runtime call outside every op
-- range. Units on one thread are disjoint (each is outermost of its kind), and so are the outermost ops,
-- so each launch has at most one candidate of each: the last one on its thread that began at or before it.
CREATE OR REPLACE TEMP TABLE roofline_unlaunched AS
WITH outermost AS (SELECT event_id, name, pid, tid, ts, dur FROM placed_ops WHERE parent_id IS NULL AND step IS NOT NULL),
owner AS (
    SELECT x.*, u.ts AS unit_ts, u.dur AS unit_dur
    FROM window_executions x ASOF LEFT JOIN roofline_units u
      ON x.launch_pid = u.pid AND x.launch_tid = u.tid AND x.launch_ts >= u.ts
),
orphan AS (
    SELECT o.*, CASE WHEN o.launch_ts < h.ts + h.dur THEN h.name END AS holder,
           CASE WHEN o.launch_ts < h.ts + h.dur THEN h.event_id END AS holder_id
    FROM owner o ASOF LEFT JOIN outermost h ON o.launch_pid = h.pid AND o.launch_tid = h.tid AND o.launch_ts >= h.ts
    WHERE o.unit_ts IS NULL OR o.launch_ts >= o.unit_ts + o.unit_dur
)
SELECT device, launch_phase AS phase, holder AS op,
       launch_step IS NULL AS launched_outside_steps,
       -- the calls of the holding op whose own launches these are (NULL: no op holds them), count
       CASE WHEN holder IS NOT NULL THEN count(DISTINCT holder_id) END AS calls,
       -- the executions' time inside the window, summed, ns
       sum(e - s) AS total_ns,
       CASE WHEN holder IS NOT NULL
            THEN 'no cost model for the device work this op launched itself, beside its costed sub-calls'
            WHEN launch_step IS NULL
            THEN 'device work launched outside the measured steps (queued before the window or launched between steps): no op call in the steps holds its launch'
            ELSE 'device work launched inside a step by no op call (a runtime call outside every op range)' END AS why_null
FROM orphan
GROUP BY device, launch_phase, holder, launch_step IS NULL;

-- roofline_device_peak: per device of the profile, its model and the roof of each peak class;
-- a device the table does not know, or a CPU without a measured peak, has NULL peaks and the reason.
CREATE OR REPLACE TEMP TABLE roofline_device_peak AS
WITH named AS (
    -- the model by sql/device_peaks.sql's one matching rule; a model's figures are the same on each of its rows
    SELECT i.device, i.name, m.model, m.tb_per_s, m.bandwidth_source, m.cache_mib, m.cache_source
    FROM (SELECT *, device_model_of(name, total_mb, num_sms) AS model FROM roofline_device_input) i
    LEFT JOIN (SELECT DISTINCT model, tb_per_s, bandwidth_source, cache_mib, cache_source FROM device_models) m
      ON m.model = i.model
)
SELECT n.device, n.model, p.peak_class, p.tflops, n.tb_per_s,
       CASE WHEN n.model IS NOT NULL THEN p.source || '; ' || n.bandwidth_source END AS source,
       CASE WHEN n.model IS NULL THEN 'device ' || coalesce('"' || n.name || '"', n.device) || ' is not in sql/device_peaks.sql' END AS null_reason,
       -- the device's on-chip last-level cache, MiB, and where that figure comes from (NULL: none known)
       n.cache_mib, n.cache_source
FROM named n LEFT JOIN device_peaks p ON p.model = n.model
UNION ALL
SELECT 'cpu', 'CPU (measured)', 'fp32', tflops, tb_per_s, method, null_reason, NULL, NULL FROM roofline_cpu_input;

-- roofline_unit_roof: each unit with the roof it is held to. FP32 ops whose kernels ran on Tensor
-- Cores (sql/tensorcore_rules.sql) are held to the TF32 roof where the device has one.
CREATE OR REPLACE TEMP TABLE roofline_unit_roof AS
WITH classed AS (
    SELECT u.*, CASE WHEN u.peak_class = 'fp32' AND u.tensorcore
                      AND EXISTS (SELECT 1 FROM roofline_device_peak d WHERE d.device = u.device AND d.peak_class = 'tf32')
                     THEN 'tf32' ELSE u.peak_class END AS roof_class
    FROM roofline_units u
),
roofed AS (
    SELECT c.*, d.model AS device_model,
           (SELECT p.tflops FROM roofline_device_peak p WHERE p.device = c.device AND p.peak_class = c.roof_class) AS peak_tflops,
           (SELECT any_value(p.tb_per_s) FROM roofline_device_peak p WHERE p.device = c.device) AS peak_tb_per_s,
           (SELECT p.source FROM roofline_device_peak p WHERE p.device = c.device AND p.peak_class = c.roof_class) AS peak_source,
           (SELECT any_value(p.null_reason) FROM roofline_device_peak p WHERE p.device = c.device) AS device_null_reason
    FROM classed c
    LEFT JOIN (SELECT DISTINCT device, model FROM roofline_device_peak) d ON d.device = c.device
)
SELECT *,
       flops / nullif(peak_tflops * 1e3, 0) AS compute_ns,          -- TFLOP/s = 1e3 FLOP/ns
       bytes / nullif(peak_tb_per_s * 1e3, 0) AS memory_ns,         -- TB/s = 1e3 B/ns
       -- (greatest() skips NULLs: an op with FLOPs and no compute roof for its type has no roofline;
       -- a roof of 0, which no device has, is no roof)
       CASE WHEN flops = 0 THEN bytes / nullif(peak_tb_per_s * 1e3, 0)
            WHEN peak_tflops > 0
            THEN greatest(flops / (peak_tflops * 1e3), bytes / nullif(peak_tb_per_s * 1e3, 0)) END AS roofline_ns
FROM roofed;

-- roofline_rows: one row per phase, op, recorded shape and dtype (sql/table_roofline.sql), one per phase
-- and op for an op's own launches beside its costed sub-calls (input_dims NULL), and one per launch phase
-- and reason for the work no op call launched (op NULL), so the rows hold all the window's device time:
-- the shares are of that whole.
CREATE OR REPLACE TEMP TABLE roofline_rows AS
WITH all_time AS (
    SELECT (SELECT sum(executed_ns) FROM roofline_unit_roof) + coalesce((SELECT sum(total_ns) FROM roofline_unlaunched), 0) AS ns
),
cached AS (
    -- each unit with its device's on-chip cache, MiB, and where that figure comes from (sql/device_peaks.sql)
    SELECT u.*, c.cache_mib, c.cache_source
    FROM roofline_unit_roof u
    LEFT JOIN (SELECT DISTINCT device, cache_mib, cache_source FROM roofline_device_peak) c ON c.device = u.device
),
op_rows AS (
SELECT phase, op, CAST(NULL AS BOOLEAN) AS launched_outside_steps,
       -- Kineto's compact layout, whatever whitespace the file had ([[4, 197, 768], [768, 768]])
       regexp_replace(regexp_replace(shape_dims, '\s+', '', 'g'), ',', ', ', 'g') AS input_dims, dtype, any_value(family) AS family,
       count(*) AS calls,
       CASE WHEN count(flops) = count(*) THEN avg(flops) END AS flops,
       CASE WHEN count(bytes) = count(*) THEN avg(bytes) END AS bytes,
       avg(device_ns) AS device_ns, sum(executed_ns) AS total_ns,
       100.0 * sum(executed_ns) / nullif((SELECT ns FROM all_time), 0) AS time_share_pct,
       any_value(device_model) AS device_model, any_value(roof_class) AS roof_class,
       any_value(peak_tflops) AS peak_tflops, any_value(peak_tb_per_s) AS peak_tb_per_s,
       any_value(peak_source) AS peak_source,
       CASE WHEN count(roofline_ns) = count(*) THEN avg(roofline_ns) END AS roofline_ns,
       CASE WHEN count(roofline_ns) = count(*) THEN sum(device_ns - roofline_ns) END AS above_roof_ns,
       CASE WHEN count(roofline_ns) = count(*) THEN
           CASE WHEN avg(flops) > 0 AND avg(compute_ns) >= avg(memory_ns) THEN 'compute' ELSE 'memory' END END AS bound,
       coalesce(any_value(no_model_reason),
                CASE WHEN count(roofline_ns) < count(*) THEN coalesce(any_value(device_null_reason),
                    'no ' || coalesce(any_value(roof_class), any_value(dtype), 'compute') || ' roof for this device') END) AS why_null,
       any_value(device) AS device, any_value(cache_mib) AS cache_mib, any_value(cache_source) AS cache_source
FROM cached
GROUP BY phase, op, shape_dims, dtype
),
-- a row faster than its roof allows names the cause, or has no roofline figures: a share of roof over 100%
-- is never shown as a fact. Causes: on a CPU the roof is a measurement this op beat; on a device, bytes
-- beyond what the bandwidth moves in the row's time that its on-chip cache can hold (left there by the ops
-- before it)
above AS (
    SELECT *,
        CASE WHEN roofline_ns > device_ns THEN
            CASE WHEN device = 'cpu'
                 THEN 'faster than the measured CPU roof (' || coalesce(peak_source, 'measured') || '): the probe that '
                      || 'measured the roof ran slower than this op, so the roof is understated'
                 WHEN bound = 'memory' AND cache_mib IS NOT NULL
                      AND (bytes - cache_mib * 1048576.0) / nullif(peak_tb_per_s * 1e3, 0) <= device_ns
                 THEN 'above the DRAM roof within the on-chip cache: of its ' || printf('%.1f', bytes / 1e6)
                      || ' MB, no more than the ' || device_model || '''s ' || cache_mib || ' MiB cache holds ('
                      || cache_source || ') is beyond what the bandwidth moves in its time: data the ops before it '
                      || 'left there'
            END
        END AS above_cause
    FROM op_rows
)
SELECT phase, op, launched_outside_steps, input_dims, dtype, family, calls, flops, bytes, device_ns, total_ns,
       time_share_pct, device_model, roof_class, peak_tflops, peak_tb_per_s, peak_source,
       CASE WHEN roofline_ns <= device_ns OR above_cause IS NOT NULL THEN roofline_ns END AS roofline_ns,
       CASE WHEN roofline_ns <= device_ns OR above_cause IS NOT NULL THEN above_roof_ns END AS above_roof_ns,
       bound,
       coalesce(why_null, above_cause,
                CASE WHEN roofline_ns > device_ns THEN
                    'its device time is below its roofline time and no cause is known (no on-chip cache figure '
                    || 'that holds the excess): its roofline figures are left out' END) AS why_null
FROM above
UNION ALL
SELECT phase, op, CASE WHEN op IS NULL THEN launched_outside_steps END, NULL, NULL, NULL, sum(calls), NULL, NULL, NULL, sum(total_ns),
       100.0 * sum(total_ns) / nullif((SELECT ns FROM all_time), 0),
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, why_null
FROM roofline_unlaunched
GROUP BY phase, op, launched_outside_steps, why_null;

-- roofline_summary: the roofline metrics (sql/metrics.sql reads them).
CREATE OR REPLACE TEMP TABLE roofline_summary AS
WITH g AS (
    SELECT * FROM roofline_unit_roof
    WHERE family IN ('mm', 'addmm', 'bmm', 'baddbmm', 'linear', 'matmul', 'conv', 'conv_backward')
      AND flops > 0 AND peak_tflops > 0 AND device_ns > 0
),
peak_share AS (
    -- the FLOP-weighted share of the roof the GEMM and convolution calls reached, %, and the roof's source
    SELECT 100.0 * sum(flops * (flops / device_ns / 1e3) / peak_tflops) / nullif(sum(flops), 0) AS pct,
           string_agg(DISTINCT peak_source, '; ') AS source
    FROM g
)
SELECT
    -- FLOP-weighted mean of achieved ÷ peak TFLOP/s over GEMM and convolution calls, % (NULL above 100: the
    -- calls beat the roof, which is then understated, and roofline_null_reason says so)
    CASE WHEN (SELECT pct FROM peak_share) <= 100 THEN (SELECT pct FROM peak_share) END AS gemm_conv_peak_pct,
    -- Σ roofline time of the modeled calls, per measured step, ms (NULL when no call has a roof)
    (SELECT sum(roofline_ns) FROM roofline_unit_roof) / 1e6 / nullif((SELECT steps FROM measurement_window), 0) AS sol_step_ms,
    -- modeled calls' share of all units' device time, % (how much of the step the speed of light covers)
    100.0 * (SELECT sum(device_ns) FILTER (WHERE roofline_ns IS NOT NULL) / nullif(sum(device_ns), 0) FROM roofline_unit_roof)
        AS roofline_coverage_pct,
    -- why the roofline figures are NULL, when they are
    coalesce((SELECT any_value(null_reason) FROM roofline_device_peak WHERE null_reason IS NOT NULL
                AND device IN (SELECT device FROM roofline_units)),
             (SELECT printf('the GEMM and convolution calls ran at %.0f%% of their roof, faster than it: the roof (%s) is '
                            || 'understated (a CPU roof probed on a busy machine, or a device figure the table has '
                            || 'wrong), so no share of it is shown', pct, source)
              FROM peak_share WHERE pct > 100)) AS roofline_null_reason;
