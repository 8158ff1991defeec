-- window_executions.sql — every device execution inside the measured window, clipped to it, with the
-- step and phase that launched it and the step whose span it ran in.
-- requires: ingest.sql
--
-- Answers nothing by itself: the tables that attribute device work by its launch (table_phases.sql,
-- table_steps.sql, roofline.sql) read it so that work whose launch is not inside a measured step (queued
-- before the capture began, or launched between steps) is still counted, marked, and the sum of their device time
-- is the kernel time every metric uses (sql/ingest.sql kernel_time: each execution clipped to the window).
-- Binds: nothing (reads placed_activity, measurement_window, step_ranges from ingest.sql).
-- Creates window_executions: one row per execution (kernel, memcpy, memset) that overlaps the window.
CREATE OR REPLACE TEMP TABLE window_executions AS
WITH clipped AS (
    SELECT a.event_id, a.kind, a.device, a.category, a.tensorcore, a.launch_pid, a.launch_tid, a.launch_ts,
           a.step AS launch_step, a.phase AS launch_phase,
           greatest(a.ts, w.start_ns) AS s, least(a.ts + a.dur, w.end_ns) AS e
    FROM placed_activity a, measurement_window w
    WHERE a.ts < w.end_ns AND a.ts + a.dur > w.start_ns
)
-- ran_in_step: the last step that started at or before the execution's (clipped) start: every instant
-- of the window after the first step's start lies in exactly one such span
SELECT c.*, r.step AS ran_in_step, c.launch_step IS NULL AS launched_outside_steps
FROM clipped c ASOF LEFT JOIN step_ranges r ON c.s >= r.start_ns;
