-- spark_cross_run_views.sql — the cross-run views of sql/cross_run_views.sql for Spark SQL
-- (store/crossrun/spark.py), over the same profile layout.
--
-- Answers: `profiles` (one row per profile) and one view per sidecar table of store/schema.py TABLES,
-- every row of every profile's sidecar with the profile's identity in front: the same columns, in the
-- same order, as the DuckDB views (tests/test_spark.py compares them).
-- Binds: nothing. Text placeholders, filled by store/crossrun/spark.py from the schema (never user input):
--   {identity}  the identity columns (store/crossrun/columns.py IDENTITY_COLUMNS) as i.<column>, …
--   {columns}   the table's own columns (store/schema.py TABLES) as t.<column>, … (Spark has no EXCLUDE)
--   {table}     one table name of TABLES: the statement after the `per table` line is repeated for each.
-- Reads the temporary views store/crossrun/spark.py registers first:
--   profile_index   one row per profile, typed columns (created as a UTC timestamp)
--   sidecar_files   (profile_id, table_name, file): the absolute local path of each profile's parquet file
--   <table>_files   the table's parquet files read with the schema's column types, plus `filename`
--                   (Spark's _metadata.file_path: a URI, `file:` scheme, path percent-encoded)
-- Units: the identity columns' and each table's are in docs/SCHEMA.md (this SQL adds no column).

CREATE OR REPLACE TEMP VIEW profiles AS
SELECT * FROM profile_index;

-- per table
-- the URI back to the path: the scheme off, a literal + kept (url_decode would read it as a space)
CREATE OR REPLACE TEMP VIEW {table} AS
SELECT {identity}, {columns}
FROM {table}_files t
JOIN sidecar_files f
  ON f.table_name = '{table}'
 AND f.file = url_decode(replace(regexp_replace(t.filename, '^file:', ''), '+', '%2B'))
JOIN profile_index i ON i.profile_id = f.profile_id;
