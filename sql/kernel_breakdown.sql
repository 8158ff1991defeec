-- kernel_breakdown.sql — device time by category, each category's top kernels by name and the rest of it in
-- one row, as HTA's kernel breakdown: for the Python API (Profile.kernel_breakdown). Over the kernels table,
-- so its rows add up to the kernel time every metric uses (kernels, memcpy and memset alike).
-- inputs: kernels (a profile's table)
--
-- Binds nothing; creates the macro below.

-- kernel_breakdown(top_k): per rank and category, the top_k kernels by device time (NULL: every kernel) and
-- one row for the rest of the category, the largest category first.
--   name: the kernel name, or '(N other kernels)' for the rest; kernels: names in the row, count;
--   calls: executions in the window, count; total_ms: device time in the window, ms; ms_per_step: per
--   measured step, ms; share_pct: share of the rank's device time, %; category_ms_per_step: the category's
--   device time per step, ms; category_share_pct: its share of the rank's device time, %
CREATE OR REPLACE TEMP MACRO kernel_breakdown(top_k) AS TABLE
WITH kernel_breakdown_names AS (
    SELECT rank, category, name, sum(calls) AS calls, sum(total_ms) AS total_ms, sum(ms_per_step) AS ms_per_step
    FROM kernels GROUP BY rank, category, name
),
kernel_breakdown_ranked AS (
    SELECT *,
           top_k IS NULL OR row_number() OVER (PARTITION BY rank, category ORDER BY total_ms DESC, name) <= top_k AS kept,
           sum(total_ms) OVER (PARTITION BY rank) AS rank_ms,
           sum(total_ms) OVER (PARTITION BY rank, category) AS category_ms,
           sum(ms_per_step) OVER (PARTITION BY rank, category) AS category_ms_per_step
    FROM kernel_breakdown_names
),
kernel_breakdown_rows AS (
    SELECT rank, category, kept,
           CASE WHEN kept THEN any_value(name) ELSE format('({} other kernels)', count(*)) END AS name,
           count(*) AS kernels, sum(calls) AS calls, sum(total_ms) AS total_ms, sum(ms_per_step) AS ms_per_step,
           100.0 * sum(total_ms) / nullif(any_value(rank_ms), 0) AS share_pct,
           any_value(category_ms_per_step) AS category_ms_per_step,
           100.0 * any_value(category_ms) / nullif(any_value(rank_ms), 0) AS category_share_pct
    FROM kernel_breakdown_ranked
    GROUP BY rank, category, kept, CASE WHEN kept THEN name END
)
SELECT rank, category, name, kernels, calls, total_ms, ms_per_step, share_pct, category_ms_per_step, category_share_pct
FROM kernel_breakdown_rows
ORDER BY rank NULLS FIRST, category_ms_per_step DESC, category, kept DESC, total_ms DESC, name;
