-- categories.sql — kernel composition by category (the summary's breakdown).
--
-- Answers: which kinds of device work fill a step: GEMM, elementwise, layout, norm …
-- Binds: nothing. Reads: kernels (one profile's kernels table).
SELECT
    -- category (sql/kernel_categories.sql); memcpy and memset included
    category,
    -- device time per measured step, ms
    sum(ms_per_step) AS ms_per_step,
    -- share of all device time (whole: kernels + memcpy + memset in the window), %
    100.0 * sum(ms_per_step) / nullif((SELECT sum(ms_per_step) FROM kernels), 0) AS share_pct,
    -- share of kernel time (whole: kernels only, the whole of gemm_pct, memory_bound_pct and
    -- communication_pct), %; NULL for copies and memsets, which are not kernels
    CASE WHEN bool_and(activity = 'kernel') THEN
        100.0 * sum(ms_per_step) / nullif((SELECT sum(ms_per_step) FROM kernels WHERE activity = 'kernel'), 0)
    END AS kernel_share_pct,
    -- executions per measured step
    sum(calls_per_step) AS calls_per_step,
    -- share of this category's time on Tensor Cores, %: 0 for kernels that never ran on them, NULL for
    -- copies and memsets, which are not kernels and cannot
    CASE WHEN bool_or(activity = 'kernel') THEN
        100.0 * coalesce(sum(ms_per_step) FILTER (WHERE tensorcore), 0) / nullif(sum(ms_per_step), 0)
    END AS tensorcore_pct,
    -- what share_pct is a share of, in words (kernel_share_pct's whole is in its name: kernel time)
    'device time: kernels, memcpy and memset in the window' AS whole
FROM kernels
GROUP BY category
ORDER BY ms_per_step DESC, category;
