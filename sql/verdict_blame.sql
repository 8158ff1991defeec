-- verdict_blame.sql — the verdict from the per-step blame (SPEC §11): each cause's share of the profiled
-- steps' wall time supports one verdict (sql/blame_causes.sql), and the verdict whose causes hold the most
-- wins; below the device-busy threshold, the verdict that names why the device idled wins over the
-- device's own work (its kernels would run as they do on a busy device).
-- requires: blame_causes.sql, verdicts.sql, verdict_thresholds.sql, verdict_inputs.sql
-- inputs: verdict_metrics (metric, value: the profile's numeric metrics), verdict_profile (one row: kind, on_gpu, unusable, thrashing, source)
--
-- Answers: the verdicts the blame supports, best first (position 1 is the verdict), each with its
-- causes largest first; none when the profile has no blame (every blame share null or 0).

-- verdict_blame_causes: each cause with time in the profile, its share and the verdict it supports here.
-- In an inference call, host CPU work is the dominant stage's (the first stage verdict whose share of the
-- call reaches stage_pct) when one dominates.
CREATE OR REPLACE TEMP TABLE verdict_blame_causes AS
WITH p AS (SELECT * FROM verdict_profile),
dominant_stage AS (
    SELECT v.verdict
    FROM verdicts v, p
    WHERE p.kind = 'infer' AND v.stage_metric IS NOT NULL
      AND coalesce(verdict_metric(v.stage_metric), 0) >= verdict_threshold('stage_pct')
    ORDER BY v.stage_order LIMIT 1
),
shares AS (
    SELECT c.cause, c.priority, c.side, c.words, m.value AS share_pct,
           CASE WHEN p.on_gpu THEN c.gpu_verdict ELSE c.cpu_verdict END AS supports
    FROM blame_causes c JOIN verdict_metrics m ON m.metric = 'blame_' || c.cause || '_pct', p
    WHERE m.value IS NOT NULL AND m.value <> 0
)
SELECT s.cause, s.priority,
       -- share of the profiled steps' wall time, %
       s.share_pct,
       s.side, s.words,
       CASE WHEN v.yields_to_stage AND (SELECT count(*) FROM dominant_stage) > 0
            THEN (SELECT verdict FROM dominant_stage) ELSE s.supports END AS verdict
FROM shares s JOIN verdicts v ON v.verdict = s.supports;

-- verdict_blame_evidence: for a verdict whose causes alone do not say what the work was, the figures that do,
-- as its reason quotes them (NULL where a figure is missing: the reason then says which).
CREATE OR REPLACE TEMP TABLE verdict_blame_evidence AS
SELECT * FROM (VALUES
    -- dispatch: how many ops the step dispatched, and how much of the step each one stands for
    ('cpu-overhead',
     'the step dispatched ' || verdict_number(verdict_metric('launches_per_step'), 0) || ' leaf ops, one per '
     || verdict_number(verdict_metric('blame_step_ms') * 1000 / nullif(verdict_metric('launches_per_step'), 0), 2)
     || ' µs of the step (launches_per_step; blame_step_ms ÷ launches_per_step)'),
    -- arithmetic: how near the measured roof the convolutions and GEMMs ran
    ('cpu-compute',
     CASE WHEN verdict_metric('gemm_conv_peak_pct') IS NOT NULL
          THEN 'convolutions and GEMMs ran at ' || verdict_number(verdict_metric('gemm_conv_peak_pct'), 1)
               || '% of the measured roof (gemm_conv_peak_pct)'
          ELSE 'no measured roof to hold the convolutions and GEMMs against (gemm_conv_peak_pct is null)' END),
    -- unrecorded: the time lies inside the profiled steps, where the host did something no event records; the
    -- trace cannot say what, only whether Python frames were recorded to show it
    ('idle-window',
     'the time lies inside the profiled steps, between recorded events: host work no event records (Python run '
     || CASE WHEN coalesce(verdict_metric('blame_python_pct'), 0) = 0
             THEN 'without with_stack: the trace holds no Python frames, '
             ELSE 'outside the recorded frames, ' END
     || 'a sleep, I/O or a lock wait), or the profiler''s own start or stop')
) AS v(verdict, sentence);

-- verdict_blame_ranked: the verdicts the causes support, in the order the rule ranks them.
CREATE OR REPLACE TEMP TABLE verdict_blame_ranked AS
WITH busy AS (
    -- the device causes' share of the profiled steps, %: how busy the blame found the device
    SELECT coalesce(sum(share_pct) FILTER (WHERE side = 'device'), 0) AS device_busy_pct FROM verdict_blame_causes
),
totals AS (
    SELECT c.verdict, v.device_work, v.advice, sum(c.share_pct) AS total_pct, max(c.share_pct) AS largest_pct,
           arg_min(c.priority, [-c.share_pct, c.priority]) AS largest_priority,
           list({'cause': c.cause, 'share_pct': c.share_pct, 'words': c.words} ORDER BY c.share_pct DESC, c.priority)
               AS causes
    FROM verdict_blame_causes c JOIN verdicts v USING (verdict)
    GROUP BY c.verdict, v.device_work, v.advice
),
idle AS (
    SELECT (SELECT on_gpu FROM verdict_profile) AND b.device_busy_pct < verdict_threshold('gpu_util_pct')
           AND EXISTS (SELECT 1 FROM totals WHERE NOT device_work) AS first
    FROM busy b
)
-- (exact ties, which real shares of nanoseconds hardly make, go to the higher-priority cause)
SELECT row_number() OVER (ORDER BY idle.first AND t.device_work, t.total_pct DESC, t.largest_pct DESC,
                                   t.largest_priority) AS position,
       t.verdict,
       -- the verdict's causes' share of the profiled steps' wall time, %
       t.total_pct,
       -- its causes, largest first: cause, share_pct (%), words
       t.causes,
       t.advice,
       -- whether the device was under the busy threshold, so the causes of its idle time ranked first
       idle.first AS idle_first,
       -- the device causes' share of the profiled steps, %
       b.device_busy_pct,
       -- the figures that say what the verdict's work was (verdict_blame_evidence; NULL: none declared)
       e.sentence AS evidence
FROM totals t CROSS JOIN idle CROSS JOIN busy b LEFT JOIN verdict_blame_evidence e USING (verdict);

SELECT * FROM verdict_blame_ranked ORDER BY position;
