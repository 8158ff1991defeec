-- table_ops.sql — the ops table: framework ops (aten::…, autograd) per name and phase.
-- requires: ingest.sql
-- inputs: trace_info (store/ingest/analyse.py creates it)
-- Answers: where host CPU time goes, by self (exclusive) and total (inclusive) time.
-- Binds: nothing (reads placed_ops, measurement_window, trace_info from ingest.sql).
-- Self time excludes child ops, so self-time shares add up to at most 100% of op time.
SELECT
    -- rank of the process that recorded the trace (NULL when not distributed)
    (SELECT rank FROM trace_info) AS rank,
    -- phase the op ran in
    phase,
    -- op name
    name,
    -- calls in the window, and per measured step, count
    count(*) AS calls,
    count(*) / (SELECT steps FROM measurement_window) AS calls_per_step,
    -- calls that dispatched no further op (leaf ops: where the work happens), count
    count(*) FILTER (WHERE is_leaf) AS leaf_calls,
    -- exclusive CPU time: the op minus the ops it called, ms in the window and per step
    sum(self_ns) / 1e6 AS self_ms,
    sum(self_ns) / 1e6 / (SELECT steps FROM measurement_window) AS self_ms_per_step,
    -- inclusive CPU time: the op and everything it called, ms in the window and per step
    sum(dur) / 1e6 AS total_ms,
    sum(dur) / 1e6 / (SELECT steps FROM measurement_window) AS total_ms_per_step
FROM placed_ops
WHERE step IS NOT NULL
GROUP BY phase, name
ORDER BY self_ms DESC, name, phase;
