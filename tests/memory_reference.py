"""An independent reference for the memory table: plain Python over a trace's raw `[memory]` events,
written from the event format, not from sql/memory.sql.

The window: from the first `ProfilerStep#` host range's start to the later of the last one's end and the
end of the device work launched (runtime call → correlation → kernel/memcpy/memset) inside a step.
Per device (Device Type 0: the host, device -1; else its Device Id), the events inside the window in
trace order: the level is Total Allocated where every event records it (absolute), else the running
sum of Bytes from 0 at the window's start (relative); the host's totals are labelled "profiled" (they
count only the blocks allocated while the profiler ran). The peak: the first highest level (on a relative
device the window's start, level 0, counts). The op at an instant: the outermost framework op open on
the event's thread (of the ops containing the instant, one no other contains; the later-starting on a
tie at a boundary). An op's net bytes: the sum of Bytes of the events it was the outermost op of.
"""

from __future__ import annotations

import bisect
import gzip
import json
from decimal import Decimal
from pathlib import Path

ANNOTATION_PREFIXES = ("ProfilerStep#", "enumerate(DataLoader)#", "Optimizer.", "module forward: ", "module backward: ")
RUNTIME_CATS = {"cuda_runtime", "runtime", "cuda_driver", "hip_runtime", "hip_driver"}
DEVICE_CATS = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset"}
HOST_RANGE_CATS = {
    "user_annotation",
    "cpu_op",
    "operator",
}  # where ProfilerStep# ranges are recorded (not python_function)
MIB = 1048576.0


def _ns(value) -> int:
    return int((Decimal(str(value)) * 1000).to_integral_value())


def load_events(path: Path) -> list[dict]:
    raw = path.read_bytes()
    doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw, parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    kept = [e for e in events if e.get("ph") in ("X", "i", "I") and e.get("ts") is not None]
    t0 = min(_ns(e["ts"]) for e in kept)
    for i, e in enumerate(kept):
        e["_i"], e["_ts"] = i, _ns(e["ts"]) - t0
        e["_end"] = e["_ts"] + max(_ns(e.get("dur") or 0), 0)
    return kept


def _is_op(e: dict) -> bool:
    name = str(e.get("name") or "")
    return (
        e.get("ph") == "X"
        and str(e.get("cat") or "").lower() in ("cpu_op", "operator")
        and not name.startswith(ANNOTATION_PREFIXES)
        and not (name.startswith("##") and name.endswith("##"))
    )


def window(events: list[dict]) -> tuple[int, int, list[tuple[int, int]]]:
    steps = sorted(
        {
            (e["_ts"], e["_end"])
            for e in events
            if e.get("ph") == "X"
            and str(e.get("name") or "").startswith("ProfilerStep#")
            and str(e.get("cat") or "").lower() in HOST_RANGE_CATS
        }
    )
    assert steps, "the reference needs ProfilerStep ranges"
    inside = lambda t: any(s <= t < e for s, e in steps)  # noqa: E731
    launched = {
        str((e.get("args") or {}).get("correlation"))
        for e in events
        if str(e.get("cat") or "").lower() in RUNTIME_CATS and inside(e["_ts"])
    }
    device_end = max(
        [
            e["_end"]
            for e in events
            if str(e.get("cat") or "").lower() in DEVICE_CATS
            and str((e.get("args") or {}).get("correlation")) in launched
        ]
        + [0]
    )
    return steps[0][0], max([end for _, end in steps] + [device_end]), steps


class OuterOps:
    """The outermost op open at an instant on one thread: of the ops containing it, one no other op
    contains (the later-starting on a tie at a boundary, then the later in trace order).

    An op that another contains is never that answer (its container is open whenever it is), so only
    the ops no other op contains are kept; sorted by start, their ends never decrease (a later-starting
    one ending sooner would be contained), so the ones open at an instant are one contiguous run,
    found by bisection instead of a scan of every op per memory event."""

    def __init__(self, ops: list[dict]):
        ordered = sorted(ops, key=lambda o: (o["_ts"], -o["_end"], o["_i"]))
        kept, reach, i = [], None, 0
        while i < len(ordered):  # a run of identical intervals is contained, or not, together
            j = i
            while j < len(ordered) and (ordered[j]["_ts"], ordered[j]["_end"]) == (
                ordered[i]["_ts"],
                ordered[i]["_end"],
            ):
                j += 1
            if reach is None or reach < ordered[i]["_end"]:
                kept += ordered[i:j]
            reach = ordered[i]["_end"] if reach is None else max(reach, ordered[i]["_end"])
            i = j
        self.ops = kept
        self.starts = [o["_ts"] for o in kept]
        self.ends = [o["_end"] for o in kept]

    def at(self, ts: int) -> str | None:
        last = bisect.bisect_right(self.starts, ts)  # ops starting at or before ts: [0, last)
        first = bisect.bisect_left(self.ends, ts)  # ops ending at or after ts: [first, len)
        if first >= last:
            return None
        top = self.starts[last - 1]
        return max((o for o in self.ops[first:last] if o["_ts"] == top), key=lambda o: o["_i"])["name"]


def reference(path: Path) -> dict:
    """{(device_type, device): {levels, peak_mb, peak_ms, peak_step, peak_op, ops: {op: net_mb}}}"""
    events = load_events(path)
    start, end, steps = window(events)
    ops_by_thread: dict = {}
    for e in events:
        if _is_op(e):
            ops_by_thread.setdefault((str(e.get("pid")), str(e.get("tid"))), []).append(e)
    by_thread: dict = {}

    def outer_ops(pid: str, tid: str) -> OuterOps:
        if (pid, tid) not in by_thread:
            by_thread[(pid, tid)] = OuterOps(ops_by_thread.get((pid, tid), []))
        return by_thread[(pid, tid)]

    devices: dict = {}
    for e in events:
        if e.get("name") != "[memory]" or not start <= e["_ts"] <= end:
            continue
        args = e.get("args") or {}
        kind = int(args["Device Type"])
        key = ("cpu", -1) if kind == 0 else ("cuda" if kind == 1 else f"type {kind}", int(args.get("Device Id", 0)))
        devices.setdefault(key, []).append(e)
    out = {}
    for key, evs in devices.items():
        evs.sort(key=lambda e: (e["_ts"], e["_i"]))
        absolute = all("Total Allocated" in (e.get("args") or {}) for e in evs)
        level, points, previous = 0.0, [], None
        if not absolute:
            points.append((0.0, start, None))
        for e in evs:
            args = e["args"]
            if absolute:
                total = float(args["Total Allocated"])
                moved = float(args["Bytes"]) if "Bytes" in args else (None if previous is None else total - previous)
                level, previous = total, total
            else:
                moved = float(args["Bytes"])
                level += moved
            points.append((level, e["_ts"], e, moved))
        peak = max(points, key=lambda p: p[0])  # max() keeps the first of equal levels
        op_of = lambda e: outer_ops(str(e.get("pid")), str(e.get("tid"))).at(e["_ts"])  # noqa: E731
        net: dict = {}
        for p in points:
            if p[2] is not None and p[3] is not None:
                name = op_of(p[2])
                net[name] = net.get(name, 0.0) + p[3] / MIB
        step = next((i + 1 for i, (s, e) in enumerate(steps) if s <= peak[1] < e), None)
        # the host's totals count only the blocks allocated while the profiler ran: "profiled"
        levels = ("profiled" if key[0] == "cpu" else "absolute") if absolute else "relative"
        out[key] = {
            "levels": levels,
            "peak_mb": peak[0] / MIB,
            "peak_ms": (peak[1] - start) / 1e6,
            "peak_step": step,
            "peak_op": op_of(peak[2]) if peak[2] is not None else None,
            "ops": net,
            "events": len(evs),
        }
    return out


def top_ops(ref_device: dict, n: int = 3) -> list[tuple[str | None, float]]:
    """The `n` ops that left the most bytes allocated (net), most first."""
    return sorted(ref_device["ops"].items(), key=lambda kv: -kv[1])[:n]
