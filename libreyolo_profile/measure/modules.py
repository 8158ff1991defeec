"""Named ranges for the model's module tree: which module the host time and the device work of a
step belong to (issue 16; the `modules` table, sql/modules.sql, reads them back).

Forward: a forward pre-hook opens a profiler range "module forward: <path> (<Class>)" and a
forward hook (always_call, so an exception still closes it) ends it. Paths are the model's own
`named_modules()` names under its class name: `LibreYOLO9Model` (depth 0, the whole forward),
`LibreYOLO9Model.backbone` (depth 1), `LibreYOLO9Model.backbone.conv0` (depth 2) …

Backward, where autograd makes it possible (grad enabled, tensors that require grad): a hook on the
module's output tensors opens `module backward: <path> (<Class>)` when the gradient reaches them;
hooks on its input tensors end it when the gradient has reached all of them. What never ends that
way (a module whose inputs need no gradient, like the first conv on the image) ends when the
backward pass does (an autograd engine callback). Where branches interleave in the backward, a
range can hold sibling work too: sql/modules.sql gives each instant to the open range that started
last, so nothing is counted twice.

Only annotated calls pay: `recording(annotate)` installs the hooks for one call and removes them
after it, so unprofiled calls run the model with no hook at all (nn.Module's fast path).

A backward range opens in one autograd node's hook and ends in another's, so on the thread that ran it
it crosses the engine's own `autograd::engine::evaluate_function: …` ranges (and, where branches
interleave, other backward ranges): the TensorBoard plugin and Perfetto draw a thread's ranges as a stack
and cannot draw a crossing one. `separate_backward_ranges` moves them, once the trace is written, onto
tracks of their own beside their thread (`lane_tid`), as many as it takes for each track's ranges to nest;
sql/ingest.sql reads a lane's ranges back as its thread's (`own_thread`), so the analysis is unchanged.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Iterator

DEFAULT_DEPTH = 2  # the top-level parts and their direct children
RANGE_PREFIX = {"forward": "module forward: ", "backward": "module backward: "}


def _range_opener():
    """Opens a named profiler range and returns what closes it (`.__exit__(None, None, None)`).
    The profiler's fast path costs under 1 µs a range against ~13 µs for `record_function` (measured
    here under the profiler); it files the range as `cpu_op`, which sql/ingest.sql reads back as an
    annotation by its name. Where a torch lacks it, `record_function`."""
    try:
        from torch._C._profiler import _RecordFunctionFast
    except ImportError:  # pragma: no cover - torch without the fast path
        from torch.autograd.profiler import record_function as _RecordFunctionFast

    def open_range(name: str):
        handle = _RecordFunctionFast(name)
        handle.__enter__()
        return handle

    return open_range


def range_name(direction: str, path: str, kind: str) -> str:
    """The name of one module range (sql/ingest.sql and sql/modules.sql read it back)."""
    return f"{RANGE_PREFIX[direction]}{path} ({kind})"


def module_targets(model, depth: int) -> list[tuple[str, object, str]]:
    """(path, module, class name) of every module at most `depth` levels below the model; the model
    itself is depth 0 and its path is its class name."""
    root = type(model).__name__
    targets = []
    for name, module in model.named_modules():
        level = 0 if name == "" else name.count(".") + 1
        if level <= depth:
            targets.append((root if name == "" else f"{root}.{name}", module, type(module).__name__))
    return targets


def _tensors(value, found: list) -> list:
    """The tensors that require grad inside value (tensors, lists, tuples and dicts of them)."""
    import torch

    if isinstance(value, torch.Tensor):
        if value.requires_grad:
            found.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _tensors(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _tensors(item, found)
    return found


class _BackwardRange:
    """One module call's backward range: opened by its outputs' gradient, ended by its inputs'."""

    __slots__ = ("name", "inputs_left", "record", "done", "owner")

    def __init__(self, name: str, inputs: int, owner: "ModuleRanges"):
        self.name, self.inputs_left, self.owner = name, inputs, owner
        self.record = None
        self.done = False

    def output_ready(self, _grad) -> None:
        if self.record is None and not self.done:
            self.owner._on_backward_start()
            self.record = self.owner.open_range(self.name)
            self.owner.open_backward.append(self)

    def input_ready(self, _grad) -> None:
        self.inputs_left -= 1
        if self.inputs_left <= 0:
            self.end()

    def end(self) -> None:
        if self.record is not None and not self.done:
            self.record.__exit__(None, None, None)
        self.done = True


class ModuleRanges:
    """The module ranges of one model at one depth (0: none). The hooks are built once; an annotated
    call only registers and removes them."""

    def __init__(self, model, depth: int = DEFAULT_DEPTH):
        import torch

        self.depth = depth
        # a TorchScript module takes no Python hooks (and an export is no nn.Module): no ranges there
        hookable = isinstance(model, torch.nn.Module) and not isinstance(model, torch.jit.ScriptModule)
        self.targets = module_targets(model, depth) if depth > 0 and hookable else []
        self.open_backward: list[_BackwardRange] = []
        self._callback_queued = False
        self._open_forward: list = []  # (range, pending backward range) of the calls in progress
        self._grad_enabled = torch.is_grad_enabled
        self.open_range = _range_opener() if self.targets else None
        self._hooks = [(module, *self._make_hooks(path, kind)) for path, module, kind in self.targets]

    def recording(self, annotate: bool):
        """The ranges for one call when it is annotated (the profiled window); nothing otherwise."""
        if not annotate or not self.targets:
            return contextlib.nullcontext()
        return self._installed()

    def _make_hooks(self, path: str, kind: str):
        forward_name = range_name("forward", path, kind)
        backward_name = range_name("backward", path, kind)
        open_range, open_forward, grad_enabled = self.open_range, self._open_forward, self._grad_enabled

        def before(module, args, kwargs):
            pending = None
            if grad_enabled():
                inputs = _tensors(kwargs, _tensors(args, []))
                pending = _BackwardRange(backward_name, len(inputs), self)
                for tensor in inputs:
                    tensor.register_hook(pending.input_ready)
            open_forward.append((open_range(forward_name), pending))

        def after(module, args, kwargs, output):
            if not open_forward:
                return
            record, pending = open_forward.pop()
            record.__exit__(None, None, None)
            if pending is not None:
                for tensor in _tensors(output, []):
                    tensor.register_hook(pending.output_ready)

        return before, after

    @contextlib.contextmanager
    def _installed(self) -> Iterator[None]:
        handles = []
        for module, before, after in self._hooks:
            handles.append(module.register_forward_pre_hook(before, with_kwargs=True))
            handles.append(module.register_forward_hook(after, with_kwargs=True, always_call=True))
        try:
            yield
        finally:
            for handle in handles:
                handle.remove()
            while self._open_forward:  # a forward that raised past its hooks
                self._open_forward.pop()[0].__exit__(None, None, None)

    def _on_backward_start(self) -> None:
        """The first range of a backward pass queues the engine callback that ends what is left open."""
        if not self._callback_queued:
            from torch.autograd import Variable

            Variable._execution_engine.queue_callback(self._end_backward)
            self._callback_queued = True

    def _end_backward(self) -> None:
        for pending in reversed(self.open_backward):
            pending.end()
        self.open_backward.clear()
        self._callback_queued = False


# A lane's thread id: (lane + 1) × LANE_TID_BASE + its thread's own id. Thread ids stay far below it (Linux's
# pid_max is 2^22) and a lane's id far below 2^53, where a JSON reader's doubles stop being exact;
# sql/ingest.sql reads a lane's ranges back as its thread's with the same arithmetic.
LANE_TID_BASE = 10**12
BACKWARD_PREFIX = RANGE_PREFIX["backward"]


def lane_tid(tid: int, lane: int) -> int:
    """The thread id of the `lane`-th (0-based) track of `tid`'s backward module ranges."""
    return (lane + 1) * LANE_TID_BASE + tid


def own_thread(tid):
    """The thread whose work a track holds: a lane's thread, any other track itself."""
    return tid % LANE_TID_BASE if isinstance(tid, int) and tid >= LANE_TID_BASE else tid


def _perfetto_ns(value) -> int:
    """A µs time as Perfetto reads it (store/decode/trace_check.py: int(value × 1000))."""
    return value * 1000 if isinstance(value, int) else int(float(value) * 1000.0)


def _first_nesting_lane(lanes: list[list[int]], start: int, end: int) -> int:
    """The first lane where [start, end) nests (what ended by `start` closed first), a new one if none."""
    for number, stack in enumerate(lanes):
        while stack and stack[-1] <= start:
            stack.pop()
        if not stack or end <= stack[-1]:
            return number
    lanes.append([])
    return len(lanes) - 1


def assign_lanes(events: list) -> int:
    """Move every backward module range (a complete event) of an integer thread onto the first of that thread's
    lanes where it nests (each lane a stack: disjoint from, or inside, what is open there), in place; adds a
    thread_name for each lane used. Returns how many ranges moved."""
    by_thread: dict[tuple, list[dict]] = {}
    for event in events:
        if (
            isinstance(event, dict)
            and event.get("ph") == "X"
            and str(event.get("name", "")).startswith(BACKWARD_PREFIX)
            and isinstance(event.get("tid"), int)
            and event["tid"] < LANE_TID_BASE
        ):
            by_thread.setdefault((event.get("pid"), event["tid"]), []).append(event)
    names = []
    for (pid, tid), ranges in by_thread.items():
        spans = sorted(
            ((_perfetto_ns(e["ts"]), _perfetto_ns(e["ts"]) + _perfetto_ns(e.get("dur", 0)), e) for e in ranges),
            key=lambda span: (span[0], -span[1]),
        )
        lanes: list[list[int]] = []  # each lane's stack of open ends
        for start, end, event in spans:
            number = _first_nesting_lane(lanes, start, end)
            lanes[number].append(end)
            event["tid"] = lane_tid(tid, number)
        for number in range(len(lanes)):
            names.append(
                {"ph": "M", "name": "thread_name", "pid": pid, "tid": lane_tid(tid, number),
                 "args": {"name": f"module backward ranges of thread {tid} ({number + 1}/{len(lanes)})"}}
            )  # fmt: skip
            names.append(
                {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": lane_tid(tid, number),
                 "args": {"sort_index": tid}}
            )  # fmt: skip
    events.extend(names)
    return sum(len(ranges) for ranges in by_thread.values())


def separate_backward_ranges(path: Path) -> int:
    """Rewrite the trace at `path` with its backward module ranges on lanes of their own (assign_lanes),
    one event a line as Kineto writes it, through a temp file and a rename; untouched when it holds none.
    Returns how many ranges moved."""
    path = Path(path)
    raw = path.read_bytes()
    if BACKWARD_PREFIX.encode() not in raw:
        return 0
    trace = json.loads(raw)
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        return 0
    moved = assign_lanes(events)
    if not moved:
        return 0
    head = [f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in trace.items() if key != "traceEvents"]
    body = ",\n".join("    " + json.dumps(event, allow_nan=False) for event in events)
    text = "{\n" + "".join(line + ",\n" for line in head) + '  "traceEvents": [\n' + body + "\n  ]\n}\n"
    handle, temp = tempfile.mkstemp(prefix=".libreyolo-profile-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return moved
