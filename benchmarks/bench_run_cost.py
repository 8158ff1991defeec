"""What `libreyolo profile run` costs beside LibreYOLO 1.6's built-in profiler and a plain training loop
(issue 53): memory, disk, CPU and wall time of the whole command, on the same settings, interleaved.

  ours      libreyolo profile run DATA --device cpu --batch B --imgsz S --steps N --warmup W --workers 0 --no-amp
  builtin   the same through LibreYOLO's own CLI (libreyolo.cli:entrypoint `profile run`: it profiles all
            warmup + steps steps under torch.profiler, no shapes recorded)
  plain     LibreYOLO9-t built as LibreYOLO9.train() builds it (class head for the dataset's nc, PGI aux branch)
            and its trainer (YOLO9Trainer.setup()), then the trainer's step, as many steps as ours runs
            (warmup + the profiled window + --steps replayed unprofiled), no profiler, nothing written

Per command and round, from fresh processes in rotating order (benchmarks/harness.py's scheme):
  wall      seconds, start to exit
  cpu       user + system CPU seconds of the command and everything it started
            (getrusage(RUSAGE_CHILDREN) before and after: a forked decoder or trial process is counted)
  pss       peak proportional set size of the process tree, summed over /proc/<pid>/smaps_rollup every
            0.1 s (pages a fork shares with its parent are split between them, not counted twice)
  written   bytes the command wrote to the block device (ru_oublock × 512 of the children's rusage;
            temporary files deleted later count too) and the bytes its output directory holds at exit
  threads   the most threads the command's processes had at once, beside torch.get_num_threads() here
  load      the 1-minute load average when it ended (this 2-core machine is shared: wall times under load
            swing with the others' work; the CPU seconds do not, so compare those)
Then the medians and the ratios: ours / builtin (target ≤ 1.2 on peak PSS, ≤ 1.0 on time) and the fixed cost
(ours − plain) / ours (target ≤ 0.15), on CPU seconds and on wall. With --stages, ours' own stages are timed
from its stderr lines (each line's arrival), so the fixed costs (imports, setup, steps, analysis, report)
show apart: each line says the tree's CPU seconds so far (sampled, /proc/<pid>/stat), its PSS then and
its peak so far, so a stage's CPU is the difference to the next line's.

    python benchmarks/bench_run_cost.py                       # the seed's --steps 20 --warmup 5, batch 2, 256 px
    python benchmarks/bench_run_cost.py --small               # --steps 11 --warmup 5 (the issue's figures)
    python benchmarks/bench_run_cost.py --rounds 3 --only ours,builtin --stages
Prints figures; it is not a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import REPO, python_argv  # noqa: E402

OFFLINE = {"LIBREYOLO_PROFILE_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
PROFILED_STEPS = 10
THREADS: dict[str, str] = {}  # OMP_NUM_THREADS for every command (--threads)  # ours' default window: min(--steps, 10)

MAKE_WEIGHTS = r"""
import torch
from libreyolo import LibreYOLO9
torch.manual_seed(0)
LibreYOLO9(None, size="t", device="cpu").save("LibreYOLO9t.pt")
"""

PLAIN_TRAIN = Path(__file__).with_name("plain_train.py")


@dataclass
class Command:
    name: str
    argv: list[str]
    out: Path | None = None  # the directory whose size at exit is what it kept


@dataclass
class Measured:
    wall: float
    cpu: float
    pss_mb: float
    written_mb: float
    kept_mb: float
    threads: int
    load: float
    stages: list[tuple[float, str]] = field(default_factory=list)


def _children(pid: int) -> list[int]:
    found = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                found += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
            except OSError:
                pass
    except OSError:
        pass
    return found


def _tree(root: int) -> list[int]:
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo += _children(pid)
    return pids


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _threads(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_s(pid: int, own_children: bool) -> float:
    """utime + stime of `pid` (and of the children it has reaped, for the tree's root), in seconds."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    ticks = int(fields[11]) + int(fields[12]) + ((int(fields[13]) + int(fields[14])) if own_children else 0)
    return ticks / _TICK


def _size_mb(path: Path | None) -> float:
    if path is None or not path.exists():
        return 0.0
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def measure(command: Command, cwd: Path, stages: bool = False) -> Measured:
    """One fresh run of `command`, sampled as it runs; a failure stops the benchmark with its stderr."""
    env = {**os.environ, **OFFLINE, **THREADS}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines: list[tuple[float, str]] = []
    started = time.perf_counter()
    proc = subprocess.Popen(
        command.argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, bufsize=1
    )
    peak = {"pss": 0, "threads": 0, "now": 0, "cpu": 0.0}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            pids = _tree(proc.pid)
            peak["now"] = sum(_pss_kib(p) for p in pids)
            peak["cpu"] = max(peak["cpu"], sum(_cpu_s(p, p == proc.pid) for p in pids))
            peak["pss"] = max(peak["pss"], peak["now"])
            peak["threads"] = max(peak["threads"], sum(_threads(p) for p in pids))
            done.wait(0.25)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    for line in proc.stderr:  # each line timed as it arrives: ours' stages
        memory = f"[{peak['cpu']:6.1f} cpu s, {peak['now'] / 1024:5.0f} MiB now, {peak['pss'] / 1024:5.0f} peak]"
        lines.append((time.perf_counter() - started, f"{memory} {line.rstrip()}"))
        if stages:
            print(f"    {lines[-1][0]:7.2f} s  {lines[-1][1][:140]}", flush=True)
    proc.wait()
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{command.name} failed (exit {proc.returncode}):\n" + "\n".join(t for _, t in lines[-30:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    written = (after.ru_oublock - before.ru_oublock) * 512 / 2**20
    return Measured(
        wall,
        cpu,
        peak["pss"] / 1024,
        written,
        _size_mb(command.out),
        peak["threads"],
        os.getloadavg()[0],
        lines if stages else [],
    )


def builtin_argv(*args: str) -> list[str]:
    code = "import sys; from libreyolo.cli import entrypoint; sys.argv = ['libreyolo', *sys.argv[1:]]; entrypoint()"
    return python_argv("-c", code, *args)


def commands(tmp: Path, data: str, a) -> list[Command]:
    flags = ["--device", "cpu", "--batch", str(a.batch), "--imgsz", str(a.imgsz), "--steps", str(a.steps)]
    flags += ["--warmup", str(a.warmup), "--workers", "0", "--no-amp"]
    window = min(a.steps, PROFILED_STEPS)
    ours_steps = a.warmup + window + a.steps  # the profiled pass, then --steps replayed without the profiler
    every = [
        Command(
            "ours",
            python_argv("-m", "libreyolo_profile", "run", data, *flags, "--project", str(tmp / "ours"), "--exist-ok"),
            tmp / "ours",
        ),
        Command(
            "builtin", builtin_argv("profile", "run", data, *flags, "--project", str(tmp / "builtin")), tmp / "builtin"
        ),
        Command(
            "plain",
            python_argv(str(PLAIN_TRAIN), data, str(ours_steps), str(a.batch), str(a.imgsz), str(tmp / "plain")),
            None,
        ),
    ]
    only = set(a.only.split(",")) if a.only else None
    return [c for c in every if only is None or c.name in only]


def _median(rows: list[Measured], key: str) -> float:
    return statistics.median(getattr(r, key) for r in rows)


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "n/a"


def print_stages(lines: list[tuple[float, str]], wall: float) -> None:
    """ours' stderr lines with the seconds each stage took until the next line (the last until exit)."""
    for i, (t, text) in enumerate(lines):
        end = lines[i + 1][0] if i + 1 < len(lines) else wall
        print(f"    {t:7.2f} s  +{end - t:6.2f} s  {text[:110]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20, help="--steps (default 20, the seed's default)")
    ap.add_argument("--warmup", type=int, default=5, help="--warmup (default 5, the seed's default)")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--imgsz", type=int, default=256)
    ap.add_argument("--small", action="store_true", help="--steps 11 --warmup 5: the issue's measured settings")
    ap.add_argument("--only", help="comma-separated subset of ours,builtin,plain")
    ap.add_argument("--stages", action="store_true", help="print ours' stages, timed from its stderr lines")
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="OMP_NUM_THREADS for all three (default 1: on a loaded 2-core machine two torch threads wait on each "
        "other, a step took ~100 s instead of ~1.5 s; 0 leaves each command's own choice)",
    )
    ap.add_argument("--no-warm-up", action="store_true", help="skip the untimed first run of each command")
    a = ap.parse_args()
    if a.small:
        a.steps, a.warmup = 11, 5
    if a.threads:
        THREADS["OMP_NUM_THREADS"] = str(a.threads)
        os.environ["OMP_NUM_THREADS"] = str(a.threads)  # torch here reads it too: the thread count printed
    import torch

    print(
        f"torch {torch.__version__}: {torch.get_num_threads()} torch threads here, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.2f}; --batch {a.batch} --imgsz {a.imgsz} --steps {a.steps} --warmup {a.warmup}"
        " --workers 0 --no-amp --device cpu",
        flush=True,
    )
    with tempfile.TemporaryDirectory(dir=REPO / "benchmarks") as tmp:  # on the disk, not a tmpfs: writes count
        tmp = Path(tmp)
        (tmp / "make_weights.py").write_text(MAKE_WEIGHTS)
        subprocess.run(python_argv(str(tmp / "make_weights.py")), cwd=tmp, env={**os.environ, **OFFLINE}, check=True)
        images = (a.warmup + a.steps) * a.batch  # one pass holds warmup + steps full batches
        subprocess.run(
            python_argv(str(REPO / "fixtures" / "make_dataset.py"), "--out", str(tmp), "--name", "synth_run")
            + ["--train", str(images), "--val", "4", "--size", "320"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        data = str(tmp / "synth_run.yaml")
        cmds = commands(tmp, data, a)
        if not a.no_warm_up:
            for c in cmds:
                measure(c, tmp)
        results: dict[str, list[Measured]] = {c.name: [] for c in cmds}
        head = f"{'round':<6}{'command':<9}{'wall s':>8}{'cpu s':>8}{'pss MiB':>9}{'write MiB':>10}{'kept MiB':>9}"
        print(head + f"{'threads':>8}{'load':>7}")
        for r in range(a.rounds):
            order = cmds[r % len(cmds) :] + cmds[: r % len(cmds)]
            for c in order:
                m = measure(c, tmp, a.stages and c.name == "ours")
                results[c.name].append(m)
                print(
                    f"{r + 1:<6}{c.name:<9}{m.wall:8.2f}{m.cpu:8.2f}{m.pss_mb:9.0f}{m.written_mb:10.1f}"
                    f"{m.kept_mb:9.1f}{m.threads:8d}{m.load:7.2f}",
                    flush=True,
                )
                if m.stages:
                    print_stages(m.stages, m.wall)
            names = list(results)
            if "ours" in results and len(names) > 1:
                ours = results["ours"][-1]
                print(
                    "       round ratios: "
                    + ", ".join(
                        f"ours/{n} cpu {_ratio(ours.cpu, results[n][-1].cpu)} "
                        f"wall {_ratio(ours.wall, results[n][-1].wall)}"
                        for n in names
                        if n != "ours"
                    )
                )
        print("\nmedians")
        for name, rows in results.items():
            print(
                f"  {name:<8} wall {_median(rows, 'wall'):7.2f} s  cpu {_median(rows, 'cpu'):7.2f} s  "
                f"peak pss {_median(rows, 'pss_mb'):6.0f} MiB  written {_median(rows, 'written_mb'):7.1f} MiB  "
                f"kept {_median(rows, 'kept_mb'):6.1f} MiB"
            )
        if "ours" in results:
            ours = results["ours"]
            if "builtin" in results:
                b = results["builtin"]
                print(
                    f"ours / builtin: peak pss {_ratio(_median(ours, 'pss_mb'), _median(b, 'pss_mb'))} (target ≤ 1.2), "
                    f"cpu {_ratio(_median(ours, 'cpu'), _median(b, 'cpu'))}, wall "
                    f"{_ratio(_median(ours, 'wall'), _median(b, 'wall'))} (target ≤ 1.0), written "
                    f"{_ratio(_median(ours, 'written_mb'), _median(b, 'written_mb'))}"
                )
            if "plain" in results:
                p = results["plain"]
                for key in ("cpu", "wall"):
                    o, q = _median(ours, key), _median(p, key)
                    print(f"fixed cost (ours − plain) / ours on {key}: {(o - q) / o:.1%} (target ≤ 15%)")
        loads = [m.load for rows in results.values() for m in rows]
        print(f"1-min load {min(loads):.2f}..{max(loads):.2f} on {os.cpu_count()} CPUs: wall times are under that load")


if __name__ == "__main__":
    main()
