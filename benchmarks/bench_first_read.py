"""A trace's first read against Holistic Trace Analysis (HTA): the CPU seconds of our cold
`libreyolo profile summary <trace>` (an empty cache: decode, analysis, verdict, cache write, the screen) beside
HTA's load of the same trace plus its temporal, GPU-kernel and idle-time breakdowns, on the real traces.

    python benchmarks/bench_first_read.py [--rounds 3] [--traces DIR] [--all] [--hta-venv /tmp/hta-venv]

Every command is a fresh process; round i runs every (trace, tool) pair once, the order rotating each round,
so a load that rises or falls hits both tools alike. CPU seconds are the child's user + system time from
wait4 (getrusage of the children: its own threads and every process it waited for, HTA's parsing pool and our
decoder's included); wall seconds and the 1-minute load are printed beside them, since on a shared machine
a wall time says more about the neighbours than about the command. Per trace: each round's ratio
HTA CPU / ours CPU, and their median; overall: the sum of each tool's median CPU seconds over the traces
both read.

The traces: every *.json.gz directly in ../shared/traces/ (LIBREYOLO_PROFILE_TRACES, or --traces, elsewhere);
--all adds those in its subfolders (the corpus). A trace HTA cannot read is listed with HTA's last error line
and left out of the ratios.

HTA is not a dependency of this project: the script makes a throwaway venv for it (--hta-venv, default
/tmp/hta-venv: `python -m venv`, then `pip install HolisticTraceAnalysis`; it has its own pandas and numpy
and pulls in no torch, and nothing is installed into ours). Where it cannot be installed (no network, no
wheel), the script says so and exits 0. Neither side imports torch; the torch thread count is printed for
comparison with the other benchmarks.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TRACES = Path(os.environ.get("LIBREYOLO_PROFILE_TRACES") or REPO.parent / "shared" / "traces")

# HTA's load of one trace and the three breakdowns the comparison names; it reads a directory of rank traces
HTA_SNIPPET = """
import os, sys, tempfile, warnings
warnings.simplefilter("ignore")
trace = os.path.abspath(sys.argv[1])
d = tempfile.mkdtemp()
os.symlink(trace, os.path.join(d, "rank0" + (".json.gz" if trace.endswith(".gz") else ".json")))
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=d)
a.get_temporal_breakdown(visualize=False)
a.get_gpu_kernel_breakdown(visualize=False)
a.get_idle_time_breakdown(visualize=False)
"""


@dataclass
class Run:
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    load: float
    rc: int
    error: str = ""


@dataclass
class Tool:
    name: str
    argv: list[str]
    cold_cache: bool = False  # a fresh XDG_CACHE_HOME per run (ours: every run is a first read)
    runs: dict[str, list[Run]] = field(default_factory=dict)


def run_child(argv: list[str], env: dict[str, str], timeout_s: float, cwd: Path | None = None) -> Run:
    """One fresh process: wall seconds, CPU seconds and peak RSS from wait4 (it and its waited-for children)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
        timer = threading.Timer(timeout_s, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
    error = "" if proc.returncode == 0 else (lines[-1] if lines else f"exit {proc.returncode}")[:200]
    if wall >= timeout_s:
        error = f"stopped after {timeout_s:.0f} s"
    return Run(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_mb=usage.ru_maxrss / 1024,
        load=os.getloadavg()[0],
        rc=proc.returncode,
        error=error,
    )


def hta_python(venv: Path) -> Path | None:
    """The venv's python with HTA importable, making the venv first where it is missing; None: it cannot be."""
    python = venv / "bin" / "python"
    if python.exists() and _imports_hta(python):
        return python
    print(f"making a throwaway venv for HTA at {venv} (python -m venv; pip install HolisticTraceAnalysis)…", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "HolisticTraceAnalysis"],
            capture_output=True,
            text=True,
            timeout=1200,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"HTA cannot be installed here: {exc}")
        return None
    if done.returncode != 0 or not _imports_hta(python):
        tail = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        print(f"HTA cannot be installed here: pip said: {tail[:300]}")
        return None
    return python


def _imports_hta(python: Path) -> bool:
    done = subprocess.run([str(python), "-c", "import hta.trace_analysis"], capture_output=True, timeout=300)
    return done.returncode == 0


def find_traces(top: Path, everything: bool) -> list[Path]:
    found = sorted(top.rglob("*.json.gz") if everything else top.glob("*.json.gz"))
    return [t for t in found if t.is_file()]


def torch_threads() -> str:
    """torch.get_num_threads() in our venv (neither tool imports torch: printed beside the other benchmarks')."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except (subprocess.SubprocessError, OSError):
        return "n/a"
    return done.stdout.strip() if done.returncode == 0 else "n/a (torch not importable)"


def rounds(tools: list[Tool], traces: list[Path], count: int, timeout_s: float) -> None:
    pairs = [(trace, tool) for trace in traces for tool in tools]
    for r in range(count):
        shift = r % len(pairs)
        for trace, tool in pairs[shift:] + pairs[:shift]:
            env = dict(os.environ)
            cache = tempfile.mkdtemp(prefix="first-read-") if tool.cold_cache else None
            if cache:
                env["XDG_CACHE_HOME"] = cache
            try:
                run = run_child([*tool.argv, str(trace)], env, timeout_s)
            finally:
                if cache:
                    shutil.rmtree(cache, ignore_errors=True)
            tool.runs.setdefault(trace.name, []).append(run)
            said = f"  FAILED: {run.error}" if run.rc else ""
            print(
                f"round {r + 1}  {tool.name:<5} {trace.name[:52]:<52} cpu {run.cpu_s:6.2f} s  "
                f"wall {run.wall_s:6.2f} s  rss {run.peak_rss_mb:6.0f} MiB  load {run.load:5.2f}{said}",
                flush=True,
            )


def report(ours: Tool, hta: Tool, traces: list[Path]) -> None:
    print("\nper trace: median CPU seconds, and each round's ratio HTA CPU / ours CPU (above 1: ours is cheaper)")
    sums = [0.0, 0.0]
    ratios_all = []
    for trace in traces:
        a, b = ours.runs[trace.name], hta.runs[trace.name]
        if any(r.rc for r in a):
            print(f"  {trace.name[:52]:<52} ours failed: {next(r.error for r in a if r.rc)}")
            continue
        if any(r.rc for r in b):
            print(
                f"  {trace.name[:52]:<52} ours {statistics.median(r.cpu_s for r in a):5.2f} s; HTA cannot read it: "
                f"{next(r.error for r in b if r.rc)}"
            )
            continue
        per_round = [h.cpu_s / o.cpu_s for o, h in zip(a, b, strict=True)]
        ratios_all += per_round
        mine, theirs = statistics.median(r.cpu_s for r in a), statistics.median(r.cpu_s for r in b)
        sums[0] += mine
        sums[1] += theirs
        print(
            f"  {trace.name[:52]:<52} ours {mine:5.2f} s  HTA {theirs:5.2f} s  ratio per round "
            f"{', '.join(f'{x:.2f}' for x in per_round)}  median {statistics.median(per_round):.2f}x"
        )
    if ratios_all:
        print(
            f"\nover the traces both read: ours {sums[0]:.2f} CPU-s, HTA {sums[1]:.2f} CPU-s: HTA / ours = "
            f"{sums[1] / sums[0]:.2f}x (per-run ratios {min(ratios_all):.2f}–{max(ratios_all):.2f}x; "
            f"the issue's target: at least 3x)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--traces", type=Path, default=DEFAULT_TRACES, help="folder of traces (default: shared)")
    parser.add_argument("--all", action="store_true", help="the traces in its subfolders too (the corpus)")
    parser.add_argument("--hta-venv", type=Path, default=Path("/tmp/hta-venv"), help="HTA's throwaway venv")
    parser.add_argument("--timeout", type=float, default=600, help="seconds one command may run (default 600)")
    args = parser.parse_args()
    traces = find_traces(args.traces, args.all)
    if not traces:
        print(f"no traces under {args.traces}: nothing to compare")
        return
    python = hta_python(args.hta_venv)
    if python is None:
        print("HTA is not installed, so there is nothing to compare against: exiting")
        return
    version = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('HolisticTraceAnalysis'))"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    # ours byte-compiled as a wheel install leaves it (HTA's pip install compiled HTA): a checkout read under
    # PYTHONDONTWRITEBYTECODE otherwise compiles ~40 of our modules again in every run, ~0.07 CPU-s each
    compileall.compile_dir(REPO / "libreyolo_profile", quiet=1)
    launcher = Path(sys.executable).with_name("libreyolo")
    ours_argv = (
        [str(launcher), "profile", "summary"]
        if launcher.exists()
        else [sys.executable, "-m", "libreyolo_profile", "summary"]
    )
    ours = Tool("ours", ours_argv, cold_cache=True)
    hta = Tool("HTA", [str(python), "-c", HTA_SNIPPET])
    print(
        f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at the start; torch threads "
        f"{torch_threads()} (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}); HTA {version} in {python}"
    )
    print(
        f"ours: {' '.join(ours_argv)} <trace> with an empty cache each run; HTA: load + temporal, kernel and idle "
        f"breakdowns; {len(traces)} traces, {args.rounds} rounds\n",
        flush=True,
    )
    rounds([ours, hta], traces, args.rounds, args.timeout)
    report(ours, hta, traces)
    print(f"machine load at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
