"""The cross-run views on Spark SQL (store/crossrun/spark.py, sql/spark_cross_run_views.sql) give the same
columns and exactly the same answers as the DuckDB views of `libreyolo profile query`, over profiles the
product wrote (`libreyolo profile import` of real GPU traces and of LibreYOLO built-in profiles), and the
Spark snippet of docs/SCHEMA.md is what runs here. One local SparkSession for the module (startup is the
cost), one core, two shuffle partitions.

Needs the `[spark]` extra (pyspark) and a Java runtime (Debian: openjdk-17-jre-headless); skipped without
them, a failure under CI=true.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import ON_CI, REPO, TRACES, cli_json, require_traces

BUILTIN = REPO.parent / "shared" / "libreyolo_builtin_profiles"
GPU_TRACES = ("h100_vit_image_classifier", "mi250_rocm_minitoy", "a100_alexnet_no_profilerstep")
TOP_KERNELS = (
    "SELECT name, count(DISTINCT profile_id) AS runs, sum(ms_per_step) AS ms_all_runs FROM kernels "
    "GROUP BY name ORDER BY ms_all_runs DESC, name LIMIT 15"
)
THROUGHPUT_OVER_TIME = (
    "SELECT profile, created, kind, batch, throughput_img_s FROM profiles "
    "WHERE throughput_img_s IS NOT NULL ORDER BY created, profile"
)


def _needs_spark():
    missing = []
    try:
        import pyspark  # noqa: F401
    except ImportError:
        missing.append("pyspark (the [spark] extra)")
    if shutil.which("java") is None:
        missing.append("java (openjdk-17-jre-headless)")
    if missing:
        if ON_CI:
            pytest.fail(f"CI=true but {' and '.join(missing)} missing")
        pytest.skip(f"{' and '.join(missing)} not installed")


@pytest.fixture(scope="module")
def spark():
    _needs_spark()
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[1]")
        .appName("libreyolo-profile-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "512m")
        # a short-lived JVM on a shared CPU: the C1 compiler alone (one thread) and the serial collector. C2's
        # optimising compiles and the parallel GC's threads were ~half the JVM's CPU over this module's few
        # small queries (tiered C2 pays back only in long runs); the answers are the same
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """Profiles written by the real CLI: three GPU traces and the built-in profiles, in one bulk import."""
    require_traces()
    root = tmp_path_factory.mktemp("spark-profiles") / "runs"
    # a name Spark must percent-encode in the file URIs it reports (the views decode them back)
    odd = root.parent / "odd names" / "mi250 copy+1%é.json.gz"
    odd.parent.mkdir()
    shutil.copyfile(TRACES / f"{GPU_TRACES[1]}.json.gz", odd)
    inputs = (
        [str(TRACES / f"{name}.json.gz") for name in GPU_TRACES]
        + [str(p) for p in sorted(BUILTIN.glob("*.json"))]
        + [str(odd)]
    )
    # one process (--jobs 1): the command, forked warm, analyses the few inputs itself; a pool of two spawned
    # interpreters importing the analysis again cost more CPU than it saved wall time (the pool has its own tests)
    result = cli_json("import", *inputs, "--project", str(root), "--jobs", "1")
    assert [r["ok"] for r in result["imports"]] == [True] * len(inputs), result
    return root


def _spark_rows(spark, sql: str) -> list[dict]:
    return [row.asDict() for row in spark.sql(sql).collect()]


@pytest.fixture(scope="module")
def registered(spark, tree):
    from libreyolo_profile.store.crossrun.spark import register_spark

    found = register_spark(spark, [tree])
    assert len(found) == len(GPU_TRACES) + len(list(BUILTIN.glob("*.json"))) + 1
    return spark


def test_spark_views_have_the_duckdb_views_columns(registered, tree):
    from libreyolo_profile.store.crossrun.views import open_cross_run
    from libreyolo_profile.store.schema import TABLES

    views = ("profiles", *TABLES)
    # every view's row count in one query (one Spark job rather than one per view)
    counts = " UNION ALL ".join(f"SELECT '{view}' AS view_name, count(*) AS n FROM {view}" for view in views)
    con, _, _ = open_cross_run([tree])
    try:
        for view in views:
            duck = [row[0] for row in con.execute(f"DESCRIBE {view}").fetchall()]
            assert registered.table(view).columns == duck, view
        duck_counts = dict(con.execute(counts).fetchall())
    finally:
        con.close()
    spark_counts = {row["view_name"]: row["n"] for row in registered.sql(counts).collect()}
    assert set(spark_counts) == set(duck_counts) == set(views)
    for view in views:
        assert spark_counts[view] == duck_counts[view], view


def test_top_kernels_across_runs_match_duckdb_and_the_parquet_files(registered, tree):
    import pyarrow.parquet as pq

    duck = cli_json("query", TOP_KERNELS, str(tree))
    spark = _spark_rows(registered, TOP_KERNELS)
    assert len(duck) == 15
    assert [(r["name"], r["runs"]) for r in spark] == [(r["name"], r["runs"]) for r in duck]
    for s, d in zip(spark, duck, strict=True):
        assert s["ms_all_runs"] == pytest.approx(d["ms_all_runs"], rel=1e-12, abs=0)
    # independent reference: plain Python over every kernels.parquet the import wrote
    by_name, runs = defaultdict(float), defaultdict(set)
    for file in tree.rglob("kernels.parquet"):
        for row in pq.read_table(file, columns=["name", "ms_per_step"]).to_pylist():
            by_name[row["name"]] += row["ms_per_step"]
            runs[row["name"]].add(file.parent)
    reference = sorted(by_name, key=lambda n: (-by_name[n], n))[:15]
    assert [r["name"] for r in spark] == reference
    assert [r["runs"] for r in spark] == [len(runs[n]) for n in reference]


def test_throughput_per_run_over_time_matches_duckdb_and_the_documents(registered, tree):
    duck = cli_json("query", THROUGHPUT_OVER_TIME, str(tree))
    spark = _spark_rows(registered, THROUGHPUT_OVER_TIME)
    assert len(duck) >= 3  # the built-in profiles (and traces that record images per step)
    for s, d in zip(spark, duck, strict=True):
        assert s["created"].replace(tzinfo=timezone.utc) == datetime.fromisoformat(d["created"])
        assert {k: v for k, v in s.items() if k != "created"} == {k: v for k, v in d.items() if k != "created"}
    # independent reference: the profile.json files themselves
    documents = {str(p.parent): json.loads(p.read_bytes()) for p in tree.rglob("profile.json")}
    with_throughput = {
        d: doc["metrics"]["throughput_img_s"]
        for d, doc in documents.items()
        if doc["metrics"].get("throughput_img_s") is not None
    }
    assert {row["profile"]: row["throughput_img_s"] for row in spark} == with_throughput
    assert [row["created"] for row in spark] == sorted(row["created"] for row in spark)


def test_the_documented_spark_snippet_runs(registered, tree, capsys):
    """docs/SCHEMA.md's Spark block is run as it is written, with `spark` and `root` given."""
    text = (REPO / "docs" / "SCHEMA.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- test: tests/test_spark.py -->\s*```python\n(.*?)```", text, re.S)
    assert match, "docs/SCHEMA.md lost its tested Spark snippet"
    namespace = {"spark": registered, "root": str(tree)}
    exec(compile(match.group(1), "docs/SCHEMA.md (Spark)", "exec"), namespace)  # noqa: S102 - our own doc
    shown = capsys.readouterr().out
    top = cli_json("query", TOP_KERNELS, str(tree))[0]["name"]
    assert top[:20] in shown
