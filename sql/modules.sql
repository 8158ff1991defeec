-- modules.sql — where in the model: every module call in the measured window, with its host time,
-- the host time it held itself (self: no module range that started later was open), and the
-- device kernels launched inside it.
--
-- Answers nothing by itself: it builds module_calls and module_stats, which sql/table_modules.sql
-- reads (the `modules` table). Binds: nothing. Reads module_events (sql/ingest.sql), step_ranges,
-- placed_activity, measurement_window.
-- Two sources fill the same rows:
--   ranges           our annotations (measure/modules.py): `module forward: <path> (<Class>)` and
--                    `module backward: <path> (<Class>)`; the path is named_modules()' name under the
--                    model's class name, its depth the number of dots
--   python_function  a foreign trace's `nn.Module: <Class>_<n>` events (with_stack/with_modules):
--                    forward only; the path is built from how the events nest on their thread
-- Self host time: each instant of a thread's module time belongs to one call, the open one that
-- started last (module_self below). A kernel belongs to every call whose time holds its launch on
-- the same thread (device_ns), and to the one that owns the launch instant alone (device_self_ns).

CREATE OR REPLACE TEMP TABLE module_calls AS
WITH RECURSIVE
ours AS (
    SELECT pid, tid, ts, dur,
           regexp_extract(name, '^module (forward|backward): ', 1) AS phase,
           regexp_extract(name, '^module (?:forward|backward): (.+) \(([^()]*)\)$', 1) AS path,
           regexp_extract(name, '^module (?:forward|backward): (.+) \(([^()]*)\)$', 2) AS module_type
    FROM module_events WHERE NOT from_stack
),
stack_events AS (
    SELECT row_number() OVER (ORDER BY pid, tid, ts, dur DESC) AS id, pid, tid, ts, dur,
           regexp_replace(name, '^nn\.Module: ', '') AS label
    FROM module_events WHERE from_stack
),
stack_marks AS (
    -- at equal times: ends first, then starts (longest first); as sql/ingest.sql nests ops
    SELECT id, pid, tid, ts AS t, 1 AS edge, dur FROM stack_events
    UNION ALL
    SELECT NULL, pid, tid, ts + dur, 0, dur FROM stack_events
),
stack_depth AS (
    SELECT id, sum(CASE WHEN edge = 1 THEN 1 ELSE -1 END)
                   OVER (PARTITION BY pid, tid ORDER BY t, edge, dur DESC, id ROWS UNBOUNDED PRECEDING) - 1 AS depth
    FROM stack_marks
    QUALIFY edge = 1
),
stack_ordered AS (
    SELECT e.*, greatest(d.depth, 0) AS depth, greatest(d.depth, 0) - 1 AS parent_depth
    FROM stack_events e JOIN stack_depth d USING (id)
),
stack_parented AS (
    SELECT c.id, c.label, c.depth, p.id AS parent_id
    FROM stack_ordered c ASOF LEFT JOIN stack_ordered p
      ON c.pid = p.pid AND c.tid = p.tid AND c.parent_depth = p.depth AND c.id > p.id
),
stack_paths(id, path) AS (
    SELECT id, label FROM stack_parented WHERE parent_id IS NULL OR depth = 0
    UNION ALL
    SELECT c.id, p.path || '.' || c.label
    FROM stack_parented c JOIN stack_paths p ON c.parent_id = p.id
    WHERE c.depth > 0
),
theirs AS (
    SELECT e.pid, e.tid, e.ts, e.dur, 'forward' AS phase, p.path,
           regexp_replace(e.label, '_[0-9]+$', '') AS module_type
    FROM stack_events e JOIN stack_paths p USING (id)
),
calls AS (
    SELECT *, 'ranges' AS source FROM ours WHERE path <> ''
    UNION ALL
    SELECT *, 'python_function' FROM theirs
)
SELECT row_number() OVER (ORDER BY c.ts, c.dur DESC, c.path) AS call_id,
       c.pid, c.tid, c.ts, c.ts + c.dur AS end_ns, c.dur, c.phase, c.path, c.module_type, c.source,
       length(c.path) - length(replace(c.path, '.', '')) AS depth,
       CASE WHEN contains(c.path, '.') THEN regexp_replace(c.path, '\.[^.]*$', '') END AS parent_path,
       s.step
FROM calls c ASOF JOIN step_ranges s ON c.ts >= s.start_ns
WHERE c.ts < s.host_end_ns;

-- module_self: the calls' time cut at every call's start and end on its thread; each piece belongs
-- to the open call that started last (then the deeper). In the forward pass that is the innermost
-- call, so self = the call minus its children; in the backward pass, where ranges of interleaved
-- branches overlap, it is the module whose gradient arrived last. Either way the self times of a
-- thread's calls tile its outermost calls exactly: nothing is counted twice.
CREATE OR REPLACE TEMP TABLE module_self AS
WITH bounds AS (
    SELECT pid, tid, phase, ts AS t FROM module_calls
    UNION
    SELECT pid, tid, phase, end_ns FROM module_calls
),
pieces AS (
    SELECT pid, tid, phase, t AS s, lead(t) OVER (PARTITION BY pid, tid, phase ORDER BY t) AS e
    FROM bounds
    QUALIFY e IS NOT NULL
),
owned AS (
    SELECT p.s, p.e, c.call_id
    FROM pieces p JOIN module_calls c
      ON c.pid = p.pid AND c.tid = p.tid AND c.phase = p.phase AND c.ts <= p.s AND c.end_ns >= p.e
    QUALIFY row_number() OVER (PARTITION BY p.pid, p.tid, p.phase, p.s
                               ORDER BY c.ts DESC, c.depth DESC, c.call_id DESC) = 1
)
SELECT call_id, sum(e - s) AS self_ns FROM owned GROUP BY call_id;

-- kernels launched inside each call (same thread, launch within the call's time)
CREATE OR REPLACE TEMP TABLE module_kernels AS
WITH inside AS (
    SELECT a.event_id, a.dur, c.call_id, c.depth, c.ts
    FROM placed_activity a JOIN module_calls c
      ON a.launch_tid = c.tid AND a.launch_ts >= c.ts AND a.launch_ts < c.end_ns
    WHERE a.kind = 'kernel'
)
SELECT event_id, dur, call_id,
       -- the call that owns the launch instant, by module_self's rule
       row_number() OVER (PARTITION BY event_id ORDER BY ts DESC, depth DESC, call_id DESC) = 1 AS innermost
FROM inside;

CREATE OR REPLACE TEMP TABLE module_stats AS
WITH per_call AS (
    SELECT c.*, coalesce(v.self_ns, 0) AS self_ns,
           coalesce((SELECT sum(k.dur) FROM module_kernels k WHERE k.call_id = c.call_id), 0) AS device_ns,
           coalesce((SELECT sum(k.dur) FROM module_kernels k WHERE k.call_id = c.call_id AND k.innermost), 0) AS device_self_ns,
           (SELECT count(*) FROM module_kernels k WHERE k.call_id = c.call_id) AS kernels
    FROM module_calls c LEFT JOIN module_self v USING (call_id)
),
per_path AS (
    SELECT phase, path, any_value(parent_path) AS parent_path, any_value(depth) AS depth,
           any_value(module_type) AS module_type, any_value(source) AS source,
           count(*) AS calls, sum(dur) AS total_ns, sum(self_ns) AS self_ns,
           sum(device_ns) AS device_ns, sum(device_self_ns) AS device_self_ns, sum(kernels) AS kernels,
           min(ts) AS first_ts
    FROM per_call GROUP BY phase, path
),
roots AS (SELECT phase, sum(total_ns) AS root_ns FROM per_path WHERE depth = 0 GROUP BY phase)
SELECT p.*, r.root_ns,
       EXISTS (SELECT 1 FROM placed_activity WHERE kind = 'kernel') AS has_kernels
FROM per_path p LEFT JOIN roots r USING (phase);
