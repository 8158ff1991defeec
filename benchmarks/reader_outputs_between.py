"""Every reader's output, byte for byte, on every trace under the traces folder, at another commit and in
this checkout: the check that a change meant to change no output (a renovation) changed none.

    python benchmarks/reader_outputs_between.py REV            # e.g. the commit before the renovation

REV is checked out into a temporary git worktree; each side runs in a process of its own with its own
package, SQL and reader cache (an editable install would otherwise hand both sides this checkout's SQL).
Each reader's stdout and exit code at COLUMNS=100 are compared; every output that differs is listed with
the first lines of its diff. Exit 0: none differs.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRACES = Path(os.environ.get("LIBREYOLO_PROFILE_TRACES") or REPO.parent / "shared" / "traces")
READERS = [
    ["summary"],
    ["summary", "--json"],
    ["summary", "--full"],
    ["get", "--json"],
    ["phases", "--json"],
    ["kernels"],
    ["kernels", "--json"],
    ["ops"],
    ["ops", "--json"],
    ["modules", "--json"],
    ["memory", "--json"],
    ["roofline"],
    ["roofline", "--json"],
    ["what-if", "--remove-category", "gemm", "--json"],
    ["what-if", "--remove-launches", "100", "--json"],
    ["launches"],
    ["launches", "--json"],
]

# one side: run in a fresh interpreter with the checkout's own package and SQL first on the path
SIDE = r"""
import json, os, sys
from pathlib import Path
root, out, cache, traces = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
readers = json.loads(sys.argv[5])
# this checkout's SQL, not the one the editable install maps the package's SQL to
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path[:0] = [str(root / "tests"), str(root)]
os.environ["XDG_CACHE_HOME"] = cache
from conftest import run_cli_in_process as run
import libreyolo_profile
from libreyolo_profile.sqlfiles import sql_directory
assert Path(libreyolo_profile.__file__).is_relative_to(root) and sql_directory().is_relative_to(root)
found = {}
for trace in sorted(p for p in traces.rglob("*") if p.name.endswith((".json", ".json.gz")) and p.is_file()):
    for args in readers:
        done = run(args[0], str(trace), *args[1:], env={"COLUMNS": "100"})
        key = f"{trace.relative_to(traces).as_posix()} :: {' '.join(args)}"
        found[key] = [done.returncode, done.stdout.replace(cache, "<cache>")]
out.write_text(json.dumps(found, sort_keys=True))
"""


def outputs(root: Path, work: Path, name: str) -> dict:
    out = work / f"{name}.json"
    subprocess.run(
        [
            sys.executable,
            "-c",
            SIDE,
            str(root),
            str(out),
            str(work / f"cache-{name}"),
            str(TRACES),
            json.dumps(READERS),
        ],
        check=True,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
    )
    return json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the commit to compare this checkout with")
    rev = parser.parse_args().rev
    with tempfile.TemporaryDirectory(prefix="reader-outputs-") as scratch:
        work = Path(scratch)
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(work / "then"), rev], check=True
        )
        try:
            then, now = outputs(work / "then", work, "then"), outputs(REPO, work, "now")
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(work / "then")], check=False)
    differing = sorted(k for k in then.keys() | now.keys() if then.get(k) != now.get(k))
    for key in differing:
        before, after = then.get(key, [None, ""]), now.get(key, [None, ""])
        print(f"differs: {key} (exit {before[0]} → {after[0]})")
        lines = difflib.unified_diff(before[1].splitlines(), after[1].splitlines(), lineterm="", n=0)
        for line in list(lines)[2:8]:
            print(f"    {line[:160]}")
    traces = len({k.split(" :: ")[0] for k in now})
    print(f"{len(now)} outputs ({len(READERS)} readers × {traces} traces): {len(differing)} differ from {rev}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
