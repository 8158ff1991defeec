"""The cross-run DuckDB views (SPEC §9) over the profiles the index found: one `profiles` row per
profile, and each table's parquet sidecars read in place (read_parquet over the list of files,
filename = true); sql/cross_run_views.sql defines the views, one per table of the schema
(sql/spark_cross_run_views.sql the same for Spark, store/crossrun/spark.py). Used by `query` and `db`
(readers/query.py).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from libreyolo_profile.store.crossrun.columns import IDENTITY_COLUMNS, profiles_columns
from libreyolo_profile.store.crossrun.index import Found, collect, require_profiles
from libreyolo_profile.store.schema import TABLES

DEFAULT_ROOT = Path("runs/profile")


def view_statements(sql_file: str, tables=TABLES, **fill) -> list[str]:
    """The statements of a cross-run views file (sql/cross_run_views.sql, sql/spark_cross_run_views.sql):
    those before its `-- per table` line once, the one after it once per table of TABLES, with {identity}
    (IDENTITY_COLUMNS) and {table} filled in, and any other {name} from `fill` (name -> per-table function
    or text). Both engines' views come from here, so their columns cannot drift from the schema or apart."""
    from libreyolo_profile.sqlfiles import sql_text

    head, per_table = re.split(r"^-- per table$", sql_text(sql_file), maxsplit=1, flags=re.M)
    identity = ", ".join(f"i.{name}" for name, _, _, _ in IDENTITY_COLUMNS)
    statements = [s for s in head.split(";") if _code(s)]
    for table in tables:
        text = per_table.replace("{identity}", identity).replace("{table}", table)
        for name, value in fill.items():
            text = text.replace("{" + name + "}", value(table) if callable(value) else value)
        statements += [s for s in text.split(";") if _code(s)]
    return statements


def _code(statement: str) -> bool:
    """Whether a piece of a split SQL file holds more than comments and blank lines."""
    return any(line.strip() and not line.strip().startswith("--") for line in statement.splitlines())


def register(con, found: list[Found], tables=TABLES) -> list[str]:
    """Create profile_index, sidecar_files, <table>_files and the views of `tables` (all by default: `query`
    names only those its SQL can read, which saves binding the others) on `con`; returns their parquet files."""
    columns = profiles_columns()
    rows = [
        {
            "profile_id": i + 1,
            "profile": item.display,
            "profile_json": str(item.json_path),
            "sidecar_dir": str(item.sidecars),
            **item.row,
        }
        for i, item in enumerate(found)
    ]
    # Column names and types are this module's constants, never user input; the values are bound.
    select = ", ".join(f"unnest(${name}::{sql_type}[]) AS {name}" for name, sql_type, _, _ in columns)
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE profile_index AS SELECT {select}",
        {name: [row[name] for row in rows] for name, _, _, _ in columns},
    )
    files = {t: [sidecar_file(item, t) for item in found] for t in tables}
    con.execute(
        "CREATE OR REPLACE TEMP TABLE sidecar_files AS "
        "SELECT unnest($ids::INTEGER[]) AS profile_id, unnest($tables::VARCHAR[]) AS table_name, "
        "unnest($files::VARCHAR[]) AS file",
        {
            "ids": [i + 1 for t in tables for i in range(len(found))],
            "tables": [t for t in tables for _ in found],
            "files": [f for t in tables for f in files[t]],
        },
    )
    # Files of one tables_version share one schema; only a mix needs DuckDB to union them by column name
    # (which reads every file's footer up front, ~0.4 s per 1,000 files).
    mixed = len({item.row.get("tables_version") for item in found}) > 1
    for table, table_files in files.items():
        con.read_parquet(table_files, filename=True, union_by_name=mixed).to_view(f"{table}_files")
    for statement in view_statements("cross_run_views.sql", tables):
        con.execute(statement)
    return [f for t in tables for f in files[t]]


def sidecar_file(item: Found, table: str) -> str:
    """The parquet file of `table` for a profile: a local path, or an s3:// URL."""
    return posixpath.join(str(item.sidecars), f"{table}.parquet")


def open_cross_run(roots: list, database: str = ":memory:", tables=TABLES):
    """(connection with the views, the profiles found, the parquet files the views read). A root may be a
    local path or an s3:// URL (store/crossrun/objectstore.py): then the connection reads those files
    through the S3 filesystem registered on it, until readers/query.py unregisters it."""
    import duckdb

    from libreyolo_profile.store.crossrun.objectstore import collect_remote, filesystem, is_remote

    local = [Path(r) for r in roots if not is_remote(r)]
    remote = [str(r) for r in roots if is_remote(r)]
    found = collect(local) if local else []
    fs = filesystem() if remote else None
    for root in remote:
        found += collect_remote(fs, root)
    require_profiles(found, roots)
    con = duckdb.connect(database)
    if fs is not None:
        con.register_filesystem(fs)
    files = register(con, found, tables)
    return con, found, files
