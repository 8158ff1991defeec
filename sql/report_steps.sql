-- report_steps.sql — `libreyolo profile report`: the per-step picture behind the report's step
-- chart (host wall time split into phases, device kernel time laid over it) and, for an
-- inference profile, the latency histogram (one step = one call).
--
-- Answers: for each measured step or call, how long the host spent in it, how that time splits
-- into phases, and how much device kernel time the step launched.
-- Binds: nothing. Reads: steps, phases (one profile's tables; see libreyolo_profile/store/schema.py).
-- A trace with several ranks: the lowest rank only (rank NULL, a non-distributed trace, first);
-- the report says which rank it shows.
WITH shown AS (
    SELECT rank FROM steps ORDER BY rank NULLS FIRST LIMIT 1
),
shown_steps AS (
    SELECT * FROM steps WHERE rank IS NOT DISTINCT FROM (SELECT rank FROM shown)
)
SELECT
    -- rank of the process the step ran in (NULL when not distributed)
    s.rank,
    -- ranks with steps in the trace, count (only the lowest is shown)
    (SELECT count(DISTINCT coalesce(rank, -1)) FROM steps) AS ranks,
    -- measured step (or call), 1-based
    s.step,
    -- host wall time of the step, ms (infer: the call's latency)
    s.host_ms,
    -- device kernel time launched by the step, ms (a sum of kernel durations, not their union)
    s.kernel_ms,
    -- from the step's start until the device finished its work, ms
    s.device_end_ms,
    -- phase name (NULL when the step has no phase rows)
    p.phase,
    -- host wall time of the phase in this step, ms (a step's phases add up to its host time)
    p.wall_ms,
    -- device kernel time launched from the phase in this step, ms
    p.gpu_ms
FROM shown_steps s
LEFT JOIN phases p ON p.step = s.step AND p.rank IS NOT DISTINCT FROM s.rank
ORDER BY s.step, p.phase;
