-- roofline_above.sql — the few op shapes with the most device time above their roofline (summary, report).
-- inputs: roofline (one profile's table)
--
-- Answers: where running at the roof would save the most time, per measured step.
-- Binds: $top (BIGINT). Reads: roofline (one profile's roofline table); rows without a roof are left out.
SELECT op, input_dims, dtype, calls_per_step,
       -- device time above the roof per step, ms; device time per step, ms
       above_roof_ms_per_step, device_ms_per_step,
       -- roofline time ÷ device time, %; which roof binds
       pct_of_roofline, bound, tflops_per_s, tb_per_s
FROM roofline
WHERE above_roof_ms_per_step IS NOT NULL
ORDER BY above_roof_ms_per_step DESC, op, input_dims
LIMIT $top;
