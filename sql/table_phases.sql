-- table_phases.sql — the phases table: one row per measured step and phase.
-- requires: ingest.sql, runtime_calls.sql, window_executions.sql
-- inputs: trace_info (store/ingest/analyse.py creates it)
-- Answers: in each step, how long each phase took on the host and what device work it issued.
-- Binds: nothing (reads segments, window_executions, placed_ops, placed_runtime, trace_info, launch_roles).
-- Every kernel execution inside the window counts, clipped to it: under the phase that launched it, or, when
-- its launch is not inside a measured step (queued before the capture began, launched between steps), in a
-- row of its own (phase NULL, launched_outside_steps) under the step whose span it ran in; so sum(gpu_ms)
-- is the kernel time every metric uses (sql/ingest.sql kernel_time).
WITH walls AS (
    SELECT step, phase, false AS launched_outside_steps, sum(seg_end - seg_start) AS wall_ns
    FROM segments GROUP BY step, phase
),
work AS (
    SELECT coalesce(launch_step, ran_in_step) AS step, launch_phase AS phase, launched_outside_steps,
           count(*) FILTER (WHERE kind = 'kernel') AS kernels,
           coalesce(sum(e - s) FILTER (WHERE kind = 'kernel'), 0) AS kernel_ns
    FROM window_executions GROUP BY ALL
),
rows_of AS (SELECT step, phase, launched_outside_steps FROM walls UNION SELECT step, phase, launched_outside_steps FROM work),
ops AS (SELECT step, phase, count(*) AS ops FROM placed_ops WHERE step IS NOT NULL GROUP BY step, phase),
launches AS (
    SELECT step, phase, count(*) AS launches FROM placed_runtime
    WHERE step IS NOT NULL AND role IN (SELECT role FROM launch_roles)
    GROUP BY step, phase
)
SELECT
    -- rank of the process that recorded the trace (NULL when not distributed)
    (SELECT rank FROM trace_info) AS rank,
    -- measured step (or call), 1-based (work launched outside the steps: the step it ran in)
    r.step,
    -- phase name (NULL on the row of work launched outside the steps)
    r.phase,
    -- host wall time of the phase in this step, ms (time inside the step that no phase range covers counts as
    -- forward, sql/ingest.sql segments: the phases of a step add up to the step)
    coalesce(w.wall_ns, 0) / 1e6 AS wall_ms,
    -- device kernel time launched from this phase, inside the window, ms (all devices)
    coalesce(work.kernel_ns, 0) / 1e6 AS gpu_ms,
    -- kernels launched from this phase that ran inside the window, count
    coalesce(work.kernels, 0) AS kernels,
    -- framework ops recorded in this phase, count
    coalesce(ops.ops, 0) AS ops,
    -- runtime launch calls issued in this phase, count
    coalesce(launches.launches, 0) AS launches,
    -- true on the row of kernels that ran in this step's span but whose launch is not inside a measured step
    r.launched_outside_steps
FROM rows_of r
LEFT JOIN walls w ON w.step = r.step AND w.phase IS NOT DISTINCT FROM r.phase AND NOT r.launched_outside_steps
LEFT JOIN work ON work.step = r.step AND work.phase IS NOT DISTINCT FROM r.phase
              AND work.launched_outside_steps = r.launched_outside_steps
LEFT JOIN ops ON ops.step = r.step AND ops.phase = r.phase AND NOT r.launched_outside_steps
LEFT JOIN launches ON launches.step = r.step AND launches.phase = r.phase AND NOT r.launched_outside_steps
ORDER BY r.step, r.launched_outside_steps, r.phase;
