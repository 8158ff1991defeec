"""What every reader shares: opening a profile's tables in DuckDB once, running a SQL file with bound
parameters, and the phases a profile holds. Printing lives in libreyolo_profile/output/."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.sqlfiles import sql_text
from libreyolo_profile.store.disk.loader import Loaded, load_document, sidecar_dir
from libreyolo_profile.store.schema import TABLES

PHASES = {"train": ["dataload", "to_device", "forward", "backward", "optimizer"],
          "infer": ["preprocess", "forward", "postprocess"]}


def open_tables(path: Path):
    """(loaded profile, DuckDB connection holding its kernels/ops/phases/steps tables)."""
    import duckdb

    loaded = load_document(path)
    directory = sidecar_dir(loaded)
    con = duckdb.connect(":memory:")
    for table in TABLES:
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_parquet($file)",
                    {"file": str(directory / f"{table}.parquet")})
    return loaded, con


def run_sql(con, name: str, params: dict | None = None) -> tuple[list[str], list[tuple]]:
    cursor = con.execute(sql_text(name), params or {})
    return [d[0] for d in cursor.description], cursor.fetchall()


def records(columns: list[str], rows: list[tuple]) -> list[dict]:
    return [dict(zip(columns, row)) for row in rows]


def phases_present(con) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT DISTINCT phase FROM (SELECT phase FROM phases UNION ALL SELECT phase FROM kernels "
        "UNION ALL SELECT phase FROM ops) WHERE phase IS NOT NULL ORDER BY phase").fetchall()]


def check_phase(con, phase: str | None) -> None:
    if phase is None:
        return
    present = phases_present(con)
    if phase not in present:
        raise UsageError(f"unknown phase '{phase}'; phases in this profile: {', '.join(present) or 'none'}")


def profile_identity(loaded: Loaded) -> dict:
    doc = loaded.doc
    return {"path": str(loaded.path), "kind": doc.get("kind"), "device_type": doc.get("device_type"),
            "source": doc.get("source", {}).get("type"), "steps": doc.get("metrics", {}).get("steps")}
