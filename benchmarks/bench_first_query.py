"""The first `libreyolo profile query` over a never-seen tree of 1,000 profiles (a fresh process and an
empty cache, so every profile is discovered, its head read and its sidecars checked). Target ≤ 1 s.

The tree is made cheaply: one profile imported from a real trace in ../shared/traces with the real CLI,
then its directory copied N times with profile.json fields varied (created, settings, throughput), so
every copy is a valid profile whose sidecars match it.

    python benchmarks/bench_first_query.py [--profiles 1000] [--runs 3] [--dir /tmp/...]
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
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACE = REPO.parent / "shared" / "traces" / "h100_vit_image_classifier.json.gz"
TOP_KERNELS_SQL = (
    "SELECT name, count(DISTINCT profile_id) AS runs, sum(ms_per_step) AS ms "
    "FROM kernels GROUP BY name ORDER BY ms DESC LIMIT 5"
)


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "libreyolo_profile", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if result.returncode != 0:
        sys.exit(f"libreyolo profile {' '.join(args[:2])} failed ({result.returncode}): {result.stderr}")
    return result


def base_profile(work: Path) -> Path:
    """One real profile, written by `libreyolo profile import` of a real GPU trace."""
    if not TRACE.is_file():
        sys.exit(f"the real trace is needed at {TRACE}")
    project = work / "base"
    if not (project / "infer" / "profile.json").is_file():
        shutil.rmtree(project, ignore_errors=True)
        cli("import", str(TRACE), "--project", str(project))
    return project / "infer"


def generate_tree(base: Path, root: Path, count: int) -> Path:
    """`count` copies of the profile directory `base` under root/runNNNNN/<kind>, each profile.json with
    its own created time, batch and throughput (sidecars copied as they are: they carry the generation)."""
    marker = root / ".complete"
    if marker.is_file() and marker.read_text() == str(count):
        return root
    doc = json.loads((base / "profile.json").read_bytes())
    staging = root.with_name(root.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    started = datetime(2026, 1, 1, tzinfo=timezone.utc)
    throughput = doc["metrics"].get("throughput_img_s") or 100.0
    for i in range(count):
        target = staging / f"run{i:05d}" / doc["kind"]
        target.mkdir(parents=True)
        for sidecar in base.glob("*.parquet"):
            shutil.copyfile(sidecar, target / sidecar.name)
        doc["created"] = (started + timedelta(minutes=7 * i)).isoformat(timespec="seconds")
        doc.setdefault("settings", {})["batch"] = [1, 4, 8, 16][i % 4]
        doc["metrics"]["throughput_img_s"] = throughput * (0.8 + 0.4 * ((i * 7919) % 1000) / 1000)
        (target / "profile.json").write_text(json.dumps(doc))
    shutil.rmtree(root, ignore_errors=True)
    staging.rename(root)
    marker.write_text(str(count))
    return root


def _child_cpu() -> float:
    """User + system CPU seconds of finished child processes (less sensitive than wall time to a busy machine)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "libreyolo-bench-first-query")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    root = generate_tree(base_profile(args.dir), args.dir / f"tree-{args.profiles}", args.profiles)
    firsts, warms, startup, first_cpu = [], [], [], []
    for run in range(args.runs):
        cache = args.dir / f"cache-{run}"
        shutil.rmtree(cache, ignore_errors=True)  # never seen: nothing remembered about the tree
        env = {"XDG_CACHE_HOME": str(cache)}
        t0, cpu0 = time.perf_counter(), _child_cpu()
        out = cli("query", TOP_KERNELS_SQL, str(root), "--json", env=env).stdout
        firsts.append(time.perf_counter() - t0)
        first_cpu.append(_child_cpu() - cpu0)
        t0 = time.perf_counter()
        cli("query", TOP_KERNELS_SQL, str(root), "--json", env=env)
        warms.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        cli("query", "SELECT 1", str(root / "run00000"), "--json", env=env)
        startup.append(time.perf_counter() - t0)
    top = json.loads(out)[0]
    print(f"{args.profiles} profiles; top kernel {top['name'][:50]!r} in {top['runs']} runs")
    print(f"process start + one profile: median {statistics.median(startup):.2f} s")
    print(
        f"first query over the never-seen tree: median {statistics.median(firsts):.2f} s "
        f"(runs: {', '.join(f'{t:.2f}' for t in firsts)}; target ≤ 1 s)"
    )
    print(f"first query CPU time (user + system, all threads): median {statistics.median(first_cpu):.2f} s")
    print(f"second query (tree remembered): median {statistics.median(warms):.2f} s")
    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
