"""`lp.export(relation, path)`: the one way a relation of the API reaches a file, at a path the caller names.

The connections the API hands out open no file (api/readonly.py), so a relation's own `write_csv` or
`to_parquet` is refused; this writes its rows from Python instead, under the writers' rules
(store/disk/atomic.py): through a fresh file beside the target renamed into place, never through a link,
and an existing file replaced only with force=True."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UsageError

FORMATS = (".csv", ".parquet")


def export(relation, path: str | Path, *, force: bool = False) -> Path:
    """Write every row of `relation` (any relation from lp.open, lp.query, lp.connect or a comparison) to
    `path`, as CSV or Parquet by its suffix; returns the path written. A path that is a link, not a regular
    file, or an existing file without force=True is a UsageError, and nothing is written."""
    from libreyolo_profile.store.disk.atomic import write_output

    out = Path(path)
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"{out}: lp.export writes {' or '.join(FORMATS)} files (named by the suffix)")
    rows = relation.arrow()
    table = rows.read_all() if hasattr(rows, "read_all") else rows  # DuckDB 2 gives a stream, 1.x a table
    return write_output(out, lambda staged: _write(table, staged, suffix), what="export", ours=_never, force=force)


def _never(path: Path) -> bool:
    """An exported file carries no mark of ours: an existing one is replaced only when asked (force)."""
    return False


def _write(table, staged: Path, suffix: str) -> None:
    if suffix == ".csv":
        import pyarrow.csv as pa_csv

        pa_csv.write_csv(table, staged)
    else:
        import pyarrow.parquet as pq

        pq.write_table(table, staged)
