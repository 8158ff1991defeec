"""Read-only DuckDB connections for the Python API, under the rules `query` runs by (readers/query.py):
the tables are loaded into memory, then file access is switched off and the settings locked; the SQL
must be one SELECT (or an EXPLAIN of one). Every connection the API hands out is locked so (a profile's
`con`, a comparison's table, `lp.connect`): no SQL or relation method on it reads or writes a file, and
`lp.export` is the one way a relation reaches a file, one the caller names."""

from __future__ import annotations

from libreyolo_profile.errors import UsageError
from libreyolo_profile.readers.query import check_read_only, lock_down
from libreyolo_profile.store.disk.loader import Loaded, sidecar_dir


def locked_profile_connection(loaded: Loaded, tables: list[str]):
    """A connection of its own holding one profile's `tables` in memory, locked as `query` locks its own."""
    import duckdb

    directory = sidecar_dir(loaded)
    con = duckdb.connect(":memory:")
    files = []
    for table in tables:
        file = str(directory / f"{table}.parquet")
        con.read_parquet(file).to_view(table)  # lock_down loads each view into memory before locking
        files.append(file)
    lock_down(con, files, tables)
    return con


def locked(con):
    """`con`, its tables already in memory, locked as `query` locks its own (no file, no setting)."""
    lock_down(con, [], ())
    return con


def read_only_relation(con, sql: str):
    """`sql` as a DuckDB relation on `con`, refused (UsageError) unless it is one SELECT or an EXPLAIN of one."""
    import duckdb

    check_read_only(con, sql)
    try:
        return con.sql(sql)
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(f"query failed: {first}") from None
