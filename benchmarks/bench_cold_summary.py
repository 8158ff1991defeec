"""A cold `summary` of the same traces by two versions of this package: CPU seconds before and after a change.

    python benchmarks/bench_cold_summary.py --before REV [--after REV] [--rounds 3] [--traces DIR] [--all]

Each version is the package as committed at REV (`git archive` into a private directory under /tmp, deleted
at the end; --after defaults to HEAD), run from this venv inside that directory with PYTHONPATH pointing at it,
so changes other people have not committed yet are in neither. Its SQL too: this venv's editable install maps
`libreyolo_profile.sql` onto the checkout's sql/, so each export gets a `libreyolo_profile/sql` link to its own
sql/, which the import system finds first; the header prints where each version's package and SQL come from.
(Before that link and the working directory, both versions ran the checkout's SQL, and run from the checkout
its package too: the figures this printed until then compared the checkout with itself.)
Every run is a fresh process with an empty cache (a first read: decode, analysis, verdict, cache write, the
screen); round i runs every (trace, version) pair once, the order rotating each round. CPU seconds are user +
system from wait4 (the process and every child it waited for), printed with the wall time and the 1-minute
load; per trace, each round's ratio after / before and their median; overall, the sum of each version's median
CPU seconds.

The traces: every *.json.gz directly in ../shared/traces/ (LIBREYOLO_PROFILE_TRACES, or --traces,
elsewhere); --all adds its subfolders.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_first_read import DEFAULT_TRACES, REPO, find_traces, run_child


def export(rev: str, into: Path) -> str:
    """The package as committed at `rev`, written under `into`; returns the commit's short name."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    archive = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    (into / "libreyolo_profile" / "sql").symlink_to(into / "sql", target_is_directory=True)
    return commit


def sources(home: Path) -> str:
    """Where a child run in `home` imports the package and reads the SQL from (the check that it is the export)."""
    probe = (
        "import libreyolo_profile as p; from libreyolo_profile.sqlfiles import sql_directory as d; "
        "print(p.__file__, d())"
    )
    env = dict(os.environ, PYTHONPATH=str(home))
    found = subprocess.run([sys.executable, "-c", probe], cwd=home, env=env, capture_output=True, text=True, check=True)
    return found.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the revision before the change")
    parser.add_argument("--after", default="HEAD", help="the revision after it (default HEAD)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--traces", type=Path, default=DEFAULT_TRACES)
    parser.add_argument("--all", action="store_true", help="the traces in its subfolders too")
    args = parser.parse_args()
    traces = find_traces(args.traces, args.all)
    home = Path(tempfile.mkdtemp(prefix="cold-summary-"))
    try:
        versions = {}
        for label, rev in (("before", args.before), ("after", args.after)):
            commit = export(rev, home / label)
            versions[label] = (commit, home / label)
            print(f"{label}: {sources(home / label)}", flush=True)
        print(
            f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; before {versions['before'][0]}, "
            f"after {versions['after'][0]}; {len(traces)} traces, {args.rounds} rounds\n",
            flush=True,
        )
        runs: dict[tuple[str, str], list] = {}
        pairs = [(trace, label) for trace in traces for label in versions]
        for r in range(args.rounds):
            shift = r % len(pairs)
            for trace, label in pairs[shift:] + pairs[:shift]:
                cache = tempfile.mkdtemp(prefix="cache-", dir=home)
                env = dict(os.environ, XDG_CACHE_HOME=cache, PYTHONPATH=str(versions[label][1]))
                try:
                    argv = [sys.executable, "-m", "libreyolo_profile", "summary", str(trace)]
                    run = run_child(argv, env, 600, cwd=versions[label][1])
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
                runs.setdefault((trace.name, label), []).append(run)
                said = f"  FAILED: {run.error}" if run.rc else ""
                print(
                    f"round {r + 1}  {label:<6} {trace.name[:52]:<52} cpu {run.cpu_s:6.2f} s  wall {run.wall_s:6.2f} s"
                    f"  load {run.load:5.2f}{said}",
                    flush=True,
                )
        print("\nper trace: median CPU seconds, each round's ratio after / before (below 1: the change saves)")
        sums = {"before": 0.0, "after": 0.0}
        for trace in traces:
            before, after = runs[(trace.name, "before")], runs[(trace.name, "after")]
            if any(r.rc for r in before + after):
                print(f"  {trace.name[:52]:<52} a run failed: left out")
                continue
            ratios = [a.cpu_s / b.cpu_s for b, a in zip(before, after, strict=True)]
            b, a = statistics.median(r.cpu_s for r in before), statistics.median(r.cpu_s for r in after)
            sums["before"] += b
            sums["after"] += a
            print(
                f"  {trace.name[:52]:<52} before {b:5.2f}  after {a:5.2f}  per round "
                f"{', '.join(f'{x:.2f}' for x in ratios)}  median {statistics.median(ratios):.2f}"
            )
        if sums["before"]:
            print(
                f"\nsum of medians: before {sums['before']:.2f} CPU-s, after {sums['after']:.2f} CPU-s "
                f"({sums['after'] / sums['before']:.3f}x); load at the end {os.getloadavg()[0]:.2f}"
            )
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
