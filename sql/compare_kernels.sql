-- compare_kernels.sql — `compare --kernels`: per kernel (memcpy and memset too), device time and
-- executions per step before and after, the largest change first.
-- requires: compare_items.sql
-- Binds: $side VARCHAR[] ('before' | 'after'), $source VARCHAR[] (that profile's kernels.parquet),
--        $rank BIGINT[] (the rank a job profile's readers show, NULL: every row), all aligned, one per
--        profile; $files VARCHAR[] (the distinct files of $source: each is read once).
-- Reads: each profile's kernels table (one parquet file each); rows per kernel and phase are summed per name.
WITH compare_kernels_sources AS (
    SELECT unnest(CAST($side AS VARCHAR[])) AS side, unnest(CAST($source AS VARCHAR[])) AS source,
           unnest(CAST($rank AS BIGINT[])) AS shown_rank
),
compare_kernels_samples AS (
    SELECT s.side, s.source, k.name, string_agg(DISTINCT k.category, ',' ORDER BY k.category) AS detail,
           CASE WHEN count(k.ms_per_step) = count(*) THEN sum(k.ms_per_step) END AS ms,
           sum(k.calls_per_step) AS calls
    FROM read_parquet(CAST($files AS VARCHAR[]), filename = true, union_by_name = true) k
    JOIN compare_kernels_sources s ON k.filename = s.source AND (s.shown_rank IS NULL OR k.rank = s.shown_rank)
    GROUP BY s.side, s.source, k.name
)
SELECT * FROM compare_item_changes(compare_kernels_samples, compare_kernels_sources);
