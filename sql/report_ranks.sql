-- report_ranks.sql — the report's rank lanes: each rank's steps and collectives on the job's clock.
--
-- Answers: per rank, where its measured steps lie and, per collective, when it arrived, how long it waited
-- for the last rank and how long it transferred, so the page can draw one lane per rank with the skew.
-- Binds: nothing. Reads: ranks, collectives (a job profile's tables; empty for one trace).
-- what: 'steps' (start_ms = its first step's start, end_ms = that + its steps × mean step) | 'collective'.
SELECT 'steps' AS what, rank, entered_ms AS start_ms, entered_ms + steps * step_ms AS end_ms,
       NULL AS wait_ms, NULL AS transfer_ms, NULL AS collective, NULL AS last_rank, NULL AS skew_ms, straggler
FROM ranks
UNION ALL
SELECT 'collective', rank, start_ms, start_ms + dur_ms, wait_ms, transfer_ms,
       collective || ' #' || seq || ' (step ' || step_mark || ')', last_rank, skew_ms, NULL
FROM collectives
ORDER BY rank, what DESC, start_ms;
