"""Bulk import: `libreyolo profile import` of 200 traces with 1 and with 2 worker processes (--jobs), and
optionally on a Dask LocalCluster of 2 workers (--scheduler), each with an empty cache.

The 200 traces are distinct files (a real trace from ../shared/traces rewritten with one extra top-level
key each, so no two share a cache entry), made once.

    python benchmarks/bench_import_parallel.py [--traces 200] [--trace h100_vit_image_classifier] [--dask]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def make_traces(source: Path, out: Path, count: int) -> list[Path]:
    marker = out / ".complete"
    if not (marker.is_file() and marker.read_text() == str(count)):
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        trace = json.loads(gzip.decompress(source.read_bytes()))
        for i in range(count):
            trace["libreyolo_bench_copy"] = i
            (out / f"trace{i:04d}.json.gz").write_bytes(gzip.compress(json.dumps(trace).encode(), 1))
        marker.write_text(str(count))
    return sorted(out.glob("trace*.json.gz"))


def run_import(traces: list[Path], project: Path, cache: Path, *options: str) -> float:
    import subprocess

    shutil.rmtree(project, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    started = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "libreyolo_profile",
            "import",
            *map(str, traces),
            "--project",
            str(project),
            "--json",
            *options,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_CACHE_HOME": str(cache)},
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"import {' '.join(options)} failed ({result.returncode}): {result.stderr[-2000:]}")
    summary = json.loads(result.stdout)
    assert summary["imported"] == len(traces) and summary["failed"] == 0, summary
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=200)
    parser.add_argument("--trace", default="h100_vit_image_classifier")
    parser.add_argument("--dask", action="store_true", help="also on a Dask LocalCluster of 2 worker processes")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "libreyolo-bench-import")
    args = parser.parse_args()
    source = REPO.parent / "shared" / "traces" / f"{args.trace}.json.gz"
    if not source.is_file():
        sys.exit(f"the real trace is needed at {source}")
    traces = make_traces(source, args.dir / f"traces-{args.trace}-{args.traces}", args.traces)
    size = sum(t.stat().st_size for t in traces) / 1e6
    print(f"{len(traces)} distinct traces from {args.trace} ({size:.0f} MB gzipped), empty cache each run")
    figures = {}
    for jobs in (1, 2):
        figures[f"--jobs {jobs}"] = run_import(traces, args.dir / "project", args.dir / "cache", "--jobs", str(jobs))
    if args.dask:
        from distributed import LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            figures["--scheduler (Dask, 2 workers)"] = run_import(
                traces, args.dir / "project", args.dir / "cache", "--scheduler", cluster.scheduler_address
            )
    base = figures["--jobs 1"]
    for label, elapsed in figures.items():
        print(f"{label}: {elapsed:.1f} s, {len(traces) / elapsed:.1f} traces/s, speed-up ×{base / elapsed:.2f}")
    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
