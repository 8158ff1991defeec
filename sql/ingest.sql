-- ingest.sql — from raw profiler events to the timeline the metrics are defined on.
-- requires: intervals.sql, kernel_categories.sql, tensorcore_rules.sql, runtime_calls.sql, verdict_thresholds.sql
-- inputs: ev, unreadable_step_ranges, ingest_params, phase_vocabulary (store/ingest/timeline.py runs sql/events.sql
-- and creates the rest)
--
-- Answers nothing by itself: it builds the temp tables every metric, table and reader query uses.
-- Binds: nothing (its inputs are tables the caller makes first):
--   ev            the typed events of sql/events.sql, which the caller runs first and then lets the raw
--                 columns go (the decoder's Arrow table is as big as ev; both at once doubled the peak)
--   ingest_params kind_hint VARCHAR ('train' | 'infer' | NULL to infer it)
-- Needs: kernel_category(), is_tensorcore(), runtime_call_roles, phase_vocabulary (the phase names of
-- store/schema.py PHASES_BY_KIND, which store/ingest/timeline.py creates).
-- Times are integer nanoseconds from the first event of the trace, kept at full sub-µs precision.

-- nesting_cap: how deep nested ranges are read (phase ranges overall, module ranges per thread).
-- Real traces nest a few dozen levels; every "which ranges hold this instant" join below grows with
-- the depth, so a trace nesting thousands of ranges would cost memory with the square of its depth.
-- Ranges nested deeper than max_depth (count) are left out and counted in nesting_cut
-- (what: which ranges; events: how many, count), which the nesting_cut mark reports.
CREATE OR REPLACE TEMP TABLE nesting_cap AS SELECT 64 AS max_depth;
CREATE OR REPLACE TEMP TABLE nesting_cut (what VARCHAR, events BIGINT);

-- step_ranges: one row per measured step (ProfilerStep#N on the host). Without any, the window
-- is the device's active span (or the host's, for a trace without device work), as one step.
-- A ProfilerStep with no work is not a step: one inside which no host op, runtime call or Python frame
-- starts on any thread (the profiler opens an empty closing step when the schedule ends) is dropped
-- here and counted in dropped_steps, which the profile's empty_steps mark reads.
-- A step with no usable duration (negative, unreadable or 0: ev reads it as 0 long) is no step either, but a
-- broken event (the trace_damaged mark counts it, sql/events.sql event_damage), never one in which nothing ran.
-- Empty steps are the window only in a trace whose steps are all empty and readable (no host work recorded):
-- beside a broken step they are the profiler's closing step, and a window of it alone read a 9 ms GPU step as
-- a 0.05 ms CPU profile.
CREATE OR REPLACE TEMP TABLE marked_steps AS
WITH marked AS (
    SELECT ts, dur, bool_or(negative_duration OR dur = 0) AS broken
    FROM ev WHERE kind = 'annotation' AND name LIKE 'ProfilerStep#%' GROUP BY ts, dur
),
host_work AS (SELECT ts FROM ev WHERE kind IN ('op', 'runtime', 'python'))
SELECT m.ts, m.dur, coalesce(h.ts < m.ts + m.dur, false) AS has_work,  -- the first host work from its start on
       m.broken
FROM marked m ASOF LEFT JOIN host_work h ON h.ts >= m.ts;

-- dropped_steps: the ProfilerStep ranges left out because nothing ran inside them (count, and their ms).
CREATE OR REPLACE TEMP TABLE dropped_steps AS
SELECT count(*) AS steps, coalesce(sum(dur), 0) / 1e6 AS ms FROM marked_steps
WHERE NOT has_work AND NOT broken
  AND (EXISTS (SELECT 1 FROM marked_steps WHERE has_work OR broken) OR (SELECT ranges FROM unreadable_step_ranges) > 0);

CREATE OR REPLACE TEMP TABLE step_ranges AS
WITH marked AS (
    -- every empty step is dropped where a step with work remains or a step was broken; a broken one always
    SELECT ts, dur FROM marked_steps
    WHERE NOT broken
      AND (has_work OR (NOT EXISTS (SELECT 1 FROM marked_steps WHERE has_work OR broken)
                        AND (SELECT ranges FROM unreadable_step_ranges) = 0))
),
unusable AS (  -- ProfilerStep ranges the trace holds, none of them usable
    SELECT (SELECT ranges FROM unreadable_step_ranges) + (SELECT count(*) FROM marked_steps WHERE broken) AS ranges
),
device_span AS (
    SELECT min(ts) AS s, max(ts + dur) AS e FROM ev WHERE kind IN ('kernel', 'memcpy', 'memset')
),
host_span AS (
    SELECT min(ts) AS s, max(ts + dur) AS e FROM ev WHERE kind IN ('op', 'annotation', 'runtime')
)
SELECT row_number() OVER (ORDER BY ts) AS step, ts AS start_ns, ts + dur AS host_end_ns,
       'ProfilerStep ranges' AS window_source
FROM marked
UNION ALL
SELECT 1, coalesce(d.s, h.s), coalesce(d.e, h.e),
       CASE WHEN d.s IS NOT NULL THEN 'device active span (' ELSE 'host active span (' END
       || CASE WHEN u.ranges > 0 THEN format('none of the trace''s {} ProfilerStep ranges has a usable time', u.ranges)
               ELSE 'the trace has no ProfilerStep ranges' END
       || CASE WHEN d.s IS NOT NULL THEN ')' ELSE ' and no device work)' END
FROM device_span d, host_span h, unusable u
WHERE NOT EXISTS (SELECT 1 FROM marked) AND coalesce(d.s, h.s) IS NOT NULL;
DROP TABLE marked_steps;

-- step_processes: the host processes whose ProfilerStep ranges the trace holds (pid, ranges: count). One profiler
-- records one process's steps; more than one is several processes' traces merged into one file, whose
-- correlation ids (a counter per process) and steps clash: store/ingest/analyse.py refuses it, where the
-- steps of two ranks read as one timeline gave a step of neither. (The device lanes' ProfilerStep ranges,
-- gpu_user_annotation, are not the host's; nor is a pid that holds no host op or runtime call: one damaged
-- event's pid, not a process.)
CREATE OR REPLACE TEMP TABLE step_processes AS
SELECT pid, count(*) AS ranges FROM ev
WHERE kind = 'annotation' AND name LIKE 'ProfilerStep#%'
  AND pid IN (SELECT DISTINCT pid FROM ev WHERE kind IN ('op', 'runtime'))
GROUP BY pid;

-- runtime_calls: host CUDA/HIP API calls with their role (launch, sync, malloc …).
CREATE OR REPLACE TEMP TABLE runtime_calls AS
-- Each distinct name looked up once (sql/runtime_calls.sql runtime_call_role: exact names, then families).
WITH roles AS (
    SELECT name, runtime_call_role(name) AS role FROM (SELECT DISTINCT name FROM ev WHERE kind = 'runtime')
)
SELECT e.event_id, e.name, e.pid, e.tid, e.ts, e.dur, e.correlation, coalesce(r.role, 'other') AS role
FROM ev e LEFT JOIN roles r ON e.name = r.name
WHERE e.kind = 'runtime';

-- device_activity: kernels, memcpys and memsets, each with the host call that launched it
-- (through the correlation id), its category and its Tensor Core flag. Work queued before the
-- capture began has no launch (launch_ts NULL).
CREATE OR REPLACE TEMP TABLE device_activity AS
WITH launch AS (
    -- the launching thread is (pid, tid), both of the first call: a tid alone is not unique across processes
    SELECT correlation, min(ts) AS launch_ts, arg_min({'pid': pid, 'tid': tid}, ts) AS launcher
    FROM runtime_calls WHERE correlation IS NOT NULL AND correlation <> 0
    GROUP BY correlation
),
named AS (
    SELECT d.event_id, d.kind, d.name, d.device, d.stream, d.ts, d.dur, d.correlation,
           l.launch_ts, l.launcher.pid AS launch_pid, l.launcher.tid AS launch_tid, d.copy_bytes, d.pg_name,
           d.msg_nelems, d.collective
    FROM ev d LEFT JOIN launch l ON d.correlation = l.correlation
    WHERE d.kind IN ('kernel', 'memcpy', 'memset')
),
distinct_names AS (SELECT DISTINCT name, kind FROM named),
categorised AS (
    SELECT n.name, n.kind,
           kernel_category(n.kind, n.name) AS category,
           is_tensorcore(n.kind, n.name) AS tensorcore
    FROM distinct_names n
)
SELECT named.*, c.category, c.tensorcore
FROM named JOIN categorised c USING (name, kind);

-- op_tree: framework ops (aten::…, autograd) with their nesting depth, parent, self time,
-- whether they are leaves (dispatched ops with no op inside them) and whether they execute work
-- themselves. Nesting is per thread.
CREATE OR REPLACE TEMP TABLE op_tree AS
WITH threads AS (
    -- each thread numbered: interval_tree partitions by a number faster than by a (pid, tid) struct
    SELECT pid, tid, row_number() OVER () AS thread FROM (SELECT DISTINCT pid, tid FROM ev WHERE kind = 'op')
),
ops AS (
    SELECT t.thread AS grp, e.event_id AS id, e.ts AS s, e.ts + e.dur AS e
    FROM ev e JOIN threads t ON t.pid IS NOT DISTINCT FROM e.pid AND t.tid IS NOT DISTINCT FROM e.tid
    WHERE e.kind = 'op'
),
parented AS (
    -- sql/intervals.sql interval_tree: at equal times ends of real intervals, then starts (longest
    -- first), then ends of zero-length ops
    SELECT e.event_id, e.name, e.pid, e.tid, e.ts, e.dur, e.input_dims, e.shape_dims, e.input_types,
           e.concrete_inputs, t.depth, t.parent_id
    FROM interval_tree(ops) t JOIN ev e ON e.event_id = t.id AND e.kind = 'op'
),
children AS (SELECT parent_id, sum(dur) AS child_ns, count(*) AS n FROM parented WHERE parent_id IS NOT NULL GROUP BY parent_id)
SELECT p.event_id, p.name, p.pid, p.tid, p.ts, p.dur, p.depth, p.parent_id, p.input_dims,
       p.shape_dims, p.input_types, p.concrete_inputs,
       greatest(p.dur - coalesce(c.child_ns, 0), 0) AS self_ns,
       c.n IS NULL AS is_leaf,
       -- an op that spends most of its time in itself, not in the ops it calls: where the CPU
       -- computes (aten::mkldnn_convolution calls aten::empty but is the convolution)
       c.n IS NULL OR 2 * (p.dur - coalesce(c.child_ns, 0)) >= p.dur AS executes
FROM parented p LEFT JOIN children c ON c.parent_id = p.event_id;

-- phase_ranges: host time ranges that name a phase. Our own `## phase ##` annotations win;
-- elsewhere PyTorch's own marks are read: enumerate(DataLoader) → dataload, Optimizer.step /
-- zero_grad → optimizer, autograd engine work → backward, host-to-device copies → to_device.
CREATE OR REPLACE TEMP TABLE phase_range_candidates AS
WITH explicit AS (
    SELECT ts AS start_ns, ts + dur AS end_ns,
           lower(regexp_extract(name, '^##\s*([A-Za-z_]+)\s*##$', 1)) AS phase, 0 AS priority
    FROM ev WHERE kind = 'annotation' AND regexp_matches(name, '^##\s*[A-Za-z_]+\s*##$')
),
htod_launch AS (
    SELECT r.pid, r.tid, r.ts
    FROM device_activity a JOIN runtime_calls r ON a.correlation = r.correlation
    WHERE a.kind = 'memcpy' AND regexp_matches(a.name, '(?i)(htod|hosttodevice|h2d)')
),
-- the top-level op holding each such launch, its end included (the launch may come at its last instant). A
-- thread's top-level ops never overlap: it is the last one starting at or before the launch, or the one
-- before that where it starts right there
top_ops AS (SELECT pid, tid, ts, dur FROM op_tree WHERE depth = 0),
htod_holders AS (
    SELECT o.ts, o.dur, h.ts AS launch_ts
    FROM htod_launch h ASOF JOIN top_ops o ON o.pid = h.pid AND o.tid = h.tid AND h.ts >= o.ts
    UNION ALL
    SELECT o.ts, o.dur, h.ts
    FROM htod_launch h ASOF JOIN top_ops o ON o.pid = h.pid AND o.tid = h.tid AND h.ts > o.ts
)
SELECT * FROM explicit
WHERE phase IN (SELECT phase FROM phase_vocabulary)
UNION ALL
SELECT ts, ts + dur, 'dataload', 1 FROM ev WHERE kind = 'annotation' AND name LIKE 'enumerate(DataLoader)#%'
UNION ALL
SELECT ts, ts + dur, 'optimizer', 2 FROM ev
WHERE kind = 'annotation' AND (name LIKE 'Optimizer.step#%' OR name LIKE 'Optimizer.zero_grad#%')
UNION ALL
SELECT ts, ts + dur, 'backward', 3 FROM op_tree
WHERE depth = 0
  AND (name LIKE 'autograd::engine::evaluate_function:%' OR name LIKE '%Backward%' OR name LIKE '%AccumulateGrad%'
       -- the autograd engine's own thread: everything it runs is backward work
       OR (pid, tid) IN (SELECT pid, tid FROM op_tree WHERE depth = 0 AND (name LIKE 'autograd::engine::evaluate_function:%' OR name LIKE '%Backward%')
                         EXCEPT SELECT pid, tid FROM ev WHERE kind = 'annotation' AND name LIKE 'ProfilerStep#%'))
UNION ALL
SELECT DISTINCT ts, ts + dur, 'to_device', 4 FROM htod_holders WHERE launch_ts <= ts + dur;

-- phase_ranges: the candidates with their nesting depth (ranges open at their start), those nested
-- deeper than nesting_cap left out: a piece of a step then lies in at most max_depth ranges.
CREATE OR REPLACE TEMP TABLE phase_range_depth AS
WITH numbered AS (SELECT row_number() OVER (ORDER BY start_ns, end_ns, priority, phase) AS id, * FROM phase_range_candidates),
marks AS (
    -- at equal times: ends of real ranges, then starts (longest first), then ends of empty ranges
    SELECT id, start_ns AS t, 1 AS edge, end_ns - start_ns AS len FROM numbered
    UNION ALL
    SELECT NULL, end_ns, CASE WHEN end_ns = start_ns THEN 2 ELSE 0 END, end_ns - start_ns FROM numbered
),
depth AS (
    SELECT id, sum(CASE WHEN edge = 1 THEN 1 ELSE -1 END)
                   OVER (ORDER BY t, edge, len DESC, id ROWS UNBOUNDED PRECEDING) - 1 AS depth
    FROM marks
    QUALIFY edge = 1
)
SELECT n.start_ns, n.end_ns, n.phase, n.priority, d.depth FROM numbered n JOIN depth d USING (id);

INSERT INTO nesting_cut
SELECT 'phase ranges', count(*) FROM phase_range_depth WHERE depth >= (SELECT max_depth FROM nesting_cap)
HAVING count(*) > 0;

CREATE OR REPLACE TEMP TABLE phase_ranges AS
SELECT start_ns, end_ns, phase, priority FROM phase_range_depth WHERE depth < (SELECT max_depth FROM nesting_cap);
DROP TABLE phase_range_depth;
DROP TABLE phase_range_candidates;

-- step_tail: the last step's closing stretch in which nothing is recorded but a wait (no op, no Python frame,
-- no host range, no runtime call other than a synchronize or a poll of the device's progress, no device work),
-- beyond the longest such closing stretch of the other steps: the profiler stopping (the TensorBoard plugin's
-- samples close their last ProfilerStep tens of ms after the last op, with only the closing
-- cudaDeviceSynchronize). What every step has at its close (unrecorded host work each step repeats) stays in
-- the steps; only the excess is no work of the step: the last step's host end moves back by it
-- (recorded_end_ns: the ProfilerStep's own end; work_end_ns: where the step now ends), and measurement_window
-- reports the stretch in the end-of-window drain, beside the steps (tail_ns, ns; 0 when none). One step: its
-- whole closing stretch. An excess under drain_unrecorded_pct (sql/verdict_thresholds.sql) of the step it would
-- leave is the step's own closing overhead (the profiler's step() call, tens of µs) and stays in it.
CREATE OR REPLACE TEMP TABLE step_tail AS
WITH recorded_work AS (
    SELECT ts AS s, ts + dur AS e FROM ev
    WHERE kind IN ('op', 'python', 'kernel', 'memcpy', 'memset')
       OR (kind = 'annotation' AND name NOT LIKE 'ProfilerStep#%')
    UNION ALL
    SELECT ts, ts + dur FROM runtime_calls
    WHERE NOT ((role = 'sync' AND regexp_matches(name, '(?i)synchronize')) OR regexp_matches(name, '(?i)^(cu|cuda|hip)(event|stream)query$'))
),
-- each step's closing stretch: from its last recorded work's end (clipped to the step) to its end, ns
closing AS (
    SELECT s.step, s.start_ns, s.host_end_ns,
           s.host_end_ns - greatest(s.start_ns, least(s.host_end_ns, coalesce(max(w.e), s.start_ns))) AS closing_ns
    FROM step_ranges s LEFT JOIN recorded_work w ON w.s < s.host_end_ns AND w.e > s.start_ns
    GROUP BY s.step, s.start_ns, s.host_end_ns
),
last_step AS (SELECT * FROM closing ORDER BY start_ns DESC, step DESC LIMIT 1),
others AS (SELECT coalesce(max(closing_ns), 0) AS ns FROM closing WHERE step <> (SELECT step FROM last_step)),
excess AS (
    SELECT l.step, l.start_ns, l.host_end_ns, greatest(l.closing_ns - o.ns, 0) AS ns,
           -- the host's next record after the step's last work is the closing wait: one that lasts to within
           -- what every other step has at its close of the step's end, or starts past it (nothing recorded until
           -- the closing synchronize). Another record, a wait the step goes on long after, or none at all (the
           -- trace just ends) leaves the stretch in the step
           coalesce((SELECT is_wait AND ts + dur >= l.host_end_ns - o.ns FROM (
                         SELECT ts, dur, FALSE AS is_wait FROM ev
                         WHERE kind IN ('op', 'python') OR (kind = 'annotation' AND name NOT LIKE 'ProfilerStep#%')
                         UNION ALL
                         SELECT ts, dur, (role = 'sync' AND regexp_matches(name, '(?i)synchronize'))
                                    OR regexp_matches(name, '(?i)^(cu|cuda|hip)(event|stream)query$')
                         FROM runtime_calls) h
                     WHERE h.ts >= l.host_end_ns - l.closing_ns
                     ORDER BY h.ts, h.is_wait DESC LIMIT 1), FALSE) AS closed_by_wait
    FROM last_step l, others o
),
tail AS (
    SELECT step, host_end_ns,
           CASE WHEN closed_by_wait AND ns > 0
                     AND ns * 100 >= verdict_threshold('drain_unrecorded_pct') * (host_end_ns - ns - start_ns)
                THEN ns ELSE 0 END AS tail_ns
    FROM excess
)
SELECT step, host_end_ns AS recorded_end_ns, host_end_ns - tail_ns AS work_end_ns, tail_ns FROM tail;

UPDATE step_ranges SET host_end_ns = t.work_end_ns FROM step_tail t WHERE step_ranges.step = t.step;

-- segments: each step cut at every phase boundary; each piece takes the phase of the
-- highest-priority (then innermost) range covering it, 'forward' where none does. Every host
-- timestamp inside a step falls in exactly one segment, so phase times add up to the step.
CREATE OR REPLACE TEMP TABLE segments AS
WITH bounds AS (
    SELECT DISTINCT s.step, b.t
    FROM step_ranges s
    JOIN (SELECT start_ns AS t FROM phase_ranges UNION SELECT end_ns FROM phase_ranges) b
      ON b.t > s.start_ns AND b.t < s.host_end_ns
    UNION SELECT step, start_ns FROM step_ranges
    UNION SELECT step, host_end_ns FROM step_ranges
),
pieces AS (
    SELECT step, t AS seg_start, lead(t) OVER (PARTITION BY step ORDER BY t) AS seg_end FROM bounds
    QUALIFY seg_end IS NOT NULL
)
SELECT g.step, g.seg_start, g.seg_end, coalesce(r.phase, 'forward') AS phase
FROM pieces g LEFT JOIN phase_ranges r ON r.start_ns <= g.seg_start AND r.end_ns >= g.seg_end
QUALIFY row_number() OVER (PARTITION BY g.step, g.seg_start ORDER BY r.priority NULLS LAST, r.start_ns DESC) = 1;

-- placed_ops / placed_runtime / placed_activity: host events and device work with their step and
-- phase (device work through the moment its launch call ran on the host).
-- An op's scalar lists (Input type ScalarList: a convolution's stride, padding, dilation; their values in
-- Concrete Inputs) may be recorded in one step only: `run` and `infer` record them in the window's first
-- step (measure/profiler.py), and a later step's call has '' in their place. Such a call takes the
-- input types and Concrete Inputs of the call at the same place in the first step that recorded lists for
-- that op and those input dims: the same op, the same Input Dims, the same count of such calls before it in
-- its step, and the same values everywhere the later call recorded one. A call with no such match keeps what
-- its trace recorded (sql/roofline_costs.sql then says the lists are missing).
CREATE OR REPLACE TEMP TABLE placed_ops AS
WITH placed AS (
    SELECT o.*, CASE WHEN o.ts < g.seg_end THEN g.step END AS step,
           CASE WHEN o.ts < g.seg_end THEN g.phase END AS phase
    FROM op_tree o ASOF LEFT JOIN segments g ON o.ts >= g.seg_start
),
list_ops AS (SELECT DISTINCT name FROM placed WHERE contains(input_types, '"ScalarList"')),
list_calls AS (
    SELECT p.event_id, p.step, p.name, p.shape_dims, p.input_types, p.concrete_inputs,
           contains(p.input_types, '"ScalarList"') AS lists_recorded,
           row_number() OVER (PARTITION BY p.step, p.name, p.shape_dims ORDER BY p.ts, p.event_id) AS place
    FROM placed p SEMI JOIN list_ops USING (name)
    WHERE p.step IS NOT NULL AND p.shape_dims IS NOT NULL
),
first_recorded AS (
    SELECT * FROM list_calls WHERE lists_recorded QUALIFY step = min(step) OVER (PARTITION BY name, shape_dims)
),
pairs AS (
    SELECT c.event_id, f.input_types, f.concrete_inputs,
           TRY_CAST(c.input_types AS VARCHAR[]) AS types, TRY_CAST(f.input_types AS VARCHAR[]) AS first_types,
           TRY_CAST(c.concrete_inputs AS VARCHAR[]) AS values, TRY_CAST(f.concrete_inputs AS VARCHAR[]) AS first_values
    FROM list_calls c JOIN first_recorded f USING (name, shape_dims, place)
    WHERE NOT c.lists_recorded
),
completed AS (
    -- the later call's types are the first's with '' for ScalarList, and its recorded values are the first's
    SELECT event_id, input_types, concrete_inputs FROM pairs
    WHERE types = list_transform(first_types, lambda t: CASE WHEN t = 'ScalarList' THEN '' ELSE t END)
      AND len(values) = len(first_values)
      AND list_bool_and(list_transform(range(1, len(values) + 1), lambda i: values[i] IN ('', first_values[i])))
)
SELECT p.* REPLACE (coalesce(k.input_types, p.input_types) AS input_types,
                    coalesce(k.concrete_inputs, p.concrete_inputs) AS concrete_inputs)
FROM placed p LEFT JOIN completed k USING (event_id);

CREATE OR REPLACE TEMP TABLE placed_runtime AS
SELECT r.*, CASE WHEN r.ts < g.seg_end THEN g.step END AS step,
       CASE WHEN r.ts < g.seg_end THEN g.phase END AS phase
FROM runtime_calls r ASOF LEFT JOIN segments g ON r.ts >= g.seg_start;

CREATE OR REPLACE TEMP TABLE placed_activity AS
SELECT a.*, CASE WHEN a.launch_ts < g.seg_end THEN g.step END AS step,
       CASE WHEN a.launch_ts < g.seg_end THEN g.phase END AS phase
FROM device_activity a ASOF LEFT JOIN segments g ON a.launch_ts >= g.seg_start;

-- measurement_window: from the first step's start to when the host and the device have both
-- finished the last step's work. host_end_ns: when the host finished the last step (its recorded work:
-- step_tail); drain_ns: the end-of-window drain, ns: how long the device went on running the last step's work
-- after that, and the last step's closing stretch that recorded nothing but a wait (tail_ns, step_tail).
-- device_bound: the device could not keep up with the host: on its busiest device the union of the
-- kernels inside the window is at least the host's span of the steps. Then the work after the last host
-- end is the device's accumulated lag, part of the steps (step_ms is the window ÷ steps); otherwise it is
-- a drain the next step would hide in steady state, reported beside a multi-step step_ms (sql/metrics.sql).
CREATE OR REPLACE TEMP TABLE measurement_window AS
WITH spans AS (
    SELECT min(s.start_ns) AS start_ns, max(s.host_end_ns) AS host_end_ns,
           greatest(max(s.host_end_ns),
                    coalesce((SELECT max(ts + dur) FROM placed_activity WHERE step IS NOT NULL), 0)) AS end_ns,
           count(*) AS steps,
           any_value(s.window_source) AS window_source
    FROM step_ranges s
),
kernels_in AS (
    SELECT a.device, greatest(a.ts, w.start_ns) AS ks, least(a.ts + a.dur, w.end_ns) AS ke
    FROM placed_activity a, spans w WHERE a.kind = 'kernel' AND a.ts < w.end_ns AND a.ts + a.dur > w.start_ns
),
reach AS (
    SELECT *, max(ke) OVER (PARTITION BY device ORDER BY ks, ke ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reached
    FROM kernels_in
),
busiest AS (
    -- per device: union = Σ (each kernel's end beyond what the earlier ones reached)
    SELECT max(busy) AS busy_ns FROM (
        SELECT device, sum(greatest(ke - greatest(ks, coalesce(reached, ks)), 0)) AS busy FROM reach GROUP BY device)
)
SELECT start_ns, end_ns, steps, window_source, host_end_ns,
       end_ns - host_end_ns + coalesce((SELECT tail_ns FROM step_tail), 0) AS drain_ns,
       coalesce((SELECT tail_ns FROM step_tail), 0) AS tail_ns,
       coalesce((SELECT busy_ns FROM busiest), 0) >= host_end_ns - start_ns AS device_bound
FROM spans;

-- kernel_time: each kernel's time inside the measured window (clipped to it), per device: what the
-- shares of kernel time are shares of (sql/kernel_shares.sql).
CREATE OR REPLACE TEMP TABLE kernel_time AS
SELECT a.device, a.category, a.tensorcore, least(a.ts + a.dur, w.end_ns) - greatest(a.ts, w.start_ns) AS time
FROM placed_activity a, measurement_window w
WHERE a.kind = 'kernel' AND a.ts < w.end_ns AND a.ts + a.dur > w.start_ns;

-- profile_kind: 'train' when the trace holds autograd backward work, or gradient collectives: DDP's
-- reducer (DistributedDataParallel / Reducer ranges and ops) or an all_reduce (gloo, NCCL, c10d) running on
-- a thread that does not run the steps (the reducer's buckets reduce beside the step); unless the caller knows.
CREATE OR REPLACE TEMP TABLE profile_kind AS
WITH step_threads AS (SELECT DISTINCT pid, tid FROM ev WHERE kind = 'annotation' AND name LIKE 'ProfilerStep#%'),
host_named AS (
    SELECT pid, tid, name FROM op_tree
    UNION ALL SELECT pid, tid, name FROM ev WHERE kind = 'annotation'
),
gradient_collectives AS (
    SELECT 1 FROM host_named h
    WHERE regexp_matches(h.name, '(DistributedDataParallel|[Rr]educer::|allreduce_hook|_ddp_)')
       OR (regexp_matches(h.name, '(?i)all_?reduce') AND (h.pid, h.tid) NOT IN (SELECT pid, tid FROM step_threads)
           AND EXISTS (SELECT 1 FROM step_threads))
)
SELECT coalesce((SELECT kind_hint FROM ingest_params),
                CASE WHEN EXISTS (SELECT 1 FROM op_tree WHERE name LIKE 'autograd::engine::evaluate_function:%'
                                                          OR name LIKE '%Backward%')
                       OR EXISTS (SELECT 1 FROM phase_ranges WHERE phase = 'backward')
                       OR EXISTS (SELECT 1 FROM gradient_collectives)
                     THEN 'train' ELSE 'infer' END) AS kind,
       (SELECT kind_hint FROM ingest_params) IS NULL AS kind_inferred,
       EXISTS (SELECT 1 FROM phase_ranges WHERE priority = 0) AS phases_annotated;

-- memory_events / ingest_stats: all the metrics still need of the raw events.
-- (memory_events: the allocator's `[memory]` instants, both formats; sql/memory.sql reads them)
CREATE OR REPLACE TEMP TABLE memory_events AS
SELECT event_id, pid, tid, ts, mem_allocated, mem_reserved, mem_device_type, mem_device_id, mem_bytes, mem_addr
FROM ev WHERE kind = 'memory';
CREATE OR REPLACE TEMP TABLE ingest_stats AS
SELECT count(*) FILTER (WHERE negative_duration) AS negative_duration_events FROM ev;

-- ingest_own_thread: the thread whose work a track holds. `run` writes its backward module ranges on lanes
-- beside their thread (measure/modules.py lane_tid: (lane + 1) × 10^12 + the thread's id), where they nest;
-- they are read back as their thread's, so they hold that thread's ops and launches as they did.
CREATE OR REPLACE TEMP MACRO ingest_own_thread(tid) AS
    CASE WHEN TRY_CAST(tid AS HUGEINT) >= 1000000000000
         THEN CAST(TRY_CAST(tid AS HUGEINT) % 1000000000000 AS VARCHAR) ELSE tid END;

-- host_annotations: the host's named ranges (user annotations), on every thread: sql/blame.sql reads
-- the collectives some backends record only as annotations (gloo:all_reduce on its own thread).
CREATE OR REPLACE TEMP TABLE host_annotations AS
SELECT pid, ingest_own_thread(tid) AS tid, ts, dur, name FROM ev WHERE kind = 'annotation';

-- module_events: the model's module ranges for sql/modules.sql: our own annotations
-- (measure/modules.py: `module forward: <path> (<Class>)`, `module backward: …`) and a foreign
-- trace's `nn.Module: <Class>_<n>` python_function events (recorded with with_stack/with_modules).
CREATE OR REPLACE TEMP TABLE module_events AS
SELECT pid, ingest_own_thread(tid) AS tid, ts, dur, name, lower(cat) = 'python_function' AS from_stack FROM ev
WHERE (kind = 'annotation' AND (name LIKE 'module forward: %' OR name LIKE 'module backward: %'))
   OR (lower(cat) = 'python_function' AND name LIKE 'nn.Module: %');

-- host_frames: the Python frames the host recorded (with_stack), on every thread: sql/blame.sql counts
-- them as host work while the device idles.
CREATE OR REPLACE TEMP TABLE host_frames AS
SELECT pid, tid, ts, dur, name FROM ev WHERE kind = 'python';

-- The placed_* tables now hold everything below; on a large trace these copies are most of the
-- memory, so they go before the metrics run.
DROP TABLE op_tree;
DROP TABLE runtime_calls;
DROP TABLE device_activity;
DROP TABLE ev;
