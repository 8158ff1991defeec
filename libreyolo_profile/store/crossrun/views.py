"""The cross-run DuckDB views (SPEC §9) over the profiles the index found: one `profiles` row per
profile, and each table's parquet sidecars read in place (read_parquet over the list of files,
filename = true); sql/cross_run_views.sql defines the views. Used by `query` and `db`
(readers/query.py).
"""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.store.crossrun.columns import profiles_columns
from libreyolo_profile.store.crossrun.index import Found, collect, require_profiles
from libreyolo_profile.store.schema import TABLES

DEFAULT_ROOT = Path("runs/profile")


def register(con, found: list[Found]) -> list[str]:
    """Create profile_index, sidecar_files, <table>_files and the views on `con`; returns the parquet files."""
    from libreyolo_profile.sqlfiles import sql_text

    columns = profiles_columns()
    rows = [{"profile_id": i + 1, "profile": item.display, "profile_json": str(item.json_path),
             "sidecar_dir": str(item.sidecars), **item.row} for i, item in enumerate(found)]
    # Column names and types are this module's constants, never user input; the values are bound.
    select = ", ".join(f"unnest(${name}::{sql_type}[]) AS {name}" for name, sql_type, _, _ in columns)
    con.execute(f"CREATE OR REPLACE TEMP TABLE profile_index AS SELECT {select}",
                {name: [row[name] for row in rows] for name, _, _, _ in columns})
    files = {t: [str(item.sidecars / f"{t}.parquet") for item in found] for t in TABLES}
    con.execute("CREATE OR REPLACE TEMP TABLE sidecar_files AS "
                "SELECT unnest($ids::INTEGER[]) AS profile_id, unnest($tables::VARCHAR[]) AS table_name, "
                "unnest($files::VARCHAR[]) AS file",
                {"ids": [i + 1 for t in TABLES for i in range(len(found))],
                 "tables": [t for t in TABLES for _ in found],
                 "files": [f for t in TABLES for f in files[t]]})
    # Files of one tables_version share one schema; only a mix needs DuckDB to union them by column name
    # (which reads every file's footer up front, ~0.4 s per 1,000 files).
    mixed = len({item.row.get("tables_version") for item in found}) > 1
    for table, table_files in files.items():
        con.read_parquet(table_files, filename=True, union_by_name=mixed).to_view(f"{table}_files")
    con.execute(sql_text("cross_run_views.sql"))
    return [f for t in TABLES for f in files[t]]


def open_cross_run(roots: list[Path], database: str = ":memory:"):
    """(connection with the views, the profiles found, the parquet files the views read)."""
    import duckdb

    found = collect(roots)
    require_profiles(found, roots)
    con = duckdb.connect(database)
    files = register(con, found)
    return con, found, files
