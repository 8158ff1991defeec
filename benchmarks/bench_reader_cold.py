"""Cold-process wall time of `get` against the floor of a bare Python start.

Prints, for each command, every run and the median/min/max over N fresh processes (interleaved:
run i of every command before run i+1 of any, so machine noise hits all alike):
  floor         python -c pass
  get-profile   libreyolo profile get <profile.json> step_ms
  get-cached    libreyolo profile get <trace.json.gz> step_ms   (the trace ingested once into the cache)
  summary       libreyolo profile summary <profile.json>         (for scale: DuckDB and rich)
Target (issue 11): get-cached within 2x of the floor; it reads the cached profile.json and imports
nothing of the ingest stack (the decoder, pyarrow, numpy, DuckDB).

usage: python benchmarks/bench_reader_cold.py [TRACE] [--runs N]
TRACE defaults to ../shared/traces/a100_cutlass_adam_rank0.json.gz; the profile is built from it.
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
DEFAULT_TRACE = REPO.parent / "shared" / "traces" / "a100_cutlass_adam_rank0.json.gz"
TARGET = 2.0  # get-cached / floor


def launcher() -> list[str]:
    script = shutil.which("libreyolo", path=str(Path(sys.executable).parent)) or shutil.which("libreyolo")
    return [script, "profile"] if script else [sys.executable, "-m", "libreyolo_profile"]


def build_profile(trace: Path, directory: Path) -> Path:
    from libreyolo_profile.store.disk.writer import write_directory
    from libreyolo_profile.store.document.from_trace import profile_from_trace

    target = directory / "train"
    write_directory(profile_from_trace(trace), target)
    return target / "profile.json"


def timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("trace", nargs="?", default=str(DEFAULT_TRACE))
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cold-"))
    env = dict(os.environ, XDG_CACHE_HOME=str(work / "cache"))
    trace = Path(args.trace)
    profile = build_profile(trace, work)
    commands = {
        "floor": [sys.executable, "-c", "pass"],
        "get-profile": [*launcher(), "get", str(profile), "step_ms"],
        "get-cached": [*launcher(), "get", str(trace), "step_ms"],
        "summary": [*launcher(), "summary", str(profile)],
    }
    for cmd in commands.values():  # the first get ingests the trace into the cache; warm the page cache
        timed(cmd, env)
    times = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            times[name].append(timed(cmd, env))
    print(f"trace: {trace}\nprofile: {profile}\nruns per command: {args.runs} (fresh process each, interleaved)")
    floor = statistics.median(times["floor"])
    for name, values in times.items():
        med = statistics.median(values)
        print(
            f"{name:12s} median {med:.3f} s  min {min(values):.3f}  max {max(values):.3f}  "
            f"x floor {med / floor:.2f}   runs: {' '.join(f'{v:.3f}' for v in values)}"
        )
    ratio = statistics.median(times["get-cached"]) / floor
    print(f"get-cached / floor = {ratio:.2f} (target <= {TARGET:.1f}): {'met' if ratio <= TARGET else 'NOT met'}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
