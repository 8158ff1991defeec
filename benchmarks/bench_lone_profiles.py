"""`libreyolo profile query` over N lone profile.json files (no parquet sidecars beside them: copied
without them, as a profile.json mailed or checked into a repository is): the first query rebuilds every
profile's sidecars into the cache; the second (same cache, a fresh process) must not do it again.
Issue 22 item 12: 2,000 lone profiles cost 18-20 s on every query before they were remembered.

The profiles: one imported from a real trace in ../shared/traces with the real CLI, its profile.json
copied N times, each with its own generation (so each has its own sidecars, as real profiles do) and
created time.

    python benchmarks/bench_lone_profiles.py [--profiles 2000] [--dir /tmp/...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACE = REPO.parent / "shared" / "traces" / "h100_vit_image_classifier.json.gz"
SQL = "SELECT count(*) AS profiles, count(DISTINCT sidecar_dir) AS sidecar_dirs FROM profiles"
KERNELS_SQL = "SELECT count(DISTINCT profile_id) AS profiles FROM kernels"


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "libreyolo_profile", *args], capture_output=True, text=True, env={**os.environ, **env}
    )
    if result.returncode != 0:
        sys.exit(f"libreyolo profile {' '.join(args[:2])} failed ({result.returncode}): {result.stderr}")
    return result


def lone_tree(work: Path, count: int, env: dict) -> Path:
    """`count` directories holding only a profile.json, each its own profile (generation, created)."""
    if not TRACE.is_file():
        sys.exit(f"the real trace is needed at {TRACE}")
    cli("import", str(TRACE), "--project", str(work / "base"), env=env)
    base = next((work / "base").glob("*/profile.json"))
    doc = json.loads(base.read_bytes())
    root = work / "lone"
    started = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for i in range(count):
        target = root / f"run{i:05d}"
        target.mkdir(parents=True)
        doc["generation"] = uuid.uuid4().hex
        doc["created"] = (started + timedelta(minutes=7 * i)).isoformat(timespec="seconds")
        (target / "profile.json").write_text(json.dumps(doc))
    return root


def timed_query(sql: str, root: Path, env: dict) -> tuple[float, list]:
    started = time.perf_counter()
    result = cli("query", sql, str(root), "--json", env=env)
    return time.perf_counter() - started, json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=2000)
    parser.add_argument("--dir", type=Path, default=None, help="work directory (default: a fresh temporary one)")
    args = parser.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="bench-lone-"))
    env = {"XDG_CACHE_HOME": str(work / "cache")}
    shutil.rmtree(work / "cache", ignore_errors=True)
    shutil.rmtree(work / "lone", ignore_errors=True)
    root = lone_tree(work, args.profiles, env)
    shutil.rmtree(work / "cache")  # the import's cache entries: the first query starts from nothing
    first, rows = timed_query(SQL, root, env)
    second, again = timed_query(SQL, root, env)
    kernels, counted = timed_query(KERNELS_SQL, root, env)
    assert rows == again and rows[0]["profiles"] == args.profiles == counted[0]["profiles"], (rows, again, counted)
    print(
        f"{args.profiles} lone profile.json files ({rows[0]['sidecar_dirs']} sidecar directories rebuilt in the cache)"
    )
    print(f"first query (rebuilds every profile's sidecars): {first:6.2f} s")
    print(f"second query (same cache, fresh process):        {second:6.2f} s")
    print(f"third query, FROM kernels:                       {kernels:6.2f} s")


if __name__ == "__main__":
    main()
