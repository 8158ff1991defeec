"""A profile.json written by LibreYOLO's own built-in profiler (schema libreyolo.profile.analysis/v1),
turned into our document form so every reader, `query` and `import` accept it.

What is carried over is what that profiler measured for real: step time, throughput, latency
percentiles, stage means, phase wall times, op counts, and, on a GPU, its kernel figures. What it
gets wrong is not carried over (see the README of the samples): on a CPU it reports the whole step
as host overhead, a GPU launch verdict, and 0 kernels/launches; its op times double-count nested
ops. Those become null with a reason, the verdict is recomputed by our rules (store/document/verdict.py),
and each difference is a mark in the profile.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path

from libreyolo_profile import __version__
from libreyolo_profile.errors import UnanalysableError
from libreyolo_profile.metric_catalog import METRICS
from libreyolo_profile.store.document import marks as mark
from libreyolo_profile.store.document.assemble import assemble
from libreyolo_profile.store.document.headline import drop_thin_percentiles, trial_spread
from libreyolo_profile.store.document.verdict import decide
from libreyolo_profile.store.schema import BUILTIN_SCHEMA, TABLES

SOURCE_TYPE = "libreyolo-builtin"
_MODEL_NAME = re.compile(r"^(?P<family>[A-Za-z]+(?:v)?\d+)[-_]?(?P<size>[nstmcelx])(?=$|[-_.])", re.IGNORECASE)


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


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


def _phase_wall_ms(raw: dict, kind: str) -> dict[str, float | None]:
    """Per-step host wall time per phase: infer from the stage means, train from the phase table."""
    if kind == "infer":
        return {stage: _number(ms) for stage, ms in (raw.get("stages_ms") or {}).items()}
    return {p.get("phase"): _number(p.get("wall_ms_per_step")) for p in raw.get("phases") or []}


def _metrics(raw: dict, kind: str, on_cpu: bool, steps: int | None) -> tuple[dict, dict]:
    """(metrics, null reasons). Only figures the built-in profiler measured by our definitions."""
    m: dict = {name: None for name in METRICS if name not in ("bound", "bound_reason", "thrashing")}
    reasons: dict = {}
    config = raw.get("config") or {}
    window = raw.get("window") or {}
    m["steps"] = steps
    m["window_ms"] = _number(window.get("wall_ms")) or None
    m["step_ms"] = _number(raw.get("step_ms"))
    m["throughput_img_s"] = _number(raw.get("img_per_s"))
    if m["throughput_img_s"]:
        m["ms_per_img"] = 1000.0 / m["throughput_img_s"]
    m["images_per_step"] = _number(config.get("batch"))
    m["ops_per_step"] = _number((raw.get("metrics") or {}).get("ops_per_step"))
    walls = _phase_wall_ms(raw, kind)
    if kind == "infer":
        latency = raw.get("latency") or {}
        for q in ("p50", "p90", "p99"):
            m[f"latency_{q}_ms"] = _number(latency.get(f"{q}_ms"))
        calls = latency.get("n") if isinstance(latency.get("n"), int) else None
        for name, why in drop_thin_percentiles(m, calls).items():  # its p99 of 10 calls is its slowest call
            reasons[name] = (
                f"{why}; the built-in profiler reported {_number(latency.get(name.split('_')[1] + '_ms'))} ms"
            )
        mean_latency = _number(latency.get("mean_ms")) or m["step_ms"]
        for stage in ("preprocess", "forward", "postprocess"):
            ms = walls.get(stage)
            m[f"{stage}_ms"] = ms
            if ms is not None and mean_latency:
                m[f"{stage}_pct"] = 100.0 * ms / mean_latency
    else:
        m["dataload_ms"] = _number(raw.get("dataload_ms"))
        frac = _number(raw.get("dataload_frac"))
        m["dataload_pct"] = 100.0 * frac if frac is not None else None
        m["to_device_ms"] = walls.get("to_device")
        if m["to_device_ms"] is not None and m["step_ms"]:
            m["to_device_pct"] = 100.0 * m["to_device_ms"] / m["step_ms"]
    if not on_cpu:
        # Its GPU figures are measured, by definitions close to ours (see the mark).
        util = _number(raw.get("gpu_util_raw"))
        m["gpu_util_pct"] = 100.0 * util if util is not None else None
        m["gpu_busy_ms"] = _number(raw.get("gpu_busy_ms_per_step"))
        m["tensorcore_pct"] = _number(raw.get("tensorcore_pct"))
        m["memcpy_ms"] = _number(raw.get("memcpy_ms_per_step"))
        m["peak_vram_mb"] = m["peak_mem_mb"] = _number(raw.get("peak_vram_mb"))
        m["kernels_per_step"] = _number(raw.get("kernels_per_step"))
        m["launches_per_step"] = _number(raw.get("launches_per_step"))
        for name in ("peak_vram_mb", "peak_mem_mb"):
            if m[name] is None:
                reasons[name] = "the built-in profiler recorded no peak device memory"
        reasons["host_overhead_ms"] = reasons["host_overhead_pct"] = (
            "the built-in profiler's host overhead is step − GPU busy − dataload, which counts sync waits and "
            "device work in flight; it is not device idle time waiting for the host, so it is not carried over"
        )
        reasons["sync_ms"] = reasons["sync_pct"] = "the built-in profiler does not record synchronizing calls"
        reasons["per_launch_host_us"] = "needs sync time, which the built-in profiler does not record"
        reasons["launch_api_us"] = reasons["kernel_gap_us"] = (
            "the built-in profiler keeps no per-launch or per-stream kernel timing"
        )
    else:
        text = (
            "the built-in profiler reports the whole step as host overhead on a CPU and records no leaf-op "
            "time, so CPU overhead cannot be told from work"
        )
        for name in ("host_overhead_ms", "host_overhead_pct", "leaf_busy_pct", "per_launch_host_us"):
            reasons[name] = text
        reasons["launches_per_step"] = (
            "on a CPU a launch is a dispatched leaf op; the built-in profiler reports 0 and keeps no leaf-op count"
        )
        reasons["peak_mem_mb"] = "the built-in profiler records no host memory peak"
    reasons["profiler_overhead_pct"] = "the built-in profiler does not time the work without the profiler"
    if m["steps"] is None:
        reasons["steps"] = "the built-in profile names no measured window"
    if m["window_ms"] is None:
        reasons["window_ms"] = "the built-in profile records no window wall time"
    if m["images_per_step"] is None:
        for name in ("images_per_step", "throughput_img_s", "ms_per_img"):
            reasons.setdefault(name, "the built-in profile records no batch size")
    return m, reasons


def _rows_by_phase(by_phase: dict, totals: dict, name_of, make_row, steps: int) -> list[list]:
    """Rows per phase from its per-phase lists, plus the part of each name's whole-window total that
    those (top-N) lists left out, as a row with phase NULL."""
    rows, in_phases = [], {}
    for phase, entries in by_phase.items():
        for entry in entries or []:
            name = name_of(entry)
            ms, calls = _number(entry.get("ms_per_step")), _number(entry.get("count_per_step"))
            seen = in_phases.setdefault(name, [0.0, 0.0])
            seen[0] += ms or 0.0
            seen[1] += calls or 0.0
            rows.append(make_row(phase, name, ms, calls, steps))
    for name, (ms, calls) in totals.items():
        seen = in_phases.get(name, [0.0, 0.0])
        rest_ms = ms - seen[0]
        rest_calls = calls - seen[1] if calls > seen[1] else None
        # its values are rounded to 0.1 µs per step: ignore rounding residue
        if rest_ms > max(1e-3, 0.01 * ms):
            rows.append(make_row(None, name, rest_ms, rest_calls, steps))
    return rows


def _op_rows(raw: dict, steps: int) -> list[list]:
    """ops table rows. Its times are inclusive (total) time; self time is unknown."""
    return _rows_by_phase(
        raw.get("ops_by_phase") or {}, _totals(raw.get("ops"), "op"), lambda op: op.get("op"), _op_row, steps
    )


def _totals(entries, key: str) -> dict[str, list[float]]:
    """Its whole-window list by name → [ms per step, calls per step]. It cuts names (ops at 70, kernels at 90
    characters), so two entries can share a name: they are summed, as its per-phase lists do."""
    totals: dict[str, list[float]] = {}
    for entry in entries or []:
        name, ms = entry.get(key), _number(entry.get("ms_per_step"))
        if ms is None:
            continue
        total = totals.setdefault(name, [0.0, 0.0])
        total[0] += ms
        total[1] += _number(entry.get("count_per_step")) or 0.0
    return totals


def _op_row(phase, name, ms_per_step, calls_per_step, steps):
    calls = round(calls_per_step * steps) if calls_per_step is not None else None
    total = ms_per_step * steps if ms_per_step is not None else None
    # rank, phase, name, calls, calls_per_step, leaf_calls, self_ms, self_ms_per_step, total_ms, total_ms_per_step
    return [None, phase, name, calls, calls_per_step, None, None, None, total, ms_per_step]


def _kernel_rows(raw: dict, steps: int) -> list[list]:
    def name_of(k: dict) -> str:
        return k.get("raw_name") or k.get("kernel")

    named = [{**k, "name": name_of(k)} for k in raw.get("kernels") or []]
    return _rows_by_phase(raw.get("kernels_by_phase") or {}, _totals(named, "name"), name_of, _kernel_row, steps)


def _kernel_row(phase, name, ms_per_step, calls_per_step, steps):
    calls = round(calls_per_step * steps) if calls_per_step is not None else None
    mean_us = 1000.0 * ms_per_step / calls_per_step if ms_per_step is not None and calls_per_step else None
    activity = (
        "memcpy" if "memcpy" in (name or "").lower() else "memset" if "memset" in (name or "").lower() else "kernel"
    )
    # rank, device, phase, activity, category, tensorcore, name, launched_outside_steps, calls, calls_per_step,
    # total_ms, ms_per_step, mean_us, min_us, max_us, category_exclusive_ms_per_step (unknown: the built-in
    # profile has no timeline)  (category and tensorcore are filled by our rules below)
    return [
        None,
        None,
        phase,
        activity,
        None,
        None,
        name,
        False,
        calls,
        calls_per_step,
        ms_per_step * steps if ms_per_step is not None else None,
        ms_per_step,
        mean_us,
        None,
        None,
        None,
    ]


_K = {name: i for i, (name, _, _, _) in enumerate(TABLES["kernels"])}  # kernels row positions
_SHARES = ("gemm_pct", "memory_bound_pct", "communication_pct")  # what its kernel rows give by our definitions


def _categorise_and_share(rows: list[list], on_cpu: bool) -> dict:
    """Fill each kernel row's category and Tensor Core flag by our rules, and return the shares of kernel
    time (gemm_pct, memory_bound_pct, communication_pct) on a GPU: the same SQL a trace goes through
    (sql/kernel_categories.sql, sql/tensorcore_rules.sql, sql/kernel_shares.sql), not its own figures."""
    if not rows:
        return {}
    import duckdb

    from libreyolo_profile.sqlmodules import run_module

    con = duckdb.connect(":memory:")
    try:
        run_module(con, "kernel_categories.sql")
        run_module(con, "tensorcore_rules.sql")
        pairs = sorted({(r[_K["activity"]], r[_K["name"]]) for r in rows}, key=str)
        found = {
            (activity, name): (category, tensorcore)
            for activity, name, category, tensorcore in con.execute(
                """
            SELECT activity, name, kernel_category(activity, name), is_tensorcore(activity, name)
            FROM (SELECT unnest($activities::VARCHAR[]) AS activity, unnest($names::VARCHAR[]) AS name)""",
                {"activities": [a for a, _ in pairs], "names": [n for _, n in pairs]},
            ).fetchall()
        }
        for row in rows:
            row[_K["category"]], row[_K["tensorcore"]] = found[(row[_K["activity"]], row[_K["name"]])]
        if on_cpu:
            return {}
        kernels = [r for r in rows if r[_K["activity"]] == "kernel"]
        con.execute(
            """CREATE TEMP TABLE kernel_time AS
                       SELECT NULL::INTEGER AS device, unnest($category::VARCHAR[]) AS category,
                              unnest($tensorcore::BOOLEAN[]) AS tensorcore, unnest($time::DOUBLE[]) AS time""",
            {
                "category": [r[_K["category"]] for r in kernels],
                "tensorcore": [r[_K["tensorcore"]] for r in kernels],
                "time": [r[_K["ms_per_step"]] for r in kernels],
            },
        )
        run_module(con, "kernel_shares.sql")
        shares = con.execute(f"SELECT {', '.join(_SHARES)} FROM kernel_shares").fetchone()
    finally:
        con.close()
    # no kernel time at all: no share can be told, and the metrics stay null
    return dict(zip(_SHARES, shares, strict=True)) if shares and any(v is not None for v in shares) else {}


def _phase_rows(raw: dict, kind: str, on_cpu: bool, steps: int) -> list[list]:
    walls = _phase_wall_ms(raw, kind)
    rows = []
    for p in raw.get("phases") or []:
        phase = p.get("phase")
        wall = walls.get(phase)
        gpu = _number(p.get("gpu_ms_per_step"))
        kernels = _number(p.get("kernels_per_step"))
        ops = _number(p.get("ops_per_step"))
        # rank, step (NULL: the row aggregates every measured step), phase, wall_ms, gpu_ms, kernels, ops, launches,
        # launched_outside_steps
        rows.append(
            [
                None,
                None,
                phase,
                wall * steps if wall is not None else None,
                0.0 if on_cpu else (gpu * steps if gpu is not None else None),
                0 if on_cpu else (round(kernels * steps) if kernels is not None else None),
                round(ops * steps) if ops is not None else None,
                0 if on_cpu else None,
                False,
            ]
        )
    return rows


def _repeat(raw: dict) -> tuple[dict, list[dict]]:
    values = raw.get("img_per_s_trials")
    numbers = [float(v) for v in values or [] if _number(v) is not None]
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


def builtin_document(path: Path) -> dict:
    """Our profile document for a built-in profile.json; tables embedded, verdict recomputed."""
    data = Path(path).read_bytes()
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise UnanalysableError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(raw, dict) or raw.get("schema") != BUILTIN_SCHEMA:
        raise UnanalysableError(f"{path}: not a LibreYOLO built-in profile (schema {BUILTIN_SCHEMA})")
    kind, on_cpu = _kind(raw), _on_cpu(raw)
    steps = _steps(raw)
    if steps is None or _number(raw.get("step_ms")) is None:
        raise UnanalysableError(f"{path}: the built-in profile records no measured steps or step time")
    metrics, reasons = _metrics(raw, kind, on_cpu, steps)
    kernels = _kernel_rows(raw, steps)
    metrics.update(_categorise_and_share(kernels, on_cpu))
    ops = _op_rows(raw, steps)
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
    columns = {t: [c[0] for c in cols] for t, cols in TABLES.items()}
    return assemble(
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
        tables={
            "kernels": {"columns": columns["kernels"], "rows": kernels},
            "ops": {"columns": columns["ops"], "rows": ops},
            "phases": {"columns": columns["phases"], "rows": _phase_rows(raw, kind, on_cpu, steps)},
            "steps": {"columns": columns["steps"], "rows": []},
            "blame": {"columns": columns["blame"], "rows": []},  # needs the trace's timeline, which it does not record
            "modules": {"columns": columns["modules"], "rows": []},  # it records no module ranges
        },
        source={
            "type": SOURCE_TYPE,
            "path": str(Path(path).resolve()),
            "schema": BUILTIN_SCHEMA,
            "trace": raw.get("trace"),
            "created_from": "the file's modification time",
            "aggregation": raw.get("aggregation"),
        },
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
