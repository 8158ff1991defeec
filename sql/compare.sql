-- compare.sql — `libreyolo profile compare`: before vs after, metric by metric (SPEC §6, §12).
--
-- Answers: how much each headline metric moved (Δ, Δ%), and whether the move is larger than the
-- trial-to-trial noise: with n ≥ 2 trials on both sides, SE = s/√n per side (s the sample standard
-- deviation, n − 1), and the change is significant when |Δ| > 2·√(SE_before² + SE_after²).
-- Only finite numbers inside the metric's plausible range are evidence (issue #26): a trial value
-- that is not a number, NaN, ±Infinity, below the metric's lowest possible value (a negative time)
-- or above its highest plausible one (1e308 ms) is counted and named, and the metric's statistics
-- are then NULL: garbage never becomes a mean, a spread or a change.
-- Binds (all lists; nothing user-typed reaches this text):
--   $metrics VARCHAR[]          the metrics compared, in display order
--   $higher_is_better BOOLEAN[] aligned with $metrics: TRUE / FALSE, NULL where no direction is better
--   $lowest DOUBLE[]            aligned with $metrics: the lowest value the metric can take, its unit
--   $highest DOUBLE[]           aligned with $metrics: the highest plausible value, its unit
--   $sample_side VARCHAR[]      'before' | 'after', one entry per trial value
--   $sample_metric VARCHAR[]    the metric of each trial value
--   $sample_value DOUBLE[]      the trial value (NULL where it is null or not a number)
--   $sample_kind VARCHAR[]      'number', 'null', or what the file held instead (string, boolean …)
--   $sample_source VARCHAR[]    the profile file the value was read from
--   $sample_trial INTEGER[]     the trial's number within that profile, from 1
-- Reads: no profile table: the samples come from the two profile documents' trials.
-- Creates the temporary table comparison, a row per metric in display order, which sql/gate.sql reads.
-- requires: compare_rule.sql (the significance rule's macros)
CREATE TEMP TABLE comparison AS
WITH catalogue AS (
    SELECT unnest(CAST($metrics AS VARCHAR[])) AS metric,
           unnest(CAST($higher_is_better AS BOOLEAN[])) AS higher_is_better,
           unnest(CAST($lowest AS DOUBLE[])) AS lowest,
           unnest(CAST($highest AS DOUBLE[])) AS highest,
           generate_subscripts($metrics, 1) AS position
),
samples AS (
    SELECT unnest(CAST($sample_side AS VARCHAR[])) AS side, unnest(CAST($sample_metric AS VARCHAR[])) AS metric,
           unnest(CAST($sample_value AS DOUBLE[])) AS value, unnest(CAST($sample_kind AS VARCHAR[])) AS kind,
           unnest(CAST($sample_source AS VARCHAR[])) AS source, unnest(CAST($sample_trial AS INTEGER[])) AS trial,
           generate_subscripts($sample_side, 1) AS ordinal
),
checked AS (
    -- problem: why a trial value is not evidence, in words; NULL for a finite, plausible number or a null
    SELECT s.*,
           CASE WHEN s.kind = 'null' THEN NULL
                WHEN s.kind <> 'number' THEN 'not a number: ' || s.kind
                WHEN isnan(s.value) THEN 'NaN'
                WHEN isinf(s.value) THEN CASE WHEN s.value > 0 THEN '+Infinity' ELSE '-Infinity' END
                WHEN s.value < c.lowest THEN printf('%.6g', s.value) || ', below the lowest possible value ' || printf('%.6g', c.lowest)
                WHEN s.value > c.highest THEN printf('%.6g', s.value) || ', above the highest plausible value ' || printf('%.6g', c.highest)
           END AS problem
    FROM samples s JOIN catalogue c USING (metric)
),
refused AS (
    SELECT metric, count(*) AS invalid_n,
           arg_min(side || ' side, trial ' || trial || ' of ' || source || ': ' || problem, ordinal) AS invalid_reason
    FROM checked WHERE problem IS NOT NULL GROUP BY metric
),
sides AS (
    SELECT metric,
           avg(value) FILTER (WHERE side = 'before') AS before,
           stddev_samp(value) FILTER (WHERE side = 'before') AS before_std,
           count(value) FILTER (WHERE side = 'before') AS before_n,
           avg(value) FILTER (WHERE side = 'after') AS after,
           stddev_samp(value) FILTER (WHERE side = 'after') AS after_std,
           count(value) FILTER (WHERE side = 'after') AS after_n
    FROM checked WHERE problem IS NULL GROUP BY metric
),
evidence AS (
    -- a metric with any refused trial value keeps its counts and loses its statistics
    SELECT c.metric, c.position, c.higher_is_better, coalesce(r.invalid_n, 0) AS invalid_n, r.invalid_reason,
           coalesce(s.before_n, 0) AS before_n, coalesce(s.after_n, 0) AS after_n,
           CASE WHEN r.invalid_n IS NULL THEN s.before END AS before,
           CASE WHEN r.invalid_n IS NULL THEN s.after END AS after,
           CASE WHEN r.invalid_n IS NULL THEN s.before_std END AS before_std,
           CASE WHEN r.invalid_n IS NULL THEN s.after_std END AS after_std
    FROM catalogue c LEFT JOIN sides s USING (metric) LEFT JOIN refused r USING (metric)
),
errors AS (
    SELECT *, after - before AS delta,
           compare_se(before_std, before_n) AS before_se,
           compare_se(after_std, after_n) AS after_se
    FROM evidence
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
    -- trials holding a value that is evidence, on each side, count
    before_n,
    after_n,
    -- trial values on either side that are not evidence (see `checked`), count
    invalid_n,
    -- the first of them, in words (side, trial, file, what it held); NULL when every value is evidence
    invalid_reason,
    -- standard error of each side's mean, s/√n, metric's unit; NULL with fewer than 2 trials
    before_se,
    after_se,
    -- √(SE_before² + SE_after²), metric's unit; NULL unless both sides have n ≥ 2
    compare_se_combined(before_se, after_se) AS se_combined,
    -- 2 · se_combined: the smallest |Δ| called significant, metric's unit
    compare_threshold(before_se, after_se) AS threshold,
    -- |Δ| > threshold; NULL when it cannot be judged (a side with n < 2, or a null side)
    compare_significant(delta, before_se, after_se) AS significant,
    -- which side is better by this metric ('before' | 'after'); NULL when equal, unknown or neutral
    CASE WHEN delta IS NULL OR delta = 0 OR higher_is_better IS NULL THEN NULL
         WHEN (delta > 0) = higher_is_better THEN 'after' ELSE 'before' END AS better
FROM errors
ORDER BY position
