-- table_kernels.sql — the kernels table: device work per kernel name and phase over the window.
-- requires: intervals.sql, ingest.sql, blame.sql
-- inputs: trace_info (store/ingest/analyse.py creates it)
-- Answers: which kernels ran in the measured window, how often and for how long, in which phase.
-- Binds: nothing (reads placed_activity, measurement_window, trace_info from ingest.sql).
-- Every device execution inside the window counts, clipped to it, so sum(total_ms) of the kernels is the
-- kernel time every metric uses (sql/metrics.sql device_figures.kernel_ns, kernel_shares). Work whose launch
-- is not inside a measured step (queued before the capture began, or launched outside the steps) has no
-- phase and is marked launched_outside_steps.
-- category_exclusive_ms_per_step: per device and category, the time inside the measured steps (the blame's
-- windows) when that category's work alone ran on the device: what removing the category frees (what-if).
WITH work AS (
    SELECT a.device AS grp, a.category AS label, greatest(a.ts, b.start_ns) AS s, least(a.ts + a.dur, b.end_ns) AS e
    FROM placed_activity a JOIN blame_windows b ON a.ts < b.end_ns AND a.ts + a.dur > b.start_ns
),
-- the pieces of each device's time where exactly one category ran (sql/intervals.sql interval_coverage)
category_exclusive AS (
    SELECT grp AS device, first_label AS category, sum(e - s) AS ns
    FROM interval_coverage(work) WHERE labels = 1
    GROUP BY grp, first_label
)
SELECT
    -- rank of the process that recorded the trace (NULL when not distributed)
    (SELECT rank FROM trace_info) AS rank,
    -- device id the work ran on
    a.device,
    -- phase whose host code launched it (NULL when its launch is not inside a measured step)
    a.phase,
    -- kind of device activity: kernel | memcpy | memset
    a.kind AS activity,
    -- category from sql/kernel_categories.sql
    a.category,
    -- Tensor Core kernel by name (sql/tensorcore_rules.sql)
    a.tensorcore,
    -- kernel name as the profiler recorded it
    a.name,
    -- true for work that ran inside the window but whose launch is not inside a measured step
    a.step IS NULL AS launched_outside_steps,
    -- executions in the window, count
    count(*) AS calls,
    -- executions per measured step, count
    count(*) / any_value(w.steps) AS calls_per_step,
    -- device time inside the window (each execution clipped to it), ms
    sum(least(a.ts + a.dur, w.end_ns) - greatest(a.ts, w.start_ns)) / 1e6 AS total_ms,
    -- device time per measured step, ms
    sum(least(a.ts + a.dur, w.end_ns) - greatest(a.ts, w.start_ns)) / 1e6 / any_value(w.steps) AS ms_per_step,
    -- mean, shortest and longest execution (whole, unclipped), µs
    avg(a.dur) / 1e3 AS mean_us,
    min(a.dur) / 1e3 AS min_us,
    max(a.dur) / 1e3 AS max_us,
    -- the time per step, inside the measured steps, when this row's category alone ran on its device (the
    -- same figure on every row of the category and device: what removing the category frees), ms
    coalesce(any_value(x.ns), 0) / 1e6 / any_value(w.steps) AS category_exclusive_ms_per_step
FROM placed_activity a CROSS JOIN measurement_window w
LEFT JOIN category_exclusive x ON x.device IS NOT DISTINCT FROM a.device AND x.category = a.category
WHERE a.ts < w.end_ns AND a.ts + a.dur > w.start_ns
GROUP BY a.device, a.phase, a.kind, a.category, a.tensorcore, a.name, a.step IS NULL
ORDER BY total_ms DESC, a.name, a.phase, a.device;
