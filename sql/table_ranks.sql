-- table_ranks.sql — the ranks table of a job profile: one row per rank.
-- requires: job_ranks.sql
-- Answers: each rank's step and its split, the time it waited in collectives, and whether it is the rank
-- the others wait for. Binds: nothing (reads job_rank_rows, job_straggler).
SELECT
    -- rank of the process that recorded the trace
    rank,
    -- measured steps of the rank, count
    steps,
    -- mean step wall time (sql/blame.sql's step), ms
    step_ms,
    -- share of the step the rank's device was busy, %
    device_busy_pct,
    -- device time per step in work that is neither a collective nor a copy, ms
    compute_ms,
    -- collective time per step no compute overlapped (the blame's communication), ms
    exposed_comm_ms,
    -- exposed communication's share of the step, %
    exposed_comm_pct,
    -- collectives in the rank's trace, count
    collectives,
    -- device time per step inside collectives, ms
    collective_ms,
    -- time per step inside collectives waiting for a later rank to arrive, ms (NULL when nothing matched)
    collective_wait_ms,
    -- the part of that wait no compute overlapped, ms
    exposed_wait_ms,
    -- time per step inside collectives after the last rank arrived, ms
    transfer_ms,
    -- time per step the device idled in dataloading (the blame's dataload), ms
    dataload_ms,
    -- time per step the device idled while the host was blocked in a sync (the blame's sync_bubble), ms
    sync_ms,
    -- its first step's start after the earliest rank's, on the job's clock, ms
    entered_ms,
    -- matched collectives at which it arrived last, count
    last_arrivals,
    -- the other ranks' wait for it per step, summed over them, ms
    waited_on_ms,
    -- that wait as a share of the other ranks' time in the matched collectives, %
    waited_on_pct,
    -- shift applied to its clock to put it on the job's (sql/collectives.sql), ms
    clock_offset_ms,
    -- how its clock was checked or aligned
    clock_method,
    -- its own verdict, as a single-rank profile of its trace would read
    verdict,
    -- true for the rank the others wait for (sql/job_ranks.sql: job_straggler)
    coalesce(rank = (SELECT rank FROM job_straggler), false) AS straggler
FROM job_rank_rows
ORDER BY rank;
