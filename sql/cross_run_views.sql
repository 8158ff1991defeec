-- cross_run_views.sql — the views of `libreyolo profile query` and the tables of `libreyolo profile db` (DuckDB).
--
-- Answers: every profile found under the roots as one set of tables: `profiles` (one row per
-- profile: identity, key settings, every headline metric) and one view per sidecar table of
-- store/schema.py TABLES (kernels, ops, phases, steps, blame, modules, memory): every row of every profile's
-- sidecar, with the profile's identity in front of its columns.
-- Binds: nothing. Text placeholders, filled by store/crossrun/views.py from the schema (never user input):
--   {identity}  the identity columns (store/crossrun/columns.py IDENTITY_COLUMNS) as i.<column>, …
--   {table}     one table name of TABLES: the statement after the `per table` line is repeated for each.
-- Reads what store/crossrun/views.py registers first:
--   profile_index   one row per profile, typed columns (the `profiles` view is exactly this table)
--   sidecar_files   (profile_id, table_name, file): which parquet file holds which profile's table
--   <table>_files   read_parquet(<every profile's file>, filename = true[, union_by_name = true])
-- The views stay lazy: a query that touches only `kernels` reads only the kernels files.
-- Units: the identity columns' and each table's are in docs/SCHEMA.md (this SQL adds no column).
-- sql/spark_cross_run_views.sql is the same for Spark SQL, filled from the same schema.

CREATE OR REPLACE TEMP VIEW profiles AS
SELECT * FROM profile_index;

-- per table
CREATE OR REPLACE TEMP VIEW {table} AS
SELECT {identity}, t.* EXCLUDE (filename)
FROM {table}_files t
JOIN sidecar_files f ON f.table_name = '{table}' AND f.file = t.filename
JOIN profile_index i ON i.profile_id = f.profile_id;
