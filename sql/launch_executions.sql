-- launch_executions.sql — every device execution with the runtime call that launched it, and the measured
-- window's length: what sql/launches.sql reads. Kept with the profile as the launches section
-- (store/sections.py, store/ingest/lazy_sections.py), so `launches` reads a trace's events once.
-- requires: ingest.sql
--
-- Binds nothing. Only executions whose launch the trace recorded count (a runtime call with their
-- correlation id): work queued before the capture began has no launch. Times are relative to the measured
-- window's start (measurement_window.start_ns).

-- launch_executions: every device execution (kernel, memcpy, memset) with the runtime call that launched it.
--   launch_ns, start_ns, end_ns: the launch call's start, the execution's start and end, ns from the window
--   start; delay_ns: launch to start, ns; call_ns: the launch call's own duration, ns; dur_ns: the
--   execution's duration, ns; step, phase: where its launch lies (NULL: outside the measured steps)
CREATE OR REPLACE TEMP TABLE launch_executions AS
WITH launch_calls AS (  -- the call that launched each correlation id: the first, as device_activity's launch_ts
    SELECT correlation, arg_min(dur, ts) AS call_ns, arg_min(name, ts) AS call
    FROM placed_runtime WHERE correlation IS NOT NULL AND correlation <> 0 GROUP BY correlation
)
SELECT a.device, a.stream, a.step, a.phase, a.kind AS activity, a.category, a.name, c.call,
       a.launch_ts - w.start_ns AS launch_ns, a.ts - w.start_ns AS start_ns,
       greatest(a.ts + a.dur, a.launch_ts) - w.start_ns AS end_ns,
       a.ts - a.launch_ts AS delay_ns, c.call_ns, a.dur AS dur_ns
FROM placed_activity a JOIN launch_calls c ON c.correlation = a.correlation, measurement_window w
WHERE a.launch_ts IS NOT NULL;

-- launch_window: the measured window's length, window_ns (ns; launch_executions' times start at 0)
CREATE OR REPLACE TEMP TABLE launch_window AS SELECT end_ns - start_ns AS window_ns FROM measurement_window;
