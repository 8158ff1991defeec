-- time_breakdown.sql — where each step's wall time went, as HTA's temporal and idle breakdowns: the blame's
-- rows (sql/blame.sql: every nanosecond of a step blamed on one cause) summed by what the device did, so
-- they add up to the blame and the headline's step exactly. For the Python API (Profile.temporal_breakdown,
-- Profile.idle_breakdown).
-- requires: blame_causes.sql
-- inputs: blame (a profile's table)
--
-- Binds nothing; creates the macros below.

-- time_breakdown_class(cause): what the device (on a CPU profile: the CPU) was doing in a cause's time.
--   compute      executing ops (blame_causes.runs_ops: GEMM/conv, attention, memory-bound and other kernels;
--                on a CPU, executing conv/matmul and other ops)
--   non_compute  busy without computing: collectives no compute hid, copies/memsets no kernel hid (on a
--                CPU, collectives on the host)
--   idle         the device idle: every other host-side cause (sync, launching, dataload, cold start,
--                Python, unexplained …); the idle breakdown splits it by cause
CREATE OR REPLACE TEMP MACRO time_breakdown_class(cause_name) AS (
    SELECT CASE WHEN c.runs_ops THEN 'compute'
                WHEN c.side = 'device' OR c.cpu_verdict = 'communication' THEN 'non_compute'
                ELSE 'idle' END
    FROM blame_causes c WHERE c.cause = cause_name
);

-- temporal_breakdown_steps(): one row per rank and step.
--   step_ms: the step's wall time (the blame's step_ms), ms; compute_ms, non_compute_ms, idle_ms: its
--   parts, ms (they add up to step_ms); compute_pct, non_compute_pct, idle_pct: their shares of it, %
CREATE OR REPLACE TEMP MACRO temporal_breakdown_steps() AS TABLE
WITH time_breakdown_classed AS (
    SELECT rank, step, ns, time_breakdown_class(cause) AS class FROM blame
)
SELECT rank, step,
       sum(ns) / 1e6 AS step_ms,
       coalesce(sum(ns) FILTER (WHERE class = 'compute'), 0) / 1e6 AS compute_ms,
       coalesce(sum(ns) FILTER (WHERE class = 'non_compute'), 0) / 1e6 AS non_compute_ms,
       coalesce(sum(ns) FILTER (WHERE class = 'idle'), 0) / 1e6 AS idle_ms,
       100.0 * coalesce(sum(ns) FILTER (WHERE class = 'compute'), 0) / nullif(sum(ns), 0) AS compute_pct,
       100.0 * coalesce(sum(ns) FILTER (WHERE class = 'non_compute'), 0) / nullif(sum(ns), 0) AS non_compute_pct,
       100.0 * coalesce(sum(ns) FILTER (WHERE class = 'idle'), 0) / nullif(sum(ns), 0) AS idle_pct
FROM time_breakdown_classed
GROUP BY rank, step
ORDER BY rank NULLS FIRST, step;

-- temporal_breakdown(): one row per rank, over all its measured steps.
--   steps: measured steps, count; step_ms: mean step wall time, ms (the headline's step_ms where the blame's
--   steps fill the window); compute_ms, non_compute_ms, idle_ms: per step, ms (they add up to step_ms);
--   wall_ms: every step's wall time, ms; compute_pct, non_compute_pct, idle_pct: shares of wall_ms, %
CREATE OR REPLACE TEMP MACRO temporal_breakdown() AS TABLE
SELECT rank, count(*) AS steps,
       sum(step_ms) / count(*) AS step_ms,
       sum(compute_ms) / count(*) AS compute_ms,
       sum(non_compute_ms) / count(*) AS non_compute_ms,
       sum(idle_ms) / count(*) AS idle_ms,
       sum(step_ms) AS wall_ms,
       100.0 * sum(compute_ms) / nullif(sum(step_ms), 0) AS compute_pct,
       100.0 * sum(non_compute_ms) / nullif(sum(step_ms), 0) AS non_compute_pct,
       100.0 * sum(idle_ms) / nullif(sum(step_ms), 0) AS idle_pct
FROM temporal_breakdown_steps()
GROUP BY rank
ORDER BY rank NULLS FIRST;

-- idle_breakdown(): the idle time (temporal_breakdown's idle_ms) split by the cause that held the step
-- while the device idled, one row per rank and cause, the largest first.
--   steps: measured steps, count; idle_ms: per step, ms (the rows of a rank add up to its idle_ms);
--   total_ms: over all steps, ms; idle_share_pct: share of the rank's idle time, %; step_share_pct: share of
--   its wall time, %; meaning: the cause in words (sql/blame_causes.sql)
CREATE OR REPLACE TEMP MACRO idle_breakdown() AS TABLE
WITH time_breakdown_walls AS (
    SELECT rank, count(DISTINCT step) AS steps, sum(ns) AS wall_ns,
           sum(ns) FILTER (WHERE time_breakdown_class(cause) = 'idle') AS idle_ns
    FROM blame GROUP BY rank
)
SELECT b.rank, b.cause, w.steps,
       sum(b.ns) / 1e6 / w.steps AS idle_ms,
       sum(b.ns) / 1e6 AS total_ms,
       100.0 * sum(b.ns) / w.idle_ns AS idle_share_pct,
       100.0 * sum(b.ns) / w.wall_ns AS step_share_pct,
       any_value(c.words) AS meaning
FROM blame b JOIN blame_causes c ON c.cause = b.cause JOIN time_breakdown_walls w ON w.rank IS NOT DISTINCT FROM b.rank
WHERE time_breakdown_class(b.cause) = 'idle'
GROUP BY b.rank, b.cause, w.steps, w.wall_ns, w.idle_ns
ORDER BY b.rank NULLS FIRST, idle_ms DESC, b.cause;
