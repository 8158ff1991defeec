-- table_roofline.sql — the roofline table: per op and shape, how far its device time is from the roof.
-- requires: ingest.sql, roofline.sql
-- inputs: trace_info
-- Answers: which ops run close to the device's peak compute or bandwidth, and which leave the most
-- time above it. Binds: nothing (reads roofline_rows from sql/roofline.sql, measurement_window, trace_info).
-- Per-call figures are means over the calls of one shape; an op without a cost model has NULL
-- FLOPs, rates and roofline figures and says why (no_model_reason), never 0. The device work no op
-- call launched has rows of its own (op NULL, per launch phase and reason), so device_ms_per_step sums
-- to the window's device time (kernels, memcpys and memsets, as the kernels table counts them).
SELECT
    -- rank of the process that recorded the trace (NULL when not distributed)
    (SELECT rank FROM trace_info) AS rank,
    -- phase the calls ran in
    phase,
    -- op name (NULL: device work no op call launched; no_model_reason says where it came from)
    op,
    -- device work no op call launched, its launch outside every measured step (NULL for op rows)
    launched_outside_steps,
    -- the trace's Input Dims text as recorded (NULL for ops without a cost model)
    input_dims,
    -- the type the op computes in (float32, bfloat16 …): its output's (an elementwise op's promoted inputs',
    -- an in-place op's self's, an out= tensor's, any other op's first tensor input's)
    dtype,
    -- the cost formula (sql/roofline_models.sql family; NULL: no model)
    family AS model,
    -- calls in the window, count
    calls,
    -- calls per measured step, count
    calls / nullif((SELECT steps FROM measurement_window), 0) AS calls_per_step,
    -- FLOPs of one call, GFLOP
    flops / 1e9 AS gflops,
    -- bytes one call moves (inputs read once, outputs written once), MB (10^6 bytes)
    bytes / 1e6 AS mb_moved,
    -- arithmetic intensity, FLOP/byte
    flops / nullif(bytes, 0) AS intensity,
    -- device time of one call: the union of the device work it launched (CPU: its wall time), µs
    device_ns / 1e3 AS device_us,
    -- device time of all its calls per measured step: their executions' times summed, as the kernels table counts them, ms
    total_ns / 1e6 / nullif((SELECT steps FROM measurement_window), 0) AS device_ms_per_step,
    -- share of the window's device time (every op's and the work no op launched), %
    time_share_pct,
    -- achieved compute rate, TFLOP/s
    flops / nullif(device_ns, 0) / 1e3 AS tflops_per_s,
    -- achieved memory rate, TB/s
    bytes / nullif(device_ns, 0) / 1e3 AS tb_per_s,
    -- the device named from the trace's deviceProperties (sql/device_peaks.sql), or 'CPU (measured)'
    device_model,
    -- the roof's peak class (fp32, tf32, bf16, fp16, fp8, fp4, fp64)
    roof_class,
    -- the device's dense peak for that class, TFLOP/s
    peak_tflops,
    -- the device's memory bandwidth, TB/s
    peak_tb_per_s,
    -- the datasheet (or measurement) the peaks come from
    peak_source,
    -- max(FLOPs ÷ peak, bytes ÷ bandwidth) of one call, µs
    roofline_ns / 1e3 AS roofline_us,
    -- roofline time ÷ measured device time, %
    100.0 * roofline_ns / nullif(device_ns, 0) AS pct_of_roofline,
    -- compute | memory: which roof binds (NULL without one)
    bound,
    -- device time above the roofline time, all calls per measured step, ms
    above_roof_ns / 1e6 / nullif((SELECT steps FROM measurement_window), 0) AS above_roof_ms_per_step,
    -- why FLOPs or the roof are NULL (no model, shapes not recorded, device not in the peak table), or why the
    -- row stands above its roof (pct_of_roofline over 100: the cause; none known: its roofline figures are NULL)
    why_null AS no_model_reason
FROM roofline_rows
ORDER BY total_ns DESC NULLS LAST, op, phase, input_dims;
