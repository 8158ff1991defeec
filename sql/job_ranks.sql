-- job_ranks.sql — a job's ranks side by side, and the straggler: the rank the others wait for.
-- requires: collectives.sql, intervals.sql
-- inputs: job_blame (every rank's blame table rows), job_rank_verdicts (rank, bound: each rank's own verdict),
--   job_timeline (every rank's sql/rank_timeline.sql rows); store/document/job.py registers them
-- Binds: nothing. Creates job_rank_rows (one row per rank) and job_straggler (one row when the others
-- wait for one rank), which sql/table_ranks.sql and the job's verdict (store/document/job.py) read.
--
-- Per rank, per measured step (means over its steps): its step time and the blame's split of it
-- (sql/blame.sql) — device busy, compute (device work that is not a collective or a copy), exposed
-- communication (collectives no compute overlapped) and dataload — and, from sql/collectives.sql, the
-- time inside its collectives waiting for a later rank and transferring after it.
-- The straggler: the rank whose late arrival the others' waits add up to most, when that is at least
-- collective_rules.straggler_wait_pct of the others' collective time. Where its lateness arises is read at
-- the collective the others waited for it longest: its lateness there over the others' median arrival is
-- split into `before the step` (it entered the step late: that much is there already at the step's start),
-- its excess over the others' median dataload, sync and unrecorded time (blame, over the whole step), and the
-- rest, its own compute up to the collective; the largest part names it (arises_in: before the step | in
-- dataloading | in a sync | in unrecorded host time | in compute).

-- the first start of each rank's step on the job's clock
CREATE OR REPLACE TEMP TABLE job_step_starts AS
SELECT j.rank, j.step_mark, j.start_ns - k.offset_ns AS start_ns
FROM job_timeline j JOIN collective_clock k USING (rank) WHERE j.what = 'step';

CREATE OR REPLACE TEMP TABLE job_rank_rows AS
WITH steps AS (
    SELECT rank, step, any_value(step_ms) AS step_ms FROM job_blame GROUP BY rank, step
),
blame AS (
    SELECT rank,
           sum(ns) FILTER (WHERE side = 'device') AS device_ns,
           -- NULL on a rank with no device side (a CPU rank): there is no device work to split
           CASE WHEN bool_or(side = 'device') THEN
               coalesce(sum(ns) FILTER (WHERE side = 'device' AND cause NOT IN ('communication', 'memcpy_memset')), 0)
           END AS compute_ns,
           coalesce(sum(ns) FILTER (WHERE cause IN ('communication', 'cpu_communication')), 0) AS exposed_ns,
           coalesce(sum(ns) FILTER (WHERE cause = 'dataload'), 0) AS dataload_ns,
           coalesce(sum(ns) FILTER (WHERE cause = 'sync_bubble'), 0) AS sync_ns,
           -- nothing recorded on any thread or the device (a sleep, I/O, a lock, Python without with_stack)
           coalesce(sum(ns) FILTER (WHERE cause = 'unexplained_idle'), 0) AS unrecorded_ns,
           sum(ns) AS wall_ns
    FROM job_blame GROUP BY rank
),
per_step AS (SELECT rank, count(*) AS steps, avg(step_ms) AS step_ms FROM steps GROUP BY rank),
calls AS (
    SELECT rank, count(*) AS collectives, sum(end_ns - start_ns) AS collective_ns, sum(wait_ns) AS wait_ns,
           sum(transfer_ns) AS transfer_ns, sum(exposed_wait_ns) AS exposed_wait_ns,
           count(*) FILTER (WHERE matched_ranks > 1) AS matched
    FROM collective_matches GROUP BY rank
),
late AS (
    SELECT last_rank AS rank, count(DISTINCT (grp, step_mark, op, seq)) AS last_arrivals,
           sum(wait_ns) FILTER (WHERE rank <> last_rank) AS waited_on_ns
    FROM collective_matches WHERE matched_ranks > 1 GROUP BY last_rank
),
others AS (
    -- the collective time of every other rank: what a rank's lateness is a share of
    SELECT r.rank, sum(c.end_ns - c.start_ns) FILTER (WHERE c.rank <> r.rank AND c.matched_ranks > 1) AS ns
    FROM (SELECT DISTINCT rank FROM job_blame) r, collective_matches c GROUP BY r.rank
),
entered AS (
    SELECT rank, min(start_ns) - min(min(start_ns)) OVER () AS entered_ns FROM job_step_starts GROUP BY rank
)
SELECT p.rank, p.steps, p.step_ms,
       100.0 * b.device_ns / b.wall_ns AS device_busy_pct,
       b.compute_ns / p.steps / 1e6 AS compute_ms,
       b.exposed_ns / p.steps / 1e6 AS exposed_comm_ms,
       100.0 * b.exposed_ns / b.wall_ns AS exposed_comm_pct,
       coalesce(c.collectives, 0) AS collectives,
       c.collective_ns / p.steps / 1e6 AS collective_ms,
       c.wait_ns / p.steps / 1e6 AS collective_wait_ms,
       c.exposed_wait_ns / p.steps / 1e6 AS exposed_wait_ms,
       c.transfer_ns / p.steps / 1e6 AS transfer_ms,
       b.dataload_ns / p.steps / 1e6 AS dataload_ms,
       b.sync_ns / p.steps / 1e6 AS sync_ms,
       b.unrecorded_ns / p.steps / 1e6 AS unrecorded_ms,
       e.entered_ns / 1e6 AS entered_ms,
       CASE WHEN c.matched > 0 THEN coalesce(l.last_arrivals, 0) END AS last_arrivals,
       CASE WHEN c.matched > 0 THEN coalesce(l.waited_on_ns, 0) / p.steps / 1e6 END AS waited_on_ms,
       CASE WHEN o.ns > 0 THEN 100.0 * coalesce(l.waited_on_ns, 0) / o.ns END AS waited_on_pct,
       k.offset_ns / 1e6 AS clock_offset_ms, k.method AS clock_method,
       v.bound AS verdict
FROM per_step p
JOIN blame b USING (rank)
LEFT JOIN calls c USING (rank)
LEFT JOIN late l USING (rank)
LEFT JOIN others o USING (rank)
LEFT JOIN entered e USING (rank)
LEFT JOIN collective_clock k USING (rank)
LEFT JOIN job_rank_verdicts v USING (rank);

-- job_straggler: the rank the others wait for (no row when none does), and where its lateness arises.
CREATE OR REPLACE TEMP TABLE job_straggler AS
WITH candidate AS (
    SELECT * FROM job_rank_rows
    WHERE waited_on_pct >= (SELECT straggler_wait_pct FROM collective_rules)
    ORDER BY waited_on_pct DESC, rank LIMIT 1
),
late_calls AS (
    -- the collectives it arrived last at: its lateness over the others' median arrival, the part of it
    -- already there when the step began (its step start over the others' median step start), and how long
    -- the others waited for it there
    SELECT m.grp, m.step_mark, m.op, m.seq, m.start_ns,
           m.start_ns - quantile_disc(o.start_ns, 0.5) AS lateness_ns,
           sum(o.wait_ns) AS held_ns,
           (SELECT start_ns FROM job_step_starts s WHERE s.rank = m.rank AND s.step_mark = m.step_mark)
             - (SELECT quantile_disc(s.start_ns, 0.5) FROM job_step_starts s WHERE s.rank <> m.rank AND s.step_mark = m.step_mark)
               AS entry_ns
    FROM collective_matches m
    JOIN collective_matches o ON (o.grp, o.step_mark, o.op, o.seq) = (m.grp, m.step_mark, m.op, m.seq) AND o.rank <> m.rank
    WHERE m.rank = (SELECT rank FROM candidate) AND m.last_rank = m.rank AND m.matched_ranks > 1
    GROUP BY m.rank, m.grp, m.step_mark, m.op, m.seq, m.start_ns
),
held_longest AS (
    -- where its lateness is read: the collective at which the others waited for it longest
    SELECT * FROM late_calls ORDER BY held_ns DESC, start_ns LIMIT 1
),
others AS (
    SELECT median(dataload_ms) AS dataload_ms, median(sync_ms) AS sync_ms, median(unrecorded_ms) AS unrecorded_ms
    FROM job_rank_rows WHERE rank <> (SELECT rank FROM candidate)
),
split AS (
    SELECT c.rank, c.last_arrivals, c.waited_on_ms, c.waited_on_pct,
           (SELECT count(DISTINCT (grp, step_mark, op, seq)) FROM collective_matches WHERE matched_ranks > 1)
               AS matched_collectives,
           (SELECT op || ' #' || seq || ' of step ' || step_mark FROM held_longest) AS held_longest_at,
           (SELECT lateness_ns FROM held_longest) / 1e6 AS lateness_ms,
           least(greatest((SELECT entry_ns FROM held_longest), 0), (SELECT lateness_ns FROM held_longest)) / 1e6
               AS before_step_ms,
           greatest(c.dataload_ms - o.dataload_ms, 0) AS dataload_excess_ms,
           greatest(c.sync_ms - o.sync_ms, 0) AS sync_excess_ms,
           greatest(c.unrecorded_ms - o.unrecorded_ms, 0) AS unrecorded_excess_ms
    FROM candidate c, others o
)
SELECT *,
       greatest(lateness_ms - before_step_ms - dataload_excess_ms - sync_excess_ms - unrecorded_excess_ms, 0)
           AS compute_excess_ms,
       CASE greatest(before_step_ms, dataload_excess_ms, sync_excess_ms, unrecorded_excess_ms,
                     lateness_ms - before_step_ms - dataload_excess_ms - sync_excess_ms - unrecorded_excess_ms)
           WHEN before_step_ms THEN 'before the step'
           WHEN dataload_excess_ms THEN 'in dataloading'
           WHEN sync_excess_ms THEN 'in a sync'
           WHEN unrecorded_excess_ms THEN 'in unrecorded host time'
           ELSE 'in compute'
       END AS arises_in
FROM split;

-- job_rank_overlap: per rank, whether (shares_time) any of its steps shares time with another rank's steps on the
-- job's clock. The ranks of one job run their steps together (their collectives hold them together); a
-- rank whose steps overlap no other rank's is a trace of another run, which a job import refuses.
CREATE OR REPLACE TEMP TABLE job_rank_overlap AS
WITH spans AS (
    SELECT j.rank, j.start_ns - k.offset_ns AS s, j.end_ns - k.offset_ns AS e
    FROM job_timeline j JOIN collective_clock k USING (rank) WHERE j.what = 'step'
)
SELECT a.rank, bool_or(b.rank IS NOT NULL) AS shares_time, min(a.s) AS first_start_ns
FROM spans a LEFT JOIN spans b ON b.rank <> a.rank AND intervals_overlap(a.s, a.e, b.s, b.e)
GROUP BY a.rank;
