"""An independent per-module reference over the raw trace events: plain Python over json/gzip, written
from the rules stated in docs/SCHEMA.md ("How the modules table is built") without any product code
or SQL, for tests/test_modules.py.

The rules, restated:
- module calls are our `module forward|backward: <path> (<Class>)` annotations, or a foreign trace's
  `nn.Module: <Class>_<n>` python_function events, whose path is the chain of the nn.Module events
  enclosing them on their thread; a call counts when it starts inside a ProfilerStep range;
- a call's self time: cut the calls of one thread and pass at every start and end; each piece belongs
  to the open call that started last (then the deeper one);
- a kernel belongs to every call on the thread of its launch (the runtime call with its correlation id)
  whose time holds the launch; its self owner is the call owning the launch instant.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

OURS = re.compile(r"^module (forward|backward): (.+) \(([^()]*)\)$")
RUNTIME_CATEGORIES = {"cuda_runtime", "runtime", "cuda_driver", "hip_runtime", "hip_driver"}


def _ns(value) -> int:
    return int((Decimal(str(value)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def load_events(path: Path) -> list[dict]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        data = json.load(f, parse_float=Decimal)
    events = data["traceEvents"] if isinstance(data, dict) else data
    return [e for e in events if e.get("ph") == "X" and "ts" in e]


def _steps(events: list[dict]) -> list[tuple[int, int]]:
    # host ranges only: a trace also draws each ProfilerStep on the GPU timeline (gpu_user_annotation)
    marked = sorted(
        {
            (_ns(e["ts"]), _ns(e["ts"]) + _ns(e.get("dur", 0)))
            for e in events
            if str(e.get("name", "")).startswith("ProfilerStep#")
            and str(e.get("cat", "")).lower() in ("user_annotation", "cpu_op", "operator")
        }
    )
    return marked


def _own_thread(tid):
    """`run` writes backward module ranges on lanes beside their thread, tid (lane + 1) × 10^12 + the thread's
    (docs/design: a lane is a track of its thread's): read back as the thread's."""
    return tid % 10**12 if isinstance(tid, int) and tid >= 10**12 else tid


def module_calls(events: list[dict]) -> list[dict]:
    calls = []
    for e in events:
        m = OURS.match(str(e.get("name", "")))
        # recorded through the profiler's fast path (cpu_op) or as a user annotation
        if m and str(e.get("cat", "")).lower() in ("user_annotation", "cpu_op"):
            start = _ns(e["ts"])
            calls.append(
                {
                    "pid": str(e["pid"]),
                    "tid": str(_own_thread(e["tid"])),
                    "ts": start,
                    "end": start + _ns(e.get("dur", 0)),
                    "phase": m.group(1),
                    "path": m.group(2),
                    "type": m.group(3),
                }
            )
    # foreign: nest the nn.Module events per thread with a stack
    stack_events = sorted(
        (
            e
            for e in events
            if str(e.get("cat", "")).lower() == "python_function" and str(e.get("name", "")).startswith("nn.Module: ")
        ),
        key=lambda e: (str(e["pid"]), str(e["tid"]), _ns(e["ts"]), -_ns(e.get("dur", 0))),
    )
    open_stack: dict = defaultdict(list)
    for e in stack_events:
        start, label = _ns(e["ts"]), e["name"][len("nn.Module: ") :]
        end = start + _ns(e.get("dur", 0))
        stack = open_stack[(str(e["pid"]), str(e["tid"]))]
        while stack and stack[-1]["end"] <= start:
            stack.pop()
        path = f"{stack[-1]['path']}.{label}" if stack else label
        call = {
            "pid": str(e["pid"]),
            "tid": str(e["tid"]),
            "ts": start,
            "end": end,
            "phase": "forward",
            "path": path,
            "type": re.sub(r"_[0-9]+$", "", label),
        }
        calls.append(call)
        stack.append(call)
    steps = _steps(events)
    if steps:
        calls = [c for c in calls if any(s <= c["ts"] < e for s, e in steps)]
    for c in calls:
        c["depth"] = c["path"].count(".")
    return calls


def _self_times(calls: list[dict]) -> dict[int, int]:
    """id(call) -> ns it owns: each piece of time to the open call that started last (then deeper)."""
    owned: dict[int, int] = defaultdict(int)
    groups = defaultdict(list)
    for c in calls:
        groups[(c["pid"], c["tid"], c["phase"])].append(c)
    for group in groups.values():
        bounds = sorted({c["ts"] for c in group} | {c["end"] for c in group})
        for s, e in zip(bounds, bounds[1:], strict=False):
            covering = [c for c in group if c["ts"] <= s and c["end"] >= e]
            if covering:
                owner = max(covering, key=lambda c: (c["ts"], c["depth"]))
                owned[id(owner)] += e - s
    return owned


def _kernels(events: list[dict]) -> tuple[list[dict], bool]:
    launch: dict = {}
    for e in events:
        corr = (e.get("args") or {}).get("correlation")
        if str(e.get("cat", "")).lower() in RUNTIME_CATEGORIES and corr:
            start = _ns(e["ts"])
            if corr not in launch or start < launch[corr][0]:
                launch[corr] = (start, str(e["tid"]))
    kernels = []
    for e in events:
        corr = (e.get("args") or {}).get("correlation")
        if str(e.get("cat", "")).lower() == "kernel" and corr in launch:
            kernels.append({"dur": _ns(e.get("dur", 0)), "launch": launch[corr][0], "tid": launch[corr][1]})
    return kernels, any(str(e.get("cat", "")).lower() == "kernel" for e in events)


def reference(path: Path) -> dict[tuple[str, str], dict]:
    """(phase, path) -> calls, total_ns, self_ns, device_ns, device_self_ns (None without kernels), type."""
    events = load_events(path)
    calls = module_calls(events)
    owned = _self_times(calls)
    kernels, has_kernels = _kernels(events)
    device = defaultdict(int)
    device_self = defaultdict(int)
    for k in kernels:
        holding = [c for c in calls if c["tid"] == k["tid"] and c["ts"] <= k["launch"] < c["end"]]
        for c in holding:
            device[id(c)] += k["dur"]
        if holding:
            device_self[id(max(holding, key=lambda c: (c["ts"], c["depth"])))] += k["dur"]
    out: dict = {}
    for c in calls:
        row = out.setdefault(
            (c["phase"], c["path"]),
            {
                "calls": 0,
                "total_ns": 0,
                "self_ns": 0,
                "device_ns": 0,
                "device_self_ns": 0,
                "type": c["type"],
                "depth": c["depth"],
            },
        )
        row["calls"] += 1
        row["total_ns"] += c["end"] - c["ts"]
        row["self_ns"] += owned[id(c)]
        row["device_ns"] += device[id(c)]
        row["device_self_ns"] += device_self[id(c)]
    if not has_kernels:
        for row in out.values():
            row["device_ns"] = row["device_self_ns"] = None
    return out


def step_count(path: Path) -> int:
    return len(_steps(load_events(path))) or 1
