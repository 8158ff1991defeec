-- module_tree.sql — `libreyolo profile modules`: where in the model the time went, as a tree.
--
-- Answers: per module (the model, its top-level parts, their blocks …) and phase (forward /
-- backward): host time and device kernel time per measured step, self beside total, and the share
-- of the whole model's time in that phase. Rows come by first start; readers/modules.py nests them.
-- Binds: $depth (BIGINT or NULL: every recorded depth), $phase (VARCHAR or NULL: both phases).
-- Reads: modules (one profile's modules table).
SELECT
    -- forward | backward
    phase,
    -- dotted module path
    path,
    -- the module's own name (the last part of its path)
    regexp_extract(path, '[^.]*$') AS name,
    -- levels below the model (0: the model itself)
    depth,
    -- the module's class name
    module_type,
    -- calls per measured step, count
    calls_per_step,
    -- host wall time inside the module per measured step, ms
    total_ms_per_step,
    -- host time the module held itself (no range that started later was open), per measured step, ms
    self_ms_per_step,
    -- share of the whole model's time in this phase, %
    share_pct,
    -- device kernel time launched inside the module per measured step, ms (NULL on a CPU run)
    device_ms_per_step,
    -- device kernel time launched while the module held the host itself, per measured step, ms
    device_self_ms_per_step,
    -- ranges | python_function (where the module information came from)
    source,
    -- what share_pct is a share of, in words
    'host wall time of the whole model (depth 0) in this phase' AS whole
FROM modules
WHERE ($depth IS NULL OR depth <= $depth) AND ($phase IS NULL OR phase = $phase)
ORDER BY CASE phase WHEN 'forward' THEN 0 ELSE 1 END, start_ms, depth, path;
