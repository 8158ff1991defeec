-- compare_ranks.sql — `compare` of two job profiles: each rank before and after.
--
-- Answers: per rank, how its step, its exposed communication and its wait for later ranks changed, and
-- whether it was the straggler on either side (a rank on one side only has NULLs on the other).
-- Binds: nothing. Reads: ranks_before, ranks_after (the two job profiles' ranks tables).
SELECT coalesce(b.rank, a.rank) AS rank,
       -- ms
       b.step_ms AS step_ms_before, a.step_ms AS step_ms_after, a.step_ms - b.step_ms AS step_ms_delta,
       -- ms
       b.exposed_comm_ms AS exposed_comm_ms_before, a.exposed_comm_ms AS exposed_comm_ms_after,
       a.exposed_comm_ms - b.exposed_comm_ms AS exposed_comm_ms_delta,
       -- ms
       b.collective_wait_ms AS collective_wait_ms_before, a.collective_wait_ms AS collective_wait_ms_after,
       a.collective_wait_ms - b.collective_wait_ms AS collective_wait_ms_delta,
       b.verdict AS verdict_before, a.verdict AS verdict_after,
       coalesce(b.straggler, false) AS straggler_before, coalesce(a.straggler, false) AS straggler_after
FROM ranks_before b FULL JOIN ranks_after a ON a.rank = b.rank
ORDER BY rank;
