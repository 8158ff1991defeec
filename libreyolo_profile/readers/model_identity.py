"""One line naming the profiled model, for `summary` and `report`: family-size, the format and
runtime when it is not PyTorch, parameters, and FLOPs at the measured input size (profile.json's
`model` section; older profiles without these fields show what they have)."""

from __future__ import annotations


def model_line(model: dict) -> str:
    if not model.get("family"):
        return ""
    parts = [f"{model['family']}-{model.get('size')}"]
    fmt = model.get("format")
    if fmt and fmt != "pytorch":
        provider = model.get("execution_provider")
        parts.append(f"{fmt} via {model.get('runtime')}" + (f" ({provider})" if provider else ""))
    if isinstance(model.get("parameter_count"), int):
        parts.append(f"{model['parameter_count'] / 1e6:.2f} M params")
    if isinstance(model.get("flops"), int):
        h, w = (model.get("flops_imgsz") or [None, None])[:2]
        parts.append(f"{model['flops'] / 1e9:.2f} GFLOPs/image at {h}×{w}")
    return " · ".join(parts)


# the model fields `compare` reports when the two sides differ in them
COMPARED = (
    "family",
    "size",
    "format",
    "runtime",
    "execution_provider",
    "weights",
    "parameter_count",
    "flops",
    "input_shape",
)


def model_differences(before: dict, after: dict) -> dict:
    """{field: [before, after]} for each model field that differs between two profile documents."""
    b, a = before.get("model") or {}, after.get("model") or {}
    return {k: [b.get(k), a.get(k)] for k in COMPARED if b.get(k) != a.get(k)}


def differences_line(differences: dict) -> str | None:
    if not differences:
        return None
    return "model differs: " + "; ".join(f"{k} {v[0]} → {v[1]}" for k, v in differences.items())
