"""Write the parquet sidecars from a profile document's embedded tables.

Writers and the rebuild of a lone profile.json both go through `write_sidecars`, so a reader's
output cannot depend on which of the two made the files it reads.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from functools import cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from libreyolo_profile.store.schema import GENERATION_KEY, TABLES, TABLES_VERSION

_ARROW_TYPES = {
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "DOUBLE": pa.float64(),
    "VARCHAR": pa.string(),
    "BOOLEAN": pa.bool_(),
}


def arrow_schema(table: str, generation: str) -> pa.Schema:
    fields = [pa.field(name, _ARROW_TYPES[sql_type]) for name, sql_type, _, _ in TABLES[table]]
    return pa.schema(
        fields, metadata={GENERATION_KEY: generation, "libreyolo_profile.tables_version": str(TABLES_VERSION)}
    )


def write_sidecars(doc: dict, directory: Path) -> None:
    generation = doc["generation"]
    for table in TABLES:
        # a profile written before a table existed (an older tables_version) gets it empty
        embedded = doc["tables"].get(table, {"columns": [], "rows": []})
        schema = arrow_schema(table, generation)
        index = {name: i for i, name in enumerate(embedded["columns"])}
        columns = [[row[index[f.name]] if f.name in index else None for row in embedded["rows"]] for f in schema]
        arrays = [pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)]
        arrow_table = pa.Table.from_arrays(arrays, schema=schema)
        _write_file(arrow_table, directory / f"{table}.parquet")


def _write_file(arrow_table: pa.Table, final: Path) -> None:
    """Write into a fresh, exclusively created file beside `final` (mkstemp: O_EXCL, so a planted
    symlink is never written through), then rename it over `final`: a symlink there is replaced
    itself, its target untouched, and no reader sees half a file."""
    fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            pq.write_table(arrow_table, handle, compression="zstd")
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; sidecars are as readable as other files
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@cache
def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
