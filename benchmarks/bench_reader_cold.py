"""Cold-process wall time of the readers against the floor of a bare DuckDB start.

Prints, for each command, every run and the median/min/max over N fresh processes (interleaved:
run i of every command before run i+1 of any, so machine noise hits all alike):
  floor    python -c "import duckdb; duckdb.sql('select 1').fetchall()"
  get      libreyolo profile get <profile> step_ms
  summary  libreyolo profile summary <profile>
Target (issue 2): get within 1.5x of the floor.

usage: python benchmarks/bench_reader_cold.py [PROFILE] [--runs N]
PROFILE defaults to a profile built from ../shared/traces/a100_cutlass_adam_rank0.json.gz.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def launcher() -> list[str]:
    script = shutil.which("libreyolo", path=str(Path(sys.executable).parent)) or shutil.which("libreyolo")
    return [script, "profile"] if script else [sys.executable, "-m", "libreyolo_profile"]


def build_profile(directory: Path) -> Path:
    from libreyolo_profile.store.document.from_trace import profile_from_trace
    from libreyolo_profile.store.disk.writer import write_directory

    trace = REPO.parent / "shared" / "traces" / "a100_cutlass_adam_rank0.json.gz"
    target = directory / "train"
    write_directory(profile_from_trace(trace), target)
    return target / "profile.json"


def timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("profile", nargs="?")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cold-"))
    env = dict(os.environ, XDG_CACHE_HOME=str(work / "cache"))
    profile = Path(args.profile) if args.profile else build_profile(work)
    commands = {
        "floor": [sys.executable, "-c", "import duckdb; duckdb.sql('select 1').fetchall()"],
        "get": [*launcher(), "get", str(profile), "step_ms"],
        "summary": [*launcher(), "summary", str(profile)],
    }
    for cmd in commands.values():  # warm the page cache and the sidecar check once
        timed(cmd, env)
    times = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            times[name].append(timed(cmd, env))
    print(f"profile: {profile}   runs per command: {args.runs} (fresh process each, interleaved)")
    floor = statistics.median(times["floor"])
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:8s} median {med:.3f} s  min {min(values):.3f}  max {max(values):.3f}  "
              f"x floor {med / floor:.2f}   runs: {' '.join(f'{v:.3f}' for v in values)}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
