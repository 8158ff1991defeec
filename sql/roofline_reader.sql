-- roofline_reader.sql — `libreyolo profile roofline`: the ops farthest from the device's roof first.
-- inputs: roofline (one profile's table)
--
-- Answers: per op and shape, its FLOPs and bytes per call, its achieved TFLOP/s and TB/s, the roof
-- it is held to and the share of it reached; ops without a cost model keep their time share and say why,
-- and the device work no op call launched has rows of its own (op NULL), so the shares add up to 100%.
-- Binds: $top (BIGINT or NULL: every row), $op (VARCHAR regular expression or NULL: every op).
-- Reads: roofline (one profile's roofline table). Order: device time per step, largest first.
SELECT phase, op, launched_outside_steps, input_dims, dtype, model, calls, calls_per_step,
       -- per call: GFLOP, MB moved, FLOP/byte, device µs, roofline µs
       gflops, mb_moved, intensity, device_us, roofline_us,
       -- per step, ms; share of the window's device time (the op rows and the work no op launched), %
       device_ms_per_step, time_share_pct,
       -- achieved TFLOP/s and TB/s, the roof (TFLOP/s, TB/s) and the share of it reached, %
       tflops_per_s, tb_per_s, roof_class, peak_tflops, peak_tb_per_s, pct_of_roofline, bound,
       -- device time above the roof per step, ms
       above_roof_ms_per_step,
       device_model, peak_source, no_model_reason
FROM roofline
WHERE $op IS NULL OR regexp_matches(op, $op)
ORDER BY device_ms_per_step DESC NULLS LAST, op, phase, input_dims
LIMIT coalesce($top, 9223372036854775807);
