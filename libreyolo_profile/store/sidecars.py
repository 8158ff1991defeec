"""Write the parquet sidecars from a profile document's embedded tables.

Writers and the rebuild of a lone profile.json both go through `write_sidecars`, so a reader's
output cannot depend on which of the two made the files it reads.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from libreyolo_profile.store.schema import TABLES, TABLES_VERSION

_ARROW_TYPES = {"BIGINT": pa.int64(), "INTEGER": pa.int32(), "DOUBLE": pa.float64(),
                "VARCHAR": pa.string(), "BOOLEAN": pa.bool_()}
GENERATION_KEY = "libreyolo_profile.generation"


def arrow_schema(table: str, generation: str) -> pa.Schema:
    fields = [pa.field(name, _ARROW_TYPES[sql_type]) for name, sql_type, _, _ in TABLES[table]]
    return pa.schema(fields, metadata={GENERATION_KEY: generation,
                                       "libreyolo_profile.tables_version": str(TABLES_VERSION)})


def write_sidecars(doc: dict, directory: Path) -> None:
    generation = doc["generation"]
    for table in TABLES:
        embedded = doc["tables"][table]
        schema = arrow_schema(table, generation)
        index = {name: i for i, name in enumerate(embedded["columns"])}
        columns = [[row[index[f.name]] if f.name in index else None for row in embedded["rows"]] for f in schema]
        arrow_table = pa.Table.from_arrays([pa.array(col, type=f.type) for col, f in zip(columns, schema)], schema=schema)
        tmp = directory / f".{table}.parquet.tmp"
        pq.write_table(arrow_table, tmp, compression="zstd")
        tmp.replace(directory / f"{table}.parquet")
