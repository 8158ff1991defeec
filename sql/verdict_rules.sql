-- verdict_rules.sql — SPEC §5's ordered verdict rules on a profile's metrics: the two that overrule any
-- blame (a trace whose times cannot be trusted, device memory that thrashed) and the threshold rules
-- that judge a profile without a per-step blame (a built-in import: its metrics are all it has). A
-- profile with a blame is judged by it otherwise (sql/verdict_blame.sql).
-- requires: verdicts.sql, verdict_thresholds.sql, verdict_inputs.sql
-- inputs: verdict_metrics (metric, value: the profile's numeric metrics), verdict_profile (one row: kind, on_gpu, unusable, thrashing, source)
--
-- Answers: every rule that fires, in order (the first one is the verdict), with its reason, its next
-- step and the metrics it rests on. The GPU rules end with host-launch and the CPU rules with
-- cpu-overhead or unknown, so a profile always gets one.

CREATE OR REPLACE TEMP TABLE verdict_rule_hits AS
WITH p AS (SELECT * FROM verdict_profile),
-- the metrics the rules read, one column each (verdict_metrics pivoted: a scalar subquery per metric,
-- verdict_inputs.sql's verdict_metric, made this statement ~20% slower to plan)
m AS (
    SELECT * EXCLUDE (gpu_util_pct, leaf_busy_pct), coalesce(gpu_util_pct, 0) AS util, leaf_busy_pct AS leaf
    FROM (PIVOT verdict_metrics ON metric IN ('step_ms', 'dataload_pct', 'dataload_ms', 'to_device_pct', 'to_device_ms',
          'sync_pct', 'sync_ms', 'communication_pct', 'gpu_util_pct', 'gemm_pct', 'tensorcore_pct', 'memory_bound_pct',
          'host_overhead_ms', 'host_overhead_pct', 'launches_per_step', 'per_launch_host_us', 'leaf_busy_pct')
          USING max(value))
),
t AS (SELECT name, value, printf('%.0f', value) AS shown FROM verdict_thresholds),
stages AS (
    SELECT v.verdict AS stage, v.stage_order, v.stage_metric, replace(v.stage_metric, '_pct', '_ms') AS stage_ms_metric,
           share.value AS share, stage_ms.value AS stage_ms
    FROM verdicts v
    LEFT JOIN verdict_metrics share ON share.metric = v.stage_metric
    LEFT JOIN verdict_metrics stage_ms ON stage_ms.metric = replace(v.stage_metric, '_pct', '_ms')
    WHERE v.stage_metric IS NOT NULL
),
rules AS (
    -- overruling any blame
    SELECT 1 AS rule_order, TRUE AS over_blame, 'unknown' AS verdict, p.unusable IS NOT NULL AS fires,
           p.unusable AS reason, ['step_ms'] AS evidence
    FROM p
    UNION ALL
    SELECT 2, TRUE, 'memory-pressure', p.thrashing IS NOT NULL,
           'device memory thrashed in the window: ' || p.thrashing, ['peak_vram_mb']
    FROM p
    -- what the host waits for: data, copies, syncs, collectives
    UNION ALL
    SELECT 10, FALSE, 'dataloader', p.kind = 'train' AND coalesce(m.dataload_pct, 0) >= t.value,
           'waiting for data takes ' || verdict_number(m.dataload_pct, 1) || '% of each step ('
           || verdict_number(m.dataload_ms, 2) || ' of ' || verdict_number(m.step_ms, 2) || ' ms; threshold '
           || t.shown || '%)',
           ['dataload_pct', 'dataload_ms', 'step_ms']
    FROM p, m, t WHERE t.name = 'dataload_pct'
    UNION ALL
    SELECT 11, FALSE, 'transfer', p.kind = 'train' AND coalesce(m.to_device_pct, 0) >= t.value,
           'copying batches to the device takes ' || verdict_number(m.to_device_pct, 1) || '% of each step ('
           || verdict_number(m.to_device_ms, 2) || ' ms; threshold ' || t.shown || '%)',
           ['to_device_pct', 'to_device_ms', 'step_ms']
    FROM p, m, t WHERE t.name = 'to_device_pct'
    UNION ALL
    SELECT 12, FALSE, 'sync', coalesce(m.sync_pct, 0) >= t.value,
           'the host is blocked in synchronizing calls for ' || verdict_number(m.sync_pct, 1) || '% of each step ('
           || verdict_number(m.sync_ms, 2) || ' ms; threshold ' || t.shown || '%)',
           ['sync_pct', 'sync_ms', 'step_ms']
    FROM m, t WHERE t.name = 'sync_pct'
    UNION ALL
    SELECT 13, FALSE, 'communication', coalesce(m.communication_pct, 0) >= t.value,
           'collectives take ' || verdict_number(m.communication_pct, 1) || '% of kernel time '
           || '(communication_pct; memcpy/memset excluded; threshold ' || t.shown || '%)',
           ['communication_pct', 'gpu_util_pct']
    FROM m, t WHERE t.name = 'communication_pct'
    -- an inference stage around the forward pass that dominates the call's latency
    UNION ALL
    SELECT 20 + s.stage_order, FALSE, s.stage, p.kind = 'infer' AND s.share IS NOT NULL AND s.share >= t.value,
           s.stage || ' takes ' || verdict_number(s.share, 1) || '% of each call''s latency ('
           || verdict_number(s.stage_ms, 2) || ' of ' || verdict_number(m.step_ms, 2) || ' ms; threshold '
           || t.shown || '%)',
           [s.stage_metric, s.stage_ms_metric, 'step_ms']
    FROM p, m, t, stages s WHERE t.name = 'stage_pct'
    -- a GPU profile: busy in GEMMs, busy in memory-bound work, or waiting for the host
    UNION ALL
    SELECT 30, FALSE, 'gpu-compute', p.on_gpu AND m.util >= u.value AND coalesce(m.gemm_pct, 0) >= t.value,
           'the GPU is busy ' || verdict_number(m.util, 1) || '% of the window and GEMM/conv kernels take '
           || verdict_number(m.gemm_pct, 1) || '% of kernel time (gemm_pct; on Tensor Cores '
           || verdict_number(m.tensorcore_pct, 1) || '% of kernel time)',
           ['gpu_util_pct', 'gemm_pct', 'tensorcore_pct']
    FROM p, m, t, t AS u WHERE t.name = 'gemm_pct' AND u.name = 'gpu_util_pct'
    UNION ALL
    SELECT 31, FALSE, 'gpu-memory', p.on_gpu AND m.util >= u.value,
           'the GPU is busy ' || verdict_number(m.util, 1) || '% of the window but elementwise/layout/norm kernels '
           || 'take ' || verdict_number(m.memory_bound_pct, 1) || '% of kernel time (memory_bound_pct; GEMM only '
           || verdict_number(m.gemm_pct, 1) || '%)',
           ['gpu_util_pct', 'memory_bound_pct', 'gemm_pct']
    FROM p, m, t AS u WHERE u.name = 'gpu_util_pct'
    UNION ALL
    SELECT 32, FALSE, 'host-launch', p.on_gpu,
           'the GPU is busy only ' || verdict_number(m.util, 1) || '% of the window (threshold ' || u.shown
           || '%): it waited ' || verdict_number(m.host_overhead_ms, 2) || ' ms per step for the host, which issued '
           || verdict_number(m.launches_per_step, 0) || ' launches at ' || verdict_number(m.per_launch_host_us, 1)
           || ' µs each and was blocked in sync only ' || verdict_number(m.sync_pct, 1) || '% of the step',
           ['gpu_util_pct', 'host_overhead_ms', 'launches_per_step', 'per_launch_host_us', 'sync_pct']
    FROM p, m, t AS u WHERE u.name = 'gpu_util_pct'
    -- a CPU profile: the ops' arithmetic, or the framework around them
    UNION ALL
    SELECT 40, FALSE, 'cpu-compute', NOT p.on_gpu AND m.leaf IS NOT NULL AND m.leaf >= t.value,
           'leaf ops execute ' || verdict_number(m.leaf, 1) || '% of each step on the CPU (threshold ' || t.shown
           || '%): the arithmetic itself is the cost',
           ['leaf_busy_pct', 'step_ms']
    FROM p, m, t WHERE t.name = 'leaf_busy_pct'
    UNION ALL
    SELECT 41, FALSE, 'unknown', NOT p.on_gpu AND m.leaf IS NULL,
           CASE WHEN p.source = 'builtin'
                THEN 'LibreYOLO''s built-in profiler records no leaf-op time on the CPU, so CPU compute '
                     || 'cannot be told from framework overhead, and no other rule applies'
                ELSE 'the trace records no framework ops inside its steps, so neither CPU compute '
                     || 'nor overhead can be told apart' END,
           ['step_ms']
    FROM p, m
    UNION ALL
    SELECT 42, FALSE, 'cpu-overhead', NOT p.on_gpu,
           'leaf ops execute only ' || verdict_number(m.leaf, 1) || '% of each step on the CPU; '
           || verdict_number(m.host_overhead_ms, 2) || ' ms per step (' || verdict_number(m.host_overhead_pct, 1)
           || '%) is framework and Python time around ' || verdict_number(m.launches_per_step, 0) || ' dispatched ops',
           ['leaf_busy_pct', 'host_overhead_ms', 'launches_per_step']
    FROM p, m
)
SELECT r.rule_order, r.over_blame, r.verdict, r.reason, r.evidence,
       -- the next step: the verdict's advice; an unknown CPU verdict asks for a profile that records its ops
       CASE WHEN r.rule_order = 41 THEN
                CASE WHEN p.source = 'builtin'
                     THEN 'measure again with `libreyolo profile run` or `libreyolo profile infer`'
                     ELSE 'profile with CPU activity recorded' END
            ELSE v.advice END AS next_step
FROM rules r JOIN verdicts v USING (verdict), verdict_profile p
WHERE r.fires;

SELECT * FROM verdict_rule_hits ORDER BY rule_order;
