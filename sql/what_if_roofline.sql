-- what_if_roofline.sql — `what-if --op-at-roofline PCT`: the step if every costed op ran at PCT% of its roof.
-- inputs: roofline (one profile's table)
--
-- Answers: per op shape below PCT% of its roofline, the device time it would take at PCT%
-- (roofline time ÷ PCT%), and what that saves per step; ops already at or above PCT% and ops without
-- a roof keep their time. The total saving is capped at the step's device-bound time (the blame's time
-- with the device, or on a CPU the CPU, executing ops): work off the critical path saves nothing.
-- Binds: $pct (DOUBLE, 0 < pct ≤ 100), $step_ms (DOUBLE), $cap_ms (DOUBLE or NULL: no cap known).
-- Reads: roofline (one profile's roofline table).
WITH per_op AS (
    SELECT op, input_dims, calls_per_step, device_us, roofline_us, pct_of_roofline,
           -- the device time of one call at PCT% of its roof, never more than it took, µs
           least(device_us, roofline_us * 100 / nullif($pct, 0)) AS projected_us
    FROM roofline WHERE roofline_us IS NOT NULL AND device_us > 0
),
saved AS (
    SELECT *, (device_us - projected_us) * calls_per_step / 1e3 AS saved_ms_per_step FROM per_op
)
SELECT op, input_dims, calls_per_step, device_us, projected_us, pct_of_roofline, saved_ms_per_step,
       -- every op's saving added up, ms per step; the same capped at the device-bound time
       sum(saved_ms_per_step) OVER () AS uncapped_ms,
       least(sum(saved_ms_per_step) OVER (), coalesce($cap_ms, sum(saved_ms_per_step) OVER ())) AS saved_ms,
       -- the projected step, ms, and the saving's share of the step, %
       $step_ms - least(sum(saved_ms_per_step) OVER (), coalesce($cap_ms, sum(saved_ms_per_step) OVER ())) AS projected_step_ms,
       100.0 * least(sum(saved_ms_per_step) OVER (), coalesce($cap_ms, sum(saved_ms_per_step) OVER ())) / nullif($step_ms, 0) AS saved_pct
FROM saved
WHERE saved_ms_per_step > 0
ORDER BY saved_ms_per_step DESC, op, input_dims;
