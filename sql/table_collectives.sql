-- table_collectives.sql — the collectives table of a job profile: one row per rank and collective.
-- requires: collectives.sql
-- inputs: job_timeline (store/document/job.py registers it)
-- Answers: which collectives each rank ran, matched across ranks, how far apart the ranks arrived, who
-- arrived last, and how much of each rank's time inside it was waiting for that rank or transferring.
-- Binds: nothing (reads collective_matches, and job_timeline for the job's start).
WITH origin AS (
    SELECT min(j.start_ns - k.offset_ns) AS ns
    FROM job_timeline j JOIN collective_clock k USING (rank) WHERE j.what = 'step'
)
SELECT
    -- rank of the process that recorded the trace
    rank,
    -- process group: 'pg <name>' as recorded, else 'stream <n>' (the rank's n-th communication stream by first use)
    grp AS process_group,
    -- the rank's measured step whose host code launched it (0: outside the measured steps)
    step,
    -- the step across ranks: its ProfilerStep#N number where recorded, else the measured step (0: outside them)
    step_mark,
    -- the collective's kind from its kernel name (allreduce, alltoall, sendrecv, allgather …)
    op AS collective,
    -- its place among the same kind of its group in that step, in issue order, 1-based
    seq,
    -- input elements as recorded (NULL where the trace does not record them), count
    nelems,
    -- the kernel name as recorded
    name AS kernel,
    -- ranks whose trace holds this collective (below the world size: some ranks' traces miss it), count
    matched_ranks,
    -- false when the ranks recorded different message sizes for it
    sizes_agree,
    -- the rank's arrival (kernel start) on the job's clock, relative to the earliest rank's first step start, ms
    (start_ns - (SELECT ns FROM origin)) / 1e6 AS start_ms,
    -- the kernel's duration on this rank, ms
    (end_ns - start_ns) / 1e6 AS dur_ms,
    -- the last rank's arrival minus the first rank's, ms
    skew_ns / 1e6 AS skew_ms,
    -- the rank that arrived last (NULL when no other rank matched)
    CASE WHEN matched_ranks > 1 THEN last_rank END AS last_rank,
    -- time inside the collective before the last rank arrived, ms (NULL when no other rank matched)
    wait_ns / 1e6 AS wait_ms,
    -- time inside the collective after the last rank arrived, ms (NULL when no other rank matched)
    transfer_ns / 1e6 AS transfer_ms,
    -- the part of the wait no compute of this rank overlapped (blamed on communication), ms
    exposed_wait_ns / 1e6 AS exposed_wait_ms
FROM collective_matches
ORDER BY step_mark, process_group, start_ns, rank;
