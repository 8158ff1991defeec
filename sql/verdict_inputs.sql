-- verdict_inputs.sql — how the verdict modules read a profile's metrics: one metric by name, and a
-- figure printed as their reasons print it.
-- inputs: verdict_metrics (metric, value: the profile's numeric metrics, one row each; store/document/verdict.py)

-- verdict_metric: one of the profile's metrics by name (NULL when it has none).
CREATE OR REPLACE TEMP MACRO verdict_metric(metric_name) AS
    (SELECT value FROM verdict_metrics WHERE metric = metric_name);

-- verdict_number: a figure as the reasons print it, `digits` after the point; 'n/a' for NULL.
CREATE OR REPLACE TEMP MACRO verdict_number(v, digits) AS coalesce(printf('%.' || digits || 'f', v), 'n/a');
