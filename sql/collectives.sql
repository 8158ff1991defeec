-- collectives.sql — a job's collectives matched across its ranks, on one clock: per collective the start
-- skew and the rank that arrived last; per rank and collective the time it waited for that rank and the
-- transfer after it.
-- requires: intervals.sql
-- inputs: job_timeline (every rank's sql/rank_timeline.sql rows, with rank; store/document/job.py registers it)
-- Binds: nothing. Creates collective_rules, collective_clock, collective_calls and collective_matches,
-- which sql/job_ranks.sql, sql/table_collectives.sql and sql/table_ranks.sql read.
--
-- Matching: by process group, step (step_mark: its ProfilerStep#N), collective kind and place in issue order (sql/rank_timeline.sql's
-- key), so a rank missing some collectives leaves those unmatched (matched_ranks below the world) and
-- every other match intact. Where the trace records message sizes and the ranks' sizes differ, the match
-- stays but says so (sizes_agree false).
-- A rank's arrival at a collective is its kernel's start on the device: NCCL's kernel starts when the
-- rank's stream reaches it and spins until every peer has arrived, then moves the data; so a rank's wait
-- is from its start until the last rank's start (never past its own end) and its transfer the rest.
-- Clocks: ranks on one host or with synchronised clocks finish a collective within microseconds of each
-- other (it completes on all of them together). A rank whose median end differs from the others' by more
-- than clock_tolerance_ns, over at least min_clock_evidence matched collectives, has its clock shifted by
-- that median; otherwise its clock is left as recorded. collective_clock records each rank's offset, its
-- evidence and the method.

-- collective_rules: the thresholds the matching, the clock check and the straggler rule use.
CREATE OR REPLACE TEMP TABLE collective_rules AS
SELECT 100000 AS clock_tolerance_ns,   -- ns: ends further apart than this are a clock offset, not skew
       2 AS min_clock_evidence,        -- count: matched collectives a clock shift needs
       25.0 AS straggler_wait_pct;     -- %: others' collective time spent waiting for one rank to name it

CREATE OR REPLACE TEMP TABLE collective_raw AS
SELECT rank, grp, step, step_mark, op, seq, nelems, name, start_ns, end_ns FROM job_timeline WHERE what = 'collective';

-- collective_clock: per rank, the median of (its end − the collective's median end) over the collectives
-- it shares with another rank; offset_ns is what is subtracted from its times (0 unless aligned). The
-- collective's median end is quantile_disc's (one rank's actual end, exact in ns: the ranks whose clock
-- agrees with it stay unshifted, and a DOUBLE median of absolute ns would round by hundreds of ns).
CREATE OR REPLACE TEMP TABLE collective_clock AS
WITH keyed AS (
    SELECT *, count(*) OVER (PARTITION BY grp, step_mark, op, seq) AS n,
           quantile_disc(end_ns, 0.5) OVER (PARTITION BY grp, step_mark, op, seq) AS key_end
    FROM collective_raw
),
per_rank AS (
    SELECT rank, count(*) AS evidence, median(end_ns - key_end) AS end_offset_ns
    FROM keyed WHERE n > 1 GROUP BY rank
),
ranks AS (SELECT DISTINCT rank FROM job_timeline),
decided AS (
    SELECT r.rank, coalesce(p.evidence, 0) AS evidence, p.end_offset_ns,
           coalesce(max(abs(p.end_offset_ns)) OVER (), 0) > (SELECT clock_tolerance_ns FROM collective_rules)
               AS shift_any
    FROM ranks r LEFT JOIN per_rank p USING (rank)
)
SELECT rank, evidence, end_offset_ns,
       CASE WHEN shift_any AND evidence >= (SELECT min_clock_evidence FROM collective_rules)
            THEN CAST(round(end_offset_ns) AS BIGINT) ELSE 0 END AS offset_ns,
       CASE WHEN evidence = 0 THEN 'not aligned: no collective of this rank matched another rank'
            WHEN shift_any AND evidence >= (SELECT min_clock_evidence FROM collective_rules)
                THEN 'aligned on the median end of ' || evidence || ' matched collectives'
            WHEN shift_any THEN 'not aligned: too few matched collectives (' || evidence || ') to shift its clock'
            ELSE 'not aligned: the ranks'' collective ends agree within '
                 || (SELECT clock_tolerance_ns FROM collective_rules) // 1000 || ' µs'
       END AS method
FROM decided;

-- collective_calls: every rank's collectives on the one clock, with the match they belong to.
CREATE OR REPLACE TEMP TABLE collective_calls AS
WITH shifted AS (
    SELECT c.rank, c.grp, c.step, c.step_mark, c.op, c.seq, c.nelems, c.name,
           c.start_ns - k.offset_ns AS start_ns, c.end_ns - k.offset_ns AS end_ns
    FROM collective_raw c JOIN collective_clock k USING (rank)
)
SELECT *,
       count(*) OVER w AS matched_ranks,
       max(start_ns) OVER w AS last_start_ns,
       min(start_ns) OVER w AS first_start_ns,
       arg_max(rank, start_ns) OVER w AS last_rank,
       count(DISTINCT nelems) OVER w <= 1 AS sizes_agree
FROM shifted
WINDOW w AS (PARTITION BY grp, step_mark, op, seq);

-- collective_matches: each rank's wait (ns: from its start to the last rank's start, never past its own
-- end) and transfer (ns: the rest of its kernel) in each collective; both NULL where no other rank matched,
-- as nothing says when its peers arrived. exposed_wait_ns: the part of the wait that sql/blame.sql blamed
-- on communication (no compute of the rank overlapped it).
CREATE OR REPLACE TEMP TABLE collective_matches AS
WITH timed AS (
    SELECT *,
           CASE WHEN matched_ranks > 1 THEN least(greatest(last_start_ns - start_ns, 0), end_ns - start_ns) END
               AS wait_ns
    FROM collective_calls
),
exposed AS (
    SELECT j.rank, j.start_ns - k.offset_ns AS s, j.end_ns - k.offset_ns AS e
    FROM job_timeline j JOIN collective_clock k USING (rank) WHERE j.what = 'exposed'
),
exposed_wait AS (
    SELECT t.rank, t.grp, t.step_mark, t.op, t.seq,
           sum(interval_overlap_length(t.start_ns, t.start_ns + t.wait_ns, x.s, x.e)) AS ns
    FROM timed t JOIN exposed x ON x.rank = t.rank AND intervals_overlap(t.start_ns, t.start_ns + t.wait_ns, x.s, x.e)
    WHERE t.wait_ns > 0
    GROUP BY ALL
)
SELECT t.*, (t.end_ns - t.start_ns) - t.wait_ns AS transfer_ns,
       CASE WHEN t.wait_ns IS NOT NULL THEN coalesce(x.ns, 0) END AS exposed_wait_ns,
       t.last_start_ns - t.first_start_ns AS skew_ns
FROM timed t LEFT JOIN exposed_wait x USING (rank, grp, step_mark, op, seq);
