-- phases.sql — `libreyolo profile phases`: per phase, per measured step.
--
-- Answers: how the step splits into phases on the host (wall ms, shares that add up to the step)
-- and how much device work each phase launched.
-- Binds: $phases (VARCHAR[]: the kind's phases in display order), $steps (BIGINT measured steps),
--        $on_gpu (BOOLEAN: false for a CPU profile, whose device columns are NULL, not 0),
--        $step_ms (DOUBLE: the trace's own step time — a measured profile's blame_step_ms, else step_ms: the
--        phases are profiled time too).
-- Reads: phases (one profile's phases table), ops (for a CPU profile's launches: dispatched leaf ops).
WITH present AS (
    SELECT phase, sum(wall_ms) AS wall_ms, sum(gpu_ms) AS gpu_ms, sum(kernels) AS kernels, sum(ops) AS ops,
           sum(launches) AS launches
    FROM phases GROUP BY phase
),
-- on a CPU a launch is a dispatched leaf op (as launches_per_step in sql/metrics.sql): per phase
leaf_ops AS (SELECT phase, sum(leaf_calls) AS leaf_ops FROM ops GROUP BY phase),
listed AS (
    SELECT unnest($phases) AS phase, generate_subscripts($phases, 1) AS position
    UNION ALL
    SELECT phase, 1000 FROM present WHERE NOT list_contains($phases, phase)
    UNION ALL
    -- the kernels that ran in the window but whose launch is inside no measured step (the phases table's
    -- rows with no phase): listed last, so the device column sums to the kernel time every metric uses
    SELECT NULL, 2000 FROM present WHERE phase IS NULL
)
SELECT
    -- phase name; '(outside steps)' on the row of kernels whose launch is inside no measured step
    coalesce(l.phase, '(outside steps)') AS phase,
    -- device kernel time launched from the phase, inside the window, per step, ms (the rows add up to the
    -- kernel time per step every metric uses)
    CASE WHEN $on_gpu THEN coalesce(p.gpu_ms, 0) / $steps END AS gpu_ms,
    -- host wall time of the phase, per step, ms
    coalesce(p.wall_ms, 0) / $steps AS wall_ms,
    -- share of the step's host wall time, % (the phases add up to 100)
    100.0 * coalesce(p.wall_ms, 0) / nullif((SELECT sum(wall_ms) FROM present), 0) AS wall_pct,
    -- share of step_ms, % (the figure dataload_pct, preprocess_pct … quote; on a GPU the step can
    -- outlast the host's phases while the device finishes, so these can add up to less than 100)
    100.0 * coalesce(p.wall_ms, 0) / $steps / nullif($step_ms, 0) AS step_pct,
    -- kernels launched from the phase, per step
    CASE WHEN $on_gpu THEN coalesce(p.kernels, 0) / $steps END AS kernels,
    -- framework ops recorded in the phase, per step
    coalesce(p.ops, 0) / $steps AS ops,
    -- launches from the phase, per step: runtime launch calls on a GPU, dispatched leaf ops on a CPU
    CASE WHEN $on_gpu THEN coalesce(p.launches, 0) ELSE coalesce(o.leaf_ops, 0) END / $steps AS launches,
    -- true on the row of kernels whose launch is inside no measured step
    l.phase IS NULL AS launched_outside_steps
FROM listed l LEFT JOIN present p ON p.phase IS NOT DISTINCT FROM l.phase
LEFT JOIN leaf_ops o ON o.phase IS NOT DISTINCT FROM l.phase
ORDER BY l.position, l.phase;
