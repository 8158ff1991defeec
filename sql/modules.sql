-- modules.sql — where in the model: every module call in the measured window, with its host time,
-- requires: intervals.sql, ingest.sql
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

-- module_ranges: every module event with its nesting on its thread (sql/intervals.sql interval_tree;
-- per phase for our ranges, whose backward ranges overlap; a zero-length event nests in what is open
-- at its instant), so a trace nesting thousands of modules costs no more than nesting_cap
-- (sql/ingest.sql) levels of them.
CREATE OR REPLACE TEMP TABLE module_ranges AS
WITH events AS (
    SELECT row_number() OVER (ORDER BY pid, tid, ts, dur DESC) AS id, pid, tid, ts, dur, name, from_stack,
           CASE WHEN from_stack THEN 'forward' ELSE regexp_extract(name, '^module (forward|backward): ', 1) END AS phase
    FROM module_events
),
nesting_input AS (
    SELECT {'pid': pid, 'tid': tid, 'from_stack': from_stack, 'phase': phase} AS grp, id, ts AS s, ts + dur AS e,
           pid, tid, ts, dur, name, from_stack, phase
    FROM events
)
SELECT id, pid, tid, ts, dur, name, from_stack, phase, depth AS nesting, parent_id FROM interval_tree(nesting_input);

INSERT INTO nesting_cut
SELECT 'module calls', count(*) FROM module_ranges WHERE nesting >= (SELECT max_depth FROM nesting_cap)
HAVING count(*) > 0;

CREATE OR REPLACE TEMP TABLE module_calls AS
WITH RECURSIVE
kept AS (SELECT * FROM module_ranges WHERE nesting < (SELECT max_depth FROM nesting_cap)),
ours AS (
    SELECT pid, tid, ts, dur, phase,
           regexp_extract(name, '^module (?:forward|backward): (.+) \(([^()]*)\)$', 1) AS path,
           regexp_extract(name, '^module (?:forward|backward): (.+) \(([^()]*)\)$', 2) AS module_type
    FROM kept WHERE NOT from_stack
),
-- a kept event's parent is kept too (it is one level shallower)
stack_parented AS (
    SELECT id, pid, tid, ts, dur, regexp_replace(name, '^nn\.Module: ', '') AS label, nesting AS depth, parent_id
    FROM kept WHERE from_stack
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
    FROM stack_parented e JOIN stack_paths p USING (id)
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
DROP TABLE module_ranges;

-- module_self: the calls' time cut at every call's start and end on its thread; each piece belongs
-- to the open call that started last (then the deeper). In the forward pass that is the innermost
-- call, so self = the call minus its children; in the backward pass, where ranges of interleaved
-- branches overlap, it is the module whose gradient arrived last. Either way the self times of a
-- thread's calls tile its outermost calls exactly: nothing is counted twice.
CREATE OR REPLACE TEMP TABLE module_self AS
WITH calls AS (
    SELECT {'pid': pid, 'tid': tid, 'phase': phase} AS grp, call_id AS id, ts AS s, end_ns AS e, depth AS rank
    FROM module_calls
)
SELECT id AS call_id, self AS self_ns FROM interval_self(calls);

-- kernels launched inside each call (same thread, (pid, tid): a tid alone is not unique across processes;
-- launch within the call's time)
CREATE OR REPLACE TEMP TABLE module_kernels AS
WITH calls AS (SELECT {'pid': pid, 'tid': tid} AS grp, call_id AS id, ts AS s, end_ns AS e, depth AS rank FROM module_calls),
launches AS (
    SELECT {'pid': launch_pid, 'tid': launch_tid} AS grp, launch_ts AS t, event_id AS instant_id, dur
    FROM placed_activity WHERE kind = 'kernel'
)
-- owner: the call that owns the launch instant, by module_self's rule
SELECT instant_id AS event_id, dur, interval_id AS call_id, owner AS innermost FROM intervals_open_at(calls, launches);

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
