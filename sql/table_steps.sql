-- table_steps.sql — the steps table: one row per measured step (train) or call (infer).
-- requires: ingest.sql, metrics.sql, window_executions.sql
-- inputs: trace_info (store/ingest/analyse.py creates it)
-- Answers: how long each step took on the host and on the device, and what it issued.
-- Binds: nothing (reads step_stats, measurement_window, trace_info, images_per_step, window_executions).
-- kernel_ms counts the kernels each step launched, outside_kernel_ms those that ran in its span with a launch
-- inside no measured step: summed over the steps the two are the kernel time every metric uses.
WITH executed AS (
    SELECT coalesce(launch_step, ran_in_step) AS step,
           sum(e - s) FILTER (WHERE NOT launched_outside_steps) AS launched_ns,
           sum(e - s) FILTER (WHERE launched_outside_steps) AS outside_ns
    FROM window_executions WHERE kind = 'kernel' GROUP BY ALL
)
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
    -- images the step consumed, count (NULL when unknown)
    (SELECT images FROM images_per_step) AS images,
    -- runtime launch calls, dispatched leaf ops, all framework ops, kernels executed; count
    runtime_launches,
    leaf_ops,
    ops,
    kernels,
    -- device kernel time launched by the step, inside the window, ms
    coalesce(x.launched_ns, 0) / 1e6 AS kernel_ms,
    -- host time blocked in synchronizing calls, ms
    sync_ns / 1e6 AS sync_ms,
    -- device kernel time that ran in the step's span (its start → the next step's start) but was launched
    -- outside every measured step (queued before the capture began, or between steps), ms
    coalesce(x.outside_ns, 0) / 1e6 AS outside_kernel_ms
FROM step_stats LEFT JOIN executed x USING (step)
ORDER BY step;
