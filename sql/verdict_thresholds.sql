-- verdict_thresholds.sql — every threshold a verdict or a mark uses (SPEC §5), once. sql/verdict_rules.sql
-- and sql/verdict_blame.sql compare against them; Python reads them for the marks (vocabulary.thresholds)
-- and profile.json records them.

-- verdict_thresholds: one row per threshold.
CREATE OR REPLACE TEMP TABLE verdict_thresholds (
    -- the threshold's name: the metric it is compared with, or what it bounds
    name    VARCHAR,
    -- its value, in unit
    value   DOUBLE,
    -- % | count | ms
    unit    VARCHAR,
    -- what crossing it means
    meaning VARCHAR
);
INSERT INTO verdict_thresholds VALUES
    ('dataload_pct', 20.0, '%', 'dataloader-bound at ≥ 20% of the step waiting for data'),
    ('to_device_pct', 15.0, '%', 'transfer-bound at ≥ 15% of the step copying to the device'),
    ('sync_pct', 25.0, '%', 'sync-bound at ≥ 25% of the step blocked in synchronizing calls'),
    ('communication_pct', 30.0, '%', 'communication-bound at ≥ 30% of GPU time in collectives'),
    ('gpu_util_pct', 80.0, '%', 'GPU-bound at or above, host-launch-bound below'),
    ('gemm_pct', 50.0, '%', 'GEMM-dominated: compute-bound rather than memory-bound'),
    ('stage_pct', 40.0, '%', 'an inference stage dominates at ≥ 40% of the latency'),
    ('leaf_busy_pct', 80.0, '%', 'cpu-compute when leaf ops fill ≥ 80% of the step'),
    -- 1,024 elements (4 KiB of fp32) take well under a µs at any CPU's memory and FLOP rates (a matmul of them
    -- some 20 kFLOP), an op's dispatch a few µs: the op's time is its dispatch
    ('dispatch_op_elements', 1024, 'count',
     'a CPU op whose recorded tensor inputs hold at most this many elements in all spends its time in dispatch'),
    ('tiny_steps', 10, 'count', 'fewer profiled training steps than this is a tiny window (inference: fewer calls than infer''s default window, store/document/window.py)'),
    ('tiny_window_ms', 100.0, 'ms', 'so is a window shorter than this'),
    ('drain_unrecorded_pct', 5.0, '%', 'a last step''s closing stretch recording nothing but a wait, beyond the other steps'', of at least this share of the step it leaves is the profiler stopping: drain, with the unrecorded_tail mark (below it: the step''s own closing overhead)'),
    ('reserved_of_device_pct', 95.0, '%', 'with device mallocs in the window: thrashing'),
    ('noisy_other_cpu_pct', 25.0, '%', 'noisy when other processes used ≥ 25% of all CPUs while measuring'),
    ('noisy_steal_pct', 5.0, '%', 'or the hypervisor stole ≥ 5% of CPU time'),
    ('noisy_cv_pct', 20.0, '%', 'or identical inference calls varied by ≥ 20% (coefficient of variation)');

-- verdict_threshold: a threshold's value by name.
CREATE OR REPLACE TEMP MACRO verdict_threshold(threshold_name) AS
    (SELECT value FROM verdict_thresholds WHERE name = threshold_name);
