-- table_memory.sql — the memory table: the allocator through the window (sql/memory.sql builds it).
-- requires: ingest.sql, memory.sql
-- inputs: trace_info
-- Answers: per device the peak, when it happened and what ran then; a bounded timeline of the level;
-- which ops and modules allocated and what they still held at the peak; the churn per step; the
-- phase bands behind a chart. One table, one `record` kind per row:
--   device  one per device: the peak (ts_ms, allocated_mb, what ran), peak reserved, the window's totals
--   point   the timeline: at most ~1,035 points per device (each run of events keeps its highest and
--           lowest point), the peak and its 16 neighbours either side exactly (peak = true at the peak)
--   op      per outermost op (the call the model made; NULL: outside any op): what it allocated
--   module  per innermost module range (NULL: outside any module)
--   step    per device and measured step: allocator events and the process's cudaMalloc/cudaFree calls
--   band    per measured step, a phase's time range (device NULL): the chart's phase bands
-- levels 'relative' (a trace of `Bytes` only, the 2021 format): every level is the rise above the
-- window's start (at least that much memory), never an allocator total. Empty without `[memory]`
-- events (profile_memory off). Binds: nothing (reads the memory_* tables, measurement_window, trace_info).
WITH w AS (SELECT start_ns FROM measurement_window),
base AS (
    SELECT 'device' AS record, device_type, device, levels, step, phase, op, leaf_op, module,
           peak_ts AS ts, NULL::BIGINT AS end_ts, peak_bytes AS allocated, peak_reserved_bytes AS reserved, true AS peak,
           events, allocations, frees, alloc_bytes, freed_bytes, net_bytes,
           live_bytes,
           (SELECT sum(mallocs) FROM memory_step_calls) AS mallocs, (SELECT sum(frees) FROM memory_step_calls) AS runtime_frees
    FROM memory_devices
    UNION ALL BY NAME
    SELECT 'point' AS record, device_type, device, levels, step, phase, op, leaf_op, module, ts,
           allocated, reserved, is_peak AS peak
    FROM memory_timeline
    UNION ALL BY NAME
    SELECT record, device_type, device, levels, key AS op, events, allocations, frees, alloc_bytes,
           freed_bytes, net_bytes, net_to_peak_bytes, live_bytes
    FROM memory_by WHERE record = 'op'
    UNION ALL BY NAME
    SELECT record, device_type, device, levels, key AS module, events, allocations, frees, alloc_bytes,
           freed_bytes, net_bytes, net_to_peak_bytes, live_bytes
    FROM memory_by WHERE record = 'module'
    UNION ALL BY NAME
    SELECT 'step' AS record, d.device_type, d.device, d.levels, s.step,
           coalesce(b.events, 0) AS events, coalesce(b.allocations, 0) AS allocations, coalesce(b.frees, 0) AS frees,
           coalesce(b.alloc_bytes, 0) AS alloc_bytes, coalesce(b.freed_bytes, 0) AS freed_bytes,
           coalesce(b.net_bytes, 0) AS net_bytes, s.mallocs, s.frees AS runtime_frees
    FROM memory_devices d CROSS JOIN memory_step_calls s
    LEFT JOIN memory_by b ON b.record = 'step' AND b.device_type = d.device_type AND b.device = d.device AND b.step = s.step
    UNION ALL BY NAME
    SELECT 'band' AS record, step, phase, start_ns AS ts, end_ns AS end_ts FROM memory_bands
)
SELECT
    -- rank of the process that recorded the trace (NULL when not distributed)
    (SELECT rank FROM trace_info) AS rank,
    -- device | point | op | module | step | band (the header above)
    record,
    -- whose allocator: cpu (the host's) | cuda | type <n> (the profiler's Device Type); NULL on band rows
    device_type AS allocator,
    -- device id (-1: the host); NULL on band rows, and where the trace's id is past INTEGER (a hostile one
    -- failed the whole memory section)
    TRY_CAST(device AS INTEGER) AS device,
    -- absolute: allocator totals (Total Allocated) | profiled: the host's totals, which hold only blocks
    -- allocated while the profiler recorded | relative: the rise above the window's start (Bytes only)
    levels,
    -- measured step, 1-based (device/point: at that instant; step/band: the row's step)
    step,
    -- phase at that instant (band: the band's phase)
    phase,
    -- the outermost op running on the allocating thread (op rows: the op the figures belong to)
    op,
    -- the innermost op running then: the one that called the allocator
    leaf_op,
    -- the innermost module range open on the allocating thread (module rows: the module)
    module,
    -- the instant (device: of the peak; band: its start) relative to the window start, ms
    (ts - (SELECT start_ns FROM w)) / 1e6 AS ts_ms,
    -- band rows: the band's end relative to the window start, ms
    (end_ts - (SELECT start_ns FROM w)) / 1e6 AS end_ms,
    -- allocated after the event (device: the peak), MiB; relative levels: above the window's start
    allocated / 1048576.0 AS allocated_mb,
    -- reserved by the caching allocator after the event (device: its peak), MiB; NULL where not recorded
    reserved / 1048576.0 AS reserved_mb,
    -- point rows: true at the peak
    peak,
    -- allocator events counted in the row, count
    events,
    -- allocations (Bytes > 0) and frees (Bytes < 0) in the row, count
    allocations,
    frees,
    -- bytes allocated and bytes freed in the row, MiB
    alloc_bytes / 1048576.0 AS alloc_mb,
    freed_bytes / 1048576.0 AS freed_mb,
    -- allocated − freed in the row, MiB
    net_bytes / 1048576.0 AS net_mb,
    -- op/module rows: allocated − freed from the window's start up to the peak (their share of the
    -- rise; the rows of a device add up to the device's peak on relative levels), MiB
    net_to_peak_bytes / 1048576.0 AS net_to_peak_mb,
    -- op/module/device rows: bytes allocated in the window and not yet freed at the peak (matched by
    -- block address), MiB; NULL where the trace records no Addr (the 2021 format)
    live_bytes / 1048576.0 AS live_at_peak_mb,
    -- step rows: the process's cudaMalloc-like and cudaFree-like calls in the step (device rows: all
    -- measured steps), count
    CAST(mallocs AS BIGINT) AS runtime_mallocs,
    CAST(runtime_frees AS BIGINT) AS runtime_frees
FROM base
ORDER BY CASE record WHEN 'device' THEN 0 WHEN 'point' THEN 1 WHEN 'op' THEN 2 WHEN 'module' THEN 3
                     WHEN 'step' THEN 4 ELSE 5 END,
         device_type, device, ts, step, net_to_peak_bytes DESC, alloc_bytes DESC, op, module;
