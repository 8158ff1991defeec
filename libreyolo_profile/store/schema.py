"""The versioned schemas of profile.json and of the parquet sidecars.

`get` and the docs import this without pyarrow or DuckDB: the sidecar tables' columns are the rows of
sql/sidecar_columns.sql, which libreyolo_profile/vocabulary.py keeps in the user's cache.
Column types are DuckDB/SQL type names; every engine that reads parquet maps them the same way.
Bump TABLES_VERSION when a column changes meaning or type; adding a column is compatible.
"""

from libreyolo_profile.vocabulary import rows

PROFILE_SCHEMA = "libreyolo-profile/profile"
REPEAT_SCHEMA = "libreyolo-profile/repeat"
SCHEMA_VERSION = 1  # profile.json / profile_repeat.json layout
TABLES_VERSION = 9  # the sidecar tables below (2: the blame table; 3: the modules table; 4: the roofline table; 5: the memory table; 6: every execution in the window in kernels; 7: in phases and steps too, and the blame names its whole; 8: rank in every table, a job's collectives and ranks tables; 9: the roofline holds the work no op launched, its shares of the window's device time)
BUILTIN_SCHEMA = "libreyolo.profile.analysis/v1"  # LibreYOLO's own built-in profiler

PROFILE_FILE = "profile.json"
REPEAT_FILE = "profile_repeat.json"
TRACE_FILE = "profile_trace.json"

# Parquet key-value metadata: the generation of the profile.json a sidecar was written for.
GENERATION_KEY = "libreyolo_profile.generation"

# The phases of a step, per kind, in display order (our `## phase ##` annotations name them).
# The ingest SQL reads them as the table phase_vocabulary (store/ingest/timeline.py builds it from here).
PHASES_BY_KIND: dict[str, tuple[str, ...]] = {
    "train": ("dataload", "to_device", "forward", "backward", "optimizer"),
    "infer": ("preprocess", "forward", "postprocess"),
}
# The kinds of profile we write: a profile directory is named after its kind, so a document whose kind
# is anything else is refused when read (store/disk/loader.py), never made into a path.
KINDS: tuple[str, ...] = tuple(PHASES_BY_KIND)
# The phases that issue the model's device work (host overhead is measured inside them).
COMPUTE_PHASES: tuple[str, ...] = ("forward", "backward", "optimizer")


def phase_vocabulary() -> dict[str, list]:
    """PHASES_BY_KIND and COMPUTE_PHASES as parallel columns (kind, phase, position, compute), the
    parameters that build the SQL table phase_vocabulary, so the SQL never spells the lists again."""
    rows = [
        (kind, phase, position, phase in COMPUTE_PHASES)
        for kind, phases in PHASES_BY_KIND.items()
        for position, phase in enumerate(phases, 1)
    ]
    return {name: [row[i] for row in rows] for i, name in enumerate(("kind", "phase", "position", "compute"))}


def _tables() -> dict[str, list[tuple[str, str, str, str]]]:
    found: dict[str, list[tuple[str, str, str, str]]] = {row["name"]: [] for row in rows("sidecar_tables")}
    for column in rows("sidecar_columns"):
        found[column["table_name"]].append((column["column_name"], column["type"], column["unit"], column["meaning"]))
    return found


# table name -> [(column, type, unit, meaning)], in the order docs/SCHEMA.md lists them (sql/sidecar_columns.sql)
TABLES: dict[str, list[tuple[str, str, str, str]]] = _tables()

# The tables only a job profile (several ranks' traces, store/document/job.py) fills; empty otherwise.
JOB_TABLES: tuple[str, ...] = tuple(row["name"] for row in rows("sidecar_tables") if row["job_only"])

# The parquet physical type our sidecar writer (store/disk/sidecars.py) gives each column type: a sidecar
# is trusted only when its footer lists exactly these (store/crossrun/footers.py, store/disk/loader.py).
PARQUET_TYPES = {
    "BOOLEAN": "BOOLEAN",
    "INTEGER": "INT32",
    "BIGINT": "INT64",
    "DOUBLE": "DOUBLE",
    "VARCHAR": "BYTE_ARRAY",
}


def parquet_columns(table: str) -> list[tuple[str, str]]:
    """(column, parquet physical type) of a sidecar of `table`, in order."""
    return [(name, PARQUET_TYPES[sql_type]) for name, sql_type, _, _ in TABLES[table]]
