"""What else the machine was doing while we measured: the evidence behind the `noisy` mark.

Read around each timed stretch (a trial's warmup-to-end): the CPU time every process spent (/proc/stat)
less our own process tree's (/proc/<pid>/stat of this process and its live children, dataloader
workers included), CPU steal, the load average, and on CUDA the GPU's clocks and throttle reasons
through NVML where the `pynvml` module (nvidia-ml-py) is importable. Anything this machine cannot
tell is None with the reason in `unavailable`; nothing is guessed.

Contention, the part a user can fix: how long our working threads waited for a CPU while runnable, against
how long they ran (/proc/<pid>/task/<tid>/schedstat: the scheduler's own run and run-queue wait times), and
how many CPUs the others left free for our torch threads. Starved (they waited STARVED_WAIT_PCT of their
run time or more) or oversubscribed (a whole torch thread more than the CPUs left free) is the `contended`
mark, with its remedy: fewer threads (`--threads 1`, or OMP_NUM_THREADS=1), or a quieter machine where it
already has one.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

_PROC = Path("/proc")
# /proc/stat's aggregate cpu line: user nice system idle iowait irq softirq steal [guest guest_nice]
_IDLE_FIELDS = (3, 4)  # idle, iowait
_STEAL_FIELD = 7
# our threads waited for a CPU at least this long, % of the time they ran: starved
STARVED_WAIT_PCT = 25.0
THREADS_REMEDY = "--threads 1 (or OMP_NUM_THREADS=1)"


def _ticks_per_second() -> int:
    try:
        return os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError, AttributeError):
        return 100


def _machine_ticks() -> tuple[int, int, int] | None:
    """(busy, steal, total) ticks of all CPUs since boot, or None off Linux. Guest time is already in
    user/nice, so only the first eight fields count."""
    try:
        line = (_PROC / "stat").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    fields = [int(v) for v in line.split()[1:9]]
    total = sum(fields)
    idle = sum(fields[i] for i in _IDLE_FIELDS)
    steal = fields[_STEAL_FIELD] if len(fields) > _STEAL_FIELD else 0
    return total - idle - steal, steal, total


def _process_ticks(pid: int) -> int | None:
    """CPU ticks of one process: its own (utime + stime) and those of its children it has waited for
    (cutime + cstime), so a worker that ended inside the stretch is still counted; None when it is gone."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    after_name = raw[raw.rfind(")") + 2 :].split()  # the name may hold spaces and parentheses
    return sum(int(v) for v in after_name[11:15])


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in (_PROC / str(pid) / "task").iterdir():
            try:
                found += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
    except OSError:
        return []
    return found


def _schedstat(pids) -> dict[tuple[int, int], tuple[int, int]] | None:
    """(pid, tid) -> (ns run on a CPU, ns waited runnable on a run queue) of every thread of `pids`; None
    where the kernel keeps no schedstat (not Linux, or schedstats off)."""
    found = {}
    for pid in pids:
        try:
            tasks = list((_PROC / str(pid) / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                run_ns, wait_ns = (int(v) for v in (task / "schedstat").read_text().split()[:2])
            except (OSError, ValueError):
                continue
            found[(pid, int(task.name))] = (run_ns, wait_ns)
    return found or None


def _tree_ticks(root: int, seen: dict[int, int]) -> None:
    """CPU ticks of `root` and its descendants, into `seen` (pid -> ticks)."""
    stack = [root]
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        ticks = _process_ticks(pid)
        if ticks is None:
            continue
        seen[pid] = ticks
        stack.extend(_children(pid))


class LoadSampler:
    """`start()` before the timed work, `stop()` after: returns the figures of the stretch between."""

    def __init__(self, device=None, threads: int | None = None):
        self.device = device
        torch = sys.modules.get("torch")  # never imported here: a measurement has, a bare sampler need not
        if threads is None and torch is not None:  # the torch threads the measured work runs with
            threads = torch.get_num_threads()
        self.threads = threads
        self._start = None

    def _read(self) -> dict:
        ours: dict[int, int] = {}
        _tree_ticks(os.getpid(), ours)
        return {
            "t": time.perf_counter(),
            "machine": _machine_ticks(),
            "ours": ours,
            "load": _loadavg(),
            "sched": _schedstat(ours),
        }

    def start(self) -> None:
        self._start = self._read()
        self._gpu_start = _gpu_state(self.device)

    def stop(self) -> dict:
        end = self._read()
        begin = self._start
        wall_s = end["t"] - begin["t"]
        cpus = os.cpu_count() or 1
        figures: dict = {
            "wall_s": round(wall_s, 3),
            "cpu_count": cpus,
            "loadavg_1m_start": begin["load"],
            "loadavg_1m_end": end["load"],
            "other_cpu_pct": None,
            "our_cpu_pct": None,
            "steal_pct": None,
            "unavailable": {},
        }
        if begin["machine"] is None or end["machine"] is None:
            figures["unavailable"]["other_cpu_pct"] = "no /proc/stat on this system"
        else:
            busy = end["machine"][0] - begin["machine"][0]
            steal = end["machine"][1] - begin["machine"][1]
            total = end["machine"][2] - begin["machine"][2]
            # a process of ours that ended in between was waited for by its parent, whose cumulative
            # children's time now holds all of it: take back what it had used before the stretch
            ours = sum(ticks - begin["ours"].get(pid, 0) for pid, ticks in end["ours"].items())
            ours -= sum(ticks for pid, ticks in begin["ours"].items() if pid not in end["ours"])
            capacity = total if total > 0 else None
            if capacity:
                figures["our_cpu_pct"] = round(100.0 * ours / capacity, 2)
                figures["other_cpu_pct"] = round(100.0 * max(busy - ours, 0) / capacity, 2)
                figures["steal_pct"] = round(100.0 * steal / capacity, 2)
            else:
                figures["unavailable"]["other_cpu_pct"] = "the stretch was shorter than one clock tick"
        if figures["loadavg_1m_end"] is None:
            figures["unavailable"]["loadavg"] = "os.getloadavg() is not available here"
        gpu = _gpu_state(self.device)
        if gpu is not None:
            figures["gpu"] = {"start": self._gpu_start, "end": gpu}
        elif getattr(self.device, "type", "cpu") == "cuda":
            figures["unavailable"]["gpu"] = (
                "GPU clocks and throttle reasons need NVML: install nvidia-ml-py (module pynvml)"
            )
        figures["ticks_per_second"] = _ticks_per_second()
        figures.update(_waits(begin["sched"], end["sched"], figures["unavailable"], wall_s))
        figures["torch_threads"] = self.threads
        return figures


# A thread that ran less than this share of the stretch did none of the measured work (the progress line's,
# an idle pool's): its waits are left out. On a busy machine such a thread waits a scheduler slice at each of
# its thousands of wake-ups, and counted whole it read "waited 181% of run time" for one torch thread whose
# own wait was ~60%.
WORKING_THREAD_PCT = 1.0


def _waits(begin: dict | None, end: dict | None, unavailable: dict, wall_s: float) -> dict:
    """The run-queue wait of the threads that did the work, against their run time, over the stretch
    (threads born inside it count whole)."""
    if begin is None or end is None:
        unavailable["run_queue_wait_pct"] = "no /proc/<pid>/task/<tid>/schedstat here (not Linux, or schedstats off)"
        return {"run_queue_wait_pct": None}
    deltas = [(run - begin.get(key, (0, 0))[0], wait - begin.get(key, (0, 0))[1]) for key, (run, wait) in end.items()]
    working = [(run, wait) for run, wait in deltas if run >= WORKING_THREAD_PCT / 100 * wall_s * 1e9] or deltas
    ran, waited = sum(run for run, _ in working), sum(wait for _, wait in working)
    if ran <= 0:
        unavailable["run_queue_wait_pct"] = "our threads did not run in the stretch"
        return {"run_queue_wait_pct": None}
    return {
        "run_queue_wait_pct": round(100.0 * waited / ran, 1),
        "threads_ran_s": round(ran / 1e9, 3),
        "working_threads": len(working),
    }


def free_cpus(machine: dict) -> float | None:
    """The CPUs other processes left over while it measured (None: unknown)."""
    other, cpus = machine.get("other_cpu_pct"), machine.get("cpu_count")
    if other is None or not cpus:
        return None
    return round(cpus * (1 - other / 100), 1)


def contention(machines: list[dict]) -> dict | None:
    """Whether our threads fought for CPUs in any trial: {starved, oversubscribed, run_queue_wait_pct,
    torch_threads, free_cpus, remedy} of the worst trial (the longest wait), or None when none did."""
    found = []
    for machine in machines:
        if not machine:
            continue
        wait, threads, free = machine.get("run_queue_wait_pct"), machine.get("torch_threads"), free_cpus(machine)
        starved = wait is not None and wait >= STARVED_WAIT_PCT
        # a whole thread more than the CPUs the others left: some thread always waits
        oversubscribed = threads is not None and free is not None and threads > 1 and threads - free >= 1
        if starved or oversubscribed:
            found.append(
                {
                    "starved": starved,
                    "oversubscribed": oversubscribed,
                    "run_queue_wait_pct": wait,
                    "torch_threads": threads,
                    "free_cpus": free,
                    "cpu_count": machine.get("cpu_count"),
                    "remedy": THREADS_REMEDY if threads is None or threads > 1 else "a quieter machine",
                }
            )
    if not found:
        return None
    worst = max(found, key=lambda c: c["run_queue_wait_pct"] or 0.0)
    worst["starved_at_pct"] = STARVED_WAIT_PCT
    return worst


def _loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


# NVML throttle reasons that mean the clocks were held down by something other than idling
_THROTTLE_NAMES = {
    0x0000000000000002: "applications clocks setting",
    0x0000000000000004: "software power cap",
    0x0000000000000008: "hardware slowdown",
    0x0000000000000020: "software thermal slowdown",
    0x0000000000000040: "hardware thermal slowdown",
    0x0000000000000080: "hardware power brake slowdown",
    0x0000000000000100: "display clocks setting",
}


def _gpu_state(device) -> dict | None:
    """SM clock, max SM clock and active throttle reasons of the profiled GPU, or None without NVML."""
    if getattr(device, "type", "cpu") != "cuda":
        return None
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        index = device.index if device.index is not None else 0
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        sm = pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)
        sm_max = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)
        mask = pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle)
        return {
            "sm_clock_mhz": sm,
            "sm_clock_max_mhz": sm_max,
            "throttle_reasons": [name for bit, name in _THROTTLE_NAMES.items() if mask & bit],
        }
    except Exception:  # NVML present but unusable (driver mismatch, no permission): no figures
        return None
