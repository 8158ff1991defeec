"""A profile.json written by LibreYOLO's own built-in profiler (schema libreyolo.profile.analysis/v1),
turned into our document form so every reader, `query` and `import` accept it.

What is carried over is what that profiler measured for real: step time, throughput, latency
percentiles, stage means, phase wall times, op counts, and, on a GPU, its kernel figures. What it
gets wrong is not carried over (see the README of the samples): on a CPU it reports the whole step
as host overhead, a GPU launch verdict, and 0 kernels/launches; its op times double-count nested
ops. Those become null with a reason, the verdict is recomputed by our rules (store/document/verdict.py),
and each difference is a mark in the profile. Its metrics are read in builtin_metrics.py, its tables in
builtin_tables.py.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timezone
from pathlib import Path

from libreyolo_profile import __version__
from libreyolo_profile.errors import UnanalysableError
from libreyolo_profile.store.document import marks as mark
from libreyolo_profile.store.document.assemble import assemble
from libreyolo_profile.store.document.builtin_metrics import builtin_metrics, number
from libreyolo_profile.store.document.builtin_tables import categorise_and_share, embedded_tables, kernel_rows, op_rows
from libreyolo_profile.store.document.headline import trial_spread
from libreyolo_profile.store.document.parts import DocumentParts
from libreyolo_profile.store.document.verdict import decide
from libreyolo_profile.store.schema import BUILTIN_SCHEMA

SOURCE_TYPE = "libreyolo-builtin"
_MODEL_NAME = re.compile(r"^(?P<family>[A-Za-z]+(?:v)?\d+)[-_]?(?P<size>[nstmcelx])(?=$|[-_.])", re.IGNORECASE)


def _model(raw: dict) -> dict:
    weights = raw.get("model") or (raw.get("config") or {}).get("model")
    model = {"weights": weights, "family": None, "size": None, "weights_source": "as named by the built-in profiler"}
    if isinstance(weights, str):
        match = _MODEL_NAME.match(Path(weights).name)
        if match:
            model["family"], model["size"] = match.group("family"), match.group("size").lower()
    return model


def _kind(raw: dict) -> str:
    config = raw.get("config") or {}
    return (
        "infer" if raw.get("mode") == "inference" or config.get("mode") == "inference" or "latency" in raw else "train"
    )


def _on_cpu(raw: dict) -> bool:
    device = (raw.get("config") or {}).get("device")
    if device is not None:
        return str(device).lower().startswith("cpu")
    return not raw.get("kernels_per_step") and not raw.get("gpu_busy_ms_per_step")  # no device work recorded


def _steps(raw: dict) -> int | None:
    window = raw.get("window") or {}
    steps = window.get("real_steps")
    if isinstance(steps, int) and steps > 0:
        return steps
    n = (raw.get("latency") or {}).get("n")
    return n if isinstance(n, int) and n > 0 else None


def _repeat(raw: dict) -> tuple[dict, list[dict]]:
    values = raw.get("img_per_s_trials")
    numbers = [float(v) for v in values or [] if number(v) is not None]
    if len(numbers) < 2:
        return {}, []
    # The sample standard deviation (n − 1), recomputed: the built-in file stores the population one.
    return trial_spread({"throughput_img_s": numbers}), [{"throughput_img_s": v} for v in numbers]


def _marks(raw: dict, on_cpu: bool, kind: str, has_ops: bool) -> dict:
    """Its own marks (the ones every profile shares, a CPU profile or a tiny window, the assembler adds)."""
    marks = {mark.IMPORTED_BUILTIN: mark.imported_builtin()}
    if has_ops:
        marks[mark.OPS_TOTAL_ONLY] = mark.ops_total_only()
    if any(len(k.get("raw_name") or "") >= 90 for k in raw.get("kernels") or []) or any(
        len(o.get("op") or "") >= 70 for o in raw.get("ops") or []
    ):
        marks[mark.BUILTIN_NAMES_CUT] = mark.builtin_names_cut()
    if kind == "infer":
        marks[mark.BUILTIN_LATENCY_SUBSET] = mark.builtin_latency_subset((raw.get("latency") or {}).get("n"))
    if not on_cpu:
        marks[mark.BUILTIN_GPU_DEFINITIONS] = mark.builtin_gpu_definitions()
        if raw.get("memory_pressure"):
            marks[mark.BUILTIN_MEMORY_PRESSURE] = mark.builtin_memory_pressure(raw.get("cuda_mallocs_per_step"))
    if "random" in str(raw.get("model") or "").lower():
        marks[mark.RANDOM_WEIGHTS] = mark.random_weights_named(raw.get("model"))
    return marks


def _read(path: Path) -> tuple[bytes, dict]:
    """The file's bytes and its JSON, refused with one line unless it is a built-in profile."""
    data = Path(path).read_bytes()
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise UnanalysableError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(raw, dict) or raw.get("schema") != BUILTIN_SCHEMA:
        raise UnanalysableError(f"{path}: not a LibreYOLO built-in profile (schema {BUILTIN_SCHEMA})")
    return data, raw


def _source(path: Path, raw: dict) -> dict:
    """The document's source: the file converted, and what it says about the trace it was made from."""
    return {
        "type": SOURCE_TYPE,
        "path": str(Path(path).resolve()),
        "schema": BUILTIN_SCHEMA,
        "trace": raw.get("trace"),
        "created_from": "the file's modification time",
        "aggregation": raw.get("aggregation"),
    }


def builtin_document(path: Path) -> dict:
    """Our profile document for a built-in profile.json; tables embedded, verdict recomputed."""
    data, raw = _read(path)
    kind, on_cpu = _kind(raw), _on_cpu(raw)
    steps = _steps(raw)
    if steps is None or number(raw.get("step_ms")) is None:
        raise UnanalysableError(f"{path}: the built-in profile records no measured steps or step time")
    metrics, reasons = builtin_metrics(raw, kind, on_cpu, steps)
    kernels = kernel_rows(raw, steps)
    metrics.update(categorise_and_share(kernels, on_cpu))
    ops = op_rows(raw, steps)
    repeat, trials = _repeat(raw)
    if repeat:
        metrics["throughput_img_s"] = repeat["throughput_img_s"]["mean"]
        metrics["ms_per_img"] = 1000.0 / metrics["throughput_img_s"]
    verdict = decide(metrics, kind, not on_cpu, None, source="builtin")
    # On a GPU our thrashing rule needs allocator retries or reserved memory, which it does not record.
    thrashing = False if on_cpu else None
    if not on_cpu:
        reasons["thrashing"] = (
            "our thrashing rule needs allocator retries or reserved device memory, which the "
            "built-in profiler does not record"
        )
    public = {**metrics, "bound": verdict["bound"], "bound_reason": verdict["reason"], "thrashing": thrashing}
    config = raw.get("config") or {}
    mtime = datetime.fromtimestamp(Path(path).stat().st_mtime, timezone.utc)
    return assemble(
        DocumentParts(
            kind=kind,
            kind_inferred=False,
            device_type="cpu" if on_cpu else "gpu",
            metrics=metrics,
            verdict=verdict,
            thrashing=thrashing,
            marks=_marks(raw, on_cpu, kind, bool(ops)),
            null_reasons={k: v for k, v in reasons.items() if public.get(k) is None},
            trials=trials or [metrics],
            repeat=repeat,
            window_source="the built-in profiler's measured window",
            images_per_step_source="settings" if metrics.get("images_per_step") else None,
            devices=[],
            rank=None,
            world_size=None,
            tables=embedded_tables(raw, kind, on_cpu, steps, kernels, ops),
            source=_source(path, raw),
            command=None,
            settings={**config, ("steps" if kind == "train" else "runs"): steps},
            environment={"device": config.get("device"), "device_name": "CPU" if on_cpu else None},
            model=_model(raw),
            # the same file always converts to the same document (and this converter's version is part of it)
            generation=hashlib.sha256(f"{SOURCE_TYPE}|{__version__}|".encode() + data).hexdigest()[:32],
            created=mtime.isoformat(timespec="seconds"),
            producer=f"libreyolo-profile {__version__} (converted)",
            extra=None,
        )
    )
