-- kernel_shares.sql — the shares of kernel time: on Tensor Cores, GEMM/conv, memory-bound, collectives.
-- requires: kernel_categories.sql
-- inputs: kernel_time (sql/ingest.sql makes it for a trace, store/document/builtin.py for a built-in import)
--
-- Answers: per device, what share of its kernel time each kind of kernel took. The one definition of
-- tensorcore_pct, gemm_pct, memory_bound_pct and communication_pct: sql/metrics.sql reads it for a
-- trace, store/document/builtin.py for a built-in profile's kernel rows.
-- Binds: nothing. Reads: kernel_time (device, category, tensorcore, time: one row per kernel, its time
-- in any one unit; memcpy and memset are not kernels), kernel_category_shares (sql/kernel_categories.sql).
-- Creates: share_pct(part, whole), kernel_shares (one row per device that ran a kernel).

-- share_pct: part ÷ whole, %; NULL when there is no whole to share.
CREATE OR REPLACE TEMP MACRO share_pct(part, whole) AS 100.0 * coalesce(part, 0) / nullif(whole, 0);

CREATE OR REPLACE TEMP TABLE kernel_shares AS
SELECT
    -- device id (NULL where the source does not say)
    k.device,
    -- Tensor Core kernel time ÷ all kernel time (communication included), % — a kernel-name heuristic
    share_pct(sum(k.time) FILTER (WHERE k.tensorcore), sum(k.time)) AS tensorcore_pct,
    -- GEMM/convolution share of kernel time, %
    share_pct(sum(k.time) FILTER (WHERE s.share = 'gemm_pct'), sum(k.time)) AS gemm_pct,
    -- memory-bound kernels' share of kernel time (elementwise, layout, norm, reduce), %
    share_pct(sum(k.time) FILTER (WHERE s.share = 'memory_bound_pct'), sum(k.time)) AS memory_bound_pct,
    -- collectives' share of kernel time (nccl/rccl), %
    share_pct(sum(k.time) FILTER (WHERE s.share = 'communication_pct'), sum(k.time)) AS communication_pct
FROM kernel_time k LEFT JOIN kernel_category_shares s ON s.category = k.category
GROUP BY k.device;
