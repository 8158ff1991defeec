"""Ingest of big PyTorch profiler traces: our streaming parser and the first/second `summary` call,
beside HolisticTraceAnalysis (HTA) loading the same trace under a memory cap.

    python benchmarks/bench_ingest.py [--sizes 100,1000] [--runs 3] [--hta-python /tmp/hta-venv/bin/python] [--keep]

Big traces are built from a real one (../shared/traces/a100_cutlass_adam_rank0.json.gz) by
replicating its steps with shifted timestamps and fresh ids, keeping Kineto's text layout; they are
written into a private directory under /tmp (never into the repository) and deleted at the end unless
--keep (then under /tmp/libreyolo-profile-bench, reused by the next run and by
bench_analysis_statements.py). Every measurement runs in a fresh process: wall seconds, CPU seconds
(user + system from wait4: the process and every child it waited for) and peak RSS summed over the process
and its children (sampled from /proc every 10 ms). The first summary's line says its wall, CPU seconds and
peak RSS against the file's size (the issue's target for 1 GB: at most 10 s and 1x the size), and against
HTA's load of the same file in CPU seconds (HTA stopped at --hta-timeout, 600 s, and said so).

HTA is not a dependency of this project: install it into a throwaway venv, e.g.
    python -m venv /tmp/hta-venv && /tmp/hta-venv/bin/pip install HolisticTraceAnalysis
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO.parent / "shared" / "traces" / "a100_cutlass_adam_rank0.json.gz"
OUT = Path(tempfile.gettempdir()) / "libreyolo-profile-bench"
BOUNDARY = b"},\n  {"
# the numbers a replica must renumber: timestamps, ids that pair events, step numbers
_FIELDS = re.compile(rb'("ts": )(\d+)|("(?:correlation|External id|id|Ev Idx)": ?)(\d+)|(ProfilerStep#)(\d+)')


def build_trace(size_mb: int, out: Path, source: Path = SOURCE) -> Path:
    """A Kineto-layout trace of about `size_mb` MB: the source's events replicated step after step."""
    if out.is_file() and out.stat().st_size >= size_mb * 1e6 * 0.9:
        return out
    data = gzip.open(source).read()
    start = data.index(b"[", data.index(b'"traceEvents"')) + 1
    end = data.rindex(b"]")
    head, body, tail = data[:start], data[start:end], data[end:]
    pieces = body.strip()[1:-1].split(BOUNDARY)  # event texts without their outer braces
    replicated, fixed = [], []
    for piece in pieces:
        (fixed if b'"ph": "M"' in piece else replicated).append(piece)
    events = json.loads(b"[{" + b"},{".join(replicated) + b"}]")
    t0 = min(e["ts"] for e in events)
    span = max(e["ts"] + e.get("dur", 0) for e in events) - t0 + 1000
    ids = 1 + max(int(m.group(4)) for p in replicated for m in _FIELDS.finditer(p) if m.group(4))
    steps = 1 + max(int(m.group(6)) for p in replicated for m in _FIELDS.finditer(p) if m.group(6))
    # the body as literal text with the numbers to shift pulled out: (literal, kind, number)*
    template = b"{" + b"},\n  {".join(replicated) + b"}"
    parts, kinds, numbers, last = [], [], [], 0
    for m in _FIELDS.finditer(template):
        kind = 0 if m.group(2) else 1 if m.group(4) else 2
        prefix_end = m.end(1) if kind == 0 else m.end(3) if kind == 1 else m.end(5)
        parts.append(template[last:prefix_end])
        kinds.append(kind)
        numbers.append(int(m.group(kind * 2 + 2)))
        last = m.end()
    parts.append(template[last:])
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with open(tmp, "wb") as handle:
        handle.write(head + b"\n  {" + b"},\n  {".join(fixed) + b"}")
        replica = 0
        while handle.tell() < size_mb * 1e6:
            offsets = (replica * span, replica * ids, replica * steps)
            chunks = [None] * (2 * len(numbers) + 1)
            chunks[0::2] = parts
            chunks[1::2] = [str(n + offsets[k]).encode() for n, k in zip(numbers, kinds, strict=False)]
            handle.write(b",\n  ")
            handle.write(b"".join(chunks))
            replica += 1
        handle.write(b"\n" + tail)
    tmp.replace(out)
    return out


def _tree_rss_kb(pid: int) -> int:
    """Resident memory of `pid` and all its descendants, in KiB."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as handle:
                    todo.extend(int(c) for c in handle.read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


def measure(cmd: list[str], env: dict | None = None, timeout: float = 1200) -> dict:
    """Run `cmd` in a fresh process: wall seconds, CPU seconds (wait4: it and its waited-for children), peak
    RSS of its process tree (MiB), rc, output, and whether it was stopped at `timeout`."""
    full_env = dict(os.environ, **(env or {}))
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=full_env)
        peak, stopped = 0, False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                break
            peak = max(peak, _tree_rss_kb(proc.pid))
            if time.perf_counter() - start > timeout and not stopped:
                proc.kill()
                stopped = True
            time.sleep(0.01)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        return {
            "wall_s": wall,
            "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_mb": peak / 1024,
            "rc": proc.returncode,
            "stopped": stopped,
            "stdout": out.read().decode(errors="replace"),
            "stderr": err.read().decode(errors="replace"),
        }


PARSE_SNIPPET = """
import sys, time
from pathlib import Path
from libreyolo_profile.store.decode.parse import parse_trace
t = time.perf_counter()
parsed = parse_trace(Path(sys.argv[1]))
print(parsed.events.num_rows, parsed.stats.events_seen, time.perf_counter() - t)
"""

HTA_SNIPPET = """
import sys, time, os, shutil, tempfile
d = tempfile.mkdtemp()
os.symlink(os.path.abspath(sys.argv[1]), os.path.join(d, "rank0.json"))
from hta.trace_analysis import TraceAnalysis
t = time.perf_counter()
analysis = TraceAnalysis(trace_dir=d)
df = analysis.t.get_trace(0)
print(len(df), time.perf_counter() - t)
"""


def _fmt(runs: list[float], unit: str) -> str:
    if len(runs) == 1:
        return f"{runs[0]:.2f} {unit}"
    return f"median {statistics.median(runs):.2f} {unit} (runs: {', '.join(f'{r:.2f}' for r in runs)})"


def bench_size(size_mb: int, runs: int, hta_python: str | None, hta_cap_gb: float, home: Path, hta_timeout: float):
    trace = build_trace(size_mb, home / f"trace_{size_mb}mb.json")
    size = trace.stat().st_size
    print(f"\n== {size / 1e6:.0f} MB trace ({trace})", flush=True)
    walls, peaks, events = [], [], None
    for _ in range(runs):
        r = measure([sys.executable, "-c", PARSE_SNIPPET, str(trace)])
        if r["rc"] != 0:
            print("parse failed:", r["stderr"][-2000:])
            return
        kept, seen, _inner = r["stdout"].split()
        events = int(seen)
        walls.append(r["wall_s"])
        peaks.append(r["peak_mb"])
    print(f"parse_trace (fresh process, {events:,} events, {int(kept):,} kept rows):")
    print(f"  wall     {_fmt(walls, 's')}")
    print(f"  events/s {_fmt([events / w / 1e6 for w in walls], 'M')}")
    print(f"  peak RSS {_fmt(peaks, 'MiB')} = {max(peaks) * 2**20 / size:.2f}x the trace size")
    with tempfile.TemporaryDirectory() as cache:
        env = {"XDG_CACHE_HOME": cache}
        cli = [sys.executable, "-m", "libreyolo_profile", "summary", str(trace), "--json"]
        first = measure(cli, env)
        second = measure(cli, env)
        for label, r in (("first (ingest + analysis + cache write)", first), ("second (cached)", second)):
            status = "ok" if r["rc"] == 0 else f"rc={r['rc']}: {r['stderr'].strip().splitlines()[-1:]}"
            ratio = r["peak_mb"] * 2**20 / size
            print(
                f"summary --json, {label}: {r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} CPU-s, "
                f"peak RSS {r['peak_mb']:.0f} MiB = {ratio:.2f}x the trace's {size / 2**20:.0f} MiB, "
                f"load {os.getloadavg()[0]:.2f}, {status}"
            )
    our_rate = events / statistics.median(walls)
    if hta_python:
        cap = int(hta_cap_gb * 2**30)
        r = measure(["prlimit", f"--as={cap}", hta_python, "-c", HTA_SNIPPET, str(trace)], timeout=hta_timeout)
        what = f"HTA TraceAnalysis load (cap {hta_cap_gb:g} GiB address space)"
        if r["stopped"]:
            print(
                f"{what}: stopped at {hta_timeout:.0f} s without finishing ({r['cpu_s']:.1f} CPU-s by then, peak RSS "
                f"{r['peak_mb']:.0f} MiB); ours' first summary took {first['cpu_s']:.1f} CPU-s: HTA / ours > "
                f"{r['cpu_s'] / first['cpu_s']:.1f}x in CPU"
            )
        elif r["rc"] == 0:
            rows, _inner = r["stdout"].split()
            rate = events / r["wall_s"]
            print(
                f"{what}: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} CPU-s, {rate / 1e6:.3f} M events/s, peak RSS "
                f"{r['peak_mb']:.0f} MiB; our parse is {our_rate / rate:.0f}x faster; HTA's load / our whole first "
                f"summary = {r['cpu_s'] / first['cpu_s']:.2f}x in CPU, {r['peak_mb'] / max(first['peak_mb'], 1):.2f}x "
                "in peak RSS"
            )
        else:
            tail = (r["stderr"].strip().splitlines() or ["(no message)"])[-1]
            print(
                f"{what}: FAILED rc={r['rc']} after {r['wall_s']:.1f} s ({r['cpu_s']:.1f} CPU-s), peak RSS "
                f"{r['peak_mb']:.0f} MiB: {tail[:300]}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000", help="trace sizes in MB, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="fresh-process parse runs per size")
    parser.add_argument("--hta-python", default="/tmp/hta-venv/bin/python", help="python of a venv with HTA")
    parser.add_argument("--hta-cap-gb", type=float, default=16, help="address-space cap for HTA (prlimit --as)")
    parser.add_argument("--hta-timeout", type=float, default=600, help="seconds before HTA is stopped (600)")
    parser.add_argument("--keep", action="store_true", help=f"keep the built traces in {OUT} for the next run")
    args = parser.parse_args()
    if not SOURCE.is_file():
        sys.exit(f"source trace not found: {SOURCE}")
    hta = args.hta_python if args.hta_python and Path(args.hta_python).exists() else None
    if hta is None:
        print(f"(HTA not run: no python at {args.hta_python}; benchmarks/bench_first_read.py makes one)")
    print(
        f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}; "
        f"memory available {_available_gib()}"
    )
    home = OUT if args.keep else Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            bench_size(size, args.runs, hta, args.hta_cap_gb, home, args.hta_timeout)
    finally:
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)


def _available_gib() -> str:
    try:
        with open("/proc/meminfo") as handle:
            kb = next(int(line.split()[1]) for line in handle if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):
        return "unknown"
    return f"{kb / 2**20:.1f} GiB (the analysis's DuckDB limit is sized from it: store/ingest/timeline.py)"


if __name__ == "__main__":
    main()
