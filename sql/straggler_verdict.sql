-- straggler_verdict.sql — a job's verdict when its ranks wait for one of them: the straggler row
-- (sql/job_ranks.sql decides it and where its lateness arises) with the verdict it gets and the next step
-- that fits where the lateness arises. No row when no rank is waited for (the job then reads like its
-- slowest rank: store/document/job_verdict.py).
-- requires: verdicts.sql, job_ranks.sql

-- straggler_advice: where the straggler's lateness arises (job_straggler.arises_in) → what to do about it;
-- {rank} stands for the straggler's rank.
CREATE OR REPLACE TEMP TABLE straggler_advice (
    arises_in VARCHAR,
    advice    VARCHAR
);
INSERT INTO straggler_advice VALUES
    ('before the step',
     'find what rank {rank} does between steps that the others do not (the previous step''s tail, logging, '
     || 'checkpointing or evaluation on that rank only, an uneven data shard) and balance it, so every rank '
     || 'enters the step together; overlapping communication with compute will not help: the others are waiting'),
    ('in dataloading',
     'fix rank {rank}''s input pipeline (more DataLoader workers, pin_memory, prefetching, its node''s storage), '
     || 'or balance the data so its batches are no heavier than the others'''),
    ('in a sync',
     'remove the host sync rank {rank} makes before the collective (.item(), .cpu(), torch.cuda.synchronize, '
     || 'a blocking copy): it holds every other rank in its collectives'),
    ('in unrecorded host time',
     'record what rank {rank} does that the trace does not show (with_stack=True for Python, record_function '
     || 'ranges around I/O, waits and locks): before its collectives it spends time no op, call or frame '
     || 'records (a sleep, I/O, a lock, Python), and the others wait for it; then remove or balance that work'),
    ('in compute',
     'balance the work across ranks: rank {rank}''s share (uneven batch or sequence lengths, embedding tables '
     || 'or model shards) takes longer to compute than the others''');

SELECT s.*,
       -- the job's verdict
       v.verdict AS straggler_verdict,
       -- its next step, for this rank and where its lateness arises
       replace(a.advice, '{rank}', CAST(s.rank AS VARCHAR)) AS straggler_advice
FROM job_straggler s
JOIN straggler_advice a USING (arises_in)
JOIN verdicts v ON v.verdict = 'straggler';
