-- headline.sql — the unprofiled headline of one measured trial: what the work costs with nobody
-- watching, the one definition store/document/headline.py reads.
-- inputs: headline_trial, headline_calls, headline_stages (store/document/headline.py registers them)
--
-- Answers: `headline` (one row: the trial's headline metrics, the meaning metric_catalog.py gives each)
-- and `headline_stage_split` (one row per stage timed on every call). Binds: nothing.
-- Reads: headline_trial (kind 'infer'|'train', images_per_call, blocks_wall_ms: the unprofiled blocks'
-- host wall time summed, each block ending when the device is done), headline_calls (call_index,
-- call_ms: each unprofiled call's or step's own time), headline_stages (stage, call_index, ms: each
-- call's host time in one phase).
-- Percentiles interpolate linearly between order statistics (quantile_cont), as sql/metrics.sql
-- does for a trace's steps.

CREATE OR REPLACE TEMP TABLE headline AS
WITH calls AS (
    SELECT count(*) AS n, avg(call_ms) AS mean_ms, stddev_samp(call_ms) AS sd_ms,
           quantile_cont(call_ms, 0.50) AS p50, quantile_cont(call_ms, 0.90) AS p90,
           quantile_cont(call_ms, 0.99) AS p99
    FROM headline_calls
),
step AS (
    -- infer: the mean call; train: the blocks' wall time per step (a block ends when the device is done)
    SELECT t.kind, t.images_per_call, t.blocks_wall_ms, c.*,
           CASE WHEN t.kind = 'infer' THEN c.mean_ms ELSE t.blocks_wall_ms / nullif(c.n, 0) END AS step_ms,
           t.images_per_call * c.n / nullif(t.blocks_wall_ms / 1000.0, 0) AS throughput_img_s
    FROM headline_trial t, calls c
)
SELECT
    -- mean time of one call (infer) or one step (train) without the profiler, ms
    step_ms,
    -- latency percentiles of the unprofiled calls (infer only), ms
    CASE WHEN kind = 'infer' THEN p50 END AS latency_p50_ms,
    CASE WHEN kind = 'infer' THEN p90 END AS latency_p90_ms,
    CASE WHEN kind = 'infer' THEN p99 END AS latency_p99_ms,
    -- images per second of the unprofiled blocks' wall time, img/s
    throughput_img_s,
    -- wall time per image, ms
    1000.0 / nullif(throughput_img_s, 0) AS ms_per_img,
    -- spread of the unprofiled calls: sample standard deviation ÷ mean, % (NULL with one call)
    CASE WHEN n > 1 AND mean_ms > 0 THEN 100.0 * sd_ms / mean_ms END AS timing_cv_pct
FROM step;

CREATE OR REPLACE TEMP TABLE headline_stage_split AS
SELECT
    -- the phase ('preprocess', 'forward', 'postprocess' for infer; 'dataload', 'to_device' for train)
    s.stage,
    -- its mean host time per call, ms
    avg(s.ms) AS stage_ms,
    -- that mean over the headline step time, % (the same calls, so never a profiled figure)
    100.0 * avg(s.ms) / nullif(any_value(h.step_ms), 0) AS stage_pct
FROM headline_stages s, headline h
GROUP BY s.stage
-- a stage missing from some call would average a different set of calls than the step: left out
HAVING count(*) = (SELECT count(*) FROM headline_calls);
