-- compare_ops.sql — `compare --ops`: per op, self CPU time and calls per step before and after, the
-- largest change first (the same measure `ops` ranks by: exclusive time, so nested ops count once).
-- requires: compare_items.sql
-- Binds: $side VARCHAR[] ('before' | 'after'), $source VARCHAR[] (that profile's ops.parquet),
--        $rank BIGINT[] (the rank a job profile's readers show, NULL: every row), all aligned, one per
--        profile; $files VARCHAR[] (the distinct files of $source: each is read once).
-- Reads: each profile's ops table (one parquet file each); rows per op and phase are summed per op.
WITH compare_ops_sources AS (
    SELECT unnest(CAST($side AS VARCHAR[])) AS side, unnest(CAST($source AS VARCHAR[])) AS source,
           unnest(CAST($rank AS BIGINT[])) AS shown_rank
),
compare_ops_samples AS (
    SELECT s.side, s.source, o.name, string_agg(DISTINCT o.phase, ',' ORDER BY o.phase) AS detail,
           CASE WHEN count(o.self_ms_per_step) = count(*) THEN sum(o.self_ms_per_step) END AS ms,
           sum(o.calls_per_step) AS calls
    FROM read_parquet(CAST($files AS VARCHAR[]), filename = true, union_by_name = true) o
    JOIN compare_ops_sources s ON o.filename = s.source AND (s.shown_rank IS NULL OR o.rank = s.shown_rank)
    GROUP BY s.side, s.source, o.name
)
SELECT * FROM compare_item_changes(compare_ops_samples, compare_ops_sources);
