-- what_if.sql — `libreyolo profile what-if`: what removing work would buy, before anyone writes it
-- (SPEC §6).
-- requires: verdicts.sql
-- inputs: kernels (one profile's kernels table)
-- The model follows the profile's own verdict (sql/verdicts.sql what_if_model):
--   host-launch              → 'launches':  saved = launches removed × per_launch_host_us
--                               (a category: its launches per step = its calls_per_step)
--   gpu-compute, gpu-memory  → 'gpu-work':  saved = GPU time removed (a category: its ms per step;
--                               N launches: N × kernel_gap_us, the fixed GPU cost per kernel)
--   cpu-compute, cpu-overhead→ 'cpu-ops':   saved = N × per_launch_host_us (on a CPU: the per-op
--                               dispatch cost); a CPU profile has no kernel categories
--   any other verdict        → the model GPU utilization picks (< threshold: 'launches', else
--                               'gpu-work'; a CPU profile: 'cpu-ops'), capped at the part of the
--                               step that is not the bottleneck (step_ms − bottleneck_ms).
-- With a blame (sql/blame.sql; every profile but a built-in import) the bottleneck is the blame's share of
-- the verdict's causes, and the step never shrinks below the device work that remains on its critical
-- path: device_busy_ms (the blame's device-busy causes) minus the GPU time removed. The launch model then
-- prices a launch at $blame_launch_us — the blame's launching time per step ÷ launches per step, the host
-- time per launch while the device idled — not per_launch_host_us, which also holds syncs and CPU work.
-- From the critical path (issue 24): removing a category frees only the time it alone held its device in the
-- steps (kernels.category_exclusive_ms_per_step: overlap with other work is kept, and device work the host
-- waited on counts as held time), plus, under the launch model, its launches at the steady-state launch
-- cost ($steady_launch_us: cold first launches left out) limited to the blame's launching time. Removing N
-- launches under the launch model frees at most the removed launches' share of the blame's launching time
-- (N ÷ launches per step of it: the time launches alone held the step, the device idle). The step never
-- shrinks below the union of the device work that remains (device-busy time − the exclusive time removed),
-- and a saving is never negative. The blame's shares are of its own step ($blame_step_ms), so the ms they
-- stand for are taken of that step, not of the headline's.
-- From both sides' critical path (issue 50): nor does the step shrink below the host's recorded work per step
-- that does not wait on the device ($host_floor_ms: sql/blame.sql blame_host_floor, the metric host_work_ms;
-- the causes that wait_on_device in sql/blame_causes.sql — syncs, blocking copies, polls — left out, and the
-- removed work's launch calls). The floor is the larger of the two; the device's work cannot run before the
-- host has issued it, and the host's work does not go with the device's.
-- Binds: $bound, $device_type ('gpu' | 'cpu'), $gpu_util_pct, $util_threshold (the verdict's 80),
--        $step_ms, $throughput_img_s, $per_launch_host_us, $kernel_gap_us,
--        $dataload_pct, $to_device_pct, $sync_pct, $preprocess_pct, $postprocess_pct (the shares a
--        non-launch verdict may name), $category (VARCHAR or NULL), $launches (BIGINT or NULL),
--        $blame_bottleneck_pct (the blame share of the verdict's causes; NULL without a blame or for a
--        verdict the model addresses directly), $device_busy_pct (the blame's device-busy share, % of
--        the step; NULL without a blame), $blame_launch_us (NULL without a blame), $blame_step_ms (the blame's
--        step, what its shares are of; NULL without a blame), $launching_ms (the blame's launching time per
--        step; NULL without a blame), $launches_per_step, $steady_launch_us, $host_floor_ms (the host's work
--        per step that does not wait on the device, the removed launches left out; NULL where not measured:
--        a CPU profile, whose host work is what the change removes, or a built-in import).
-- Reads: kernels (one profile's kernels table). One row per requested change ('category',
-- 'launches'), each carrying the totals of the projection that applies them all.
WITH verdict AS (
    -- the verdict's own model (sql/verdicts.sql what_if_model); NULL for a verdict no model addresses
    SELECT (SELECT what_if_model FROM verdicts WHERE verdict = $bound) AS model
),
model AS (
    SELECT CASE
               WHEN verdict.model IS NOT NULL THEN verdict.model
               WHEN $device_type = 'cpu' OR $gpu_util_pct IS NULL THEN 'cpu-ops'
               WHEN $gpu_util_pct < $util_threshold THEN 'launches'
               ELSE 'gpu-work'
           END AS name,
           verdict.model IS NULL AS capped_by_verdict
    FROM verdict
),
bottleneck AS (
    -- ms per step the verdict's bottleneck takes; NULL where the verdict names no separable part
    SELECT CASE
               WHEN $blame_bottleneck_pct IS NOT NULL THEN coalesce($blame_step_ms, $step_ms) * $blame_bottleneck_pct / 100
               WHEN $bound = 'dataloader' THEN $step_ms * $dataload_pct / 100
               WHEN $bound = 'transfer' THEN $step_ms * $to_device_pct / 100
               WHEN $bound = 'sync' THEN $step_ms * $sync_pct / 100
               WHEN $bound = 'preprocess' THEN $step_ms * $preprocess_pct / 100
               WHEN $bound = 'postprocess' THEN $step_ms * $postprocess_pct / 100
               WHEN $bound = 'communication' THEN (SELECT coalesce(sum(ms_per_step), 0) FROM kernels
                                                   WHERE category = 'communication')
           END AS ms
),
removed_category AS (
    SELECT sum(calls_per_step) AS launches, sum(ms_per_step) AS gpu_ms,
           -- the time the category alone held the device (NULL: not recorded, a built-in import): its GPU time
           coalesce(sum(DISTINCT category_exclusive_ms_per_step), sum(ms_per_step)) AS exclusive_ms
    FROM (SELECT device, category, any_value(category_exclusive_ms_per_step) AS category_exclusive_ms_per_step,
                 sum(calls_per_step) AS calls_per_step, sum(ms_per_step) AS ms_per_step
          FROM kernels WHERE lower(category) = lower($category) GROUP BY device, category)
),
launch_price AS (
    -- µs per launch: the steady-state launch call, else the blame's launching time per launch, else the host time per launch
    SELECT coalesce($steady_launch_us, $blame_launch_us, $per_launch_host_us) AS us
),
parts AS (
    SELECT 1 AS position, 'category' AS part, $category AS target,
           c.launches AS launches_removed, c.exclusive_ms AS gpu_ms_removed,
           CASE m.name WHEN 'launches' THEN c.exclusive_ms + least(c.launches * p.us / 1000,
                                                                   coalesce($launching_ms, c.launches * p.us / 1000))
                       WHEN 'gpu-work' THEN c.exclusive_ms END AS saved_ms
    FROM removed_category c, model m, launch_price p
    WHERE $category IS NOT NULL
    UNION ALL
    SELECT 2, 'launches', CAST($launches AS VARCHAR),
           CAST($launches AS DOUBLE),
           CASE WHEN m.name = 'gpu-work' THEN $launches * $kernel_gap_us / 1000 END,
           CASE m.name WHEN 'gpu-work' THEN $launches * $kernel_gap_us / 1000
                       WHEN 'launches' THEN least($launches * p.us / 1000,
                                                  coalesce($launching_ms * $launches / nullif($launches_per_step, 0),
                                                           $launches * p.us / 1000))
                       ELSE $launches * $per_launch_host_us / 1000 END
    FROM model m, launch_price p
    WHERE $launches IS NOT NULL
),
totals AS (
    SELECT -- NULL when any part cannot be estimated (a null input), never a partial sum
           CASE WHEN count(saved_ms) = count(*) THEN sum(saved_ms) END AS uncapped_ms,
           coalesce(sum(gpu_ms_removed), 0) AS gpu_ms_removed
    FROM parts
),
device_floor AS (
    -- the device work left on the critical path after the change, ms per step (NULL without a blame)
    SELECT greatest(coalesce($blame_step_ms, $step_ms) * $device_busy_pct / 100 - t.gpu_ms_removed, 0) AS remaining_device_ms
    FROM totals t
),
floors AS (
    -- the critical path left: the larger of the device's and the host's (NULL where neither is known)
    SELECT d.remaining_device_ms, h.ms AS host_floor_ms, greatest(d.remaining_device_ms, h.ms) AS floor_ms
    FROM device_floor d,
         (SELECT CASE WHEN $host_floor_ms IS NOT NULL THEN greatest(CAST($host_floor_ms AS DOUBLE), 0) END AS ms) h
),
caps AS (
    SELECT greatest(least(CASE WHEN m.capped_by_verdict THEN greatest($step_ms - coalesce(b.ms, 0), 0) ELSE $step_ms END,
                          coalesce($step_ms - f.floor_ms, $step_ms)), 0) AS cap_ms
    FROM model m, bottleneck b, floors f
),
projection AS (
    SELECT t.uncapped_ms, c.cap_ms, least(t.uncapped_ms, c.cap_ms) AS saved_ms,
           b.ms AS bottleneck_ms, f.remaining_device_ms, f.host_floor_ms, f.floor_ms, m.name AS model,
           m.capped_by_verdict
    FROM totals t, model m, bottleneck b, floors f, caps c
)
SELECT
    -- which change this row is: 'category' | 'launches'
    p.part,
    -- the category name or the number of launches, as given
    p.target,
    -- launches per step the change removes, count
    p.launches_removed,
    -- GPU time per step the change frees: the category's exclusive time on the critical path (N launches:
    -- N × kernel_gap_us under the GPU-work model), ms (NULL where the model does not use it)
    p.gpu_ms_removed,
    -- this change's saving alone, before any cap, ms per step
    p.saved_ms AS part_saved_ms,
    -- the model applied: 'launches' | 'gpu-work' | 'cpu-ops'
    j.model,
    -- whether the verdict is not one the model addresses directly (the saving is then capped)
    j.capped_by_verdict,
    -- ms per step the verdict's bottleneck takes (NULL where it names no separable part)
    j.bottleneck_ms,
    -- the device work left on the critical path after the changes, ms per step (NULL without a blame)
    j.remaining_device_ms,
    -- the host's recorded work per step that does not wait on the device, the removed launches left out, ms
    -- (NULL where not measured)
    j.host_floor_ms,
    -- the critical path left: the larger of remaining_device_ms and host_floor_ms, ms per step
    j.floor_ms,
    -- the most the changes can save, ms per step: never past the verdict's bottleneck nor below the
    -- critical path that remains (floor_ms)
    j.cap_ms,
    -- the sum of the parts, before the cap, ms per step
    j.uncapped_ms,
    -- the projected saving with every change applied, ms per step
    j.saved_ms,
    -- saving ÷ baseline step, %
    100.0 * j.saved_ms / nullif($step_ms, 0) AS saved_pct,
    -- whether the cap bound the saving
    j.uncapped_ms > j.cap_ms AS capped,
    -- baseline step time, ms
    $step_ms AS baseline_step_ms,
    -- projected step time, ms
    $step_ms - j.saved_ms AS projected_step_ms,
    -- baseline throughput, img/s
    $throughput_img_s AS baseline_throughput_img_s,
    -- projected throughput: the same images in the shorter step, img/s
    $throughput_img_s * $step_ms / nullif($step_ms - j.saved_ms, 0) AS projected_throughput_img_s
FROM parts p, projection j
ORDER BY p.position;
