-- table_modules.sql — the modules table: one row per module path and phase (sql/modules.sql builds it).
-- requires: ingest.sql, modules.sql
-- inputs: trace_info (store/ingest/analyse.py creates it)
-- Answers: where in the model the host time and the device kernels went: per module (the whole
-- model at depth 0, backbone/neck/head at 1, their blocks at 2 …), forward and backward apart.
-- Binds: nothing (reads module_stats, measurement_window, trace_info; each one-row table joined once: as
-- scalar subqueries per column their join order cost more than the query).
SELECT
    -- rank of the process that recorded the trace (NULL when not distributed)
    trace.rank,
    -- forward | backward (the module's backward: gradient at its outputs until it reached its inputs)
    phase,
    -- dotted module path under the model's class name (foreign traces: <Class>_<n> names)
    path,
    -- the parent module's path (NULL at depth 0)
    parent_path AS parent,
    -- levels below the model (0: the model itself)
    depth,
    -- the module's class name
    module_type,
    -- ranges (our record_function ranges) | python_function (a foreign trace's nn.Module events)
    source,
    -- calls in the window, count
    calls,
    -- calls per measured step, count
    calls / win.steps AS calls_per_step,
    -- host wall time inside the module's calls, ms
    total_ns / 1e6 AS total_ms,
    -- the same per measured step, ms
    total_ns / 1e6 / win.steps AS total_ms_per_step,
    -- host time the module held itself: no module range that started later was open (sql/modules.sql), ms
    self_ns / 1e6 AS self_ms,
    -- the same per measured step, ms
    self_ns / 1e6 / win.steps AS self_ms_per_step,
    -- share of the whole model's time in this phase (depth-0 total), %; NULL when the model itself was not recorded
    100.0 * total_ns / nullif(root_ns, 0) AS share_pct,
    -- device kernel time launched inside the module's calls, ms; NULL when the trace holds no kernels (a CPU run)
    CASE WHEN has_kernels THEN device_ns / 1e6 END AS device_ms,
    -- the same per measured step, ms
    CASE WHEN has_kernels THEN device_ns / 1e6 / win.steps END AS device_ms_per_step,
    -- device kernel time launched while the module held the host itself, ms
    CASE WHEN has_kernels THEN device_self_ns / 1e6 END AS device_self_ms,
    -- the same per measured step, ms
    CASE WHEN has_kernels THEN device_self_ns / 1e6 / win.steps END AS device_self_ms_per_step,
    -- kernels launched inside the module's calls, count
    kernels,
    -- start of the module's first call relative to the window start (orders a tree by execution), ms
    (first_ts - win.start_ns) / 1e6 AS start_ms
FROM module_stats
LEFT JOIN (SELECT steps, start_ns FROM measurement_window) AS win ON true
LEFT JOIN (SELECT rank FROM trace_info) AS trace ON true
ORDER BY CASE phase WHEN 'forward' THEN 0 ELSE 1 END, first_ts, depth, path;
