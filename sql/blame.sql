-- blame.sql — per-step blame: every nanosecond of each step's wall time assigned to exactly one cause.
-- requires: blame_causes.sql, intervals.sql, ingest.sql, runtime_calls.sql, verdict_thresholds.sql
--
-- Answers: in each measured step, what held the critical path — which device work while the device
-- was busy, and what the host was doing while it was idle.
-- Binds: nothing. Reads the tables sql/ingest.sql builds (step_ranges, placed_activity, placed_runtime,
-- placed_ops, phase_ranges, host_annotations), launch_roles (sql/runtime_calls.sql) and the vocabulary,
-- blame_causes (sql/blame_causes.sql). Creates blame_windows (one row per step) and blame_rows (step × cause, ns), which
-- sql/table_blame.sql and the blame_<cause>_pct metrics of sql/metrics.sql read.
--
-- The step: from its host start (ProfilerStep#N, or the fallback window of step_ranges) to the later
-- of its host end and the end of the device work it launched (placed_activity.step). The last step's host
-- end is where its recorded work ended: a closing stretch recording nothing but a wait is no part of it
-- (sql/ingest.sql step_tail; measurement_window's drain reports it beside the steps). Hosts and
-- devices are read on every thread and every device, so a step annotated on one thread whose work
-- runs on another is blamed on that work.
--
-- GPU profile (the trace holds device work). Every instant takes the cause of the highest-priority
-- (lowest number) interval covering it:
--   1 gemm_conv       device busy: category gemm (sql/kernel_categories.sql), attention names excepted
--   2 attention       device busy: category attention, or a gemm-category kernel named fmha/flash/attention/attn/sdpa
--   3 memory_bound    device busy: elementwise, layout, norm, reduce, optimizer (memory-streaming kernels)
--   4 device_other    device busy: nms/sort and kernels no rule names ('other')
--   5 communication   device busy: communication (nccl/rccl collectives)
--   6 memcpy_memset   device busy: memcpy / memset activities
--   (device rule: compute hides the collectives and copies it overlaps: they cost the step nothing then)
--  10 sync_bubble     device idle, host blocked: a sync-role call (cuda/hip *Synchronize, cudaMemcpy …), a poll
--                     of the device's progress (cu/cuda/hip Event/StreamQuery: a loop of them is a wait), or
--                     a copy call that blocks (blame_copy_calls): pageable memory on either side ('Pageable ->
--                     Device', 'Device -> Pageable': the host stages it through a bounce buffer and blocks, in
--                     either direction), or a call that returned only once its copy had finished on the device
--  11 startup         device idle, host creating what the device needs once: streams, events, contexts,
--                     library handles (cublas/cudnn/…Create), device properties, primary context set-up
--  12 module_loading  device idle, host loading code: cu/cudaModule*/cuLibrary*/…GetFunc… calls, and a kernel
--                     launch call of 1 ms or more that launches a kernel name's first run in the trace (lazy
--                     module loading happens inside a kernel's first launch; an ordinary launch takes
--                     microseconds; a later long launch is blocked on something else and counts as launching)
--  13 allocator       device idle, host in cudaMalloc/cudaFree and their cu/hip equivalents (role malloc/free)
--  14 dataload        device idle, inside a dataload phase range (enumerate(DataLoader), ## dataload ##)
--  15 launching       device idle, host in a launch call (launch_roles), or in an op whose time range holds a
--                     launch call on its own thread (the dispatch of ops that launch, their sub-ops included)
--  16 preprocess      device idle, an explicit ## preprocess ## range, or (inference) host work — an op that
--                     launches nothing, a Python frame, a recorded range — before the step's first launch
--  17 cpu_work        device idle, host in an op that launches nothing, any other runtime call, or an
--                     explicit ## postprocess ## range
--  25 python          device idle (or, on a CPU, no op covering it), host in a recorded Python frame
--                     (python_function, with_stack) or inside a recorded host range (a module forward, a
--                     ## phase ## mark, Optimizer.step …; ProfilerStep excepted) between ops: the model's
--                     Python
--  99 unexplained_idle nothing at all recorded on any host thread or the device
-- CPU profile (no device work anywhere in the trace), same rule:
--  14 dataload        inside a dataload phase range
--  21 cpu_gemm_conv   inside an op that executes work (op_tree.executes) named conv/mm/matmul/linear/bmm/einsum
--  22 cpu_other_ops   inside any other op that executes work, collectives excepted
--  23 cpu_communication inside an executing collective op (gloo, c10d, nccl, all_reduce …) or a host annotation
--                     naming one (gloo records gloo:all_reduce as an annotation on its own thread)
--  24 framework_overhead inside an op that does not execute work itself (dispatch, Python bindings), or one whose
--                     recorded input shapes (the roofline's, kept for the ops it models) hold at most
--                     dispatch_op_elements (sql/verdict_thresholds.sql), or one such an op calls: so little
--                     arithmetic is done long before the op's dispatch is (the shapes are read here, not sql/roofline_costs.sql's costs: the
--                     blame is the profile's core, the roofline a section that may fail alone)
--  25 python          as above
--  99 unexplained_idle nothing recorded
-- An executing op's whole range counts as execution (its small sub-ops included: executes means it
-- spends most of its time in itself).
-- Zero-length intervals cover nothing. The causes of a step add up to its wall time exactly (integer ns).

-- blame_windows: each step's wall time, host start → later of host end and its device work's end, but
-- never past the next step's start: from there the next step owns the time (work that overlaps it is
-- blamed there, at the moment it runs), so no nanosecond of the window is counted in two steps. With more
-- than one step and a device that kept up, the last one ends with the host (the end-of-window drain,
-- measurement_window.drain_ns, is reported beside the steps: in steady state the next step would hide it);
-- on a device-bound window the device's lag is the steps' own time and the last step keeps it.
CREATE OR REPLACE TEMP TABLE blame_windows AS
WITH reach AS (
    SELECT s.step, s.start_ns, s.host_end_ns,
           greatest(s.host_end_ns, coalesce(max(a.ts + a.dur), s.host_end_ns)) AS work_end_ns
    FROM step_ranges s LEFT JOIN placed_activity a ON a.step = s.step
    GROUP BY s.step, s.start_ns, s.host_end_ns
),
bounded AS (
    SELECT step, start_ns,
           coalesce(lead(start_ns) OVER (ORDER BY start_ns, step),
                    CASE WHEN count(*) OVER () > 1 AND NOT (SELECT device_bound FROM measurement_window)
                         THEN host_end_ns ELSE work_end_ns END) AS next_ns,
           work_end_ns
    FROM reach
)
SELECT step, start_ns, greatest(start_ns, least(work_end_ns, next_ns)) AS end_ns
FROM bounded;

-- blame_copy_calls: every host call that issued a copy (an async copy launch, or a synchronous copy such as
-- cudaMemcpy or hipMemcpyWithStream), with what its copy was (from the memcpy's name and args) and whether
-- the call blocked the host: a synchronous call, pageable host memory on either side of the copy, or a call
-- that returned only once its copy had finished on the device (the host waited for it, whatever the name).
CREATE OR REPLACE TEMP TABLE blame_copy_calls AS
SELECT r.event_id, r.name AS call, r.ts AS call_start_ns, r.ts + r.dur AS call_end_ns, a.name AS copy,
       a.ts AS copy_start_ns, a.ts + a.dur AS copy_end_ns,
       -- bytes the copy moved (the memcpy's args; NULL when the trace does not record them)
       a.copy_bytes AS bytes,
       -- HtoD | DtoH | DtoD | HtoH | PtoP … as the copy's name says, else 'unnamed direction'
       coalesce(nullif(regexp_extract(a.name, '\b([HDPA]to[HDPA])\b', 1), ''), 'unnamed direction') AS direction,
       -- the memory on each side as recorded ('Pageable -> Device'; NULL when the name has none)
       nullif(regexp_extract(a.name, '\(([^)]*)\)', 1), '') AS memory,
       -- whether the host side is pinned: no (pageable), yes (pinned), or 'not recorded'
       CASE WHEN regexp_matches(a.name, '(?i)pageable') THEN 'no' WHEN regexp_matches(a.name, '(?i)pinned') THEN 'yes'
            ELSE 'not recorded' END AS pinned,
       r.role = 'sync' OR regexp_matches(a.name, '(?i)pageable') OR r.ts + r.dur >= a.ts + a.dur AS blocks
FROM placed_runtime r JOIN placed_activity a ON a.correlation = r.correlation AND a.kind = 'memcpy'
WHERE r.role IN ('memcpy_async', 'sync') AND r.correlation IS NOT NULL AND r.correlation <> 0;

-- blame_intervals: every interval that can explain time, with its cause and the name of what recorded it
-- (a kernel, a runtime call, an op, a Python frame, a host range; a blocking copy call with its copy's
-- direction, memory, pinned state and bytes, which the reasons quote).
CREATE OR REPLACE TEMP TABLE blame_intervals AS
WITH on_gpu AS (SELECT EXISTS (SELECT 1 FROM placed_activity) AS yes),
inference AS (SELECT kind = 'infer' AS yes FROM profile_kind),
device_work AS (
    SELECT NULL::BIGINT AS pid, NULL::BIGINT AS tid, ts AS s, ts + dur AS e, name,
           CASE WHEN kind IN ('memcpy', 'memset') THEN 'memcpy_memset'
                WHEN category = 'communication' THEN 'communication'
                WHEN category = 'attention'
                  OR (category = 'gemm' AND regexp_matches(name, '(?i)(fmha|flash|attention|attn|sdpa)')) THEN 'attention'
                WHEN category = 'gemm' THEN 'gemm_conv'
                WHEN category IN ('elementwise', 'layout', 'norm', 'reduce', 'optimizer', 'embedding') THEN 'memory_bound'
                ELSE 'device_other' END AS cause
    FROM placed_activity
),
-- the launch of each kernel name's first run in the trace: where lazy module loading can happen
first_launches AS (
    SELECT arg_min(correlation, launch_ts) AS correlation FROM placed_activity
    WHERE kind = 'kernel' AND launch_ts IS NOT NULL GROUP BY name
),
blocking_copy_names AS (
    SELECT event_id,
           format('{} {}{} (pinned: {}, {} bytes)', any_value(call), any_value(direction),
                  coalesce(' ' || any_value(memory), ''), any_value(pinned),
                  coalesce(TRY_CAST(sum(bytes) AS BIGINT)::VARCHAR, sum(bytes)::VARCHAR, 'unrecorded')) AS name
    FROM blame_copy_calls WHERE blocks GROUP BY event_id
),
host_calls AS (
    SELECT r.pid, r.tid, r.ts AS s, r.ts + r.dur AS e, coalesce(b.name, r.name) AS name,
           CASE WHEN r.role = 'sync' OR b.event_id IS NOT NULL
                  OR regexp_matches(r.name, '(?i)^(cu|cuda|hip)(event|stream)query$')
                     THEN 'sync_bubble'
                -- roles from sql/runtime_calls.sql: ROCm's hip(Ext)ModuleLaunchKernel are launches there, and a
                -- device-properties query (every step on ROCm) is host work, not start-up
                WHEN r.role = 'startup' THEN 'startup'
                WHEN r.role = 'module_load'
                  OR (r.role = 'kernel_launch' AND r.dur >= 1000000 AND r.correlation IN (SELECT correlation FROM first_launches))
                     THEN 'module_loading'
                WHEN r.role IN ('malloc', 'free') THEN 'allocator'
                WHEN r.role IN (SELECT role FROM launch_roles) THEN 'launching'
                ELSE 'cpu_work' END AS cause
    FROM placed_runtime r LEFT JOIN blocking_copy_names b USING (event_id)
),
-- launches on each thread, numbered in time: an op holds a launch when more launches began before its end than before its start
launch_seq AS (
    SELECT pid, tid, ts, row_number() OVER (PARTITION BY pid, tid ORDER BY ts) AS launches_so_far
    FROM placed_runtime WHERE role IN (SELECT role FROM launch_roles)
),
ops_launches AS (
    SELECT o.event_id, o.pid, o.tid, o.name, o.ts, o.dur, o.executes,
           coalesce(at_end.launches_so_far, 0) - coalesce(at_start.launches_so_far, 0) AS launches
    FROM placed_ops o
    ASOF LEFT JOIN launch_seq at_start ON o.pid = at_start.pid AND o.tid = at_start.tid AND o.ts > at_start.ts
    ASOF LEFT JOIN launch_seq at_end ON o.pid = at_end.pid AND o.tid = at_end.tid AND o.ts + o.dur > at_end.ts
),
gpu_host_ops AS (
    SELECT pid, tid, ts AS s, ts + dur AS e, name, CASE WHEN launches > 0 THEN 'launching' ELSE 'cpu_work' END AS cause
    FROM ops_launches
),
-- ops whose recorded input shapes hold almost no data: their time is their dispatch (a dimension list that is
-- not a tensor's, [], counts one element), and so is the time of every op they call (aten::add on a Python
-- scalar converts it through aten::to, _to_copy, empty_strided and copy_, none of which records shapes)
dispatch_ops AS (
    WITH RECURSIVE tiny(event_id) AS (
        SELECT event_id FROM placed_ops
        WHERE list_sum(list_transform(TRY_CAST(shape_dims AS BIGINT[][]), lambda d: coalesce(list_product(d), 1)))
              <= verdict_threshold('dispatch_op_elements')
        UNION
        SELECT o.event_id FROM placed_ops o JOIN tiny t ON o.parent_id = t.event_id
    )
    SELECT event_id FROM tiny
),
cpu_ops AS (
    SELECT pid, tid, ts AS s, ts + dur AS e, name,
           CASE WHEN NOT executes OR event_id IN (SELECT event_id FROM dispatch_ops) THEN 'framework_overhead'
                WHEN regexp_matches(name, '(?i)(gloo|c10d|nccl|all_?reduce|all_?gather|reduce_?scatter|broadcast|barrier|record_param_comms|alltoall)')
                     THEN 'cpu_communication'
                WHEN regexp_matches(name, '(?i)(conv|mm|matmul|linear|einsum)') THEN 'cpu_gemm_conv'
                ELSE 'cpu_other_ops' END AS cause
    FROM ops_launches
),
-- collectives recorded only as host annotations (gloo:all_reduce on the process group's thread)
cpu_collectives AS (
    SELECT pid, tid, ts AS s, ts + dur AS e, name, 'cpu_communication' AS cause FROM host_annotations
    WHERE regexp_matches(name, '(?i)(gloo|c10d|nccl|all_?reduce|all_?gather|reduce_?scatter|broadcast|barrier|record_param_comms|alltoall)')
),
-- the model's Python: recorded frames, and the host ranges around it (not the step itself)
python AS (
    SELECT pid, tid, ts AS s, ts + dur AS e, name, 'python' AS cause FROM host_frames
    UNION ALL
    SELECT pid, tid, ts, ts + dur, name, 'python' FROM host_annotations
    WHERE name NOT LIKE 'ProfilerStep#%' AND name NOT LIKE 'enumerate(DataLoader)#%'
),
host_phases AS (
    SELECT NULL::BIGINT AS pid, NULL::BIGINT AS tid, start_ns AS s, end_ns AS e, '## ' || phase || ' ##' AS name,
           CASE phase WHEN 'dataload' THEN 'dataload' WHEN 'preprocess' THEN 'preprocess' ELSE 'cpu_work' END AS cause
    FROM phase_ranges WHERE phase IN ('dataload', 'preprocess', 'postprocess')
),
-- inference: the host work of each call before its first launch is its preprocessing
first_launch AS (
    SELECT w.step, w.start_ns, min(r.ts) AS first_ns
    FROM blame_windows w JOIN placed_runtime r ON r.ts >= w.start_ns AND r.ts < w.end_ns
    WHERE r.role IN (SELECT role FROM launch_roles)
    GROUP BY w.step, w.start_ns
),
before_first_launch AS (
    SELECT i.pid, i.tid, greatest(i.s, f.start_ns) AS s, least(i.e, f.first_ns) AS e, i.name, 'preprocess' AS cause
    FROM (SELECT pid, tid, s, e, name FROM gpu_host_ops WHERE cause = 'cpu_work'
          UNION ALL SELECT pid, tid, s, e, name FROM python) i
    JOIN first_launch f ON i.s < f.first_ns AND i.e > f.start_ns
    WHERE (SELECT yes FROM inference)
),
all_intervals AS (
    SELECT pid, tid, s, e, name, cause FROM device_work WHERE (SELECT yes FROM on_gpu)
    UNION ALL SELECT pid, tid, s, e, name, cause FROM host_calls WHERE (SELECT yes FROM on_gpu)
    UNION ALL SELECT pid, tid, s, e, name, cause FROM gpu_host_ops WHERE (SELECT yes FROM on_gpu)
    UNION ALL SELECT pid, tid, s, e, name, cause FROM before_first_launch WHERE (SELECT yes FROM on_gpu)
    UNION ALL SELECT pid, tid, s, e, name, cause FROM cpu_ops WHERE NOT (SELECT yes FROM on_gpu)
    UNION ALL SELECT pid, tid, s, e, name, cause FROM cpu_collectives WHERE NOT (SELECT yes FROM on_gpu)
    UNION ALL SELECT pid, tid, s, e, name, cause FROM python
    UNION ALL SELECT pid, tid, s, e, name, cause FROM host_phases WHERE (SELECT yes FROM on_gpu) OR cause = 'dataload'
)
-- (pid, tid: the host thread that recorded it; NULL for device work and for phase ranges, which span threads)
SELECT i.pid, i.tid, i.s, i.e, i.name, i.cause, c.priority
FROM all_intervals i JOIN blame_causes c USING (cause) WHERE i.e > i.s;

-- blame_rows: cut each step at every interval boundary inside it; each piece takes the highest-priority
-- (lowest) cause covering it (sql/intervals.sql interval_coverage, with priorities as labels). The step
-- itself is an interval of the weakest priority, unexplained_idle's: the time nothing else covers.
CREATE OR REPLACE TEMP TABLE blame_pieces AS
WITH clipped AS (
    SELECT w.step AS grp, i.priority AS label, greatest(i.s, w.start_ns) AS s, least(i.e, w.end_ns) AS e
    FROM blame_intervals i JOIN blame_windows w ON i.s < w.end_ns AND i.e > w.start_ns
    UNION ALL
    SELECT step, (SELECT priority FROM blame_causes WHERE cause = 'unexplained_idle'), start_ns, end_ns
    FROM blame_windows
),
winners AS (SELECT grp AS step, s, e, first_label AS priority FROM interval_coverage(clipped))
SELECT w.step, w.s, w.e, c.cause, c.side
FROM winners w JOIN blame_causes c USING (priority);

CREATE OR REPLACE TEMP TABLE blame_rows AS
SELECT step, cause, side, sum(e - s) AS ns FROM blame_pieces GROUP BY step, cause, side;

-- blame_holders: for the host causes a reason names, what held the time: each piece the cause won is
-- cut at the boundaries of that cause's own intervals, and each part goes to the innermost (shortest, then
-- first by name) interval of the cause covering it (the Python frame, op, runtime call or range that ran),
-- ns in all steps. Per cause, one ordered pass over every boundary (its intervals' and its won pieces')
-- gives the elementary parts, whether each lies in a won piece (a cause's pieces never overlap: a running
-- sum of +1/-1 at their edges) and a running count of the won ones; an interval covers exactly the won
-- parts counted between its start and its end, both boundaries themselves (two equality joins), with no
-- pairwise comparison of parts and intervals. The innermost is the least (duration, name), packed in one
-- number: the duration above 32 bits, the name's rank in name order below.
CREATE OR REPLACE TEMP TABLE blame_holders AS
WITH named AS (
    SELECT s, e, name, cause, e - s AS dur FROM blame_intervals
    WHERE cause IN ('python', 'cpu_work', 'preprocess', 'sync_bubble', 'startup', 'module_loading', 'launching',
                    'framework_overhead')
      -- a C call (with_stack records `<built-in method …>`) is held by the Python frame that made it: the
      -- code a person wrote and can move
      AND NOT (cause = 'python' AND starts_with(name, '<built-in'))
),
names AS (SELECT name, row_number() OVER (ORDER BY name) AS name_rank FROM (SELECT DISTINCT name FROM named)),
ranked AS (
    SELECT n.s, n.e, n.cause, (CAST(n.dur AS HUGEINT) << 32) + r.name_rank AS preference
    FROM named n JOIN names r ON r.name IS NOT DISTINCT FROM n.name
),
held AS (SELECT cause, s, e FROM blame_pieces WHERE cause IN (SELECT DISTINCT cause FROM named)),
edges AS (
    SELECT cause, s AS t, 1 AS held_delta FROM held
    UNION ALL SELECT cause, e, -1 FROM held
    UNION ALL SELECT cause, s, 0 FROM named
    UNION ALL SELECT cause, e, 0 FROM named
),
cuts AS (SELECT cause, t, sum(held_delta) AS held_delta FROM edges GROUP BY cause, t),
parts AS (
    SELECT cause, t AS s, lead(t) OVER by_time AS e,
           CAST(sum(held_delta) OVER (by_time ROWS UNBOUNDED PRECEDING) AS BIGINT) AS held
    FROM cuts WINDOW by_time AS (PARTITION BY cause ORDER BY t)
),
numbered AS MATERIALIZED (
    SELECT *, CAST(sum(held) OVER (PARTITION BY cause ORDER BY s ROWS UNBOUNDED PRECEDING) AS BIGINT) AS k FROM parts
),
spans AS (
    SELECT n.preference, n.cause, a.k - a.held + 1 AS k0, b.k - b.held AS k1
    FROM ranked n
    JOIN numbered a ON a.cause = n.cause AND a.s = n.s
    JOIN numbered b ON b.cause = n.cause AND b.s = n.e
    WHERE b.k - b.held >= a.k - a.held + 1
),
covering AS (SELECT preference, cause, unnest(range(k0, k1 + 1)) AS k FROM spans),
holder AS (
    SELECT p.cause, p.e - p.s AS ns, CAST(min(c.preference) & 4294967295 AS BIGINT) AS name_rank
    FROM covering c JOIN numbered p ON p.cause = c.cause AND p.k = c.k AND p.held = 1
    GROUP BY p.cause, p.k, p.s, p.e
)
SELECT h.cause, r.name, sum(h.ns) AS ns FROM holder h JOIN names r USING (name_rank) GROUP BY h.cause, r.name;

-- blame_host_floor: the host's recorded work per step that does not wait on the device, the floor below which
-- what-if never projects a step (sql/what_if.sql). Each host thread's recorded time (ops, runtime calls, Python
-- frames, host ranges; the ProfilerStep range excepted, it is the step) less the time it waited on the device
-- (the intervals of the causes that wait_on_device in sql/blame_causes.sql: syncs, blocking copies, polls),
-- then the union over the threads: they hand the step to each other (the autograd engine's threads run the
-- backward while the main thread waits for them), so their work is one chain, counted once where it overlaps.
-- Per kernel category, less the launch calls of that category's work (removing the kernels removes their
-- launches; a call that also launched other work stays), the whole call even where another thread worked
-- meanwhile, so the floor errs low. ms per step over the blame's steps; category NULL: nothing removed.
CREATE OR REPLACE TEMP TABLE blame_host_floor AS
WITH host AS (
    SELECT pid, tid, ts AS s, ts + dur AS e, 2 AS label FROM placed_ops
    UNION ALL SELECT pid, tid, ts, ts + dur, 2 FROM placed_runtime
    UNION ALL SELECT pid, tid, ts, ts + dur, 2 FROM host_frames
    UNION ALL SELECT pid, tid, ts, ts + dur, 2 FROM host_annotations WHERE name NOT LIKE 'ProfilerStep#%'
    -- the waits: label 1, so the coverage below hands their time to them
    UNION ALL SELECT i.pid, i.tid, i.s, i.e, 1 FROM blame_intervals i JOIN blame_causes c USING (cause)
    WHERE c.waits_on_device AND i.tid IS NOT NULL
),
clipped AS (
    SELECT {'step': w.step, 'pid': h.pid, 'tid': h.tid} AS grp, h.label,
           greatest(h.s, w.start_ns) AS s, least(h.e, w.end_ns) AS e
    FROM host h JOIN blame_windows w ON h.s < w.end_ns AND h.e > w.start_ns
),
working AS (
    SELECT grp.step AS grp, s, e FROM interval_coverage(clipped) WHERE first_label = 2
),
worked AS (SELECT grp AS step, sum(e - s) AS ns FROM interval_union(working) GROUP BY grp),
launch_calls AS (
    SELECT r.ts AS s, r.ts + r.dur AS e, any_value(a.category) AS category
    FROM placed_runtime r JOIN placed_activity a ON a.correlation = r.correlation
    WHERE r.role IN (SELECT role FROM launch_roles) AND r.correlation IS NOT NULL AND r.correlation <> 0
      -- a copy call that blocked is a wait, already off the floor
      AND r.event_id NOT IN (SELECT event_id FROM blame_copy_calls WHERE blocks)
    GROUP BY r.event_id, r.ts, r.dur
    HAVING count(DISTINCT a.category) = 1
),
launched AS (
    SELECT w.step, l.category, sum(least(l.e, w.end_ns) - greatest(l.s, w.start_ns)) AS ns
    FROM launch_calls l JOIN blame_windows w ON l.s < w.end_ns AND l.e > w.start_ns
    GROUP BY ALL
),
categories AS (SELECT DISTINCT category FROM placed_activity WHERE category IS NOT NULL UNION ALL SELECT NULL)
SELECT
    -- the kernel category whose launches are left out (NULL: none)
    c.category,
    -- the host threads' recorded work not waiting on the device, ms per step
    sum(greatest(t.ns - coalesce(l.ns, 0), 0)) / 1e6 / (SELECT count(*) FROM blame_windows) AS ms_per_step
FROM categories c CROSS JOIN worked t
LEFT JOIN launched l ON l.step = t.step AND l.category = c.category
GROUP BY c.category;
