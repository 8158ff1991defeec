"""`libreyolo profile infer` on exported models: ONNX Runtime, OpenVINO and TorchScript files, loaded
by LibreYOLO's own backends (`libreyolo.LibreYOLO(path)`), called stage by stage like a PyTorch model.

One call = the backend's `_preprocess` per image (its family's letterbox/normalisation, to a numpy
blob) + the batch concatenated | the backend's `_run_inference` (the runtime's own session/request)
| `_postprocess` per image (LibreYOLO's decoding and NMS for that family), the same three phases as
the PyTorch path.

Where the time goes inside the runtime comes from the runtime's own profiler
(measure/runtime_profilers.py), merged into each trial's trace as ops.
"""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.measure import trials
from libreyolo_profile.measure.runtime_profilers import ANCHOR, RUNTIME_PROFILERS

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

    def __init__(self, backend, fmt: str, imgsz: int, opts, tmp: Path):
        """`opts`: the InferOptions (--batch, and NMS's --conf, --iou, --max-det)."""
        import numpy as np

        self.np = np
        self.backend, self.fmt, self.imgsz = backend, fmt, imgsz
        self.conf, self.iou, self.max_det = opts.conf, opts.iou, opts.max_det
        batch = opts.batch
        if batch > 1 and not backend._supports_batched_inference():
            raise UsageError(
                f"--batch {batch}: this {fmt} export takes one image per call (fixed batch axis); "
                "use --batch 1 or re-export with a dynamic batch"
            )
        self.profiler = RUNTIME_PROFILERS[fmt](backend, tmp) if fmt in RUNTIME_PROFILERS else None
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
