-- memory_reader.sql — `libreyolo profile memory`: the memory table read back per device.
-- inputs: memory (one profile's table)
--
-- Answers: the peak and when, what ran then and what held it, the churn, the top allocating ops and
-- modules and a level-over-time a terminal can draw. Builds a view and three table macros the reader selects from:
--   memory_summary              one row per device
--   memory_top_ops(top)         per device the `top` ops by the bytes their calls handed on: allocated and not
--                               freed by the op itself, summed over every call in the window (freed later by
--                               other ops: a figure past the peak is no leak; net_to_peak_mb is what was held
--                               at the peak) (rank 1 = most)
--   memory_top_modules(top)     per device the `top` modules by what they held at the peak (live where
--                               block addresses are recorded, else net up to the peak)
--   memory_spark(columns)       per device the level in `columns` equal slices of the timeline (the
--                               highest level reached in the slice; a slice without events keeps the level before it)
-- Binds: nothing (the macros take their arguments).
-- Reads: memory (the sidecar, store/schema.py), measurement figures in it only. Units: MiB, ms.

CREATE OR REPLACE TEMP VIEW memory_summary AS
WITH steps AS (
    SELECT allocator, device,
           count(*) AS steps,
           sum(allocations) AS allocations, sum(frees) AS frees,
           -- steady state: the measured steps after the first (the caching allocator warm)
           count(*) FILTER (WHERE step > 1) AS steady_steps,
           avg(allocations + frees) FILTER (WHERE step > 1) AS steady_events_per_step,
           avg(runtime_mallocs + runtime_frees) FILTER (WHERE step > 1) AS steady_runtime_calls_per_step,
           count(*) FILTER (WHERE step > 1 AND runtime_mallocs + runtime_frees > 0) AS steady_steps_calling
    FROM memory WHERE record = 'step' GROUP BY ALL
)
SELECT d.allocator, d.device, d.levels,
       -- the peak, MiB (relative levels: the rise above the window's start) and when, ms into the window
       d.allocated_mb AS peak_mb, d.ts_ms AS peak_ms, d.step AS peak_step, d.phase AS peak_phase,
       -- what ran at the peak on the allocating thread
       d.op AS peak_op, d.leaf_op AS peak_leaf_op, d.module AS peak_module,
       d.reserved_mb AS peak_reserved_mb,
       -- allocated in the window and still live at the peak (NULL without block addresses), MiB
       d.live_at_peak_mb,
       d.events, d.allocations, d.frees, d.alloc_mb, d.freed_mb, d.net_mb,
       -- allocator events per measured step, count
       (d.allocations + d.frees) / nullif(s.steps, 0) AS events_per_step,
       s.steady_steps, s.steady_events_per_step, s.steady_runtime_calls_per_step, s.steady_steps_calling,
       d.runtime_mallocs, d.runtime_frees,
       -- the lowest level the timeline reached, MiB (relative levels: 0 or below)
       (SELECT min(p.allocated_mb) FROM memory p WHERE p.record = 'point' AND p.allocator = d.allocator AND p.device = d.device) AS low_mb,
       (SELECT count(*) FROM memory p WHERE p.record = 'point' AND p.allocator = d.allocator AND p.device = d.device) AS timeline_points
FROM memory d LEFT JOIN steps s USING (allocator, device)
WHERE d.record = 'device'
ORDER BY CASE WHEN d.allocator = 'cpu' THEN 1 ELSE 0 END, d.device;

CREATE OR REPLACE TEMP MACRO memory_top_ops(top) AS TABLE
SELECT * FROM (
    SELECT allocator, device, coalesce(op, '(outside any op)') AS op, allocations, frees, alloc_mb, freed_mb,
           net_mb, net_to_peak_mb, live_at_peak_mb,
           row_number() OVER (PARTITION BY allocator, device ORDER BY net_mb DESC, alloc_mb DESC, op) AS rank
    FROM memory WHERE record = 'op')
WHERE rank <= top ORDER BY allocator, device, rank;

CREATE OR REPLACE TEMP MACRO memory_top_modules(top) AS TABLE
SELECT * FROM (
    SELECT allocator, device, coalesce(module, '(outside any module)') AS module, allocations, frees,
           alloc_mb, freed_mb, net_mb, net_to_peak_mb, live_at_peak_mb,
           row_number() OVER (PARTITION BY allocator, device
                              ORDER BY coalesce(live_at_peak_mb, net_to_peak_mb) DESC, alloc_mb DESC, module) AS rank
    FROM memory WHERE record = 'module')
WHERE rank <= top ORDER BY allocator, device, rank;

CREATE OR REPLACE TEMP MACRO memory_spark(columns) AS TABLE
WITH span AS (
    SELECT allocator, device, min(ts_ms) AS t0, max(ts_ms) AS t1 FROM memory WHERE record = 'point' GROUP BY ALL
),
slices AS (
    SELECT s.allocator, s.device, i AS slice,
           s.t0 + (s.t1 - s.t0) * i / columns AS lo, s.t0 + (s.t1 - s.t0) * (i + 1) / columns AS hi
    FROM span s, range(CAST(columns AS BIGINT)) r(i)
),
inside AS (
    SELECT c.allocator, c.device, c.slice, max(p.allocated_mb) AS high
    FROM slices c JOIN memory p ON p.record = 'point' AND p.allocator = c.allocator AND p.device = c.device
     AND p.ts_ms >= c.lo AND (p.ts_ms < c.hi OR (c.slice = columns - 1 AND p.ts_ms <= c.hi))
    GROUP BY ALL
),
before AS (
    SELECT c.allocator, c.device, c.slice, p.allocated_mb AS carried
    FROM slices c ASOF LEFT JOIN (SELECT * FROM memory WHERE record = 'point') p
      ON p.allocator = c.allocator AND p.device = c.device AND p.ts_ms <= c.lo
)
SELECT c.allocator, c.device, c.slice, c.lo AS start_ms, c.hi AS end_ms,
       coalesce(i.high, b.carried) AS level_mb
FROM slices c LEFT JOIN inside i USING (allocator, device, slice) LEFT JOIN before b USING (allocator, device, slice)
ORDER BY c.allocator, c.device, c.slice;

-- memory_chart_points / memory_chart_bands: what the report's memory chart draws: every kept point
-- of each device's timeline (ms, MiB) and the phase bands of the measured steps (ms).
CREATE OR REPLACE TEMP VIEW memory_chart_points AS
SELECT allocator, device, ts_ms, allocated_mb, reserved_mb, peak FROM memory
WHERE record = 'point' ORDER BY allocator, device, ts_ms;

CREATE OR REPLACE TEMP VIEW memory_chart_bands AS
SELECT step, phase, ts_ms AS start_ms, end_ms FROM memory WHERE record = 'band' ORDER BY start_ms;
