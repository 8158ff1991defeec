"""`libreyolo profile query`, `db` and `import`, the commands over many profiles at once: their arguments
(cli.py registers them; readers/query.py and importer.py do the work, imported lazily)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from libreyolo_profile.cli_help import EXIST_OK_HELP, JSON_HELP
from libreyolo_profile.errors import EXIT_USAGE, ProfileError


def query_cmd(
    sql: str = typer.Argument(
        ..., help="SQL over the views profiles, kernels, ops, phases, steps, blame, modules, memory"
    ),
    roots: Optional[list[str]] = typer.Argument(
        None, help="directories or s3://bucket/prefix URLs searched for profiles (default runs/profile)"
    ),
    timeout: float = typer.Option(
        60.0,
        "--timeout",
        help="seconds the query may run and print its rows; past them it stops and exits 1 (0: no limit)",
    ),
    max_rows: int = typer.Option(
        1000,
        "--max-rows",
        help="rows the table shows; a line on stderr says how many were cut (0: all; --json/--csv print all)",
    ),
    memory_limit: Optional[str] = typer.Option(
        None,
        "--memory-limit",
        help="memory DuckDB may use, e.g. 2GB (default: 4 GiB or a quarter of the memory, the smaller); past it exit 1",
    ),
    as_csv: bool = typer.Option(False, "--csv", help="print every row as CSV, streamed (a header line first)"),
    as_json: bool = typer.Option(False, "--json", help="print every row in one JSON array, streamed"),
) -> None:
    """Run read-only SQL over every profile under the roots."""
    from libreyolo_profile.readers import query
    from libreyolo_profile.store.crossrun.objectstore import deadline

    with deadline(timeout):  # the s3:// listing and reads before the SQL keep --timeout too
        query.print_query(
            sql,
            roots or ["runs/profile"],
            as_json,
            timeout=timeout,
            as_csv=as_csv,
            max_rows=max_rows,
            memory_limit=memory_limit,
        )


def db_cmd(
    out: Path = typer.Argument(..., help="DuckDB database file to write (re-running refreshes it)"),
    roots: Optional[list[Path]] = typer.Argument(None, help="directories searched for profiles (default runs/profile)"),
    force: bool = typer.Option(False, "--force", help="replace an existing file that is not a database of ours"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Materialize every profile under the roots into a .duckdb file for a DuckDB shell."""
    from libreyolo_profile.readers import query

    query.write_database(out, roots or [Path("runs/profile")], as_json, force=force)


def import_cmd(
    traces: list[Path] = typer.Argument(
        ..., help="PyTorch profiler traces, or profile.json files from LibreYOLO's built-in profiler"
    ),
    project: str = typer.Option("runs/profile", help="output directory root, or an s3://bucket/prefix URL"),
    exist_ok: bool = typer.Option(False, "--exist-ok", help=EXIST_OK_HELP),
    jobs: int = typer.Option(
        1, "--jobs", help="import in N local processes (several inputs: each to <project>/<name>/<kind>)"
    ),
    scheduler: Optional[str] = typer.Option(
        None, "--scheduler", help="import on the Dask cluster at this scheduler address"
    ),
    job: bool = typer.Option(
        False,
        "--job",
        help="the traces (or directories of them) are the ranks of one distributed job: write one job profile "
        "whose tables carry the rank, with the collectives matched across ranks",
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Turn foreign traces or LibreYOLO built-in profiles into profile directories of ours.
    Exit 1 when any input failed."""
    from libreyolo_profile import importer

    if job:
        if jobs != 1 or scheduler is not None:
            raise ProfileError("--job imports the ranks together: give it without --jobs or --scheduler", EXIT_USAGE)
        raise typer.Exit(importer.import_job(traces, project, as_json, exist_ok=exist_ok))
    raise typer.Exit(
        importer.import_traces(traces, project, as_json, exist_ok=exist_ok, jobs=jobs, scheduler=scheduler)
    )
