"""One cross-run question over 10,000 generated profiles: DuckDB on one machine (`libreyolo profile query`,
a fresh process each time) against Spark in local mode (store/crossrun/spark.py, the same views).

The tree is made cheaply (bench_first_query.generate_tree): one profile imported from a real trace with the
real CLI, copied N times with profile.json fields varied. The question: the top kernels across all runs.
Both answers are printed side by side and must agree.

    python benchmarks/bench_spark_vs_duckdb.py [--profiles 10000] [--trace mi250_rocm_minitoy] [--cores 2]
Needs the [spark] extra and Java 17.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_first_query import REPO, cli, generate_tree  # noqa: E402

SQL = (
    "SELECT name, count(DISTINCT profile_id) AS runs, sum(ms_per_step) AS ms_all_runs FROM kernels "
    "GROUP BY name ORDER BY ms_all_runs DESC, name LIMIT 5"
)


def base_profile(work: Path, trace: str) -> Path:
    project = work / f"base-{trace}"
    found = list(project.glob("*/profile.json"))
    if not found:
        cli("import", str(REPO.parent / "shared" / "traces" / f"{trace}.json.gz"), "--project", str(project))
        found = list(project.glob("*/profile.json"))
    return found[0].parent


def timed(label: str, work):
    started = time.perf_counter()
    value = work()
    print(f"  {label}: {time.perf_counter() - started:.2f} s", flush=True)
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=10000)
    parser.add_argument("--trace", default="mi250_rocm_minitoy")
    parser.add_argument("--cores", type=int, default=os.cpu_count())
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "libreyolo-bench-spark")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    root = timed(
        f"tree of {args.profiles} profiles (made once, kept)",
        lambda: generate_tree(
            base_profile(args.dir, args.trace), args.dir / f"tree-{args.trace}-{args.profiles}", args.profiles
        ),
    )
    cache = args.dir / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = {"XDG_CACHE_HOME": str(cache)}
    os.environ.update(env)

    print("DuckDB (`libreyolo profile query`, a fresh process each):")
    duck = timed(
        "first query, tree never seen", lambda: json.loads(cli("query", SQL, str(root), "--json", env=env).stdout)
    )
    timed("second query, tree remembered", lambda: cli("query", SQL, str(root), "--json", env=env))

    print(f"Spark local[{args.cores}] (one process: session, then the views, then the query):")
    from pyspark.sql import SparkSession

    from libreyolo_profile.store.crossrun.spark import register_spark

    spark = timed(
        "session start (JVM)",
        lambda: (
            SparkSession.builder.master(f"local[{args.cores}]")
            .config("spark.sql.shuffle.partitions", str(2 * args.cores))
            .config("spark.ui.enabled", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.memory", "2g")
            .getOrCreate()
        ),
    )
    spark.sparkContext.setLogLevel("ERROR")
    timed("views registered (catalogue + file listing)", lambda: register_spark(spark, [root]))
    rows = timed("first query", lambda: [r.asDict() for r in spark.sql(SQL).collect()])
    timed("second query", lambda: spark.sql(SQL).collect())
    spark.stop()

    same = [(r["name"], r["runs"]) for r in rows] == [(r["name"], r["runs"]) for r in duck] and all(
        abs(a["ms_all_runs"] - b["ms_all_runs"]) <= 1e-9 * abs(b["ms_all_runs"])
        for a, b in zip(rows, duck, strict=False)
    )
    print(
        f"answers agree: {same}; top kernel {duck[0]['name'][:60]!r} in {duck[0]['runs']} runs, "
        f"{duck[0]['ms_all_runs']:.1f} ms/step summed"
    )
    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    if not same:
        sys.exit("Spark and DuckDB disagree")


if __name__ == "__main__":
    main()
