-- ops.sql — `libreyolo profile ops`: the framework's view, aten and autograd ops by CPU time.
--
-- Answers: where host CPU time goes, ranked by self (exclusive) time so nested ops
-- (aten::conv2d → aten::convolution → aten::_convolution → aten::mkldnn_convolution) are not
-- counted four times; total (inclusive) time beside it.
-- Binds: $phase (VARCHAR or NULL: all phases), $top (BIGINT rows).
-- Reads: ops (one profile's ops table).
WITH selected AS (SELECT * FROM ops WHERE $phase IS NULL OR phase = $phase),
all_self AS (SELECT sum(self_ms_per_step) AS ms FROM selected)
SELECT
    -- op name
    name,
    -- exclusive CPU time per measured step, ms
    sum(self_ms_per_step) AS self_ms_per_step,
    -- share of all ops' exclusive time, % (these add up to at most 100)
    100.0 * sum(self_ms_per_step) / nullif((SELECT ms FROM all_self), 0) AS self_pct,
    -- inclusive CPU time per measured step (the op and all it called), ms
    sum(total_ms_per_step) AS total_ms_per_step,
    -- calls per measured step
    sum(calls_per_step) AS calls_per_step,
    -- mean exclusive time per call, µs
    1000.0 * sum(self_ms) / nullif(sum(calls), 0) AS self_us_per_call,
    -- phases it ran in
    string_agg(DISTINCT phase, ',' ORDER BY phase) AS phases
FROM selected
GROUP BY name
ORDER BY self_ms_per_step DESC NULLS LAST, total_ms_per_step DESC, name
LIMIT $top;
