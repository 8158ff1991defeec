-- cross_run_views.sql — the views of `libreyolo profile query` and the tables of `libreyolo profile db`.
--
-- Answers: every profile found under the roots as one set of tables: `profiles` (one row per
-- profile: identity, key settings, every headline metric) and `kernels`, `ops`, `phases`, `steps`, `blame`
-- (every row of every profile's sidecar, with the profile's identity in front of its columns).
-- Binds: nothing. Reads what libreyolo_profile/store/crossrun/catalog.py registers first:
--   profile_index   one row per profile, typed columns (the `profiles` view is exactly this table)
--   sidecar_files   (profile_id, table_name, file): which parquet file holds which profile's table
--   kernels_files, ops_files, phases_files, steps_files, blame_files
--                   read_parquet(<every profile's file>, filename = true, union_by_name = true)
-- The views stay lazy: a query that touches only `kernels` reads only the kernels files.
-- Identity columns on every table row (units in docs/SCHEMA.md):
--   profile_id (this query's key for joining `profiles`), profile (the profile directory),
--   kind, created, device_type, device_name, model_family, model_size, batch, imgsz.

CREATE OR REPLACE TEMP VIEW profiles AS
SELECT * FROM profile_index;

CREATE OR REPLACE TEMP VIEW kernels AS
SELECT i.profile_id, i.profile, i.kind, i.created, i.device_type, i.device_name, i.model_family, i.model_size,
       i.batch, i.imgsz, t.* EXCLUDE (filename)
FROM kernels_files t
JOIN sidecar_files f ON f.table_name = 'kernels' AND f.file = t.filename
JOIN profile_index i ON i.profile_id = f.profile_id;

CREATE OR REPLACE TEMP VIEW ops AS
SELECT i.profile_id, i.profile, i.kind, i.created, i.device_type, i.device_name, i.model_family, i.model_size,
       i.batch, i.imgsz, t.* EXCLUDE (filename)
FROM ops_files t
JOIN sidecar_files f ON f.table_name = 'ops' AND f.file = t.filename
JOIN profile_index i ON i.profile_id = f.profile_id;

CREATE OR REPLACE TEMP VIEW phases AS
SELECT i.profile_id, i.profile, i.kind, i.created, i.device_type, i.device_name, i.model_family, i.model_size,
       i.batch, i.imgsz, t.* EXCLUDE (filename)
FROM phases_files t
JOIN sidecar_files f ON f.table_name = 'phases' AND f.file = t.filename
JOIN profile_index i ON i.profile_id = f.profile_id;

CREATE OR REPLACE TEMP VIEW steps AS
SELECT i.profile_id, i.profile, i.kind, i.created, i.device_type, i.device_name, i.model_family, i.model_size,
       i.batch, i.imgsz, t.* EXCLUDE (filename)
FROM steps_files t
JOIN sidecar_files f ON f.table_name = 'steps' AND f.file = t.filename
JOIN profile_index i ON i.profile_id = f.profile_id;

CREATE OR REPLACE TEMP VIEW blame AS
SELECT i.profile_id, i.profile, i.kind, i.created, i.device_type, i.device_name, i.model_family, i.model_size,
       i.batch, i.imgsz, t.* EXCLUDE (filename)
FROM blame_files t
JOIN sidecar_files f ON f.table_name = 'blame' AND f.file = t.filename
JOIN profile_index i ON i.profile_id = f.profile_id;
