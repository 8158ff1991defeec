-- verdicts.sql — the verdict vocabulary: every bound a profile can be judged, the next step when no
-- advice rule (sql/advice.sql) fired for it, and how what-if models it. One row per verdict;
-- sql/verdict_rules.sql and sql/verdict_blame.sql decide which one a profile gets, sql/what_if.sql picks
-- its model here, and Python reads the rows (libreyolo_profile/vocabulary.py), never spelling a verdict.

-- verdicts: one row per verdict.
CREATE OR REPLACE TEMP TABLE verdicts (
    -- the verdict, as profile.json's verdict.bound and the `bound` metric name it
    verdict          VARCHAR,
    -- the next step when no advice rule of sql/advice.sql fired for this verdict
    advice           VARCHAR,
    -- the device's own kernels: the bottleneck only while the device is busy (below the busy threshold the
    -- verdict names why the device idled instead)
    device_work      BOOLEAN,
    -- what-if's model of it (launches | gpu-work | cpu-ops); NULL: what-if caps its saving by the verdict's share
    what_if_model    VARCHAR,
    -- an inference stage around the forward pass: the metric of its share of the call, %
    stage_metric     VARCHAR,
    -- among the stage verdicts, the order their shares are tested in
    stage_order      INTEGER,
    -- host CPU work that, in an inference call, is the dominant stage's (stage_metric ≥ stage_pct) when one dominates
    yields_to_stage  BOOLEAN,
    -- the step itself was measured under conditions that make its time untrustworthy
    untrusted_step   BOOLEAN
);
INSERT INTO verdicts VALUES
    ('gpu-compute', 'use AMP (bf16/fp16) so GEMMs run on Tensor Cores, channels_last, or a smaller model/--imgsz',
     TRUE, 'gpu-work', NULL, NULL, FALSE, FALSE),
    ('gpu-memory', 'fuse elementwise ops (torch.compile), avoid layout copies (channels_last), use fused optimizers',
     TRUE, 'gpu-work', NULL, NULL, FALSE, FALSE),
    ('communication', 'overlap communication with compute (bucket sizes), or reduce what is exchanged',
     FALSE, NULL, NULL, NULL, FALSE, FALSE),
    ('transfer', 'use pinned memory with non_blocking copies, or keep the data on the device',
     FALSE, NULL, NULL, NULL, FALSE, FALSE),
    ('sync', 'remove .item()/.cpu()/.to(''cpu'') and prints of device tensors inside the step (copies to pageable '
     || 'memory block too), or defer them to the end of the step', FALSE, NULL, NULL, NULL, FALSE, FALSE),
    ('host-launch', 'launch fewer, larger kernels: bigger --batch, CUDA graphs, torch.compile, fused optimizers',
     FALSE, 'launches', NULL, NULL, FALSE, FALSE),
    ('dataloader', 'raise --workers, enable pin_memory/persistent workers, or make decoding/augmentation cheaper',
     FALSE, NULL, NULL, NULL, FALSE, FALSE),
    ('host-cpu', 'take the host work out of the step (precompute it, or move it into DataLoader workers) or onto '
     || 'the device (preprocess on the GPU, fewer Python ops)',
     FALSE, NULL, NULL, NULL, TRUE, FALSE),
    ('preprocess', 'decode and letterbox fewer pixels (smaller --imgsz), or batch preprocessing',
     FALSE, NULL, 'preprocess_pct', 1, FALSE, FALSE),
    ('postprocess', 'raise --conf or lower --max-det so NMS sees fewer candidates',
     FALSE, NULL, 'postprocess_pct', 2, FALSE, FALSE),
    ('cold-start', 'warm up first (more --warmup iterations, so modules load and the allocator caches before the '
     || 'window), then profile more steps: a cold start is not the steady state', FALSE, NULL, NULL, NULL, FALSE, FALSE),
    ('idle-window', 'record what the host did in the time nothing records (with_stack=True for its Python frames, '
     || 'record_function ranges around I/O, waits and locks); where that time lies at the window''s edges, profile '
     || 'more steps of steady-state work (more --warmup, a window around the real work)',
     FALSE, NULL, NULL, NULL, FALSE, FALSE),
    ('cpu-compute', 'use a smaller model or --imgsz, more threads, or a GPU', FALSE, 'cpu-ops', NULL, NULL, FALSE, FALSE),
    ('cpu-overhead', 'batch more work per op (larger --batch), torch.compile, or fewer small ops',
     FALSE, 'cpu-ops', NULL, NULL, FALSE, FALSE),
    ('memory-pressure', 'lower --batch or --imgsz until the allocator stops retrying; utilization and throughput '
     || 'measured under thrashing cannot be trusted', FALSE, NULL, NULL, NULL, FALSE, TRUE),
    ('unknown', 'profile again: the trace''s durations were lost or corrupted '
     || '(a killed or buggy profiler, or a tool that rewrote the trace)', FALSE, NULL, NULL, NULL, FALSE, FALSE),
    -- a job's verdict (sql/job_ranks.sql): its advice depends on where the straggler's lateness arises
    ('straggler', NULL, FALSE, NULL, NULL, NULL, FALSE, FALSE);
