"""`libreyolo profile infer` on exported models: ONNX Runtime, OpenVINO and TorchScript files, loaded
by LibreYOLO's own backends (`libreyolo.LibreYOLO(path)`), called stage by stage like a PyTorch model.

One call = the backend's `_preprocess` per image (its family's letterbox/normalisation, to a numpy
blob) + the batch concatenated | the backend's `_run_inference` (the runtime's own session/request)
| `_postprocess` per image (LibreYOLO's decoding and NMS for that family), the same three phases as
the PyTorch path.

Where the time goes inside the runtime comes from the runtime's own profiler, turned into the
events our ingest already reads, so the ops table, phases and every reader work unchanged:
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

from libreyolo_profile.errors import ProfileError, UsageError
from libreyolo_profile.measure import trials

# format -> (python module of the runtime, the extra that installs it, runtime name)
RUNTIMES = {
    "onnx": ("onnxruntime", "onnx", "onnxruntime"),
    "openvino": ("openvino", "openvino", "openvino"),
    "torchscript": ("torch", None, "torch.jit"),
}
# exported formats LibreYOLO loads that `infer` does not profile (no runtime profiler wired here)
UNSUPPORTED_SUFFIXES = {
    ".engine": "TensorRT",
    ".tensorrt": "TensorRT",
    ".tflite": "TFLite",
    ".mnn": "MNN",
    ".pte": "ExecuTorch",
    ".mlpackage": "CoreML",
}
OP_PREFIX = {"onnx": "onnxruntime::", "openvino": "openvino::"}
ANCHOR = {"onnx": "onnxruntime::run", "openvino": "openvino::infer"}


def export_format(path: Path) -> str | None:
    """'onnx' | 'openvino' | 'torchscript' for an exported model, None for a PyTorch checkpoint;
    exit 2 for exports LibreYOLO loads but `infer` cannot profile."""
    if path.is_dir():
        if (path / "model.xml").is_file():
            return "openvino"
        raise UsageError(
            f"--weights {path}: a directory, but not an OpenVINO export (no model.xml); "
            "`infer` profiles .pt checkpoints, .onnx, .torchscript and OpenVINO directories"
        )
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        return "onnx"
    if suffix == ".torchscript":
        return "torchscript"
    if suffix in UNSUPPORTED_SUFFIXES:
        raise UsageError(
            f"--weights {path}: {UNSUPPORTED_SUFFIXES[suffix]} exports are not profiled by "
            "libreyolo profile (supported: PyTorch .pt, ONNX Runtime .onnx, OpenVINO directories, "
            ".torchscript)"
        )
    return None


def require_runtime(fmt: str) -> None:
    """Exit 2 naming the extra when the runtime for `fmt` is not installed."""
    module, extra, runtime = RUNTIMES[fmt]
    try:
        __import__(module)
    except ImportError:
        raise UsageError(
            f"profiling a {fmt} export needs {runtime}, which is not installed: "
            f'pip install "libreyolo-profile[{extra}]"'
        ) from None


def load_export(path: Path, fmt: str, device) -> tuple[object, dict]:
    """LibreYOLO's backend for the export on `device`, and the model identity it declares."""
    require_runtime(fmt)
    import libreyolo

    if fmt != "torchscript" and device.type != "cpu":
        raise UsageError(f"--device {device}: profiling {fmt} exports runs on the CPU here; pass --device cpu")
    try:
        backend = libreyolo.LibreYOLO(str(path), device=str(device))
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise UsageError(
            f"--weights {path}: LibreYOLO could not load this {fmt} export ({type(exc).__name__}: {first})"
        ) from None
    if getattr(backend, "task", "detect") != "detect":
        raise UsageError(f"--weights {path}: a {backend.task} export; `infer` profiles detection models")
    family_id = getattr(backend, "model_family", None)
    info = {
        "family": _family_display(family_id),
        "family_id": family_id,
        "size": getattr(backend, "model_size", None),
        "format": fmt,
        "runtime": RUNTIMES[fmt][2],
        "runtime_version": _runtime_version(fmt),
        "execution_provider": _execution_provider(backend, fmt),
        "nb_classes": int(backend.nb_classes) if backend.nb_classes is not None else None,
        "input_size": _fixed_size(backend),
        "letterbox_pad": str(getattr(backend, "letterbox_pad", None)),
        "call_scope": (
            "one call = LibreYOLO's backend: _preprocess per image (to a numpy blob) + concatenate | "
            f"_run_inference on {RUNTIMES[fmt][2]} | _postprocess per image (decoding and NMS); "
            "the ops table's rows come from `ops_source`"
        ),
    }
    return backend, info


def _family_display(family_id: str | None) -> str | None:
    if not family_id:
        return None
    from libreyolo_profile.measure import families

    for cls in families.detection_families():
        if cls.FAMILY == family_id:
            return families.display_name(cls)
    return family_id


def _runtime_version(fmt: str) -> str | None:
    module = __import__(RUNTIMES[fmt][0])
    return str(getattr(module, "__version__", None) or getattr(module, "get_version", lambda: None)())


def _execution_provider(backend, fmt: str) -> str:
    if fmt == "onnx":
        return backend.session.get_providers()[0]
    if fmt == "openvino":
        import openvino as ov

        device = backend.compiled_model.get_property("EXECUTION_DEVICES")
        device = device[0] if isinstance(device, (list, tuple)) and device else "CPU"
        return f"{device} ({ov.Core().get_property(device, 'FULL_DEVICE_NAME')})"
    return str(backend.device)


def _fixed_size(backend) -> int | None:
    fixed = getattr(backend, "_fixed_input_hw", None)
    if fixed is not None and int(fixed[0]) == int(fixed[1]):
        return int(fixed[0])
    size = getattr(backend, "imgsz", None)
    return int(size) if isinstance(size, int) else None


def fit_imgsz(backend, imgsz: int, warn) -> int:
    """A fixed-shape export runs only at its own size: use it, saying so, when --imgsz differs."""
    fixed = getattr(backend, "_fixed_input_hw", None)
    if fixed is None:
        return imgsz
    h, w = (int(v) for v in fixed)
    if h != w:
        raise UsageError(f"this export has a fixed {h}x{w} input; `infer` profiles square inputs only")
    if h != imgsz:
        warn(f"--imgsz {imgsz}: this export was made with a fixed {h}x{h} input; profiling at {h}")
    return h


class ExportCall:
    """One inference call of an exported model over a batch of decoded images (see the module doc)."""

    def __init__(self, backend, fmt: str, imgsz: int, conf: float, iou: float, max_det: int, batch: int, tmp: Path):
        import numpy as np

        self.np = np
        self.backend, self.fmt, self.imgsz = backend, fmt, imgsz
        self.conf, self.iou, self.max_det = conf, iou, max_det
        if batch > 1 and not backend._supports_batched_inference():
            raise UsageError(
                f"--batch {batch}: this {fmt} export takes one image per call (fixed batch axis); "
                "use --batch 1 or re-export with a dynamic batch"
            )
        self.profiler = _RUNTIME_PROFILERS[fmt](backend, tmp) if fmt in _RUNTIME_PROFILERS else None
        self._window = -1  # index of the profiled window (one per trial) the current call belongs to
        self._in_window = False

    def __call__(self, images: list, annotate: bool) -> list:
        b, np = self.backend, self.np
        with trials.phase("preprocess", annotate):
            pre = [b._preprocess(img, self.imgsz, "auto") for img in images]
            blobs = [_blob(p[0]) for p in pre]
            blob = blobs[0] if len(blobs) == 1 else np.ascontiguousarray(np.concatenate(blobs, axis=0))
        with trials.phase("forward", annotate):
            outputs = self._forward(blob, annotate)
        with trials.phase("postprocess", annotate):
            if len(pre) == 1:
                dets = [self._post(outputs, pre[0])]
            else:
                dets = [self._post([o[i : i + 1] for o in outputs], p) for i, p in enumerate(pre)]
        if annotate and self.profiler is not None:
            self.profiler.after_run()
        return dets

    def _post(self, outputs, pre) -> dict:
        return self.backend._postprocess(
            outputs, self.conf, self.iou, pre[2], input_size=self.imgsz, max_det=self.max_det, ratio=pre[3]
        )

    def _forward(self, blob, annotate: bool) -> list:
        if self.profiler is None:
            return self.backend._run_inference(blob)
        if not annotate:
            self._in_window = False
            return self.backend._run_inference(blob)
        if not self._in_window:
            self._window += 1
            self._in_window = True
        from torch.profiler import record_function

        with self.profiler.swapped(), record_function(ANCHOR[self.fmt]):
            outputs = self.backend._run_inference(blob)
        self.profiler.ran(self._window)
        return outputs

    def warm_profiler(self, images: list, calls: int) -> None:
        """Warm the runtime's profiling session/request like the warmup warms the plain one (its runs
        are kept out of every window)."""
        if self.profiler is None:
            return
        pre = [self.backend._preprocess(img, self.imgsz, "auto") for img in images]
        blobs = [_blob(p[0]) for p in pre]
        blob = blobs[0] if len(blobs) == 1 else self.np.concatenate(blobs, axis=0)
        for _ in range(max(calls, 1)):
            with self.profiler.swapped():
                self.backend._run_inference(blob)
            self.profiler.ran(None)

    def merge_into_trace(self, trace_path: Path, window: int) -> dict:
        """Add the runtime's per-node times of profiled window `window` to the torch trace as ops.
        Returns what was merged (for settings)."""
        if self.profiler is None:
            return {"ops_source": "torch profiler (TorchScript graph ops)"}
        return self.profiler.merge(trace_path, window)


def _blob(tensor):
    from libreyolo.backends.base import _to_blob

    return _to_blob(tensor)


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


_RUNTIME_PROFILERS = {"onnx": _OrtProfiler, "openvino": _OpenVinoProfiler}


@contextlib.contextmanager
def _swapped(backend, attribute: str, profiled, plain):
    """The backend runs `profiled` (the runtime's profiling session or model) inside, `plain` again after."""
    setattr(backend, attribute, profiled)
    try:
        yield
    finally:
        setattr(backend, attribute, plain)
