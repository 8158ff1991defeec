-- query_db.sql — `libreyolo profile db`: the cross-run views materialized into a DuckDB file.
-- inputs: profiles, kernels, ops, phases, steps, blame, modules, collectives, ranks (the views of sql/cross_run_views.sql)
--
-- Answers: the same profiles, kernels, ops, phases, steps, blame, modules, roofline, memory, collectives and ranks as `libreyolo profile query`, stored as
-- tables in the database file, so it works on its own (no parquet files needed to open it).
-- Binds: $roots (VARCHAR[]: the roots searched), $producer (VARCHAR), $tables_version (INTEGER),
-- $schema_version (INTEGER). Reads: the views of sql/cross_run_views.sql. Writes: the database
-- attached as `out` (query.py attaches the staged file, then renames it into place).
CREATE TABLE out.profiles AS SELECT * FROM profiles ORDER BY profile_id;
CREATE TABLE out.kernels AS SELECT * FROM kernels;
CREATE TABLE out.ops AS SELECT * FROM ops;
CREATE TABLE out.phases AS SELECT * FROM phases;
CREATE TABLE out.steps AS SELECT * FROM steps;
CREATE TABLE out.blame AS SELECT * FROM blame;
CREATE TABLE out.modules AS SELECT * FROM modules;
CREATE TABLE out.roofline AS SELECT * FROM roofline;
CREATE TABLE out.memory AS SELECT * FROM memory;
CREATE TABLE out.collectives AS SELECT * FROM collectives;
CREATE TABLE out.ranks AS SELECT * FROM ranks;
-- what made this file: one row
CREATE TABLE out.about AS SELECT
    -- when the file was written, UTC
    now() AS written,
    -- the roots that were searched
    CAST($roots AS VARCHAR[]) AS roots,
    -- program and version that wrote it
    CAST($producer AS VARCHAR) AS producer,
    -- layout versions of profile.json and of the tables (docs/SCHEMA.md)
    CAST($schema_version AS INTEGER) AS schema_version,
    CAST($tables_version AS INTEGER) AS tables_version,
    -- profiles in the file
    (SELECT count(*) FROM out.profiles) AS profiles;
