-- report_timeline.sql — `libreyolo profile report`: the step timeline, a few steps drawn lane by lane: the
-- critical path (the blame's winning cause, sql/blame.sql), the host phases, each device stream's work
-- (or, where the trace has more streams than fit, each device's compute, copies and communication) and
-- the busiest host threads, each thread's time in the cause its intervals carry.
-- requires: blame.sql, blame_causes.sql, ingest.sql, intervals.sql
-- inputs: report_timeline_params (readers/report_timeline.py creates it: steps_cap, bins, max_streams, max_threads)
--
-- Answers: what ran where, inside a step, at the resolution the page can draw. Every step is cut into
-- `bins` equal columns of the longest shown step's wall time (bin_ns each); in each lane and column the
-- name that covers most of it wins (ties: the blame's priority, then the name), and a run of columns with
-- one winner and one busy level is one row. A lane's overlapping intervals are first resolved as the blame
-- resolves them (sql/intervals.sql interval_coverage, the lower priority wins), so a column's busy time
-- is time, never double-counted. The rows are bounded by steps × lanes × bins whatever the trace's size.
-- Steps shown: all of them up to steps_cap; past it, evenly spread ones from the first, and the slowest.

-- report_timeline_steps: the steps drawn, with their wall time (sql/blame.sql's blame_windows).
CREATE OR REPLACE TEMP TABLE report_timeline_steps AS
WITH numbered AS (
    SELECT step, start_ns, end_ns,
           row_number() OVER (ORDER BY start_ns, step) AS position,
           count(*) OVER () AS steps_total,
           row_number() OVER (ORDER BY end_ns - start_ns DESC, step) AS slow_rank
    FROM blame_windows
),
spread AS (
    SELECT *, CAST(ceil(steps_total / greatest((SELECT steps_cap FROM report_timeline_params) - 1, 1)) AS BIGINT)
              AS stride
    FROM numbered
)
SELECT step, start_ns, end_ns, steps_total, slow_rank = 1 AS slowest
FROM spread
WHERE steps_total <= (SELECT steps_cap FROM report_timeline_params) OR (position - 1) % stride = 0 OR slow_rank = 1;

-- report_timeline_scale: one column's time, ns (the longest shown step spans `bins` columns)
CREATE OR REPLACE TEMP TABLE report_timeline_scale AS
SELECT greatest(CAST(ceil(max(end_ns - start_ns) / (SELECT bins FROM report_timeline_params)) AS BIGINT), 1) AS bin_ns
FROM report_timeline_steps;

-- report_timeline_device: the device work that ran in a shown step, clipped to it, with the lane it is drawn
-- in: one per (device, stream) while the shown steps use at most max_streams streams, else one per device
-- and kind of work (compute, copies, communication).
CREATE OR REPLACE TEMP TABLE report_timeline_device AS
WITH ran AS (
    SELECT w.step, a.device, a.stream, coalesce(a.category, a.kind) AS key,
           CASE WHEN a.kind IN ('memcpy', 'memset') THEN 'copies'
                WHEN a.category = 'communication' THEN 'communication' ELSE 'compute' END AS work,
           greatest(a.ts, w.start_ns) AS s, least(a.ts + a.dur, w.end_ns) AS e
    FROM placed_activity a JOIN report_timeline_steps w ON a.ts < w.end_ns AND a.ts + a.dur > w.start_ns
),
streams AS (
    -- each stream's main kind of work: its lane's word where lanes are streams
    SELECT device, stream, arg_max(work, ns) AS work FROM (
        SELECT device, stream, work, sum(e - s) AS ns FROM ran GROUP BY ALL
    ) GROUP BY ALL
),
fits AS (SELECT count(*) <= (SELECT max_streams FROM report_timeline_params) AS yes FROM streams),
-- the device is named in a lane only where the trace has several
several AS (SELECT count(DISTINCT device) > 1 AS yes FROM ran)
SELECT r.step, r.key, r.s, r.e, (SELECT count(*) FROM streams) AS streams_total,
       CASE WHEN (SELECT yes FROM several) THEN format('device {} · ', r.device) ELSE '' END
       || CASE WHEN (SELECT yes FROM fits) THEN format('stream {} · {}', coalesce(r.stream::VARCHAR, '?'), t.work)
               ELSE format('all streams · {}', r.work) END AS lane,
       -- lanes in order: by device, compute before copies before communication, then stream
       format('2 {} {} {}', lpad(coalesce(r.device::VARCHAR, ''), 6, ' '),
              CASE CASE WHEN (SELECT yes FROM fits) THEN t.work ELSE r.work END
                   WHEN 'compute' THEN 1 WHEN 'copies' THEN 2 ELSE 3 END,
              CASE WHEN (SELECT yes FROM fits) THEN lpad(coalesce(r.stream::VARCHAR, ''), 12, ' ') ELSE '' END)
           AS lane_order
FROM ran r JOIN streams t ON t.device IS NOT DISTINCT FROM r.device AND t.stream IS NOT DISTINCT FROM r.stream
WHERE r.e > r.s;

-- report_timeline_threads: the host threads with the most recorded time in the shown steps (at most
-- max_threads), and how many threads there were.
CREATE OR REPLACE TEMP TABLE report_timeline_threads AS
WITH recorded AS (
    SELECT i.pid, i.tid, sum(least(i.e, w.end_ns) - greatest(i.s, w.start_ns)) AS ns
    FROM blame_intervals i JOIN report_timeline_steps w ON i.s < w.end_ns AND i.e > w.start_ns
    WHERE i.tid IS NOT NULL GROUP BY ALL
)
SELECT pid, tid, count(*) OVER () AS threads_total,
       row_number() OVER (ORDER BY ns DESC, pid, tid) AS thread_rank,
       count(DISTINCT pid) OVER () AS pids
FROM recorded
QUALIFY thread_rank <= (SELECT max_threads FROM report_timeline_params);

-- report_timeline_intervals: every lane's intervals in the shown steps, clipped to the step: (lane, its
-- order, what kind of lane, the name it is coloured by, its priority where names overlap, s, e)
CREATE OR REPLACE TEMP TABLE report_timeline_intervals AS
SELECT p.step, 'critical path (blame)' AS lane, '0' AS lane_order, 'blame' AS lane_kind, p.cause AS key,
       c.priority, p.s, p.e
FROM blame_pieces p JOIN report_timeline_steps USING (step) JOIN blame_causes c USING (cause)
UNION ALL
SELECT w.step, 'host phases', '1', 'phases', g.phase, 0, g.seg_start, least(g.seg_end, w.end_ns)
FROM segments g JOIN report_timeline_steps w USING (step)
UNION ALL
SELECT step, lane, lane_order, 'device', key, 0, s, e FROM report_timeline_device
UNION ALL
SELECT w.step,
       CASE WHEN t.pids > 1 THEN format('host thread {} (pid {})', i.tid, i.pid) ELSE format('host thread {}', i.tid) END,
       format('3 {}', lpad(t.thread_rank::VARCHAR, 4, '0')), 'host', i.cause, i.priority,
       greatest(i.s, w.start_ns), least(i.e, w.end_ns)
FROM blame_intervals i
JOIN report_timeline_threads t ON t.pid IS NOT DISTINCT FROM i.pid AND t.tid = i.tid
JOIN report_timeline_steps w ON i.s < w.end_ns AND i.e > w.start_ns;

-- the runs drawn: per shown step and lane, consecutive columns with one winning name and one busy level
WITH labelled AS (
    -- a lane's names ordered by priority then name: interval_coverage's label (its first covering one wins)
    SELECT *, dense_rank() OVER (PARTITION BY step, lane ORDER BY priority, key) AS label
    FROM report_timeline_intervals WHERE e > s
),
names AS (SELECT DISTINCT step, lane, label, key, priority FROM labelled),
keyed AS (SELECT {'step': step, 'lane': lane} AS grp, label, s, e FROM labelled),
pieces AS (
    SELECT c.grp.step AS step, c.grp.lane AS lane, c.s, c.e, c.first_label AS label FROM interval_coverage(keyed) c
),
relative AS (
    SELECT p.step, p.lane, n.key, n.priority, p.s - w.start_ns AS rs, p.e - w.start_ns AS re, w.end_ns - w.start_ns AS len
    FROM pieces p
    JOIN names n ON n.step = p.step AND n.lane = p.lane AND n.label = p.label
    JOIN report_timeline_steps w ON w.step = p.step
),
cut AS (
    SELECT step, lane, key, priority, rs, re, len, bin_ns, unnest(range(rs // bin_ns, (re - 1) // bin_ns + 1)) AS bin
    FROM relative, report_timeline_scale
),
per_name AS (
    SELECT step, lane, bin, key, priority, len, bin_ns,
           sum(least(re, (bin + 1) * bin_ns) - greatest(rs, bin * bin_ns)) AS ns
    FROM cut GROUP BY step, lane, bin, key, priority, len, bin_ns
),
per_bin AS (
    -- the column's winner (the most time, then the lowest priority, then the name), its own time and all covered
    SELECT step, lane, bin, first(key ORDER BY ns DESC, priority, key) AS key, max(ns) AS key_ns,
           sum(ns) AS busy_ns,
           -- the column's time (the step's last column may be shorter), ns
           least(bin_ns, len - bin * bin_ns) AS column_ns
    FROM per_name GROUP BY step, lane, bin, len, bin_ns
),
levelled AS (
    -- the share of the column's time anything covers, in quarters, 1–4
    SELECT *, least(4, greatest(1, CAST(ceil(4.0 * busy_ns / column_ns) AS INTEGER))) AS level FROM per_bin
),
runs AS (
    SELECT *, bin - row_number() OVER (PARTITION BY step, lane, key, level ORDER BY bin) AS run FROM levelled
),
lanes AS (SELECT DISTINCT lane, lane_order, lane_kind FROM report_timeline_intervals)
SELECT
    -- measured step (or call), 1-based
    r.step,
    -- measured steps in the profile, count (only the report_timeline_steps ones are drawn)
    w.steps_total,
    -- the step's wall time (sql/blame.sql's blame_windows), ms
    (w.end_ns - w.start_ns) / 1e6 AS step_ms,
    -- whether it is the slowest step
    w.slowest,
    -- the lane: 'critical path (blame)', 'host phases', 'device D · stream S · work', 'host thread T'
    r.lane,
    -- the lanes' drawing order (text, sorts as drawn)
    l.lane_order,
    -- blame | phases | device | host
    l.lane_kind,
    -- the name the run is coloured by: a blame cause, a phase, a kernel category or copy kind
    r.key,
    -- how much of the run's columns something covers: 1–4 quarters (a run of short kernels is drawn lighter)
    r.level,
    -- the run's first column and the column after its last, 0-based
    min(r.bin) AS bin_start,
    max(r.bin) + 1 AS bin_end,
    -- columns across the longest shown step, count
    (SELECT bins FROM report_timeline_params) AS bins,
    -- one column's time, ms
    (SELECT bin_ns FROM report_timeline_scale) / 1e6 AS bin_ms,
    -- time covered inside the run by anything, ms (a lane's runs add up to all it covers in the step)
    sum(r.busy_ns) / 1e6 AS busy_ms,
    -- of that, the time of the run's own name, ms (a name that wins no column is in no run's key_ms)
    sum(r.key_ns) / 1e6 AS key_ms,
    -- device streams with work in the shown steps, count (lanes are streams only where they fit)
    coalesce((SELECT any_value(streams_total) FROM report_timeline_device), 0) AS streams_total,
    -- host threads with recorded time in the shown steps, count (the busiest are drawn)
    coalesce((SELECT any_value(threads_total) FROM report_timeline_threads), 0) AS threads_total
FROM runs r
JOIN report_timeline_steps w USING (step)
JOIN lanes l USING (lane)
GROUP BY r.step, w.steps_total, w.end_ns, w.start_ns, w.slowest, r.lane, l.lane_order, l.lane_kind, r.key, r.level,
         r.run
ORDER BY r.step, l.lane_order, r.lane, bin_start;
