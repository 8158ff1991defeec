-- events.sql — the raw profiler events typed: one row per duration or instant event, times in integer ns.
-- inputs: raw_events, raw_event_times (store/ingest/timeline.py registers the decoder's Arrow columns)
--
-- Answers nothing by itself: it builds ev, which sql/ingest.sql reads, and trace_origin, duration_counts,
-- event_damage and unreadable_step_ranges. Binds: nothing. Its inputs:
--   raw_events       one row per Kineto event (libreyolo_profile/store/decode/events.py: EVENT_SCHEMA), and
--                    event_seq BIGINT, its place in the decoder's order from 0; a stream, read once (by ev),
--                    each batch's memory let go once read
--   raw_event_times  the same events' ph, name, ts_text and dur_text, which can be read more than once
-- It runs alone, before sql/ingest.sql, so that the caller can let the decoder's columns go once ev holds
-- what it needs of them.

-- us_text_to_ns: a Kineto time as written (µs, a JSON number's text, sub-µs digits kept) in integer ns;
-- NULL where it is not a number. Plain integers, most of them, take BIGINT arithmetic: DECIMAL parsing costs
-- more and gives the same value for them. DECIMAL(35, 6) holds under 1e29 µs, so × 1000 cannot overflow
-- (DECIMAL(38, 6) × 1000 raised an error for 1e29-1e32, which failed the whole trace); past BIGINT it is NULL.
CREATE OR REPLACE TEMP MACRO us_text_to_ns(t) AS
CASE WHEN NOT (contains(t, '.') OR contains(t, 'e') OR contains(t, 'E') OR contains(t, 'x') OR contains(t, 'X')
               OR contains(t, 'b') OR contains(t, 'B') OR contains(t, 'o') OR contains(t, 'O'))
          AND TRY_CAST(t AS BIGINT) BETWEEN -9223372036854775 AND 9223372036854775
     THEN TRY_CAST(t AS BIGINT) * 1000
     ELSE TRY_CAST(round(TRY_CAST(t AS DECIMAL(35, 6)) * 1000) AS BIGINT) END;

-- ns_readable: a time or duration in ns kept where it lies within ±2^61 ns (±73 years of its clock's zero),
-- else NULL: every difference of two of them and every end (ts + dur) then fits BIGINT, where one event at
-- ts ±9.2e15 µs or with a duration of as much overflowed the analysis and failed the whole trace. Applied to
-- a column, not to us_text_to_ns(…) itself: a macro's argument is copied into each use, parsed twice.
CREATE OR REPLACE TEMP MACRO ns_readable(ns) AS CASE WHEN ns BETWEEN -2305843009213693951 AND 2305843009213693951 THEN ns END;

-- event_time_counts: one pass over every event's ts (in ns: NULL where missing, not a number or past BIGINT's
-- range of ns) and dur for the three tables below.
CREATE OR REPLACE TEMP TABLE event_time_counts AS
WITH t AS (
    SELECT ns_readable(ts_any) AS ts_ns, ts_text, dur_text, name,
           -- a duration's sign, -2 where ev cannot read it (missing, not a number, NaN, infinite or past
           -- ns_readable's range): read as a DOUBLE of µs, which costs a fraction of us_text_to_ns
           CASE WHEN ph <> 'X' THEN NULL
                WHEN d > 0 AND d < 2305843009213693.5 THEN 1 WHEN d = 0 THEN 0
                WHEN d < 0 AND d > -2305843009213693.5 THEN -1 ELSE -2 END
               AS dur_sign
    FROM (SELECT *, TRY_CAST(dur_text AS DOUBLE) AS d, us_text_to_ns(ts_text) AS ts_any FROM raw_event_times)
)
SELECT min(ts_ns) AS origin_ns, max(ts_ns) AS last_ns, count(ts_ns) AS readable,
       count(dur_sign) AS duration_events,
       count(*) FILTER (WHERE dur_sign = 1) AS usable,
       count(*) FILTER (WHERE ts_ns IS NULL) AS no_ts, any_value(ts_text) FILTER (WHERE ts_ns IS NULL) AS no_ts_text,
       count(*) FILTER (WHERE dur_sign = -1 AND ts_ns IS NOT NULL) AS negative,
       any_value(dur_text) FILTER (WHERE dur_sign = -1 AND ts_ns IS NOT NULL) AS negative_text,
       count(*) FILTER (WHERE dur_sign = -2 AND ts_ns IS NOT NULL) AS no_dur,
       any_value(dur_text) FILTER (WHERE dur_sign = -2 AND ts_ns IS NOT NULL) AS no_dur_text,
       count(*) FILTER (WHERE ts_ns IS NULL AND name LIKE 'ProfilerStep#%') AS unreadable_steps
FROM t;

-- stray_times: one profiling session never spans a day, so the few events more than a day from the trace's
-- median time are a stray clock value (a time of 0 or -1 beside µs since the epoch, one event's time in ns):
-- kept, one of them made a 53-year step and every figure of it nonsense. They are left out and counted where
-- they are at most max(10, 1%) of the readable events; more than that would be a lane on another clock, kept
-- as recorded. Only a trace whose times span more than a day is read again for it (a rare one), so the
-- median's cost falls on no other. One row (lo_ns, hi_ns: the times kept; origin_ns: the first of them;
-- events, steps: how many events and ProfilerStep ranges are left out; example) or none.
CREATE OR REPLACE TEMP TABLE stray_times AS
WITH spread AS (
    SELECT readable FROM event_time_counts WHERE last_ns - origin_ns > 86400000000000
),
times AS (
    SELECT ns_readable(ts_any) AS ts_ns, ts_text, name
    FROM (SELECT us_text_to_ns(ts_text) AS ts_any, ts_text, name FROM raw_event_times
          WHERE EXISTS (SELECT 1 FROM spread))
),
middle AS (SELECT quantile_disc(ts_ns, 0.5) AS median_ns FROM times),
placed AS (SELECT t.*, abs(t.ts_ns - m.median_ns) > 86400000000000 AS far FROM times t, middle m WHERE t.ts_ns IS NOT NULL),
counted AS (
    SELECT count(*) FILTER (WHERE far) AS events, any_value(ts_text) FILTER (WHERE far) AS example,
           count(*) FILTER (WHERE far AND name LIKE 'ProfilerStep#%') AS steps,
           min(ts_ns) FILTER (WHERE NOT far) AS origin_ns
    FROM placed
)
SELECT m.median_ns - 86400000000000 AS lo_ns, m.median_ns + 86400000000000 AS hi_ns, c.origin_ns, c.events,
       c.steps, c.example
FROM middle m, counted c, spread s
WHERE c.events > 0 AND c.events <= greatest(10, s.readable // 100);

-- trace_origin: the trace's first timestamp (ns on its own clock): every ts below counts from it, and a
-- job's ranks are put on one clock by adding it back (sql/rank_timeline.sql).
CREATE OR REPLACE TEMP TABLE trace_origin AS
SELECT coalesce((SELECT origin_ns FROM stray_times), origin_ns) AS origin_ns FROM event_time_counts;

-- duration_counts: the duration events (ph X, count) and those with a usable duration: a positive finite
-- number (count). ev reads an unusable one as 0, so without these a trace of nothing but broken durations would
-- look like an idle GPU.
CREATE OR REPLACE TEMP TABLE duration_counts AS SELECT duration_events, usable FROM event_time_counts;

-- unreadable_step_ranges: the ProfilerStep ranges ev leaves out for want of a readable timestamp (ranges,
-- count): sql/ingest.sql's window then says the trace had them, not that it had none.
CREATE OR REPLACE TEMP TABLE unreadable_step_ranges AS
SELECT unreadable_steps + coalesce((SELECT steps FROM stray_times), 0) AS ranges FROM event_time_counts;

-- event_damage: the events ev below leaves out or reads differently, by reason (a phrase completing
-- "N events: …"), with how many (events, count) and the first value that showed it (example); none for a
-- clean trace. store/ingest/analyse.py puts them in the profile's trace_damaged mark.
CREATE OR REPLACE TEMP TABLE event_damage AS
SELECT reason, events, example
FROM event_time_counts,
     (VALUES (1, 'dropped: no readable timestamp (ts missing, not a number, or past the range of µs: nanoseconds?)', no_ts, no_ts_text),
             (2, 'negative duration, read as 0 long', negative, negative_text),
             (3, 'duration missing, not a number or out of range, read as 0 long', no_dur, no_dur_text),
             (4, 'dropped: a timestamp more than a day from the rest of the trace (a stray clock value)',
              coalesce((SELECT events FROM stray_times), 0), (SELECT example FROM stray_times)))
         AS d(position, reason, events, example)
WHERE events > 0 ORDER BY position;
DROP TABLE event_time_counts;

-- event_categories: the categories profilers write (lower-cased) and the kind of event each holds: Kineto's
-- activity types (libkineto ActivityType.cpp: kernel, gpu_memcpy …, and the device lanes of other
-- accelerators such as MTIA's on-device mtia_ccp_events), ROCm's, and the 2021 profiler's (Kernel, Runtime
-- …). A category not listed holds no work ev counts; ProfilerStep and the other step and phase ranges are
-- still recognised by their name.
CREATE OR REPLACE TEMP TABLE event_categories (lcat VARCHAR PRIMARY KEY, kind VARCHAR);
INSERT INTO event_categories VALUES
    ('kernel', 'kernel'), ('mtia_ccp_events', 'kernel'),
    ('gpu_memcpy', 'memcpy'), ('memcpy', 'memcpy'),
    ('gpu_memset', 'memset'), ('memset', 'memset'),
    ('cuda_runtime', 'runtime'), ('runtime', 'runtime'), ('cuda_driver', 'runtime'), ('hip_runtime', 'runtime'),
    ('hip_driver', 'runtime'), ('privateuse1_runtime', 'runtime'), ('privateuse1_driver', 'runtime'),
    ('xpu_runtime', 'runtime'), ('xpu_driver', 'runtime'), ('mtia_runtime', 'runtime'), ('hpu_op', 'runtime'),
    ('gpu_user_annotation', 'gpu_annotation'),
    ('python_function', 'python'),  -- with_stack: the Python frames the host ran (sql/blame.sql: host work)
    ('user_annotation', 'annotation'),
    ('cpu_op', 'op'), ('operator', 'op');

-- legacy_lanes: the autograd profiler before Kineto (torch <= 1.7, `export_chrome_trace` of
-- torch.autograd.profiler.profile; a JSON list) writes no category: its ops are X events under the process
-- "CPU functions", and each op's device time, measured by CUDA events around it, an X event under "CUDA
-- functions" (or "NPU functions") whose tid is the device. Each lane is read as the category Kineto gives the
-- same events (cat: event_categories says what it holds); the device ranges of ops that hold other ops are
-- left out below (legacy_nested), else nested ops' time counts twice.
CREATE OR REPLACE TEMP TABLE legacy_lanes (pid VARCHAR PRIMARY KEY, cat VARCHAR);
INSERT INTO legacy_lanes VALUES ('CPU functions', 'cpu_op'), ('CUDA functions', 'kernel'), ('NPU functions', 'kernel');

-- ev: every duration or instant event, typed, with what kind of thing it is.
CREATE OR REPLACE TEMP TABLE ev AS
WITH laned AS (
    -- a category-less event's legacy lane (legacy_lanes), looked up in a map: NULL for every Kineto event
    SELECT * EXCLUDE (cat), cat IS NULL OR cat = '' AS uncategorised,
           coalesce(nullif(cat, ''), (SELECT map(list(pid), list(cat)) FROM legacy_lanes)[pid], '') AS cat
    FROM raw_events
),
typed AS (
    SELECT event_seq + 1 AS event_id,  -- the decoder's order (store/ingest/timeline.py numbers it)
           ph, cat, coalesce(name, '') AS name, pid, tid,
           us_text_to_ns(ts_text) AS ts_any,
           us_text_to_ns(dur_text) AS dur_any,
           TRY_CAST(correlation AS BIGINT) AS correlation,
           TRY_CAST(external_id AS BIGINT) AS external_id,
           CASE WHEN uncategorised AND cat = 'kernel' THEN TRY_CAST(tid AS INTEGER)  -- a legacy device lane
                ELSE coalesce(TRY_CAST(device AS INTEGER), TRY_CAST(pid AS INTEGER)) END AS device,
           stream, mem_allocated, mem_reserved, mem_device_type, mem_device_id, mem_bytes, mem_addr, input_dims,
           shape_dims, input_types, concrete_inputs, copy_bytes, pg_name,
           TRY_CAST(TRY_CAST(msg_nelems AS DOUBLE) AS BIGINT) AS msg_nelems, collective,
           -- the category's kind (event_categories), looked up in a map: cheaper than joining the stream
           (SELECT map(list(lcat), list(kind)) FROM event_categories)[lower(cat)] AS category_kind
    FROM laned
), readable AS (
    SELECT * EXCLUDE (ts_any, dur_any), ns_readable(ts_any) AS ts_abs, coalesce(ns_readable(dur_any), 0) AS dur_raw
    FROM typed
)
SELECT event_id, ph, cat, name, pid, tid,
       ts_abs - (SELECT origin_ns FROM trace_origin) AS ts,   -- ns from the first event
       greatest(dur_raw, 0) AS dur,          -- ns; negative durations (broken traces) count as 0
       dur_raw < 0 AS negative_duration,
       correlation, external_id, device, stream, mem_allocated, mem_reserved, mem_device_type, mem_device_id,
       mem_bytes, mem_addr, input_dims,
       -- the recorded Input Dims, Input type and Concrete Inputs of the ops sql/roofline_models.sql costs
       shape_dims, input_types, concrete_inputs,
       copy_bytes,
       -- a collective's process group name, input element count and kind (allreduce …), where recorded
       pg_name, msg_nelems, collective,
       CASE
           WHEN category_kind IN ('kernel', 'memcpy', 'memset', 'runtime', 'gpu_annotation') THEN category_kind
           WHEN category_kind = 'python' AND ph = 'X' THEN 'python'
           WHEN name = '[memory]' THEN 'memory'
           WHEN ph <> 'X' THEN 'other'
           WHEN category_kind = 'annotation' THEN 'annotation'
           -- step and phase ranges by their name, whatever the category: 2021 traces record annotations as
           -- Operator events, our module ranges (measure/modules.py) go through the profiler's fast path,
           -- which files them as cpu_op, and other writers file them under categories of their own
           WHEN name LIKE 'ProfilerStep#%' OR name LIKE 'enumerate(DataLoader)#%'
                OR name LIKE 'Optimizer.%#%' OR regexp_matches(name, '^##.*##$')
                OR name LIKE 'module forward: %' OR name LIKE 'module backward: %' THEN 'annotation'
           WHEN category_kind = 'op' THEN 'op'
           ELSE 'other'
       END AS kind
FROM readable
WHERE ts_abs IS NOT NULL
  AND NOT coalesce(ts_abs NOT BETWEEN (SELECT lo_ns FROM stray_times) AND (SELECT hi_ns FROM stray_times), false);
DROP TABLE stray_times;

-- legacy_nested: the legacy lanes' device ranges (legacy_lanes) that hold another on their device: an op's
-- CUDA-event range holds those of the ops it called, so only the innermost are device work. Left out of ev
-- and said in event_damage. A Kineto trace holds no such lane: the scan finds nothing.
CREATE OR REPLACE TEMP TABLE legacy_nested AS
WITH lanes AS (
    SELECT event_id, tid, ts, dur FROM ev
    WHERE kind = 'kernel' AND pid IN (SELECT pid FROM legacy_lanes WHERE cat = 'kernel')
)
SELECT o.event_id FROM lanes o
WHERE EXISTS (SELECT 1 FROM lanes i
              WHERE i.tid = o.tid AND i.event_id <> o.event_id AND i.ts >= o.ts AND i.ts + i.dur <= o.ts + o.dur
                AND (i.ts > o.ts OR i.dur < o.dur OR i.event_id > o.event_id));
DELETE FROM ev WHERE event_id IN (SELECT event_id FROM legacy_nested);
INSERT INTO event_damage
SELECT 'read as the autograd profiler''s device time per op (before Kineto): the ranges of ops that hold other '
       || 'ops left out, their time being their inner ops''', count(*), NULL
FROM legacy_nested HAVING count(*) > 0;
DROP TABLE legacy_nested;
