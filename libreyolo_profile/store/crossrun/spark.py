"""The cross-run views on Spark SQL (pyspark, the `[spark]` extra): `profiles` and one view per sidecar
table of store/schema.py TABLES, over the same profile layout as the DuckDB views and generated from the
same schema (sql/spark_cross_run_views.sql, filled by views.view_statements), so the two engines give
the same columns in the same order and the same answers (tests/test_spark.py).

The catalogue is ours (store/crossrun/index.py: every profile.json under the roots, its sidecars checked
or rebuilt into the cache, its `profiles` row), read on the driver; the sidecar rows are read by Spark.

    from pyspark.sql import SparkSession
    from libreyolo_profile.store.crossrun.spark import register_spark
    spark = SparkSession.builder.master("local[2]").config("spark.sql.session.timeZone", "UTC").getOrCreate()
    register_spark(spark, ["runs/profile"])
    spark.sql("SELECT name, sum(ms_per_step) FROM kernels GROUP BY name").show()
"""

from __future__ import annotations

import os
from pathlib import Path

from libreyolo_profile.store.crossrun.columns import profiles_columns
from libreyolo_profile.store.crossrun.index import Found, collect, require_profiles
from libreyolo_profile.store.crossrun.views import view_statements
from libreyolo_profile.store.schema import TABLES

# DuckDB type names of the schema (store/schema.py, columns.py) -> Spark SQL type names
SPARK_TYPES = {
    "VARCHAR": "string",
    "BIGINT": "bigint",
    "INTEGER": "int",
    "DOUBLE": "double",
    "BOOLEAN": "boolean",
    "TIMESTAMPTZ": "timestamp",
    "VARCHAR[]": "array<string>",
}


def spark_schema(columns) -> str:
    """A DDL schema string ("name type, …") for (name, DuckDB type, …) columns."""
    return ", ".join(f"`{name}` {SPARK_TYPES[sql_type]}" for name, sql_type, *_ in columns)


def _profile_index(spark, found: list[Found]):
    """One row per profile, typed like DuckDB's profile_index (`created` parsed from its ISO text)."""
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
    # created arrives as ISO text (UTC offset included) and is cast in Spark, as DuckDB casts it
    as_text = [(name, "VARCHAR" if sql_type == "TIMESTAMPTZ" else sql_type) for name, sql_type, _, _ in columns]
    frame = spark.createDataFrame([tuple(row[name] for name, _ in as_text) for row in rows], spark_schema(as_text))
    return frame.selectExpr(
        *(
            f"CAST(`{name}` AS timestamp) AS `{name}`" if sql_type == "TIMESTAMPTZ" else f"`{name}`"
            for name, sql_type, _, _ in columns
        )
    )


def register_spark(spark, roots: list[Path | str]) -> list[Found]:
    """Create profile_index, sidecar_files, <table>_files and the views on `spark`; returns the profiles."""
    roots = [Path(r) for r in roots]
    found = collect(roots)
    require_profiles(found, roots)
    _profile_index(spark, found).createOrReplaceTempView("profile_index")
    # absolute paths: Spark names each file it read by its absolute URI (the views decode it back)
    files = {t: [os.path.abspath(item.sidecars / f"{t}.parquet") for item in found] for t in TABLES}
    spark.createDataFrame(
        [(i + 1, t, f) for t in TABLES for i, f in enumerate(files[t])],
        "profile_id int, table_name string, file string",
    ).createOrReplaceTempView("sidecar_files")
    # Spark lists more than 32 paths with a job of one task per path (10,000 profiles: 3 minutes for the six
    # tables); these are files, not directories to walk, so the driver looks them up itself (seconds).
    listing = "spark.sql.sources.parallelPartitionDiscovery.threshold"
    before = spark.conf.get(listing, None)
    spark.conf.set(listing, str(2**31 - 1))
    try:
        for table, table_files in files.items():
            # the schema's columns by name: a file of an older tables_version reads NULL for a column it lacks
            (
                spark.read.schema(spark_schema(TABLES[table]))
                .parquet(*table_files)
                .selectExpr("*", "_metadata.file_path AS filename")
                .createOrReplaceTempView(f"{table}_files")
            )
    finally:
        if before is None:
            spark.conf.unset(listing)
        else:
            spark.conf.set(listing, before)
    own_columns = {t: ", ".join(f"t.`{name}`" for name, *_ in TABLES[t]) for t in TABLES}
    for statement in view_statements("spark_cross_run_views.sql", columns=lambda t: own_columns[t]):
        spark.sql(statement)
    return found
