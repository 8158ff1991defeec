"""Cross-run analytics at scale: cold `libreyolo profile query` and `db` over 1,000 profile directories.

Generates N profile directories (real parquet sidecars + profile.json each, written by the real
writer) by copying and perturbing profiles made from the real GPU traces in ../shared/traces, plus
LibreYOLO built-in profiles converted by our importer, then times, each in a fresh process
(interleaved), a cross-run top-kernels `query` and a `db` over all of them. Target: query ≤ 2 s.

    python benchmarks/bench_cross_run.py [--profiles 1000] [--runs 5] [--dir /tmp/...] [--regenerate]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "traces"
BUILTIN = REPO.parent / "shared" / "libreyolo_builtin_profiles"
BASE_TRACES = [
    "a100_cutlass_adam_rank0",
    "v100_resnet50_workers0",
    "v100_resnet50_workers4",
    "h100_vit_image_classifier",
    "v100_resnet_ddp_ns_resolution",
    "mi250_rocm_minitoy",
]
TOP_KERNELS_SQL = (
    "SELECT name, category, count(DISTINCT profile_id) AS runs, sum(ms_per_step) AS ms_per_step_all_runs "
    "FROM kernels GROUP BY name, category ORDER BY ms_per_step_all_runs DESC LIMIT 20"
)
TIME_COLUMNS = {
    "kernels": ("total_ms", "ms_per_step", "mean_us", "min_us", "max_us"),
    "ops": ("self_ms", "self_ms_per_step", "total_ms", "total_ms_per_step"),
    "phases": ("wall_ms", "gpu_ms"),
    "steps": ("host_ms", "device_end_ms", "kernel_ms", "sync_ms", "start_ms"),
}


def base_documents() -> list[dict]:
    from libreyolo_profile.store.document.builtin import builtin_document
    from libreyolo_profile.store.document.from_trace import profile_from_trace

    if not TRACES.is_dir():
        sys.exit(f"the real traces are needed at {TRACES}")
    docs = []
    for name in BASE_TRACES:
        path = TRACES / f"{name}.json.gz"
        if path.is_file():
            started = time.perf_counter()
            docs.append(profile_from_trace(path))
            print(
                f"  base profile from {name}: {time.perf_counter() - started:.1f} s, rows "
                + ", ".join(f"{t} {len(v['rows'])}" for t, v in docs[-1]["tables"].items()),
                flush=True,
            )
    for path in sorted(BUILTIN.glob("*.json")):
        docs.append(builtin_document(path))
    return docs


def perturbed(base: dict, index: int, rng: random.Random) -> dict:
    """A copy of a real profile as if measured again with other settings: times scaled, ids new."""
    doc = copy.deepcopy(base)
    factor = rng.uniform(0.7, 1.4)
    doc["generation"] = uuid.uuid4().hex
    created = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=37 * index)
    doc["created"] = created.isoformat(timespec="seconds")
    doc["settings"] = {
        **doc.get("settings", {}),
        "batch": rng.choice([1, 4, 8, 16, 32]),
        "imgsz": rng.choice([320, 416, 512, 640]),
        "device": rng.choice(["0", "cuda:1", "cpu"]),
    }
    doc["model"] = {**doc.get("model", {}), "family": "LibreYOLO9", "size": rng.choice("tsmc")}
    for name, value in list(doc["metrics"].items()):
        if isinstance(value, float) and (name.endswith("_ms") or name.endswith("_us")):
            doc["metrics"][name] = value * factor
        elif name == "throughput_img_s" and isinstance(value, float):
            doc["metrics"][name] = value / factor
    for table, columns in TIME_COLUMNS.items():
        embedded = doc["tables"][table]
        positions = [embedded["columns"].index(c) for c in columns if c in embedded["columns"]]
        for row in embedded["rows"]:
            jitter = factor * rng.uniform(0.9, 1.1)
            for i in positions:
                if isinstance(row[i], float):
                    row[i] *= jitter
    return doc


def generate(root: Path, count: int) -> None:
    from libreyolo_profile.store.disk.writer import write_directory

    print(f"generating {count} profile directories under {root} …", flush=True)
    started = time.perf_counter()
    bases = base_documents()
    rng = random.Random(0)
    staging = root.with_name(root.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    for i in range(count):
        doc = perturbed(bases[i % len(bases)], i, rng)
        write_directory(doc, staging / f"run{i:04d}" / doc["kind"])
    shutil.rmtree(root, ignore_errors=True)
    staging.rename(root)
    (root / ".complete").write_text(str(count))
    rows = {t: 0 for t in TIME_COLUMNS}
    for path in root.glob("*/*/profile.json"):
        tables = json.loads(path.read_bytes())["tables"]
        for t in rows:
            rows[t] += len(tables[t]["rows"])
    print(
        f"  generated in {time.perf_counter() - started:.0f} s; rows in all: "
        + ", ".join(f"{t} {n:,}" for t, n in rows.items()),
        flush=True,
    )


def cold(args: list[str], cache: Path) -> tuple[float, str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "libreyolo_profile", *args], capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({result.returncode}): {result.stderr}")
    return elapsed, result.stdout


def report(label: str, times: list[float]) -> None:
    print(
        f"{label}: median {statistics.median(times):.2f} s, min {min(times):.2f}, max {max(times):.2f} "
        f"(runs: {', '.join(f'{t:.2f}' for t in times)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "libreyolo-bench-cross-run")
    parser.add_argument("--regenerate", action="store_true")
    args = parser.parse_args()
    root = args.dir / f"profiles-{args.profiles}"
    marker = root / ".complete"
    if args.regenerate or not marker.is_file() or marker.read_text() != str(args.profiles):
        generate(root, args.profiles)
    cache = args.dir / "cache"
    out = args.dir / "all.duckdb"
    # The first query over a tree checks every sidecar's footer against its profile.json and remembers
    # the result (keyed by the files' mtime, size and inode); later queries only stat the files.
    shutil.rmtree(cache, ignore_errors=True)
    first, _ = cold(["query", TOP_KERNELS_SQL, str(root), "--json"], cache)
    query_times, db_times = [], []
    for _ in range(args.runs):  # interleaved, each a fresh process
        elapsed, stdout = cold(["query", TOP_KERNELS_SQL, str(root), "--json"], cache)
        query_times.append(elapsed)
        top = json.loads(stdout)
        elapsed, _ = cold(["db", str(out), str(root), "--json"], cache)
        db_times.append(elapsed)
    print(
        f"{args.profiles} profiles; top kernel across runs: {top[0]['name'][:60]} "
        f"({top[0]['runs']} runs, {top[0]['ms_per_step_all_runs']:.1f} ms/step summed)"
    )
    startup, _ = cold(["query", "SELECT 1", str(root / "run0000")], cache)
    print(f"baseline: a query over one profile {startup:.2f} s (process start, imports)")
    print(f"load average while measuring: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(f"first cold query over the new tree (every sidecar footer checked): {first:.2f} s")
    report(f"cold query (top kernels over {args.profiles} profiles; target ≤ 2 s)", query_times)
    report(f"cold db ({args.profiles} profiles → {out.name}, {out.stat().st_size / 1e6:.1f} MB)", db_times)


if __name__ == "__main__":
    main()
