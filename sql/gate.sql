-- gate.sql — the outcome of each `compare --fail-on` rule (issue #26): pass, fail, inconclusive or
-- invalid, and how many trials per side would resolve it.
--
-- Everything is in the rule's unit: a relative rule (`step_ms:+5%`) works in % of |before|, an
-- absolute one in the metric's unit. `toward` is the change in the direction the rule watches
-- (Δ for a '+' rule, −Δ for a '-' rule) and `margin` is 2·SE of that change (2·√(SE_b² + SE_a²)).
--   fail:         the change passed the limit AND is significant (|Δ| > 2·SE)
--   pass:         the evidence bounds the change within the limit: toward + margin ≤ limit
--                 (an equivalence test: the upper end of Δ ± 2·SE is inside the threshold)
--   inconclusive: neither (including a single run on a side, and a metric null on a side); also
--                 what would pass or fail while a profile of either side carries the `noisy` mark:
--                 the mark says the machine drifted more than the trials spread, so their 2·SE
--                 neither bounds a change nor proves one
--   invalid:      a trial value of the metric is not evidence (compare.sql's invalid_n > 0)
--
-- Trials needed: n per side, both sides measured with n trials, such that if the true change and
-- the true spread are the observed ones the rule resolves with probability ≥ 80 % (normal
-- approximation; S = √(s_b² + s_a²) in the rule's unit, so the SE of the change is S/√n; d the
-- distance between the change and the limit; z = Φ⁻¹(0.8) = 0.8416):
--   change inside the limit:  pass needs toward + 2·S/√n ≤ limit with probability 0.8
--                             → n ≥ ((2 + z)·S / (limit − toward))²
--   change past the limit:    fail needs toward > limit and toward > 2·S/√n, each with 0.8
--                             → n ≥ max((z·S / (toward − limit))², ((2 + z)·S / toward)²)
--   change on the limit, or no spread known (both sides single runs): no n resolves it → NULL.
-- With one side a single run the other side's spread stands for both (S = √2·s).
-- Binds: $rule_text, $rule_metric, $rule_direction ('+' | '-') VARCHAR[], $rule_limit DOUBLE[]
--        (the threshold, ≥ 0, the rule's unit), $rule_relative BOOLEAN[]; all aligned, one per rule;
--        $noisy BOOLEAN: a profile of either side carries the `noisy` mark.
-- Reads: `comparison`, the rows of compare.sql.
-- inputs: comparison (sql/compare.sql's table, which readers/compare.py makes first on the same connection)
WITH rules AS (
    SELECT unnest(CAST($rule_text AS VARCHAR[])) AS rule, unnest(CAST($rule_metric AS VARCHAR[])) AS metric,
           unnest(CAST($rule_direction AS VARCHAR[])) AS direction, unnest(CAST($rule_limit AS DOUBLE[])) AS limit_value,
           unnest(CAST($rule_relative AS BOOLEAN[])) AS relative, generate_subscripts($rule_text, 1) AS position
),
scaled AS (
    SELECT r.rule, r.position, r.limit_value, c.*,
           CASE WHEN r.direction = '+' THEN 1.0 ELSE -1.0 END AS sign,
           -- the factor from the metric's unit to the rule's: 100 / |before| for a relative rule
           CASE WHEN r.relative THEN 100.0 / nullif(abs(c.before), 0) ELSE 1.0 END AS scale
    FROM rules r JOIN comparison c USING (metric)
),
measured AS (
    SELECT *,
           sign * delta * scale AS toward,
           2 * se_combined * scale AS margin,
           scale * CASE WHEN before_std IS NOT NULL AND after_std IS NOT NULL
                             THEN sqrt(before_std * before_std + after_std * after_std)
                        ELSE sqrt(2) * coalesce(before_std, after_std) END AS spread
    FROM scaled
),
judged AS (
    SELECT *,
           CASE WHEN invalid_n > 0 THEN 'invalid_evidence'
                WHEN toward IS NULL THEN 'no_change'
                WHEN before_n < 2 OR after_n < 2 THEN 'single_run'
                WHEN toward > limit_value AND significant AND $noisy THEN 'significant_but_noisy'
                WHEN toward > limit_value AND significant THEN 'significant_past_limit'
                WHEN toward + margin <= limit_value AND $noisy THEN 'bounded_but_noisy'
                WHEN toward + margin <= limit_value THEN 'bounded_within_limit'
                WHEN toward > limit_value THEN 'past_limit_not_significant'
                ELSE 'interval_reaches_limit'
           END AS basis,
           CASE WHEN invalid_n > 0 OR toward IS NULL OR spread IS NULL THEN NULL
                WHEN spread = 0 THEN 2.0
                WHEN toward < limit_value THEN power((2 + 0.8416212335729143) * spread / (limit_value - toward), 2)
                WHEN toward > limit_value THEN greatest(power(0.8416212335729143 * spread / (toward - limit_value), 2),
                                                        power((2 + 0.8416212335729143) * spread / toward, 2))
           END AS n_exact
    FROM measured
)
SELECT
    -- the rule as typed, and the compared metric
    rule, metric,
    -- pass | fail | inconclusive | invalid (see the header)
    CASE basis WHEN 'invalid_evidence' THEN 'invalid' WHEN 'significant_past_limit' THEN 'fail'
               WHEN 'bounded_within_limit' THEN 'pass' ELSE 'inconclusive' END AS outcome,
    -- why, as a key the gate words: invalid_evidence, no_change, single_run, significant_past_limit,
    -- significant_but_noisy, bounded_within_limit, bounded_but_noisy, past_limit_not_significant,
    -- interval_reaches_limit
    basis,
    -- the change the rule compares (Δ% for a relative rule, else Δ), the rule's unit
    delta * scale AS change,
    -- toward > limit: the change passed the threshold in the watched direction; NULL without a change
    toward > limit_value AS passed_threshold,
    -- 2·SE of the change, the rule's unit; NULL unless both sides have n ≥ 2
    margin,
    -- toward + margin: the farthest the evidence lets the change go in the watched direction, rule's unit
    toward + margin AS worst_case,
    -- √(s_b² + s_a²) in the rule's unit: the per-trial spread of a difference of two trials
    spread,
    -- trials per side that resolve the rule with 80 % probability at the observed change and spread
    -- (formula in the header), count, at least 2; NULL when no number of trials would
    CASE WHEN n_exact IS NULL OR n_exact > 1e9 THEN NULL ELSE greatest(2, ceil(n_exact))::BIGINT END AS trials_needed
FROM judged
ORDER BY position
