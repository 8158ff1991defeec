-- compare_rule.sql — the significance rule every before/after comparison applies (SPEC §6): with n ≥ 2
-- trials on both sides, SE = s/√n per side (s the sample standard deviation, n − 1), and a change is
-- significant when |Δ| > 2·√(SE_before² + SE_after²). compare.sql (the headline metrics) and
-- compare_items.sql (ops and kernels) both judge by these macros, so the rule is written once.
-- Answers nothing by itself. Binds: nothing.

-- compare_se: the standard error of a side's mean, s/√n, the values' unit; NULL with fewer than 2 trials.
CREATE OR REPLACE TEMP MACRO compare_se(std, n) AS CASE WHEN n >= 2 THEN std / sqrt(n) END;

-- compare_se_combined: √(SE_before² + SE_after²), the values' unit; NULL unless both sides have one.
CREATE OR REPLACE TEMP MACRO compare_se_combined(se_before, se_after) AS
    sqrt(se_before * se_before + se_after * se_after);

-- compare_threshold: the smallest |Δ| called significant, 2 · compare_se_combined, the values' unit.
CREATE OR REPLACE TEMP MACRO compare_threshold(se_before, se_after) AS 2 * compare_se_combined(se_before, se_after);

-- compare_significant: |Δ| > compare_threshold; NULL when it cannot be judged (a side with n < 2, or no Δ).
CREATE OR REPLACE TEMP MACRO compare_significant(delta, se_before, se_after) AS
    CASE WHEN se_before IS NOT NULL AND se_after IS NOT NULL AND delta IS NOT NULL
         THEN abs(delta) > compare_threshold(se_before, se_after) END;
