-- devices.sql — the profile's `devices` list: one row per device that ran a kernel in the window.
-- requires: metrics.sql
--
-- Answers: how busy each device was, and how much of its kernel time ran on Tensor Cores.
-- Binds: nothing. Reads: device_figures (sql/metrics.sql, run first), so each figure has the one
-- definition the headline metric of the same name has.
SELECT
    -- device id
    device,
    -- |union of kernel intervals| in the window, ms
    busy_ns / 1e6 AS busy_ms,
    -- summed kernel time in the window, ms
    kernel_ns / 1e6 AS kernel_ms,
    -- kernels executed in the window
    kernels,
    -- busy time ÷ window wall time, % (gpu_util_pct)
    gpu_util_pct,
    -- Tensor Core kernel time ÷ all kernel time, % (tensorcore_pct)
    tensorcore_pct
FROM device_figures
ORDER BY busy_ns DESC NULLS LAST, device;
