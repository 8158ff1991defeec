-- table_kernels.sql — the kernels table: device work per kernel name and phase over the window.
-- Answers: which kernels ran in the measured steps, how often and for how long, in which phase.
-- Binds: nothing (reads placed_activity, measurement_window, trace_info from ingest.sql).
-- Work queued before the capture (no launch seen) belongs to no step and is not listed here.
SELECT
    -- rank of the process that recorded the trace (NULL when not distributed)
    (SELECT rank FROM trace_info) AS rank,
    -- device id the work ran on
    device,
    -- phase whose host code launched it
    phase,
    -- kind of device activity: kernel | memcpy | memset
    kind AS activity,
    -- category from sql/kernel_categories.sql
    category,
    -- Tensor Core kernel by name (sql/tensorcore_rules.sql)
    tensorcore,
    -- kernel name as the profiler recorded it
    name,
    -- executions in the window
    count(*) AS calls,
    -- executions per measured step
    count(*) / (SELECT steps FROM measurement_window) AS calls_per_step,
    -- device time in the window, ms
    sum(dur) / 1e6 AS total_ms,
    -- device time per measured step, ms
    sum(dur) / 1e6 / (SELECT steps FROM measurement_window) AS ms_per_step,
    -- mean, shortest and longest execution, µs
    avg(dur) / 1e3 AS mean_us,
    min(dur) / 1e3 AS min_us,
    max(dur) / 1e3 AS max_us
FROM placed_activity
WHERE step IS NOT NULL
GROUP BY device, phase, kind, category, tensorcore, name
ORDER BY total_ms DESC, name, phase, device;
