-- ranks.sql — `libreyolo profile ranks`: a job profile's ranks side by side.
--
-- Answers: per rank, its step time, how busy its device was, its compute, its exposed communication and
-- the part of its collective time spent waiting for a later rank, its dataload, its own verdict, and
-- which rank the others wait for (sql/job_ranks.sql decided it at import).
-- Binds: nothing. Reads: ranks (one profile's ranks table; empty for a one-trace profile).
SELECT rank,
       -- ms
       step_ms,
       -- %
       device_busy_pct,
       -- ms
       compute_ms,
       -- ms, and % of the step
       exposed_comm_ms, exposed_comm_pct,
       -- ms: time inside collectives waiting for a later rank
       collective_wait_ms,
       -- % of the rank's collective time
       100.0 * collective_wait_ms / nullif(collective_ms, 0) AS collective_wait_pct,
       -- ms
       transfer_ms, dataload_ms, entered_ms,
       -- count, and the others' wait for it in ms per step
       last_arrivals, waited_on_ms, waited_on_pct,
       verdict, straggler, clock_offset_ms, clock_method
FROM ranks
ORDER BY rank;
