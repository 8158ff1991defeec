"""Three hand-written pieces against what the libraries do unaided, each on the figure a user would notice:
fresh processes, interleaved rounds (the order rotating), every run printed with its wall and CPU seconds
(the child's user + system, `getrusage`), then the medians.

  footers  the first `query` over a never-seen tree of --profiles profiles (an empty cache per run, so every
           sidecar's footer is checked): store/crossrun/footers.py's reader against pyarrow.parquet's
           read_metadata (generation key and column schema compared the same way); then, in this process,
           the same 7 checks per profile done by each way and by DuckDB's parquet_kv_metadata and
           parquet_schema over all the files in one statement
  pandas   the first `summary --json` of a small real trace (an empty cache per run): pandas_probe.py
           answering pyarrow's pandas probe against pyarrow importing pandas, as it does unaided
  gc       `infer --device cpu --warmup 5 --runs 20` on a random-init LibreYOLO9-t (as bench_whole_command.py,
           one torch thread):
           collector.py (collector off through start-up, gc.freeze before the first measured call) against
           Python's collector left alone; with the profile's step_ms and profiled_step_ms

    python benchmarks/bench_hand_written.py footers [--profiles 1000] [--rounds 5]
    python benchmarks/bench_hand_written.py pandas [--rounds 5]
    python benchmarks/bench_hand_written.py gc [--rounds 5] [--no-warm-up]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_first_query import TOP_KERNELS_SQL, base_profile, generate_tree
from bench_whole_command import MAKE_WEIGHTS, OFFLINE

REPO = Path(__file__).resolve().parents[1]
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
TRACES = REPO.parent / "shared" / "traces"

# the command line's own entry (launcher.profile_main), after the library way replaces the hand-written one
DRIVER = r"""
import sys
way, args = sys.argv[1], sys.argv[2:]
if way == "library-footers":
    import pyarrow.parquet as pq
    from libreyolo_profile.store.crossrun import index
    from libreyolo_profile.store.schema import GENERATION_KEY, parquet_columns

    def written_for(path, generation, table):
        try:
            meta = pq.read_metadata(path)
        except Exception:
            return False
        if (meta.metadata or {}).get(GENERATION_KEY.encode()) != generation.encode():
            return False
        schema = meta.schema
        columns = [(schema.column(i).name, schema.column(i).physical_type) for i in range(len(schema))]
        return columns == parquet_columns(table)

    index.written_for = written_for
elif way == "library-pandas":
    from libreyolo_profile import pandas_probe
    pandas_probe.answer_for_this_command = lambda: None
elif way == "library-gc":
    from libreyolo_profile import collector
    collector.pause_for_startup = lambda: None
from libreyolo_profile import launcher
launcher._leave(launcher._run(args, "libreyolo-profile"), args)
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(way: str, args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one fresh command process run `way`."""
    wall, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, way, *args], cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True
    )
    wall, cpu = time.perf_counter() - wall, _children_cpu() - cpu
    if done.returncode != 0:
        sys.exit(f"{way} {' '.join(args[:2])} failed ({done.returncode}): {done.stderr[-1500:]}")
    return wall, cpu


def interleaved(ways: list[str], rounds: int, run, warm_up: bool = True) -> dict[str, list[tuple]]:
    """`run(way, round)` for every way once per round, the order rotating; one untimed run of each first,
    unless `warm_up` is false."""
    for way in ways if warm_up else ():
        run(way, -1)
    results: dict[str, list[tuple]] = {way: [] for way in ways}
    for r in range(rounds):
        for way in ways[r % len(ways) :] + ways[: r % len(ways)]:
            figures = run(way, r)
            results[way].append(figures)
            shown = "  ".join(f"{x:8.3f}" for x in figures)
            print(f"round {r + 1}  {way:<16} {shown}   load {os.getloadavg()[0]:.2f}", flush=True)
    return results


def summarise(results: dict[str, list[tuple]], labels: list[str]) -> None:
    print(f"{'median of':<18}" + "".join(f"{label:>18}" for label in labels))
    for way, rows in results.items():
        print(f"{way:<18}" + "".join(f"{statistics.median(column):18.3f}" for column in zip(*rows, strict=True)))
    print(f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs\n")


def footers(args) -> None:
    work = Path(tempfile.gettempdir()) / "libreyolo-bench-first-query"
    work.mkdir(parents=True, exist_ok=True)
    root = generate_tree(base_profile(work), work / f"tree-{args.profiles}", args.profiles)
    query = ["query", TOP_KERNELS_SQL, str(root), "--json"]

    def run(way: str, r: int) -> tuple[float, float]:
        cache = work / f"cache-hand-written-{way}"
        shutil.rmtree(cache, ignore_errors=True)  # never seen: every footer checked
        return timed(way, query, work, {"XDG_CACHE_HOME": str(cache)})

    print(f"first query over {args.profiles} never-seen profiles: wall s, CPU s")
    summarise(interleaved(["hand-footers", "library-footers"], args.rounds, run), ["wall s", "CPU s"])
    checks_in_process(root)


def checks_in_process(root: Path) -> None:
    """The footer checks alone, each way, over every sidecar of the tree (the page cache warm for all)."""
    import duckdb
    import pyarrow.parquet as pq

    from libreyolo_profile.store.crossrun.footers import written_for
    from libreyolo_profile.store.schema import GENERATION_KEY, TABLES, parquet_columns

    directories = sorted(p.parent for p in root.glob("*/*/profile.json"))
    generations = {d: json.loads((d / "profile.json").read_bytes())["generation"] for d in directories}
    files = [(str(d / f"{t}.parquet"), generations[d], t) for d in directories for t in TABLES]

    def pyarrow_way(path: str, generation: str, table: str) -> bool:
        meta = pq.read_metadata(path)
        schema = meta.schema
        columns = [(schema.column(i).name, schema.column(i).physical_type) for i in range(len(schema))]
        return meta.metadata.get(GENERATION_KEY.encode()) == generation.encode() and columns == parquet_columns(table)

    def duckdb_way():
        con = duckdb.connect()
        paths = [f for f, _, _ in files]
        kv = con.execute(
            "SELECT file_name, decode(value) FROM parquet_kv_metadata(?) WHERE decode(key) = ?", [paths, GENERATION_KEY]
        ).fetchall()
        schemas = con.execute("SELECT file_name, name, type FROM parquet_schema(?)", [paths]).fetchall()
        return len(kv), len(schemas)

    ways = {
        "hand": lambda: all(written_for(*f) for f in files),
        "pyarrow": lambda: all(pyarrow_way(*f) for f in files),
        "duckdb": duckdb_way,
    }
    for way in ways.values():
        way()  # imports and page cache
    print(f"the checks alone, in one process, over {len(files)} sidecars (best of 3: CPU s)")
    for name, way in ways.items():
        best = []
        for _ in range(3):
            started = time.process_time()
            way()
            best.append(time.process_time() - started)
        print(f"  {name:<8} {min(best):7.3f}")


def pandas(args) -> None:
    work = Path(tempfile.mkdtemp(prefix="libreyolo-bench-pandas-"))
    traces = [TRACES / "cpu_only_rank34.json.gz", TRACES / "h100_vit_image_classifier.json.gz"]
    try:
        for trace in traces:

            def run(way: str, r: int, trace=trace) -> tuple[float, float]:
                cache = work / f"cache-{way}"
                shutil.rmtree(cache, ignore_errors=True)  # a first summary: the trace analysed again
                return timed(way, ["summary", str(trace), "--json"], work, {"XDG_CACHE_HOME": str(cache)})

            print(f"first summary of {trace.name}: wall s, CPU s")
            summarise(interleaved(["hand-pandas", "library-pandas"], args.rounds, run), ["wall s", "CPU s"])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def collector(args) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "make_weights.py").write_text(MAKE_WEIGHTS)
        subprocess.run([sys.executable, "make_weights.py"], cwd=work, env={**os.environ, **OFFLINE}, check=True)
        flags = ["--device", "cpu", "--warmup", "5", "--runs", "20", "--exist-ok"]

        def run(way: str, r: int) -> tuple[float, ...]:
            project = work / way
            # one torch thread: on a shared 2-core machine two wait on each other, and a step takes seconds
            wall, cpu = timed(way, ["infer", *flags, "--project", str(project)], work, {**OFFLINE, **ONE_THREAD})
            metrics = json.loads((project / "infer" / "profile.json").read_bytes())["metrics"]
            return wall, cpu, metrics["step_ms"], metrics["profiled_step_ms"]

        print("infer --device cpu --warmup 5 --runs 20, one thread: wall s, CPU s, step_ms, profiled_step_ms")
        results = interleaved(["hand-gc", "library-gc"], args.rounds, run, args.warm_up)
        summarise(results, ["wall s", "CPU s", "step_ms", "profiled ms"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("footers", "pandas", "gc"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profiles", type=int, default=1000)
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false", help="no untimed run of each way first")
    args = parser.parse_args()
    {"footers": footers, "pandas": pandas, "gc": collector}[args.part](args)


if __name__ == "__main__":
    main()
