-- rank_timeline.sql — one rank's part of a job: its collectives, its exposed communication and its steps,
-- on the trace's own absolute clock, so sql/collectives.sql can match them across ranks.
-- requires: events.sql, ingest.sql, blame.sql
-- inputs: trace_info (store/ingest/analyse.py creates it)
-- Answers nothing by itself: it builds rank_timeline, which store/ingest/analyse.py reads into the analysis
-- and a job profile (store/document/job.py) hands every rank's rows to sql/collectives.sql as job_timeline.
-- Binds: nothing. Reads placed_activity, step_ranges, host_annotations (sql/ingest.sql), trace_origin
-- (sql/events.sql), blame_windows and blame_pieces (sql/blame.sql).
--
-- One row per thing, `what` says which:
--   collective  a communication kernel (sql/kernel_categories.sql) on the device (a CPU trace: gloo's
--               gloo:<op> annotation on its own thread, device -1). Its key across ranks:
--               grp (the recorded process group name; else the rank's n-th communication stream by first
--               use, since PyTorch gives each process group its own NCCL stream), step_mark (the step
--               whose host code launched it, by its ProfilerStep#N number where recorded, else the measured
--               step; 0 outside the steps), op (the collective's kind, from its kernel name) and seq (its
--               place among the same op of its group in that step). step is the rank's measured step. Keying the
--               place per op and step, not over the whole trace, keeps a rank that misses a collective of
--               one kind (a sampled trace) from shifting every later match.
--   exposed     a piece of a step that sql/blame.sql blames on communication (no compute overlapped it;
--               on a CPU: cpu_communication).
--   step        a measured step's blame window (host start → end of its device work).
-- step_mark on every row: the step across ranks (its ProfilerStep#N number, else the measured step).
-- Times: start_ns/end_ns, integer ns on the trace's clock (trace_origin added back).
CREATE OR REPLACE TEMP TABLE rank_timeline AS
WITH device_collective AS (
    SELECT device, stream, name, ts, dur, event_id AS ord, pg_name, msg_nelems, collective, step
    FROM placed_activity WHERE category = 'communication' AND kind = 'kernel'
),
host_collective AS (
    -- a trace without device collectives (gloo on the CPU): gloo runs each collective on its own thread
    -- and records it as an annotation (gloo:all_reduce) that lasts from its start until it completes
    -- gloo hands each collective to any thread of its pool: the thread is not the group, so one group
    SELECT -1 AS device, 'gloo' AS stream, a.name, a.ts, a.dur,
           row_number() OVER (ORDER BY a.ts, a.tid) AS ord, NULL AS pg_name, NULL AS msg_nelems, NULL AS collective,
           CASE WHEN a.ts < s.host_end_ns THEN s.step END AS step
    FROM host_annotations a ASOF LEFT JOIN step_ranges s ON a.ts >= s.start_ns
    WHERE a.name LIKE 'gloo:%' AND NOT EXISTS (SELECT 1 FROM device_collective)
),
collective AS (
    SELECT c.*,
           -- the collective's kind: as recorded (Collective name, PyTorch ≥ 2.1), else what NCCL/RCCL's kernel
           -- names carry after ncclKernel_/ncclDevKernel_ (not ncclDevKernel_Generic), and gloo's after gloo:
           coalesce(
               nullif(lower(c.collective), ''),
               nullif(regexp_extract(lower(c.name),
                   '(allreduce|all_reduce|allgather|all_gather|reducescatter|reduce_scatter|alltoall|all_to_all|'
                   || 'sendrecv|broadcast|reduce|send|recv|barrier)', 1), ''),
               lower(c.name)) AS op_raw
    FROM (SELECT * FROM device_collective UNION ALL SELECT * FROM host_collective) c
),
streams AS (
    SELECT device, stream, row_number() OVER (ORDER BY min(ts), device, stream) AS ordinal
    FROM collective GROUP BY device, stream
),
marks AS (
    -- each measured step's ProfilerStep#N number: the same step on every rank of a job, whichever window
    -- each rank's trace captured
    SELECT s.step, min(TRY_CAST(regexp_extract(e.name, '#(\d+)', 1) AS BIGINT)) AS number
    FROM step_ranges s JOIN host_annotations e ON e.name LIKE 'ProfilerStep#%' AND e.ts = s.start_ns
    GROUP BY s.step
),
step_marks AS (
    SELECT w.step, coalesce(m.number, w.step) AS step_mark FROM blame_windows w LEFT JOIN marks m USING (step)
),
keyed AS (
    SELECT c.*, coalesce('pg ' || c.pg_name, 'stream ' || s.ordinal) AS grp,
           replace(c.op_raw, '_', '') AS op, coalesce(c.step, 0) AS step_key,
           coalesce(m.step_mark, 0) AS step_mark
    FROM collective c JOIN streams s USING (device, stream) LEFT JOIN step_marks m ON m.step = c.step
)
SELECT 'collective' AS what, grp, step_key AS step, step_mark, op,
       row_number() OVER (PARTITION BY grp, step_mark, op ORDER BY ts, ord) AS seq,
       msg_nelems AS nelems, name,
       ts + (SELECT origin_ns FROM trace_origin) AS start_ns,
       ts + dur + (SELECT origin_ns FROM trace_origin) AS end_ns
FROM keyed
UNION ALL
SELECT 'exposed', NULL, p.step, m.step_mark, NULL, NULL, NULL, NULL,
       p.s + (SELECT origin_ns FROM trace_origin), p.e + (SELECT origin_ns FROM trace_origin)
FROM blame_pieces p LEFT JOIN step_marks m USING (step) WHERE p.cause IN ('communication', 'cpu_communication')
UNION ALL
SELECT 'step', NULL, w.step, m.step_mark, NULL, NULL, NULL, NULL,
       w.start_ns + (SELECT origin_ns FROM trace_origin), w.end_ns + (SELECT origin_ns FROM trace_origin)
FROM blame_windows w LEFT JOIN step_marks m USING (step);

SELECT (SELECT rank FROM trace_info) AS rank, * FROM rank_timeline ORDER BY start_ns, what;
