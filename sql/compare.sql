-- compare.sql — `libreyolo profile compare`: before vs after, metric by metric (SPEC §6).
--
-- Answers: how much each headline metric moved (Δ, Δ%), and whether the move is larger than the
-- trial-to-trial noise: with n ≥ 2 trials on both sides, SE = s/√n per side (s the sample standard
-- deviation, n − 1), and the change is significant when |Δ| > 2·√(SE_before² + SE_after²).
-- Binds (all lists; nothing user-typed reaches this text):
--   $metrics VARCHAR[]          the metrics compared, in display order
--   $higher_is_better BOOLEAN[] aligned with $metrics: TRUE / FALSE, NULL where no direction is better
--   $sample_side VARCHAR[]      'before' | 'after', one entry per trial value
--   $sample_metric VARCHAR[]    the metric of each trial value
--   $sample_value DOUBLE[]      the trial value (NULL where the metric is null on that side)
-- Reads: no profile table: the samples come from the two profile documents' trials.
WITH catalogue AS (
    SELECT unnest(CAST($metrics AS VARCHAR[])) AS metric,
           unnest(CAST($higher_is_better AS BOOLEAN[])) AS higher_is_better,
           generate_subscripts($metrics, 1) AS position
),
samples AS (
    SELECT unnest(CAST($sample_side AS VARCHAR[])) AS side, unnest(CAST($sample_metric AS VARCHAR[])) AS metric,
           unnest(CAST($sample_value AS DOUBLE[])) AS value
),
sides AS (
    SELECT metric,
           avg(value) FILTER (WHERE side = 'before') AS before,
           stddev_samp(value) FILTER (WHERE side = 'before') AS before_std,
           count(value) FILTER (WHERE side = 'before') AS before_n,
           avg(value) FILTER (WHERE side = 'after') AS after,
           stddev_samp(value) FILTER (WHERE side = 'after') AS after_std,
           count(value) FILTER (WHERE side = 'after') AS after_n
    FROM samples GROUP BY metric
),
errors AS (
    SELECT c.metric, c.position, c.higher_is_better, s.before, s.after, s.before_std, s.after_std,
           coalesce(s.before_n, 0) AS before_n, coalesce(s.after_n, 0) AS after_n,
           s.after - s.before AS delta,
           CASE WHEN s.before_n >= 2 THEN s.before_std / sqrt(s.before_n) END AS before_se,
           CASE WHEN s.after_n >= 2 THEN s.after_std / sqrt(s.after_n) END AS after_se
    FROM catalogue c LEFT JOIN sides s USING (metric)
)
SELECT
    -- metric name (see `libreyolo profile get`)
    metric,
    -- before: the mean over its trials (the single value with one trial), metric's unit
    before,
    -- after: the mean over its trials, metric's unit
    after,
    -- after − before, metric's unit
    delta,
    -- 100 · Δ / |before|, %; NULL when before is 0 or NULL (no percentage of nothing)
    100.0 * delta / nullif(abs(before), 0) AS delta_pct,
    -- sample standard deviation over the before trials (n − 1), metric's unit; NULL with one trial
    before_std,
    -- sample standard deviation over the after trials (n − 1), metric's unit
    after_std,
    -- trials with a value on each side, count
    before_n,
    after_n,
    -- standard error of each side's mean, s/√n, metric's unit; NULL with fewer than 2 trials
    before_se,
    after_se,
    -- √(SE_before² + SE_after²), metric's unit; NULL unless both sides have n ≥ 2
    sqrt(before_se * before_se + after_se * after_se) AS se_combined,
    -- 2 · se_combined: the smallest |Δ| called significant, metric's unit
    2 * sqrt(before_se * before_se + after_se * after_se) AS threshold,
    -- |Δ| > threshold; NULL when it cannot be judged (a side with n < 2, or a null side)
    CASE WHEN before_se IS NOT NULL AND after_se IS NOT NULL AND delta IS NOT NULL
         THEN abs(delta) > 2 * sqrt(before_se * before_se + after_se * after_se) END AS significant,
    -- which side is better by this metric ('before' | 'after'); NULL when equal, unknown or neutral
    CASE WHEN delta IS NULL OR delta = 0 OR higher_is_better IS NULL THEN NULL
         WHEN (delta > 0) = higher_is_better THEN 'after' ELSE 'before' END AS better
FROM errors
ORDER BY position;
