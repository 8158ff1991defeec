-- events.sql — the raw profiler events typed: one row per duration or instant event, times in integer ns.
-- inputs: raw_events, raw_event_times (store/ingest/timeline.py registers the decoder's Arrow columns)
--
-- Answers nothing by itself: it builds ev, which sql/ingest.sql reads, and trace_origin and
-- duration_counts. Binds: nothing. Its inputs:
--   raw_events       one row per Kineto event (libreyolo_profile/store/decode/events.py: EVENT_SCHEMA), and
--                    event_seq BIGINT, its place in the decoder's order from 0; a stream, read once (by ev),
--                    each batch's memory let go once read
--   raw_event_times  the same events' ph, ts_text and dur_text, which can be read more than once
-- It runs alone, before sql/ingest.sql, so that the caller can let the decoder's columns go once ev holds
-- what it needs of them.

-- us_text_to_ns: a Kineto time as written (µs, a JSON number's text, sub-µs digits kept) in integer ns;
-- NULL where it is not a number. Plain integers, most of them, take BIGINT arithmetic: DECIMAL(38, 6)
-- parsing costs ten times more and gives the same value for them.
CREATE OR REPLACE TEMP MACRO us_text_to_ns(t) AS
CASE WHEN NOT (contains(t, '.') OR contains(t, 'e') OR contains(t, 'E') OR contains(t, 'x') OR contains(t, 'X')
               OR contains(t, 'b') OR contains(t, 'B') OR contains(t, 'o') OR contains(t, 'O'))
          AND TRY_CAST(t AS BIGINT) BETWEEN -9223372036854775 AND 9223372036854775
     THEN TRY_CAST(t AS BIGINT) * 1000
     ELSE CAST(round(TRY_CAST(t AS DECIMAL(38, 6)) * 1000) AS BIGINT) END;

-- trace_origin: the trace's first timestamp (ns on its own clock): every ts below counts from it, and a
-- job's ranks are put on one clock by adding it back (sql/rank_timeline.sql).
CREATE OR REPLACE TEMP TABLE trace_origin AS
SELECT min(us_text_to_ns(ts_text)) AS origin_ns FROM raw_event_times;

-- duration_counts: the duration events (ph X, count) and those with a usable duration: a positive finite
-- number (count). ev reads an unusable one as 0, so without these a trace of nothing but broken durations
-- would look like an idle GPU.
CREATE OR REPLACE TEMP TABLE duration_counts AS
SELECT count(*) AS duration_events, count(*) FILTER (WHERE TRY_CAST(dur_text AS DECIMAL(38, 6)) > 0) AS usable
FROM raw_event_times WHERE ph = 'X';

-- ev: every duration or instant event, typed, with what kind of thing it is.
CREATE OR REPLACE TEMP TABLE ev AS
WITH typed AS (
    SELECT event_seq + 1 AS event_id,  -- the decoder's order (store/ingest/timeline.py numbers it)
           ph, coalesce(cat, '') AS cat, lower(coalesce(cat, '')) AS lcat, coalesce(name, '') AS name, pid, tid,
           us_text_to_ns(ts_text) AS ts_abs,
           coalesce(us_text_to_ns(dur_text), 0) AS dur_raw,
           TRY_CAST(correlation AS BIGINT) AS correlation,
           TRY_CAST(external_id AS BIGINT) AS external_id,
           coalesce(TRY_CAST(device AS INTEGER), TRY_CAST(pid AS INTEGER)) AS device,
           stream, mem_allocated, mem_reserved, mem_device_type, mem_device_id, mem_bytes, mem_addr, input_dims,
           shape_dims, input_types, concrete_inputs, copy_bytes, pg_name,
           TRY_CAST(TRY_CAST(msg_nelems AS DOUBLE) AS BIGINT) AS msg_nelems, collective
    FROM raw_events
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
           WHEN lcat = 'kernel' THEN 'kernel'
           WHEN lcat IN ('gpu_memcpy', 'memcpy') THEN 'memcpy'
           WHEN lcat IN ('gpu_memset', 'memset') THEN 'memset'
           WHEN lcat IN ('cuda_runtime', 'runtime', 'cuda_driver', 'hip_runtime', 'hip_driver',
                               'privateuse1_runtime', 'xpu_runtime', 'mtia_runtime') THEN 'runtime'
           WHEN lcat = 'gpu_user_annotation' THEN 'gpu_annotation'
           -- with_stack: the Python frames the host ran (sql/blame.sql reads them as host work)
           WHEN lcat = 'python_function' AND ph = 'X' THEN 'python'
           WHEN name = '[memory]' THEN 'memory'
           WHEN ph <> 'X' THEN 'other'
           WHEN lcat = 'user_annotation' THEN 'annotation'
           -- 2021 traces record annotations as Operator events; our module ranges (measure/modules.py)
           -- are recorded through the profiler's fast path, which files them as cpu_op
           WHEN lcat IN ('cpu_op', 'operator')
                AND (name LIKE 'ProfilerStep#%' OR name LIKE 'enumerate(DataLoader)#%'
                     OR name LIKE 'Optimizer.%#%' OR regexp_matches(name, '^##.*##$')
                     OR name LIKE 'module forward: %' OR name LIKE 'module backward: %') THEN 'annotation'
           WHEN lcat IN ('cpu_op', 'operator') THEN 'op'
           ELSE 'other'
       END AS kind
FROM typed
WHERE ts_abs IS NOT NULL;
