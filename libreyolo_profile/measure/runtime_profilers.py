"""Where the time goes inside an exported model's runtime (`infer` on exports, measure/runtimes.py): the
runtime's own profiler, turned into the events our ingest already reads, so the ops table, phases and
every reader work unchanged:
- ONNX Runtime: a second session on the same file and execution providers with
  `SessionOptions.enable_profiling`, used for the profiled window only (the unprofiled calls use the
  backend's own session, so the overhead pair compares profiling against none). Each node's
  `*_kernel_time` event becomes an op `onnxruntime::<op type>`, shifted onto the torch trace's clock
  by its run: the run's `model_run` start is placed at the start of the `onnxruntime::run` host range
  that wraps the call in the trace.
- OpenVINO: a second compiled model with `PERF_COUNT`, for the window only. Per-layer counters carry
  durations but no start times: each executed layer's `real_time` becomes an op
  `openvino::<layer type>`, laid end to end from the start of the `openvino::infer` host range in
  the order OpenVINO reports them (their order and exact start inside the call are not measured).
- TorchScript: the torch profiler sees the TorchScript graph's aten ops itself.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from libreyolo_profile.errors import ProfileError

OP_PREFIX = {"onnx": "onnxruntime::", "openvino": "openvino::"}
# the host range (torch.profiler record_function) that wraps each profiled runtime call in the trace
ANCHOR = {"onnx": "onnxruntime::run", "openvino": "openvino::infer"}


def _anchors(trace: dict, name: str) -> list[dict]:
    found = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X" and e.get("name") == name]
    return sorted(found, key=lambda e: float(e["ts"]))


def _op_event(anchor: dict, name: str, ts: float, dur: float, args: dict) -> dict:
    return {
        "ph": "X",
        "cat": "cpu_op",
        "name": name,
        "pid": anchor.get("pid"),
        "tid": anchor.get("tid"),
        "ts": round(ts, 3),
        "dur": round(dur, 3),
        "args": args,
    }


def _rewrite(trace_path: Path, trace: dict) -> None:
    """Replace our own temporary trace file (inside the run's workspace) via temp + rename."""
    staged = trace_path.with_name(trace_path.name + ".merging")
    with open(staged, "x", encoding="utf-8") as fh:
        json.dump(trace, fh)
    os.replace(staged, trace_path)


class _OrtProfiler:
    """ONNX Runtime's own profiler on a second session over the same file and providers."""

    def __init__(self, backend, tmp: Path):
        import onnxruntime as ort

        self.backend = backend
        self.plain = backend.session
        options = ort.SessionOptions()
        options.enable_profiling = True
        options.profile_file_prefix = str(tmp / "onnxruntime_profile")
        self.session = ort.InferenceSession(backend.model_path, options, providers=self.plain.get_providers())
        self.provider = self.session.get_providers()[0]
        self.runs: list[int | None] = []  # per run of the profiled session: its window, None for warming
        self._events: list[dict] | None = None

    def swapped(self):
        return _swapped(self.backend, "session", self.session, self.plain)

    def ran(self, window: int | None) -> None:
        self.runs.append(window)

    def after_run(self) -> None:
        return None

    def _profile(self) -> list[dict]:
        if self._events is None:
            path = self.session.end_profiling()
            with open(path, encoding="utf-8") as fh:
                self._events = json.load(fh)
        return self._events

    def merge(self, trace_path: Path, window: int) -> dict:
        events = self._profile()
        model_runs = sorted(
            (e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"), key=lambda e: e["ts"]
        )
        if len(model_runs) != len(self.runs):
            raise ProfileError(
                f"ONNX Runtime's profile has {len(model_runs)} runs but {len(self.runs)} were made; "
                "its node times cannot be matched to the window",
                3,
            )
        runs = [r for r, w in zip(model_runs, self.runs, strict=False) if w == window]
        nodes = sorted(
            (e for e in events if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time")),
            key=lambda e: e["ts"],
        )
        with open(trace_path, encoding="utf-8") as fh:
            trace = json.load(fh)
        anchors = _anchors(trace, ANCHOR["onnx"])
        if len(anchors) != len(runs):
            raise ProfileError(
                f"the trace has {len(anchors)} {ANCHOR['onnx']} ranges but ONNX Runtime recorded "
                f"{len(runs)} runs in this window",
                3,
            )
        added = []
        for anchor, run in zip(anchors, runs, strict=False):
            start, end = run["ts"], run["ts"] + run["dur"]
            for node in nodes:
                if start <= node["ts"] and node["ts"] + node["dur"] <= end:
                    args = node.get("args") or {}
                    added.append(
                        _op_event(
                            anchor,
                            OP_PREFIX["onnx"] + str(args.get("op_name", "?")),
                            float(anchor["ts"]) + (node["ts"] - start),
                            node["dur"],
                            {"provider": args.get("provider"), "node": node["name"][: -len("_kernel_time")]},
                        )
                    )
        trace["traceEvents"].extend(added)
        _rewrite(trace_path, trace)
        return {
            "ops_source": (
                f"ONNX Runtime profiler (SessionOptions.enable_profiling), {self.provider}: "
                f"{len(added)} node kernel times over {len(runs)} runs as onnxruntime::<op type> ops"
            ),
            "execution_provider": self.provider,
        }


class _OpenVinoProfiler:
    """OpenVINO's per-layer performance counters on a second compiled model (PERF_COUNT)."""

    def __init__(self, backend, tmp: Path):
        import openvino as ov

        self.backend = backend
        self.plain = backend.compiled_model
        core = ov.Core()
        model = core.read_model(str(Path(backend.model_path) / "model.xml"))
        device = self.plain.get_property("EXECUTION_DEVICES")
        device = device[0] if isinstance(device, (list, tuple)) and device else "CPU"
        self.device = device
        self.compiled = core.compile_model(model, device, {**backend._compile_config(device), "PERF_COUNT": "YES"})
        self.runs: list[int | None] = []
        self.counters: list[list[tuple[str, str, str, float]]] = []  # per window run: (layer, type, exec, µs)
        self._pending = False

    def swapped(self):
        return _swapped(self.backend, "compiled_model", self.compiled, self.plain)

    def ran(self, window: int | None) -> None:
        self.runs.append(window)
        self._pending = window is not None

    def after_run(self) -> None:
        """Read the last run's counters after the call's phases, so the read is in no phase."""
        if not self._pending:
            return
        request = getattr(self.compiled, "_infer_request", None)
        if request is None:
            raise ProfileError("OpenVINO's compiled model exposes no infer request to read counters from", 3)
        layers = [
            (p.node_name, p.node_type, p.exec_type, p.real_time.total_seconds() * 1e6)
            for p in request.get_profiling_info()
            if str(p.status).endswith("EXECUTED")
        ]
        self.counters.append(layers)
        self._pending = False

    def merge(self, trace_path: Path, window: int) -> dict:
        profiled = [w for w in self.runs if w is not None]  # counters[k] belongs to the k-th window run
        window_runs = [k for k, w in enumerate(profiled) if w == window]
        with open(trace_path, encoding="utf-8") as fh:
            trace = json.load(fh)
        anchors = _anchors(trace, ANCHOR["openvino"])
        if len(anchors) != len(window_runs):
            raise ProfileError(
                f"the trace has {len(anchors)} {ANCHOR['openvino']} ranges but OpenVINO counted "
                f"{len(window_runs)} runs in this window",
                3,
            )
        added, over = [], 0
        for anchor, index in zip(anchors, window_runs, strict=False):
            t = float(anchor["ts"])
            for layer, layer_type, exec_type, micros in self.counters[index]:
                added.append(
                    _op_event(
                        anchor, OP_PREFIX["openvino"] + layer_type, t, micros, {"layer": layer, "exec_type": exec_type}
                    )
                )
                t += micros
            over += t > float(anchor["ts"]) + float(anchor["dur"])
        trace["traceEvents"].extend(added)
        _rewrite(trace_path, trace)
        note = (
            f"; in {over} of {len(anchors)} runs the layers' real_time sum exceeded the call's host range"
            if over
            else ""
        )
        return {
            "ops_source": (
                f"OpenVINO per-layer performance counters (PERF_COUNT) on {self.device}: "
                f"{len(added)} executed layers over {len(anchors)} runs as openvino::<layer type> "
                "ops, laid end to end from each call's start (durations measured, positions not)" + note
            ),
            "execution_provider": self.device,
        }


RUNTIME_PROFILERS = {"onnx": _OrtProfiler, "openvino": _OpenVinoProfiler}


@contextlib.contextmanager
def _swapped(backend, attribute: str, profiled, plain):
    """The backend runs `profiled` (the runtime's profiling session or model) inside, `plain` again after."""
    setattr(backend, attribute, profiled)
    try:
        yield
    finally:
        setattr(backend, attribute, plain)
