"""Check that a Chrome/Perfetto trace opens cleanly in Perfetto UI and chrome://tracing.

Both viewers draw the complete ('X') events of one thread as a stack: two events on the same
(pid, tid) must either nest or be disjoint. A partial overlap is mis-drawn or dropped (Perfetto
counts it as `misplaced_end_event`; chrome://tracing warns and re-parents it), so the trace we
write must have none. Perfetto reads `ts`/`dur` (µs) as `int64(value * 1000)` nanoseconds, so
nesting is checked in those truncated integers, the view of the stricter viewer.

Also checked: the file is strict JSON (no NaN/Infinity tokens, which Python's json writes by
default and JavaScript's JSON.parse rejects), and every event has the fields its phase needs.

Run it directly: `python -m libreyolo_profile.store.decode.trace_check profile_trace.json` (exit 1 on
problems).
"""

from __future__ import annotations

import gzip
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class TraceCheck:
    events: int = 0
    complete_events: int = 0
    threads: int = 0
    partial_overlaps: list[dict] = field(default_factory=list)  # examples, capped
    partial_overlap_count: int = 0
    problems: list[str] = field(default_factory=list)  # every other violation, one line each

    @property
    def ok(self) -> bool:
        return not self.problems and self.partial_overlap_count == 0

    def as_dict(self) -> dict:
        return {
            "ok": self.ok,
            "events": self.events,
            "complete_events": self.complete_events,
            "threads": self.threads,
            "partial_overlap_count": self.partial_overlap_count,
            "partial_overlaps": self.partial_overlaps,
            "problems": self.problems,
        }


def _reject_constant(token: str):
    raise ValueError(f"non-standard JSON token {token} (JSON.parse rejects it)")


def read_trace(path: Path) -> dict | list:
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw, parse_constant=_reject_constant)


def _ns(value) -> int:
    """Perfetto's reading of a µs timestamp or duration (json_utils.cc CoerceToTs)."""
    if isinstance(value, str):
        value = float(value)
    if isinstance(value, int):
        return value * 1000
    return int(value * 1000.0)


def _thread_key(event: dict) -> tuple:
    pid = event.get("pid", 0)
    return (pid, event.get("tid", pid))


def check_events(events: list, max_examples: int = 20) -> TraceCheck:
    result = TraceCheck(events=len(events))
    by_thread: dict[tuple, list[tuple[int, int, str]]] = {}
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            result.problems.append(f"event {index} is not an object")
            continue
        phase = event.get("ph")
        if not isinstance(phase, str) or not phase:
            result.problems.append(f"event {index} has no 'ph'")
            continue
        if phase == "M":
            continue
        if "ts" not in event:
            result.problems.append(f"event {index} ({phase}) has no 'ts'")
            continue
        if phase != "X":
            continue
        dur = event.get("dur")
        if dur is None:
            result.problems.append(f"event {index} (X {event.get('name')!r}) has no 'dur'")
            continue
        start, length = _ns(event["ts"]), _ns(dur)
        if length < 0:
            result.problems.append(f"event {index} (X {event.get('name')!r}) has a negative 'dur'")
            continue
        result.complete_events += 1
        by_thread.setdefault(_thread_key(event), []).append((start, start + length, str(event.get("name"))))
    result.threads = len(by_thread)
    for thread, slices in by_thread.items():
        # parents first: earlier start, then the longer one
        slices.sort(key=lambda s: (s[0], -s[1]))
        stack: list[tuple[int, int, str]] = []
        for start, end, name in slices:
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                result.partial_overlap_count += 1
                if len(result.partial_overlaps) < max_examples:
                    parent = stack[-1]
                    result.partial_overlaps.append(
                        {
                            "pid": thread[0],
                            "tid": thread[1],
                            "outer": parent[2],
                            "outer_ns": [parent[0], parent[1]],
                            "inner": name,
                            "inner_ns": [start, end],
                            "overhang_ns": end - parent[1],
                        }
                    )
                continue  # the viewer cannot nest it; keep the stack as the viewer would
            stack.append((start, end, name))
    return result


def check_trace(path: Path, max_examples: int = 20) -> TraceCheck:
    try:
        trace = read_trace(path)
    except ValueError as exc:
        return TraceCheck(problems=[f"not valid JSON: {exc}"])
    events = trace.get("traceEvents") if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        return TraceCheck(problems=["no traceEvents array"])
    return check_events(events, max_examples)


def main(argv: list[str]) -> int:
    status = 0
    for name in argv:
        result = check_trace(Path(name))
        print(json.dumps({"trace": name, **result.as_dict()}, indent=1))
        status |= 0 if result.ok else 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
