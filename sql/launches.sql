-- launches.sql — how each device execution was launched and how deep each stream's queue ran, over one
-- trace's timeline: HTA's cuda_kernel_launch_stats (launch delay, launch call time, short kernels) and its
-- queue length analysis. For `launches` (readers/launches.py) and the Python API (Profile.launch_outliers,
-- Profile.queue_length).
-- inputs: launch_executions, launch_window (sql/launch_executions.sql over the trace's timeline, or the
-- launches section kept with the profile: store/ingest/lazy_sections.py)
--
-- Binds nothing; creates the tables and macros below. Times are relative to the measured window's start.

-- launch_kernel_spread: per kernel name launched inside the measured steps, its executions' duration
-- quartiles (ns), which the duration outliers are judged against.
CREATE OR REPLACE TEMP TABLE launch_kernel_spread AS
SELECT name, count(*) AS executions,
       quantile_cont(dur_ns, 0.25) AS q1_ns, median(dur_ns) AS median_ns, quantile_cont(dur_ns, 0.75) AS q3_ns
FROM launch_executions WHERE activity = 'kernel' AND step IS NOT NULL GROUP BY name;

-- launch_flags(delay_cutoff_us, call_cutoff_us): every kernel launched inside the measured steps with why
-- it stands out (an empty list: it does not).
--   launch_delay   launch to start longer than delay_cutoff_us (the stream was busy, or the device behind)
--   slow_launch    the launch call itself took longer than call_cutoff_us
--   short_kernel   the kernel ran shorter than its launch call took: launching costs more than the work
--   long_kernel    longer than its name's Q3 + 3·IQR and twice its median, among ≥ 4 executions of the name
CREATE OR REPLACE TEMP MACRO launch_flags(delay_cutoff_us, call_cutoff_us) AS TABLE
SELECT e.*, s.median_ns,
       list_filter([
           CASE WHEN e.delay_ns > delay_cutoff_us * 1000 THEN 'launch_delay' END,
           CASE WHEN e.call_ns > call_cutoff_us * 1000 THEN 'slow_launch' END,
           CASE WHEN e.dur_ns < e.call_ns THEN 'short_kernel' END,
           CASE WHEN s.executions >= 4 AND e.dur_ns > s.q3_ns + 3 * (s.q3_ns - s.q1_ns) AND e.dur_ns > 2 * s.median_ns
                THEN 'long_kernel' END
       ], lambda x: x IS NOT NULL) AS outliers
FROM launch_executions e JOIN launch_kernel_spread s USING (name)
WHERE e.activity = 'kernel' AND e.step IS NOT NULL;

-- launch_outliers(delay_cutoff_us, call_cutoff_us): the kernels launch_flags flags, the longest delay first.
--   launch_ms, start_ms: launch and start from the window start, ms; delay_us, call_us, duration_us: µs;
--   median_us: its name's median duration, µs; outliers: why it stands out (launch_flags' words)
CREATE OR REPLACE TEMP MACRO launch_outliers(delay_cutoff_us, call_cutoff_us) AS TABLE
SELECT device, stream, step, phase, name, call,
       launch_ns / 1e6 AS launch_ms, start_ns / 1e6 AS start_ms,
       delay_ns / 1e3 AS delay_us, call_ns / 1e3 AS call_us, dur_ns / 1e3 AS duration_us, median_ns / 1e3 AS median_us,
       outliers
FROM launch_flags(delay_cutoff_us, call_cutoff_us)
WHERE len(outliers) > 0
ORDER BY delay_ns DESC, launch_ns, name;

-- launch_stats(delay_cutoff_us, call_cutoff_us): per device and stream, the kernels launched inside the
-- measured steps: kernels (count), delay_p50_us / delay_p95_us / delay_max_us (launch to start, µs),
-- call_p50_us (the launch call, µs), and how many launch_flags flags of each kind (count).
CREATE OR REPLACE TEMP MACRO launch_stats(delay_cutoff_us, call_cutoff_us) AS TABLE
SELECT device, stream, count(*) AS kernels,
       quantile_cont(delay_ns, 0.5) / 1e3 AS delay_p50_us, quantile_cont(delay_ns, 0.95) / 1e3 AS delay_p95_us,
       max(delay_ns) / 1e3 AS delay_max_us, quantile_cont(call_ns, 0.5) / 1e3 AS call_p50_us,
       count(*) FILTER (WHERE list_contains(outliers, 'launch_delay')) AS launch_delay,
       count(*) FILTER (WHERE list_contains(outliers, 'slow_launch')) AS slow_launch,
       count(*) FILTER (WHERE list_contains(outliers, 'short_kernel')) AS short_kernel,
       count(*) FILTER (WHERE list_contains(outliers, 'long_kernel')) AS long_kernel
FROM launch_flags(delay_cutoff_us, call_cutoff_us)
GROUP BY device, stream
ORDER BY device, stream;

-- queue_length: per device and stream, the executions launched and not yet finished, at every instant the
-- count changes: +1 at a launch call's start, −1 at an execution's end (both at one instant: the net).
--   ts_ns: the instant, ns from the window start; queued: executions outstanding from then on, count
CREATE OR REPLACE TEMP TABLE queue_length AS
WITH queue_edges AS (
    SELECT device, stream, launch_ns AS ts_ns, 1 AS change FROM launch_executions
    UNION ALL SELECT device, stream, end_ns, -1 FROM launch_executions
),
queue_net AS (SELECT device, stream, ts_ns, sum(change) AS change FROM queue_edges GROUP BY ALL)
SELECT device, stream, ts_ns,
       CAST(sum(change) OVER (PARTITION BY device, stream ORDER BY ts_ns ROWS UNBOUNDED PRECEDING) AS BIGINT) AS queued
FROM queue_net;

-- queue_summary: per device and stream, inside the measured window.
--   executions: launched executions that ran or waited in it, count; max_queued: the deepest queue in it
--   (count); mean_queued: the time-weighted mean queue over the window (count: each execution's
--   launch-to-end time inside the window summed, ÷ the window); queued_pct: share of the window with ≥ 1
--   execution outstanding, %
CREATE OR REPLACE TEMP TABLE queue_summary AS
WITH queue_window AS (SELECT 0 AS s, window_ns AS e FROM launch_window),
queue_inside AS (
    SELECT q.device, q.stream, q.ts_ns, q.queued,
           lead(q.ts_ns) OVER (PARTITION BY q.device, q.stream ORDER BY q.ts_ns) AS next_ns
    FROM queue_length q
),
queue_levels AS (  -- each level's span clipped to the window
    SELECT i.device, i.stream, i.queued,
           least(coalesce(i.next_ns, w.e), w.e) - greatest(i.ts_ns, w.s) AS span_ns
    FROM queue_inside i, queue_window w
    WHERE i.ts_ns < w.e AND coalesce(i.next_ns, w.e) > w.s
)
SELECT l.device, l.stream,
       (SELECT count(*) FROM launch_executions x, queue_window w
        WHERE x.device IS NOT DISTINCT FROM l.device AND x.stream IS NOT DISTINCT FROM l.stream
          AND x.launch_ns < w.e AND x.end_ns > w.s) AS executions,
       max(l.queued) FILTER (WHERE l.span_ns > 0) AS max_queued,
       sum(l.queued * l.span_ns) / nullif(any_value(w.e - w.s), 0) AS mean_queued,
       100.0 * coalesce(sum(l.span_ns) FILTER (WHERE l.queued > 0), 0) / nullif(any_value(w.e - w.s), 0) AS queued_pct
FROM queue_levels l, queue_window w
GROUP BY l.device, l.stream
ORDER BY l.device, l.stream;
