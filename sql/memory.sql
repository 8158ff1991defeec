-- memory.sql — the allocator through the measured window: per device a level over time, its peak,
-- requires: ingest.sql, modules.sql
-- what was running at the peak, which ops and modules allocated, and the churn per step.
--
-- Answers nothing by itself: it builds the memory_* temp tables that sql/table_memory.sql (the
-- `memory` table) and sql/metrics.sql (peak_vram_mb, peak_mem_mb, memory_level) read.
-- Binds: nothing. Reads memory_events, segments, placed_ops, placed_runtime, module_calls
-- (sql/modules.sql, run first), step_ranges, measurement_window.
-- Two formats of `[memory]` instant events (one per allocation or free):
--   absolute  newer Kineto: `Total Allocated` / `Total Reserved` after the event (and `Bytes`, `Addr`)
--   relative  2021 Kineto: `Bytes` only. The level is the running sum of Bytes from the window's
--             start, which counts as 0: every figure is a rise above the start ("at least …"),
--             never the allocator's total.
-- A device's level is its Total Allocated when every one of its events in the window carries it. On
-- the host that total is 'profiled', not 'absolute': torch's CPU memory reporter counts only the blocks
-- allocated while it recorded, so it is a rise since the profiler started.
-- Device Type 0 is the host allocator (device -1); any other type is an accelerator (its Device Id).
-- Bytes are bytes; levels and sizes in the tables built from these are MiB (÷ 1048576).

-- memory_points: every allocator event inside the window, in order per device, with the bytes it
-- moved, the level after it and what ran at that instant on its thread: the step and phase, the
-- outermost op (the call the model made), the innermost op (the one that allocated) and the
-- innermost module range. A relative device also gets a point at the window's start, level 0.
CREATE OR REPLACE TEMP TABLE memory_points AS
WITH RECURSIVE inside AS (
    SELECT m.*,
           CASE WHEN m.mem_device_type = 0 THEN 'cpu' WHEN m.mem_device_type = 1 THEN 'cuda'
                ELSE 'type ' || m.mem_device_type END AS device_type,
           CASE WHEN m.mem_device_type = 0 THEN -1 ELSE coalesce(m.mem_device_id, 0) END AS device
    FROM memory_events m, measurement_window w
    WHERE m.ts BETWEEN w.start_ns AND w.end_ns AND m.mem_device_type IS NOT NULL
),
formats AS (
    -- levels: absolute (allocator totals), profiled (the host's totals: torch's CPU reporter counts
    -- only blocks allocated while the profiler recorded memory), relative (Bytes only)
    SELECT device_type, device, bool_and(mem_allocated IS NOT NULL) AS absolute,
           CASE WHEN NOT bool_and(mem_allocated IS NOT NULL) THEN 'relative'
                WHEN device_type = 'cpu' THEN 'profiled' ELSE 'absolute' END AS levels
    FROM inside GROUP BY device_type, device
),
moved AS (
    SELECT i.*, f.absolute, f.levels,
           -- Bytes where recorded, else the change of Total Allocated (unknown for a device's first event)
           coalesce(i.mem_bytes, i.mem_allocated - lag(i.mem_allocated) OVER (
               PARTITION BY i.device_type, i.device ORDER BY i.ts, i.event_id)) AS bytes
    FROM inside i JOIN formats f USING (device_type, device)
),
starts AS (
    -- the relative level's zero: the window's start
    SELECT 0 AS event_id, NULL AS pid, NULL AS tid, w.start_ns AS ts, f.device_type, f.device, f.absolute, f.levels,
           0.0 AS bytes, NULL AS mem_reserved, NULL AS mem_allocated, NULL AS mem_addr
    FROM formats f, measurement_window w WHERE NOT f.absolute
),
levelled AS (
    SELECT event_id, pid, tid, ts, device_type, device, absolute, levels, bytes, mem_addr,
           CASE WHEN absolute THEN mem_allocated
                ELSE sum(bytes) OVER (PARTITION BY device_type, device ORDER BY ts, event_id
                                      ROWS UNBOUNDED PRECEDING) END AS allocated,
           mem_reserved AS reserved
    FROM (SELECT event_id, pid, tid, ts, device_type, device, absolute, levels, bytes, mem_addr, mem_allocated, mem_reserved
          FROM moved UNION ALL BY NAME SELECT * FROM starts)
),
placed AS (
    SELECT l.*, CASE WHEN l.ts < g.seg_end THEN g.step END AS step,
           CASE WHEN l.ts < g.seg_end THEN g.phase END AS phase
    FROM levelled l ASOF LEFT JOIN segments g ON l.ts >= g.seg_start
),
-- the ops open at each event, found by ASOF (a range join would compare every event with every op of its
-- thread): depth-0 ops do not overlap, so the outermost is the last one to start at or before the
-- event, if it is still open; the innermost starts from the last op of any depth to start (deeper
-- first on equal starts) and climbs its parents until one is still open
outer_op AS (
    SELECT p.event_id, o.name FROM placed p
    ASOF JOIN (SELECT * FROM placed_ops WHERE depth = 0) o ON o.pid = p.pid AND o.tid = p.tid AND p.ts >= o.ts
    WHERE p.ts <= o.ts + o.dur
),
-- the key is HUGEINT: ts (ns from the trace's first event) reaches 2^61 where one event's time is far from the
-- rest, and × 1024 then overflowed BIGINT and lost the whole memory section
keyed_ops AS (
    SELECT event_id, parent_id, name, ts, dur, pid, tid, ts::HUGEINT * 1024 + least(depth, 1023) AS k FROM placed_ops
),
last_started AS (
    SELECT p.event_id AS mem_id, p.ts AS mem_ts, o.event_id AS op_id
    FROM placed p ASOF JOIN keyed_ops o ON o.pid = p.pid AND o.tid = p.tid AND p.ts::HUGEINT * 1024 + 1023 >= o.k
),
climb AS (
    SELECT l.mem_id, l.mem_ts, l.op_id, 0 AS hops FROM last_started l
    UNION ALL
    SELECT c.mem_id, c.mem_ts, o.parent_id, c.hops + 1
    FROM climb c JOIN keyed_ops o ON o.event_id = c.op_id
    WHERE c.mem_ts > o.ts + o.dur AND o.parent_id IS NOT NULL AND c.hops < 256
),
inner_op AS (
    SELECT c.mem_id AS event_id, o.name FROM climb c JOIN keyed_ops o ON o.event_id = c.op_id
    WHERE c.mem_ts <= o.ts + o.dur
),
inner_module AS (
    SELECT p.event_id, c.path FROM placed p JOIN module_calls c
      ON c.pid = p.pid AND c.tid = p.tid AND p.ts >= c.ts AND p.ts <= c.end_ns
    QUALIFY row_number() OVER (PARTITION BY p.event_id ORDER BY c.ts DESC, c.depth DESC, c.call_id DESC) = 1
)
SELECT p.*, o.name AS op, i.name AS leaf_op, m.path AS module,
       row_number() OVER (PARTITION BY p.device_type, p.device ORDER BY p.ts, p.event_id) AS ord
FROM placed p
LEFT JOIN outer_op o ON o.event_id = p.event_id AND p.event_id <> 0
LEFT JOIN inner_op i ON i.event_id = p.event_id AND p.event_id <> 0
LEFT JOIN inner_module m ON m.event_id = p.event_id AND p.event_id <> 0;

-- memory_peak: per device the point of the highest level (the first, when it repeats).
CREATE OR REPLACE TEMP TABLE memory_peak AS
SELECT * FROM memory_points
QUALIFY row_number() OVER (PARTITION BY device_type, device ORDER BY allocated DESC NULLS LAST, ord) = 1;

-- memory_live: the allocations of the window still live at the peak: allocated at or before the peak
-- and not freed (a later negative event of the same address on the device) up to it. Needs Addr:
-- the 2021 format records none, so its devices have no rows here.
CREATE OR REPLACE TEMP TABLE memory_live AS
SELECT a.device_type, a.device, a.op, a.module, a.bytes
FROM memory_points a JOIN memory_peak k USING (device_type, device)
WHERE a.bytes > 0 AND a.mem_addr IS NOT NULL AND a.ord <= k.ord
  AND NOT EXISTS (SELECT 1 FROM memory_points f
                  WHERE f.device_type = a.device_type AND f.device = a.device AND f.mem_addr = a.mem_addr
                    AND f.bytes < 0 AND f.ord > a.ord AND f.ord <= k.ord);

-- memory_has_addr: the devices whose events carry block addresses (live-at-peak is defined for them)
CREATE OR REPLACE TEMP TABLE memory_has_addr AS
SELECT device_type, device, bool_or(mem_addr IS NOT NULL) AS has_addr FROM memory_points GROUP BY ALL;

-- memory_by: allocations and frees grouped by who made them — per op (outermost), per module, per
-- step — with the net bytes up to the peak and the bytes still live at it.
CREATE OR REPLACE TEMP TABLE memory_by AS
WITH tagged AS (
    SELECT p.*, p.ord <= k.ord AS to_peak FROM memory_points p JOIN memory_peak k USING (device_type, device)
    WHERE p.event_id <> 0
),
keyed AS (
    SELECT 'op' AS record, device_type, device, levels, op AS key, NULL::BIGINT AS step, bytes, to_peak FROM tagged
    UNION ALL
    SELECT 'module', device_type, device, levels, module, NULL, bytes, to_peak FROM tagged
    UNION ALL
    SELECT 'step', device_type, device, levels, NULL, step, bytes, to_peak FROM tagged WHERE step IS NOT NULL
),
live AS (
    SELECT 'op' AS record, device_type, device, op AS key, sum(bytes) AS live_bytes FROM memory_live GROUP BY ALL
    UNION ALL
    SELECT 'module', device_type, device, module, sum(bytes) FROM memory_live GROUP BY ALL
)
SELECT k.record, k.device_type, k.device, any_value(k.levels) AS levels, k.key, k.step,
       count(*) AS events,
       count(*) FILTER (WHERE k.bytes > 0) AS allocations,
       count(*) FILTER (WHERE k.bytes < 0) AS frees,
       coalesce(sum(k.bytes) FILTER (WHERE k.bytes > 0), 0) AS alloc_bytes,
       coalesce(-sum(k.bytes) FILTER (WHERE k.bytes < 0), 0) AS freed_bytes,
       coalesce(sum(k.bytes), 0) AS net_bytes,
       coalesce(sum(k.bytes) FILTER (WHERE k.to_peak), 0) AS net_to_peak_bytes,
       CASE WHEN k.record <> 'step' AND any_value(h.has_addr) THEN coalesce(any_value(l.live_bytes), 0) END AS live_bytes
FROM keyed k
JOIN memory_has_addr h USING (device_type, device)
LEFT JOIN live l ON l.record = k.record AND l.device_type = k.device_type AND l.device = k.device
                 AND l.key IS NOT DISTINCT FROM k.key
GROUP BY k.record, k.device_type, k.device, k.key, k.step;

-- memory_step_calls: the process's cudaMalloc/cudaFree (and cu/hip equivalents) calls per measured
-- step: steps after the first are the steady state, where the caching allocator should not call them.
CREATE OR REPLACE TEMP TABLE memory_step_calls AS
SELECT s.step,
       (SELECT count(*) FROM placed_runtime r WHERE r.step = s.step AND r.role = 'malloc') AS mallocs,
       (SELECT count(*) FROM placed_runtime r WHERE r.step = s.step AND r.role = 'free') AS frees
FROM step_ranges s;

-- memory_devices: one summary row per device: the peak and when, what ran then, the totals.
CREATE OR REPLACE TEMP TABLE memory_devices AS
SELECT k.device_type, k.device, k.absolute, k.levels, k.ts AS peak_ts, k.allocated AS peak_bytes,
       k.step, k.phase, k.op, k.leaf_op, k.module,
       (SELECT max(reserved) FROM memory_points p WHERE p.device_type = k.device_type AND p.device = k.device) AS peak_reserved_bytes,
       t.events, t.allocations, t.frees, t.alloc_bytes, t.freed_bytes, t.net_bytes,
       (SELECT sum(bytes) FROM memory_live l WHERE l.device_type = k.device_type AND l.device = k.device) AS live_bytes,
       h.has_addr
FROM memory_peak k
JOIN memory_has_addr h USING (device_type, device)
JOIN (SELECT device_type, device, count(*) FILTER (WHERE event_id <> 0) AS events,
             count(*) FILTER (WHERE bytes > 0) AS allocations, count(*) FILTER (WHERE bytes < 0) AS frees,
             coalesce(sum(bytes) FILTER (WHERE bytes > 0), 0) AS alloc_bytes,
             coalesce(-sum(bytes) FILTER (WHERE bytes < 0), 0) AS freed_bytes,
             coalesce(sum(bytes), 0) AS net_bytes
      FROM memory_points GROUP BY ALL) t USING (device_type, device);

-- memory_timeline: the points the table keeps, at most about 2 × TIMELINE_BUCKETS + 2 × NEIGHBOURS + 3
-- per device: each of TIMELINE_BUCKETS runs of consecutive events keeps its highest and lowest point
-- (the envelope a chart draws), and the peak keeps its NEIGHBOURS events either side exactly.
CREATE OR REPLACE TEMP TABLE memory_timeline AS
WITH sizes AS (SELECT device_type, device, max(ord) AS n FROM memory_points GROUP BY ALL),
bucketed AS (
    SELECT p.*, floor((p.ord - 1) * 500.0 / s.n) AS bucket, s.n, k.ord AS peak_ord   -- 500 TIMELINE_BUCKETS
    FROM memory_points p JOIN sizes s USING (device_type, device) JOIN memory_peak k USING (device_type, device)
)
SELECT * EXCLUDE (bucket, n, peak_ord), ord = peak_ord AS is_peak FROM bucketed
QUALIFY ord = 1 OR ord = n OR abs(ord - peak_ord) <= 16                                 -- 16 NEIGHBOURS
     OR row_number() OVER (PARTITION BY device_type, device, bucket ORDER BY allocated DESC, ord) = 1
     OR row_number() OVER (PARTITION BY device_type, device, bucket ORDER BY allocated ASC, ord) = 1;

-- memory_bands: the phases of the measured steps as time ranges, the bands a memory chart draws
-- behind the level. A segment shorter than a thousandth of the window keeps the phase before it
-- (the gaps between backward ops would otherwise make thousands of slivers); adjacent segments of
-- one phase are then merged. Only for a trace with allocator events.
CREATE OR REPLACE TEMP TABLE memory_bands AS
WITH judged AS (
    SELECT g.*, CASE WHEN g.seg_end - g.seg_start >= (w.end_ns - w.start_ns) / 1000 THEN g.phase END AS long_phase
    FROM segments g, measurement_window w
),
carried AS (
    SELECT step, seg_start, seg_end,
           coalesce(last_value(long_phase IGNORE NULLS) OVER (PARTITION BY step ORDER BY seg_start
                                                              ROWS UNBOUNDED PRECEDING), phase) AS phase
    FROM judged
),
runs AS (
    SELECT *, sum(CASE WHEN phase IS DISTINCT FROM prev THEN 1 ELSE 0 END)
                  OVER (PARTITION BY step ORDER BY seg_start ROWS UNBOUNDED PRECEDING) AS run
    FROM (SELECT *, lag(phase) OVER (PARTITION BY step ORDER BY seg_start) AS prev FROM carried)
)
SELECT step, phase, min(seg_start) AS start_ns, max(seg_end) AS end_ns FROM runs
WHERE EXISTS (SELECT 1 FROM memory_points)
GROUP BY step, phase, run;
