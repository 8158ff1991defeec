-- table_phases.sql — the phases table: one row per measured step and phase.
-- Answers: in each step, how long each phase took on the host and what device work it issued.
-- Binds: nothing (reads segments, placed_activity, placed_ops, placed_runtime, trace_info, launch_roles).
WITH walls AS (SELECT step, phase, sum(seg_end - seg_start) AS wall_ns FROM segments GROUP BY step, phase),
work AS (
    SELECT step, phase, count(*) FILTER (WHERE kind = 'kernel') AS kernels,
           coalesce(sum(dur) FILTER (WHERE kind = 'kernel'), 0) AS kernel_ns
    FROM placed_activity WHERE step IS NOT NULL GROUP BY step, phase
),
ops AS (SELECT step, phase, count(*) AS ops FROM placed_ops WHERE step IS NOT NULL GROUP BY step, phase),
launches AS (
    SELECT step, phase, count(*) AS launches FROM placed_runtime
    WHERE step IS NOT NULL AND role IN (SELECT role FROM launch_roles)
    GROUP BY step, phase
)
SELECT
    -- rank of the process that recorded the trace (NULL when not distributed)
    (SELECT rank FROM trace_info) AS rank,
    -- measured step (or call), 1-based
    w.step,
    -- phase name
    w.phase,
    -- host wall time of the phase in this step, ms (phases of a step add up to the step)
    w.wall_ns / 1e6 AS wall_ms,
    -- device kernel time launched from this phase, ms (all devices)
    coalesce(work.kernel_ns, 0) / 1e6 AS gpu_ms,
    -- kernels launched from this phase
    coalesce(work.kernels, 0) AS kernels,
    -- framework ops recorded in this phase
    coalesce(ops.ops, 0) AS ops,
    -- runtime launch calls issued in this phase
    coalesce(launches.launches, 0) AS launches
FROM walls w
LEFT JOIN work USING (step, phase)
LEFT JOIN ops USING (step, phase)
LEFT JOIN launches USING (step, phase)
ORDER BY w.step, w.phase;
