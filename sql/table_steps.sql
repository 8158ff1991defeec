-- table_steps.sql — the steps table: one row per measured step (train) or call (infer).
-- Answers: how long each step took on the host and on the device, and what it issued.
-- Binds: nothing (reads step_stats, measurement_window, trace_info, images_per_step).
SELECT
    -- rank of the process that recorded the trace (NULL when not distributed)
    (SELECT rank FROM trace_info) AS rank,
    -- measured step (or call), 1-based
    step,
    -- start, relative to the window start, ms
    (start_ns - (SELECT start_ns FROM measurement_window)) / 1e6 AS start_ms,
    -- host wall time of the step (infer: the call's latency), ms
    host_ns / 1e6 AS host_ms,
    -- from the step's start until the device finished the work it launched, ms
    (device_end_ns - start_ns) / 1e6 AS device_end_ms,
    -- images the step consumed (NULL when unknown)
    (SELECT images FROM images_per_step) AS images,
    -- runtime launch calls, dispatched leaf ops, all framework ops, kernels executed
    runtime_launches,
    leaf_ops,
    ops,
    kernels,
    -- device kernel time launched by the step, ms
    kernel_ns / 1e6 AS kernel_ms,
    -- host time blocked in synchronizing calls, ms
    sync_ns / 1e6 AS sync_ms
FROM step_stats
ORDER BY step;
