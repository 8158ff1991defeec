-- comm_overlap.sql — how much of a trace's communication compute hid, as HTA's comm/compute overlap: per
-- device, the time collective kernels ran, the time compute kernels ran, and the time both did, inside the
-- measured window. For the Python API (Profile.overlap), one trace (one rank) at a time.
-- requires: ingest.sql, intervals.sql
--
-- Binds nothing. Communication: kernels of category communication (sql/kernel_categories.sql); compute: every
-- other kernel (memcpy and memset are neither). Each side is the union of its kernels (concurrent kernels
-- count once), clipped to the window.

-- comm_overlap: one row per device that ran a kernel in the window.
--   steps: measured steps, count; comm_ms, compute_ms: the union of the communication (compute) kernels per
--   step, ms; overlapped_ms: communication time during which compute ran, per step, ms; exposed_comm_ms:
--   communication time no compute hid, per step, ms; overlap_pct: overlapped ÷ communication, % (NULL with
--   null_reason when no collective ran)
CREATE OR REPLACE TEMP TABLE comm_overlap AS
WITH comm_overlap_work AS (
    SELECT a.device AS grp, a.category = 'communication' AS comm,
           greatest(a.ts, w.start_ns) AS s, least(a.ts + a.dur, w.end_ns) AS e
    FROM placed_activity a, measurement_window w
    WHERE a.kind = 'kernel' AND a.ts < w.end_ns AND a.ts + a.dur > w.start_ns
),
comm_overlap_comm_work AS (SELECT grp, s, e FROM comm_overlap_work WHERE comm),
comm_overlap_compute_work AS (SELECT grp, s, e FROM comm_overlap_work WHERE NOT comm),
comm_overlap_comm AS (SELECT grp, s, e FROM interval_union(comm_overlap_comm_work)),
comm_overlap_compute AS (SELECT grp, s, e FROM interval_union(comm_overlap_compute_work)),
comm_overlap_both AS (  -- each side's union is disjoint, so the pairs' overlaps add up to the intersection
    SELECT c.grp, sum(interval_overlap_length(c.s, c.e, k.s, k.e)) AS ns
    FROM comm_overlap_comm c JOIN comm_overlap_compute k
      ON k.grp IS NOT DISTINCT FROM c.grp AND k.s < c.e AND k.e > c.s
    GROUP BY c.grp
),
comm_overlap_devices AS (SELECT DISTINCT grp FROM comm_overlap_work),
comm_overlap_sums AS (
    SELECT d.grp,
           coalesce((SELECT sum(e - s) FROM comm_overlap_comm c WHERE c.grp IS NOT DISTINCT FROM d.grp), 0) AS comm_ns,
           coalesce((SELECT sum(e - s) FROM comm_overlap_compute k WHERE k.grp IS NOT DISTINCT FROM d.grp), 0)
               AS compute_ns,
           coalesce((SELECT ns FROM comm_overlap_both b WHERE b.grp IS NOT DISTINCT FROM d.grp), 0) AS both_ns
    FROM comm_overlap_devices d
)
SELECT s.grp AS device, w.steps,
       s.comm_ns / 1e6 / w.steps AS comm_ms, s.compute_ns / 1e6 / w.steps AS compute_ms,
       s.both_ns / 1e6 / w.steps AS overlapped_ms, (s.comm_ns - s.both_ns) / 1e6 / w.steps AS exposed_comm_ms,
       100.0 * s.both_ns / nullif(s.comm_ns, 0) AS overlap_pct,
       CASE WHEN s.comm_ns = 0 THEN 'no collective kernel ran in the measured window' END AS null_reason
FROM comm_overlap_sums s, measurement_window w
ORDER BY s.grp;
