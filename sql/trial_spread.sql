-- trial_spread.sql — a repeated measurement's figures over its trials: mean, spread and the values.
-- inputs: trial_values (store/document/headline.py registers it)
--
-- Answers: `trial_spread`, one row per metric every trial has a number for. Binds: nothing.
-- Reads: trial_values (metric, trial, value: one metric's figure in one trial, in the metric's unit).
-- The one definition of a profile's repeat statistics: ours (`--repeat`) and a built-in import's
-- throughput trials both read it.

CREATE OR REPLACE TEMP TABLE trial_spread AS
SELECT
    -- the metric's name (metric_catalog.METRICS)
    metric,
    -- its mean over the trials, in the metric's unit
    avg(value) AS mean,
    -- its sample standard deviation over the trials (n − 1), NULL with one trial
    stddev_samp(value) AS std,
    -- how many trials
    count(*) AS n,
    -- the trials' figures, in trial order
    list(value ORDER BY trial) AS "values"
FROM trial_values
GROUP BY metric;
