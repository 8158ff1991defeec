-- blame_causes.sql — the blame's vocabulary: every cause a nanosecond of a step can be blamed on, the
-- verdict it supports, and what it means in a sentence. One row per cause; sql/blame.sql decides which
-- cause holds each instant (its header says how), sql/verdict_blame.sql turns the shares into a verdict,
-- and Python reads the words from here (libreyolo_profile/vocabulary.py), never spelling a cause itself.

-- blame_causes: one row per cause.
CREATE OR REPLACE TEMP TABLE blame_causes (
    -- the cause, as the blame table and the blame_<cause>_pct metrics name it
    cause       VARCHAR,
    -- lower wins where intervals of several causes overlap (sql/blame.sql)
    priority    INTEGER,
    -- gpu | cpu | any: the profiles it can appear in
    profile     VARCHAR,
    -- device (the device was busy) | host (the device was idle, or there is none)
    side        VARCHAR,
    -- the verdict (sql/verdicts.sql) its share supports in a profile with device work; NULL: not a GPU cause
    gpu_verdict VARCHAR,
    -- the verdict its share supports in a CPU profile; NULL: not a CPU cause
    cpu_verdict VARCHAR,
    -- whether the device (on a CPU: the CPU) was executing ops: the time faster ops can take off the step
    runs_ops    BOOLEAN,
    -- what it means, as the verdict's reason quotes it
    words       VARCHAR,
    -- the host was waiting on the device in it: what-if's host floor leaves it out (the time would go
    -- with the device work it waited for)
    waits_on_device BOOLEAN,
    -- a metric a screen prints under a like name that measures something else (NULL: none), and how it differs
    differs_from VARCHAR,
    differs_how  VARCHAR
);
INSERT INTO blame_causes VALUES
    ('gemm_conv', 1, 'gpu', 'device', 'gpu-compute', NULL, TRUE, 'device busy in GEMM/convolution kernels',
     FALSE, NULL, NULL),
    ('attention', 2, 'gpu', 'device', 'gpu-compute', NULL, TRUE, 'device busy in attention kernels', FALSE, NULL, NULL),
    ('memory_bound', 3, 'gpu', 'device', 'gpu-memory', NULL, TRUE,
     'device busy in elementwise/layout/norm/reduce/optimizer kernels', FALSE, NULL, NULL),
    ('device_other', 4, 'gpu', 'device', 'gpu-compute', NULL, TRUE, 'device busy in other kernels', FALSE, NULL, NULL),
    ('communication', 5, 'gpu', 'device', 'communication', NULL, FALSE,
     'device busy in collectives no compute overlapped', FALSE, NULL, NULL),
    ('memcpy_memset', 6, 'gpu', 'device', 'transfer', NULL, FALSE, 'device busy in copies/memsets no kernel overlapped',
     FALSE, NULL, NULL),
    ('sync_bubble', 10, 'gpu', 'host', 'sync', NULL, FALSE,
     'device idle while the host blocked in a sync, a copy with pageable memory or a poll of the device''s progress',
     TRUE, 'sync_pct', 'counts only synchronizing calls (blocking copies left out), the device busy or not'),
    ('startup', 11, 'gpu', 'host', 'cold-start', NULL, FALSE,
     'device idle while the host created streams, events, contexts or library handles', FALSE, NULL, NULL),
    ('module_loading', 12, 'gpu', 'host', 'cold-start', NULL, FALSE,
     'device idle while the host loaded modules (lazy loading on a kernel''s first launch)', FALSE, NULL, NULL),
    ('allocator', 13, 'gpu', 'host', 'cold-start', NULL, FALSE, 'device idle while the host was in cudaMalloc/cudaFree',
     FALSE, NULL, NULL),
    ('dataload', 14, 'any', 'host', 'dataloader', 'dataloader', FALSE, 'device idle while the step waited for data',
     FALSE, 'dataload_pct', 'is the dataload phase''s whole wall time, the device''s busy time in it included'),
    ('launching', 15, 'gpu', 'host', 'host-launch', NULL, FALSE, 'device idle while the host was busy launching work',
     FALSE, NULL, NULL),
    ('preprocess', 16, 'gpu', 'host', 'preprocess', NULL, FALSE,
     'device idle while the host preprocessed the input (before the call''s first launch)',
     FALSE, 'preprocess_pct', 'is the preprocess stage''s whole wall time, the device''s busy time in it included'),
    ('cpu_work', 17, 'gpu', 'host', 'host-cpu', NULL, FALSE,
     'device idle while the host ran ops or runtime calls that launch nothing', FALSE, NULL, NULL),
    ('cpu_gemm_conv', 21, 'cpu', 'host', NULL, 'cpu-compute', TRUE, 'CPU executing conv/matmul ops', FALSE, NULL, NULL),
    ('cpu_other_ops', 22, 'cpu', 'host', NULL, 'cpu-compute', TRUE, 'CPU executing other ops', FALSE, NULL, NULL),
    ('cpu_communication', 23, 'cpu', 'host', NULL, 'communication', FALSE, 'collectives on the host',
     FALSE, NULL, NULL),
    -- an op whose inputs are too small for its arithmetic to outweigh its dispatch (sql/blame.sql,
    -- verdict_thresholds' dispatch_op_elements) spends its time in the framework, not in the arithmetic
    ('framework_overhead', 24, 'cpu', 'host', NULL, 'cpu-overhead', FALSE,
     'framework dispatch: ops that execute nothing themselves, or too little arithmetic to outweigh their dispatch',
     FALSE, NULL, NULL),
    -- Python no op covers holds the step: the work is the Python itself, on a CPU as on a GPU
    ('python', 25, 'any', 'host', 'host-cpu', 'host-cpu', FALSE,
     'host running recorded Python (frames or host ranges) with no op inside', FALSE, NULL, NULL),
    ('unexplained_idle', 99, 'any', 'host', 'idle-window', 'idle-window', FALSE,
     'nothing at all recorded on any host thread or the device', FALSE, NULL, NULL);
