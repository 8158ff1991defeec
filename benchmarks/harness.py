"""The benchmarks' one way of timing whole commands: fresh processes, interleaved rounds (round i runs
every command once, in an order that rotates, so machine noise hits all alike), every run printed, then
per command the median, min and max, its ratio to a baseline's median, and the machine's load.

    from harness import Command, run_rounds, print_table
    results = run_rounds([Command("ours", [...]), Command("plain", [...])], rounds=3)
    print_table(results, baseline="plain")
"""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Command:
    name: str
    argv: list[str]
    cwd: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 1800


@dataclass
class Timed:
    command: Command
    seconds: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)  # 1-minute load average when each run ended

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def python_argv(*args: str) -> list[str]:
    return [sys.executable, *args]


def run_once(command: Command) -> float:
    """Wall seconds of one fresh process; a failure stops the benchmark with its stderr."""
    env = {**os.environ, **command.env}
    started = time.perf_counter()
    done = subprocess.run(
        command.argv, cwd=command.cwd, env=env, capture_output=True, text=True, timeout=command.timeout_s
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{command.name} failed (exit {done.returncode}):\n{done.stderr[-1500:]}")
    return elapsed


def run_rounds(commands: list[Command], rounds: int, warm_up: bool = True) -> dict[str, Timed]:
    """Every command once per round, the order rotating each round; one untimed run of each first
    (page cache, bytecode), unless `warm_up` is false."""
    if warm_up:
        # our package byte-compiled as a wheel install leaves it (the dependencies are): a machine with
        # PYTHONDONTWRITEBYTECODE set would otherwise compile it in every timed run of ours, ~0.1 s
        compileall.compile_dir(REPO / "libreyolo_profile", quiet=1)
        for command in commands:
            run_once(command)
    results = {c.name: Timed(c) for c in commands}
    for r in range(rounds):
        order = commands[r % len(commands) :] + commands[: r % len(commands)]
        for command in order:
            seconds = run_once(command)
            results[command.name].seconds.append(seconds)
            results[command.name].loads.append(os.getloadavg()[0])
            print(f"round {r + 1}  {command.name:<12} {seconds:7.2f} s   load {os.getloadavg()[0]:.2f}", flush=True)
    return results


def print_table(results: dict[str, Timed], baseline: str, title: str = "") -> None:
    """Median, min, max per command and each median over the baseline's."""
    base = results[baseline].median
    loads = [x for t in results.values() for x in t.loads]
    print(
        f"\n{title}  ({len(next(iter(results.values())).seconds)} interleaved rounds, "
        f"1-min load {min(loads):.2f}..{max(loads):.2f} on {os.cpu_count()} CPUs)"
    )
    print(f"{'command':<12} {'median s':>9} {'min s':>8} {'max s':>8} {'× ' + baseline:>12}")
    for name, timed in results.items():
        s = timed.seconds
        print(f"{name:<12} {timed.median:9.2f} {min(s):8.2f} {max(s):8.2f} {timed.median / base:12.2f}")
    for name, timed in results.items():
        print(f"  {name}: {' '.join(timed.command.argv)}")
