-- table_blame.sql — the blame table: one row per measured step and cause (sql/blame.sql defines both).
-- requires: blame_causes.sql, blame.sql
-- inputs: trace_info (store/ingest/analyse.py creates it)
-- Answers: in each step, how much of its wall time each cause held the critical path; a step's rows
-- add up to its wall time exactly (the ns column), causes with no time in a step have no row.
-- Binds: nothing (reads blame_rows, blame_windows, blame_causes, trace_info).
SELECT
    -- rank of the process that recorded the trace (NULL when not distributed)
    (SELECT rank FROM trace_info) AS rank,
    -- measured step (or call), 1-based
    r.step,
    -- the cause (sql/blame.sql header: the vocabulary and the priority rule)
    r.cause,
    -- device (the device was busy with this work) | host (the device was idle, or there is none)
    r.side,
    -- time blamed on the cause in this step, integer ns (a step's rows sum to its wall time exactly)
    r.ns,
    -- the same in ms
    r.ns / 1e6 AS ms,
    -- share of the step's wall time (the whole named in `whole`), %
    100.0 * r.ns / (w.end_ns - w.start_ns) AS share_pct,
    -- what share_pct is a share of: step_ms, the step's wall time in this table
    'step_ms' AS whole,
    -- the step's wall time: host start → later of host end and its device work's end (clipped at the next step), ms
    (w.end_ns - w.start_ns) / 1e6 AS step_ms
FROM blame_rows r
JOIN blame_windows w USING (step)
JOIN blame_causes c USING (cause)
ORDER BY r.step, c.priority;
