"""The columns of the cross-run `profiles` view (SPEC §9), and the one row a profile document
gives it. docs/SCHEMA.md documents every column (tests/test_schema_docs.py keeps the two in step);
sql/cross_run_views.sql builds the views from them (store/crossrun/views.py).
"""

from __future__ import annotations

import shlex
from functools import cache

from libreyolo_profile.metric_catalog import METRICS, is_cpu_profile, metric_sql_type

# The identity every row of kernels/ops/phases/steps carries (sql/cross_run_views.sql lists the same).
IDENTITY_COLUMNS: list[tuple[str, str, str, str]] = [
    ("profile_id", "INTEGER", "", "key of the profile within this query or database (join to `profiles`)"),
    ("profile", "VARCHAR", "", "the profile directory, as found under the roots"),
    ("kind", "VARCHAR", "", "train (`run`) or infer (`infer`)"),
    ("created", "TIMESTAMPTZ", "UTC", "when the profile was written"),
    ("device_type", "VARCHAR", "", "gpu or cpu"),
    ("device_name", "VARCHAR", "", "name of the profiled device (GPU model, or CPU)"),
    ("model_family", "VARCHAR", "", "model family, e.g. LibreYOLO9 (NULL for a foreign trace)"),
    ("model_size", "VARCHAR", "", "model size variant, e.g. t"),
    ("batch", "BIGINT", "count", "images per step or call (the --batch setting)"),
    ("imgsz", "BIGINT", "px", "input image size (the --imgsz setting)"),
]

# The `profiles` view: identity, provenance and key settings, then one column per metric in METRICS.
PROFILE_COLUMNS: list[tuple[str, str, str, str]] = IDENTITY_COLUMNS + [
    ("profile_json", "VARCHAR", "", "the profile file that was read"),
    (
        "sidecar_dir",
        "VARCHAR",
        "",
        "directory of the parquet files read: the profile directory, or a cache "
        "directory when they were missing, stale or converted",
    ),
    ("generation", "VARCHAR", "", "unique id of this profile write (stable across queries; sidecars carry it)"),
    ("schema_version", "INTEGER", "", "profile.json layout version"),
    ("tables_version", "INTEGER", "", "sidecar table layout version"),
    ("kind_inferred", "BOOLEAN", "", "true when the kind was inferred from a foreign trace"),
    ("producer", "VARCHAR", "", "program and version that wrote the profile"),
    ("source_type", "VARCHAR", "", "measured (run/infer), trace (a foreign trace) or libreyolo-builtin (converted)"),
    ("source_path", "VARCHAR", "", "the trace or built-in profile it came from (NULL when measured)"),
    ("device", "VARCHAR", "", "the --device setting as given (0, cuda:1, cpu)"),
    ("half", "BOOLEAN", "", "the --half setting (infer)"),
    ("amp", "BOOLEAN", "", "the --amp setting (train)"),
    ("workers", "BIGINT", "count", "the --workers setting (train)"),
    ("warmup", "BIGINT", "count", "warmup steps or calls before the window"),
    ("repeat", "BIGINT", "count", "trials measured (--repeat)"),
    ("model_weights", "VARCHAR", "", "weights file or name"),
    ("weights_source", "VARCHAR", "", "where the weights came from (random-init is marked)"),
    ("parameter_count", "BIGINT", "count", "model parameters"),
    ("model_format", "VARCHAR", "", "how the model ran: pytorch, onnx, openvino or torchscript"),
    ("model_runtime", "VARCHAR", "", "what ran the forward: torch, onnxruntime, openvino or torch.jit"),
    ("execution_provider", "VARCHAR", "", "ONNX Runtime execution provider, OpenVINO device, or torch device"),
    ("flops", "BIGINT", "FLOPs", "one image's inference forward at the measured input (NULL where not counted)"),
    ("torch_version", "VARCHAR", "", "torch version of the measurement"),
    ("libreyolo_version", "VARCHAR", "", "libreyolo version of the measurement"),
    ("command", "VARCHAR", "", "the exact command that measured it (NULL for a foreign input)"),
    ("next_step", "VARCHAR", "", "the verdict's suggested next step"),
    ("marks", "VARCHAR[]", "", "names of the profile's marks (cpu_profile, tiny_window, thrashing …)"),
]


def metric_columns() -> list[tuple[str, str, str, str]]:
    """One `profiles` column per metric: (name, type, unit, meaning)."""
    return [(name, metric_sql_type(name), unit, meaning) for name, (unit, _, _, meaning) in METRICS.items()]


def profiles_columns() -> list[tuple[str, str, str, str]]:
    """Every column of the `profiles` view, in order: (name, type, unit, meaning)."""
    return PROFILE_COLUMNS + metric_columns()


def _bool(value):
    return value if isinstance(value, bool) else None


def _text(value):
    return None if value is None else str(value)


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


@cache
def _metric_types() -> tuple[tuple[str, str], ...]:
    """(name, type) of every metric column, built once: profile_row runs for every profile of a query."""
    return tuple((name, sql_type) for name, sql_type, _, _ in metric_columns())


def profile_row(head) -> dict:
    """The `profiles` columns that come from the profile document's head (store/document/head.py's typed
    ProfileHead, read by attribute; its tables are not needed)."""
    settings, env, model, source = head.settings, head.environment, head.model, head.source
    device_name = env.device_name or (head.devices[0].name if head.devices else None)
    if device_name is None and is_cpu_profile({"device_type": head.device_type}):
        device_name = env.cpu or "CPU"
    command = head.command
    row = {
        "kind": head.kind,
        "created": head.created,  # as written: the view casts it
        "device_type": head.device_type,
        "device_name": _text(device_name),
        "model_family": model.family,
        "model_size": model.size,
        "batch": settings.batch,
        "imgsz": settings.imgsz,
        "generation": head.generation,
        "schema_version": head.schema_version,
        "tables_version": head.tables_version,
        "kind_inferred": head.kind_inferred,
        "producer": head.producer,
        "source_type": source.type,
        "source_path": source.path,
        "device": _text(settings.device),
        "half": settings.half,
        "amp": settings.amp,
        "workers": settings.workers,
        "warmup": settings.warmup,
        "repeat": settings.repeat or len(head.trials) or None,
        "model_weights": model.weights,
        "weights_source": model.weights_source,
        "parameter_count": model.parameter_count,
        "model_format": model.format,
        "model_runtime": model.runtime,
        "execution_provider": model.execution_provider,
        "flops": model.flops,
        "torch_version": env.torch,
        "libreyolo_version": env.libreyolo,
        "command": shlex.join(command) if isinstance(command, list) else command,
        "next_step": head.verdict.next_step,
        "marks": sorted(head.marks),
    }
    metrics = head.metrics
    for name, sql_type in _metric_types():
        value = getattr(metrics, name)
        row[name] = _bool(value) if sql_type == "BOOLEAN" else _text(value) if sql_type == "VARCHAR" else _number(value)
    return row
