-- ingest.sql — from raw profiler events to the timeline the metrics are defined on.
--
-- Answers nothing by itself: it builds the temp tables every metric, table and reader query uses.
-- Binds: nothing (its two inputs are tables the caller registers first):
--   raw_events    one row per Kineto event (libreyolo_profile/store/decode/events.py: EVENT_SCHEMA)
--   ingest_params kind_hint VARCHAR ('train' | 'infer' | NULL to infer it)
-- Needs: kernel_category(), is_tensorcore(), runtime_call_roles, phase_vocabulary (the phase names of
-- store/schema.py PHASES_BY_KIND, which store/ingest/timeline.py creates).
-- Times are integer nanoseconds from the first event of the trace, kept at full sub-µs precision.

-- ev: every duration or instant event, typed, with what kind of thing it is.
CREATE OR REPLACE TEMP TABLE ev AS
WITH typed AS (
    SELECT row_number() OVER () AS event_id,
           ph, coalesce(cat, '') AS cat, coalesce(name, '') AS name, pid, tid,
           CAST(round(TRY_CAST(ts_text AS DECIMAL(38, 6)) * 1000) AS BIGINT) AS ts_abs,
           CAST(round(coalesce(TRY_CAST(dur_text AS DECIMAL(38, 6)), 0) * 1000) AS BIGINT) AS dur_raw,
           TRY_CAST(correlation AS BIGINT) AS correlation,
           TRY_CAST(external_id AS BIGINT) AS external_id,
           coalesce(TRY_CAST(device AS INTEGER), TRY_CAST(pid AS INTEGER)) AS device,
           stream, mem_allocated, mem_reserved, mem_device_type, input_dims
    FROM raw_events
)
SELECT event_id, ph, cat, name, pid, tid,
       ts_abs - min(ts_abs) OVER () AS ts,   -- ns from the first event
       greatest(dur_raw, 0) AS dur,          -- ns; negative durations (broken traces) count as 0
       dur_raw < 0 AS negative_duration,
       correlation, external_id, device, stream, mem_allocated, mem_reserved, mem_device_type, input_dims,
       CASE
           WHEN lower(cat) = 'kernel' THEN 'kernel'
           WHEN lower(cat) IN ('gpu_memcpy', 'memcpy') THEN 'memcpy'
           WHEN lower(cat) IN ('gpu_memset', 'memset') THEN 'memset'
           WHEN lower(cat) IN ('cuda_runtime', 'runtime', 'cuda_driver', 'hip_runtime', 'hip_driver',
                               'privateuse1_runtime', 'xpu_runtime', 'mtia_runtime') THEN 'runtime'
           WHEN lower(cat) = 'gpu_user_annotation' THEN 'gpu_annotation'
           WHEN name = '[memory]' THEN 'memory'
           WHEN ph <> 'X' THEN 'other'
           WHEN lower(cat) = 'user_annotation' THEN 'annotation'
           -- 2021 traces record annotations as Operator events; our module ranges (measure/modules.py)
           -- are recorded through the profiler's fast path, which files them as cpu_op
           WHEN lower(cat) IN ('cpu_op', 'operator')
                AND (name LIKE 'ProfilerStep#%' OR name LIKE 'enumerate(DataLoader)#%'
                     OR name LIKE 'Optimizer.%#%' OR regexp_matches(name, '^##.*##$')
                     OR name LIKE 'module forward: %' OR name LIKE 'module backward: %') THEN 'annotation'
           WHEN lower(cat) IN ('cpu_op', 'operator') THEN 'op'
           ELSE 'other'
       END AS kind
FROM typed
WHERE ts_abs IS NOT NULL;

-- step_ranges: one row per measured step (ProfilerStep#N on the host). Without any, the window
-- is the device's active span (or the host's, for a trace without device work), as one step.
CREATE OR REPLACE TEMP TABLE step_ranges AS
WITH marked AS (
    SELECT DISTINCT ts, dur FROM ev WHERE kind = 'annotation' AND name LIKE 'ProfilerStep#%'
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
       CASE WHEN d.s IS NOT NULL THEN 'device active span (the trace has no ProfilerStep ranges)'
            ELSE 'host active span (the trace has no ProfilerStep ranges and no device work)' END
FROM device_span d, host_span h
WHERE NOT EXISTS (SELECT 1 FROM marked) AND coalesce(d.s, h.s) IS NOT NULL;

-- runtime_calls: host CUDA/HIP API calls with their role (launch, sync, malloc …).
CREATE OR REPLACE TEMP TABLE runtime_calls AS
SELECT e.event_id, e.name, e.pid, e.tid, e.ts, e.dur, e.correlation, coalesce(r.role, 'other') AS role
FROM ev e LEFT JOIN runtime_call_roles r ON e.name = r.name
WHERE e.kind = 'runtime';

-- device_activity: kernels, memcpys and memsets, each with the host call that launched it
-- (through the correlation id), its category and its Tensor Core flag. Work queued before the
-- capture began has no launch (launch_ts NULL).
CREATE OR REPLACE TEMP TABLE device_activity AS
WITH launch AS (
    SELECT correlation, min(ts) AS launch_ts, any_value(tid) AS launch_tid
    FROM runtime_calls WHERE correlation IS NOT NULL AND correlation <> 0
    GROUP BY correlation
),
named AS (
    SELECT d.event_id, d.kind, d.name, d.device, d.stream, d.ts, d.dur, d.correlation,
           l.launch_ts, l.launch_tid
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
CREATE OR REPLACE TEMP TABLE op_depth AS
WITH ops AS (SELECT event_id, pid, tid, ts, dur FROM ev WHERE kind = 'op'),
marks AS (
    -- at equal times: ends of real intervals, then starts (longest first), then ends of zero-length ops
    SELECT pid, tid, ts AS t, 1 AS edge, dur, event_id FROM ops
    UNION ALL
    SELECT pid, tid, ts + dur, CASE WHEN dur = 0 THEN 2 ELSE 0 END, dur, NULL FROM ops
)
SELECT event_id,
       sum(CASE WHEN edge = 1 THEN 1 ELSE -1 END)
           OVER (PARTITION BY pid, tid ORDER BY t, edge, dur DESC, event_id ROWS UNBOUNDED PRECEDING) - 1 AS depth
FROM marks
QUALIFY edge = 1;

CREATE OR REPLACE TEMP TABLE op_ordered AS
SELECT e.event_id, e.name, e.pid, e.tid, e.ts, e.dur, e.input_dims, greatest(d.depth, 0) AS depth,
       greatest(d.depth, 0) - 1 AS parent_depth,
       row_number() OVER (PARTITION BY e.pid, e.tid ORDER BY e.ts, e.dur DESC, e.event_id) AS ord
FROM ev e JOIN op_depth d USING (event_id);

CREATE OR REPLACE TEMP TABLE op_tree AS
WITH parented AS (
    SELECT c.*, p.event_id AS parent_id
    FROM op_ordered c ASOF LEFT JOIN op_ordered p
      ON c.pid = p.pid AND c.tid = p.tid AND c.parent_depth = p.depth AND c.ord > p.ord
),
children AS (SELECT parent_id, sum(dur) AS child_ns, count(*) AS n FROM parented WHERE parent_id IS NOT NULL GROUP BY parent_id)
SELECT p.event_id, p.name, p.pid, p.tid, p.ts, p.dur, p.depth, p.parent_id, p.input_dims,
       greatest(p.dur - coalesce(c.child_ns, 0), 0) AS self_ns,
       c.n IS NULL AS is_leaf,
       -- an op that spends most of its time in itself, not in the ops it calls: where the CPU
       -- computes (aten::mkldnn_convolution calls aten::empty but is the convolution)
       c.n IS NULL OR 2 * (p.dur - coalesce(c.child_ns, 0)) >= p.dur AS executes
FROM parented p LEFT JOIN children c ON c.parent_id = p.event_id;

-- phase_ranges: host time ranges that name a phase. Our own `## phase ##` annotations win;
-- elsewhere PyTorch's own marks are read: enumerate(DataLoader) → dataload, Optimizer.step /
-- zero_grad → optimizer, autograd engine work → backward, host-to-device copies → to_device.
CREATE OR REPLACE TEMP TABLE phase_ranges AS
WITH explicit AS (
    SELECT ts AS start_ns, ts + dur AS end_ns,
           lower(regexp_extract(name, '^##\s*([A-Za-z_]+)\s*##$', 1)) AS phase, 0 AS priority
    FROM ev WHERE kind = 'annotation' AND regexp_matches(name, '^##\s*[A-Za-z_]+\s*##$')
),
htod_launch AS (
    SELECT r.pid, r.tid, r.ts
    FROM device_activity a JOIN runtime_calls r ON a.correlation = r.correlation
    WHERE a.kind = 'memcpy' AND regexp_matches(a.name, '(?i)(htod|hosttodevice|h2d)')
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
SELECT DISTINCT o.ts, o.ts + o.dur, 'to_device', 4
FROM htod_launch h JOIN op_tree o
  ON o.pid = h.pid AND o.tid = h.tid AND o.depth = 0 AND h.ts >= o.ts AND h.ts <= o.ts + o.dur;

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
CREATE OR REPLACE TEMP TABLE placed_ops AS
SELECT o.*, CASE WHEN o.ts < g.seg_end THEN g.step END AS step,
       CASE WHEN o.ts < g.seg_end THEN g.phase END AS phase
FROM op_tree o ASOF LEFT JOIN segments g ON o.ts >= g.seg_start;

CREATE OR REPLACE TEMP TABLE placed_runtime AS
SELECT r.*, CASE WHEN r.ts < g.seg_end THEN g.step END AS step,
       CASE WHEN r.ts < g.seg_end THEN g.phase END AS phase
FROM runtime_calls r ASOF LEFT JOIN segments g ON r.ts >= g.seg_start;

CREATE OR REPLACE TEMP TABLE placed_activity AS
SELECT a.*, CASE WHEN a.launch_ts < g.seg_end THEN g.step END AS step,
       CASE WHEN a.launch_ts < g.seg_end THEN g.phase END AS phase
FROM device_activity a ASOF LEFT JOIN segments g ON a.launch_ts >= g.seg_start;

-- measurement_window: from the first step's start to when the host and the device have both
-- finished the last step's work.
CREATE OR REPLACE TEMP TABLE measurement_window AS
SELECT min(s.start_ns) AS start_ns,
       greatest(max(s.host_end_ns),
                coalesce((SELECT max(ts + dur) FROM placed_activity WHERE step IS NOT NULL), 0)) AS end_ns,
       count(*) AS steps,
       any_value(s.window_source) AS window_source
FROM step_ranges s;

-- kernel_time: each kernel's time inside the measured window (clipped to it), per device: what the
-- shares of kernel time are shares of (sql/kernel_shares.sql).
CREATE OR REPLACE TEMP TABLE kernel_time AS
SELECT a.device, a.category, a.tensorcore, least(a.ts + a.dur, w.end_ns) - greatest(a.ts, w.start_ns) AS time
FROM placed_activity a, measurement_window w
WHERE a.kind = 'kernel' AND a.ts < w.end_ns AND a.ts + a.dur > w.start_ns;

-- profile_kind: 'train' when the trace holds autograd backward work, unless the caller knows.
CREATE OR REPLACE TEMP TABLE profile_kind AS
SELECT coalesce((SELECT kind_hint FROM ingest_params),
                CASE WHEN EXISTS (SELECT 1 FROM op_tree WHERE name LIKE 'autograd::engine::evaluate_function:%'
                                                          OR name LIKE '%Backward%')
                       OR EXISTS (SELECT 1 FROM phase_ranges WHERE phase = 'backward')
                     THEN 'train' ELSE 'infer' END) AS kind,
       (SELECT kind_hint FROM ingest_params) IS NULL AS kind_inferred,
       EXISTS (SELECT 1 FROM phase_ranges WHERE priority = 0) AS phases_annotated;

-- memory_events / ingest_stats: all the metrics still need of the raw events.
CREATE OR REPLACE TEMP TABLE memory_events AS
SELECT ts, mem_allocated, mem_reserved, mem_device_type FROM ev WHERE kind = 'memory';
CREATE OR REPLACE TEMP TABLE ingest_stats AS
SELECT count(*) FILTER (WHERE negative_duration) AS negative_duration_events FROM ev;

-- host_annotations: the host's named ranges (user annotations), on every thread: sql/blame.sql reads
-- the collectives some backends record only as annotations (gloo:all_reduce on its own thread).
CREATE OR REPLACE TEMP TABLE host_annotations AS
SELECT pid, tid, ts, dur, name FROM ev WHERE kind = 'annotation';

-- module_events: the model's module ranges for sql/modules.sql: our own annotations
-- (measure/modules.py: `module forward: <path> (<Class>)`, `module backward: …`) and a foreign
-- trace's `nn.Module: <Class>_<n>` python_function events (recorded with with_stack/with_modules).
CREATE OR REPLACE TEMP TABLE module_events AS
SELECT pid, tid, ts, dur, name, lower(cat) = 'python_function' AS from_stack FROM ev
WHERE (kind = 'annotation' AND (name LIKE 'module forward: %' OR name LIKE 'module backward: %'))
   OR (lower(cat) = 'python_function' AND name LIKE 'nn.Module: %');

-- The placed_* tables now hold everything below; on a large trace these copies are most of the
-- memory, so they go before the metrics run.
DROP TABLE op_depth;
DROP TABLE op_ordered;
DROP TABLE op_tree;
DROP TABLE runtime_calls;
DROP TABLE device_activity;
DROP TABLE ev;
