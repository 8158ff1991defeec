-- kernels.sql — `libreyolo profile kernels`: individual GPU kernels, the lowest layer.
--
-- Answers: which kernels take the device's time, per measured step, with their category.
-- Binds: $phase (VARCHAR or NULL: all phases), $category (case-insensitive substring or NULL),
--        $grep (RE2 regular expression over the name, or NULL), $tensorcore (BOOLEAN: only
--        Tensor Core kernels), $sort ('time' | 'count' | 'name'), $top (BIGINT rows).
-- Reads: kernels (one profile's kernels table; see libreyolo_profile/store/schema.py).
WITH device_time AS (
    SELECT sum(ms_per_step) AS ms_per_step FROM kernels WHERE $phase IS NULL OR phase = $phase
),
matching AS (
    SELECT name, category, tensorcore, activity,
           sum(ms_per_step) AS ms_per_step, sum(calls_per_step) AS calls_per_step,
           sum(total_ms) * 1000 / sum(calls) AS mean_us,
           string_agg(DISTINCT phase, ',' ORDER BY phase) AS phases
    FROM kernels
    WHERE ($phase IS NULL OR phase = $phase)
      AND ($category IS NULL OR contains(lower(category), lower($category)))
      AND ($grep IS NULL OR regexp_matches(name, $grep))
      AND (NOT $tensorcore OR tensorcore)
    GROUP BY name, category, tensorcore, activity
)
SELECT
    -- kernel name as recorded
    name,
    -- category (sql/kernel_categories.sql)
    category,
    -- Tensor Core kernel by name
    tensorcore,
    -- kernel | memcpy | memset
    activity,
    -- device time per measured step, ms
    ms_per_step,
    -- share of all device time in the selected phase(s) (whole: kernels + memcpy + memset), %
    100.0 * ms_per_step / nullif((SELECT ms_per_step FROM device_time), 0) AS share_pct,
    -- executions per measured step
    calls_per_step,
    -- mean execution time, µs
    mean_us,
    -- phases it was launched from
    phases,
    -- what share_pct is a share of, in words
    'device time: kernels, memcpy and memset in the selected phase(s)' AS whole
FROM matching
ORDER BY CASE WHEN $sort = 'count' THEN calls_per_step END DESC NULLS LAST,
         CASE WHEN $sort = 'name' THEN name END ASC NULLS LAST,
         ms_per_step DESC, name
LIMIT $top;
