-- compare_items.sql — `compare --ops` / `--kernels`: which ops or kernels moved between before and after.
-- requires: compare_rule.sql
--
-- Answers nothing by itself: compare_ops.sql and compare_kernels.sql read each profile's table into
-- samples and call compare_item_changes, so ops and kernels are diffed by one definition.
-- A side is one profile or several pooled from a directory; each profile's tables hold one trial (the
-- last one under --repeat), so a side's n is its number of profiles, and the headline's significance rule
-- (compare_rule.sql) judges an item only where both sides hold ≥ 2 profiles.
-- An item a profile's table does not list ran 0 times there: the tables list every op and kernel of the
-- profiled window, so its absence is a measured 0, not a missing value. An item listed with a NULL time
-- (a trace that recorded only inclusive op time) leaves that side's time NULL: never a made-up 0.

-- compare_item_changes: one row per item named on either side.
--   samples: side ('before' | 'after'), source (one profile's table), name, detail (what the item is
--            beside its name), ms (time per measured step, NULL when not recorded), calls (per step)
--   sources: side, source: every profile of each side, also one whose table lists nothing
CREATE OR REPLACE TEMP MACRO compare_item_changes(samples, sources) AS TABLE
WITH compare_item_listed AS (SELECT * FROM query_table(samples)),
compare_item_profiles AS (SELECT DISTINCT side, source FROM query_table(sources)),
compare_item_items AS (
    -- each profile's detail is already a list (an op's phases): merged, each once, in order
    SELECT name, array_to_string(list_sort(list_distinct(flatten(list(string_split(detail, ','))))), ',') AS detail
    FROM compare_item_listed GROUP BY name
),
compare_item_grid AS (
    -- every item in every profile: absent is a measured 0 (see the header)
    SELECT p.side, i.name, l.name IS NOT NULL AS present,
           CASE WHEN l.name IS NULL THEN 0.0 ELSE l.ms END AS ms,
           coalesce(l.calls, 0.0) AS calls,
           l.name IS NOT NULL AND l.ms IS NULL AS unrecorded
    FROM compare_item_profiles p CROSS JOIN compare_item_items i
    LEFT JOIN compare_item_listed l ON l.side = p.side AND l.source = p.source AND l.name = i.name
),
compare_item_per_side AS (
    SELECT name, side, bool_or(present) AS present, count(*) AS n, avg(calls) AS calls,
           CASE WHEN NOT bool_or(unrecorded) THEN avg(ms) END AS ms,
           CASE WHEN NOT bool_or(unrecorded) THEN stddev_samp(ms) END AS ms_std
    FROM compare_item_grid GROUP BY name, side
),
compare_item_sides AS (
    SELECT i.name, i.detail,
           b.present AS before_present, a.present AS after_present,
           b.ms AS before_ms, a.ms AS after_ms, a.ms - b.ms AS delta_ms,
           b.calls AS before_calls, a.calls AS after_calls,
           b.n AS before_n, a.n AS after_n,
           compare_se(b.ms_std, b.n) AS before_se, compare_se(a.ms_std, a.n) AS after_se
    FROM compare_item_items i
    JOIN compare_item_per_side b ON b.name = i.name AND b.side = 'before'
    JOIN compare_item_per_side a ON a.name = i.name AND a.side = 'after'
)
SELECT
    -- op or kernel name as recorded
    name,
    -- an op's phases, a kernel's category
    detail,
    -- 'both', 'new' (listed only after) or 'gone' (listed only before)
    CASE WHEN before_present AND after_present THEN 'both' WHEN after_present THEN 'new' ELSE 'gone' END AS presence,
    -- before: mean over the side's profiles of the time per measured step, ms (NULL: not recorded)
    before_ms,
    -- after: the same, ms
    after_ms,
    -- after − before, ms per measured step
    delta_ms,
    -- 100 · Δ / before, %; NULL when before is 0 (a new item) or NULL
    100.0 * delta_ms / nullif(before_ms, 0) AS delta_pct,
    -- calls per measured step, mean over the side's profiles, count
    before_calls,
    after_calls,
    -- after − before, calls per measured step
    after_calls - before_calls AS delta_calls,
    -- profiles on each side (each profile's table is one trial), count
    before_n,
    after_n,
    -- standard error of each side's mean time, ms; NULL with fewer than 2 profiles
    before_se,
    after_se,
    -- 2 · √(SE_before² + SE_after²): the smallest |Δ| called significant, ms
    compare_threshold(before_se, after_se) AS threshold,
    -- |Δ| > threshold; NULL when it cannot be judged (a side with fewer than 2 profiles)
    compare_significant(delta_ms, before_se, after_se) AS significant
FROM compare_item_sides
ORDER BY abs(delta_ms) DESC NULLS LAST, abs(after_calls - before_calls) DESC, name;
