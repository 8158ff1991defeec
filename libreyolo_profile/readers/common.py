"""What every reader shares: opening a profile's tables in DuckDB once, running a SQL file with bound
parameters, and the phases a profile holds. Printing lives in libreyolo_profile/output/."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from libreyolo_profile.connections import without_progress_bar
from libreyolo_profile.errors import UsageError
from libreyolo_profile.sqlmodules import run_module
from libreyolo_profile.store.disk.loader import Loaded, load_document, sidecar_dir
from libreyolo_profile.store.schema import JOB_TABLES, PHASES_BY_KIND, TABLES

PHASES = {kind: list(phases) for kind, phases in PHASES_BY_KIND.items()}  # lists: readers extend and bind them


@dataclass(frozen=True)
class OpenProfile:
    """One profile opened once: its document and a DuckDB connection holding its kernels/ops/phases/steps
    tables. Every reader of one command (report and summary after a measurement, report's sides and its
    comparison) takes the same one instead of opening the file again."""

    loaded: Loaded
    con: object  # duckdb.DuckDBPyConnection (duckdb is imported only when a profile is opened)

    @property
    def doc(self) -> dict:
        return self.loaded.doc

    @property
    def head(self):
        """The document's head, typed (Loaded.head): read by attribute."""
        return self.loaded.head


def open_profile(path: Path) -> OpenProfile:
    import duckdb

    loaded = load_document(path)
    con = without_progress_bar(duckdb.connect(":memory:"))
    directory = sidecar_dir(loaded, con)  # its footer checks on this connection: a second database cost ~15 ms
    # a job profile's readers show the rank its metrics are (store/document/job.py: the slowest), so each
    # table agrees with the headline; the job's own tables, and `query`, keep every rank
    job = loaded.head.job
    shown = job.metrics_rank if job is not None else None
    for table in TABLES:
        only = "" if shown is None or table in JOB_TABLES else " WHERE rank = $rank"
        con.execute(
            f"CREATE TABLE {table} AS SELECT * FROM read_parquet($file){only}",
            {"file": str(directory / f"{table}.parquet"), **({"rank": shown} if only else {})},
        )
    return OpenProfile(loaded, con)


def opened(source: Path | str | OpenProfile) -> OpenProfile:
    """A reader's input as an opened profile: one already open is used as it is."""
    return source if isinstance(source, OpenProfile) else open_profile(Path(source))


def run_sql(con, name: str, params: dict | None = None) -> tuple[list[str], list[tuple]]:
    cursor = run_module(con, name, params or {})
    return [d[0] for d in cursor.description], cursor.fetchall()


def records(columns: list[str], rows: list[tuple]) -> list[dict]:
    return [dict(zip(columns, row, strict=True)) for row in rows]


def phases_present(con) -> list[str]:
    return [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT phase FROM (SELECT phase FROM phases UNION ALL SELECT phase FROM kernels "
            "UNION ALL SELECT phase FROM ops) WHERE phase IS NOT NULL ORDER BY phase"
        ).fetchall()
    ]


def check_phase(con, phase: str | None) -> None:
    if phase is None:
        return
    present = phases_present(con)
    if phase not in present:
        from libreyolo_profile.output.terminal import close_match_hint

        raise UsageError(
            f"unknown phase '{phase}'{close_match_hint(phase, present)}; "
            f"phases in this profile: {', '.join(present) or 'none'}"
        )


def profile_identity(loaded: Loaded) -> dict:
    head = loaded.head
    return {
        "path": str(loaded.path),
        "kind": head.kind,
        "device_type": head.device_type,
        "source": head.source.type,
        "steps": head.metrics.steps,
    }
