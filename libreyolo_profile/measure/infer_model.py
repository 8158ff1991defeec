"""The model side of `libreyolo profile infer`: build what --weights names (any detection family, or
an export), check it runs at the asked size before anything is timed, record its identity (family,
size, parameters, FLOPs at the measured input, format, runtime), and after the trials hand the
runtime's own per-node profile to each trial's trace (measure/runtimes.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from libreyolo_profile.errors import ProfileError
from libreyolo_profile.measure import adapter, common, flop_cache, runtimes


@dataclass
class InferModel:
    call: object  # InferCall (PyTorch) or runtimes.ExportCall: call(images, annotate)
    info: dict  # profile.json's `model` section
    marks: dict
    imgsz: int
    # untimed calls made on the plan's first batch before any trial (the preflight): they are the first
    # trial's first warmup calls, the same work on the same inputs
    preflight_calls: int = 1


def prepare(opts, device, tmp: Path, images: list, torch_call: Callable[[object, int], object]) -> InferModel:
    """The model, its call, and one untimed preflight call on the first batch: a family that cannot
    run here (an input size it refuses, a missing dependency) exits 2 with LibreYOLO's reason before
    any trial. The preflight is the first trial's first warmup call (InferModel.preflight_calls).
    `torch_call(wrapper, imgsz)` builds the PyTorch call."""
    shown = Path(opts.weights).name
    with common.status(f"building {shown} on {device}"):
        model, info, marks = adapter.build_model(opts.weights, opts.size, device, tmp)
    fmt = info["format"]
    if fmt == "pytorch":
        model.model.eval()
        imgsz = adapter.round_imgsz(model, opts.imgsz)
        call = torch_call(model, imgsz)
    else:
        imgsz = runtimes.fit_imgsz(model, opts.imgsz, common.warn)
        call = runtimes.ExportCall(model, fmt, imgsz, opts, tmp)
    first = [images[k % len(images)] for k in range(opts.batch)]
    _preflight(call, first, info, imgsz)
    if fmt != "pytorch":
        call.warm_profiler(first, opts.warmup)
    info.update(_identity(model, fmt, device, first[0], imgsz))
    if info["input_shape"][-2:] != [imgsz, imgsz]:
        h, w = info["input_shape"][-2:]
        common.warn(
            f"{info.get('family')} resizes its input by its own rule: this image runs at {h}x{w}, "
            f"not --imgsz {imgsz} (model.input_shape records it)"
        )
    return InferModel(call=call, info=info, marks=marks, imgsz=imgsz)


def _preflight(call, batch: list, info: dict, imgsz: int) -> None:
    try:
        call(batch, False)
    except ProfileError:
        raise
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise ProfileError(
            f"{info.get('family')}-{info.get('size')} ({info['format']}) cannot be profiled at "
            f"--imgsz {imgsz} --batch {len(batch)}: LibreYOLO's inference failed "
            f"({type(exc).__name__}: {first})",
            2,
        ) from None


def _identity(model, fmt: str, device, image, imgsz: int) -> dict:
    """Parameter count, the measured input shape, and FLOPs of one image's forward at that shape
    (null, with the reason, where they cannot be counted)."""
    if fmt == "pytorch":
        x = model._preprocess(image, "auto", input_size=imgsz)[0]
        shape = tuple(int(v) for v in x.shape)
        flops, why = flop_cache.forward_flops(model.model, shape, device)
        params = adapter.parameter_count(model.model)
        params_why = None
    else:
        x = model._preprocess(image, imgsz, "auto")[0]
        shape = tuple(int(v) for v in x.shape)
        if fmt == "torchscript":
            flops, why = flop_cache.forward_flops(model.model, shape, device)
        else:
            flops, why = None, f"not counted for {fmt} exports (the runtime's graph is not a torch module)"
        params, params_why = _export_parameters(model, fmt)
    out = {
        "input_shape": list(shape),
        "parameter_count": params,
        "flops": flops,
        "flops_imgsz": [shape[-2], shape[-1]],
        "flops_scope": (
            "one image's inference forward at the measured input shape, counted by torch.utils.flop_counter "
            "(2 FLOPs per multiply-accumulate of convolutions, matmuls and attention; element-wise ops and "
            "NMS not counted)"
        ),
    }
    if why:
        out["flops_null_reason"] = why
    if params_why:
        out["parameter_count_null_reason"] = params_why
    return out


def _export_parameters(backend, fmt: str) -> tuple[int | None, str | None]:
    if fmt == "torchscript":
        return adapter.parameter_count(backend.model), None
    if fmt == "onnx":
        try:
            import onnx
            from onnx import numpy_helper

            graph = onnx.load(backend.model_path, load_external_data=False).graph
            return int(sum(numpy_helper.to_array(t).size for t in graph.initializer)), None
        except Exception as exc:
            return None, f"the ONNX graph's initializers could not be counted ({type(exc).__name__})"
    return None, "not counted for OpenVINO exports (weights are folded into constant nodes)"


def finish(model: InferModel, trials: list) -> None:
    """Merge the runtime's own per-node times into each trial's trace (its profiled window is the
    position in `trials`), and record where the ops table's rows came from."""
    if model.info["format"] == "pytorch":
        model.info["ops_source"] = "torch profiler (aten ops)"
        return
    merged = None
    for window, trial in enumerate(trials):
        merged = model.call.merge_into_trace(Path(trial.trace_path), window)
    if merged:
        model.info.update(merged)
