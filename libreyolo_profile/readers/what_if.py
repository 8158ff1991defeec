"""`libreyolo profile what-if`: what removing a kernel category or N launches per step would buy,
by the model the profile's own verdict picks (sql/what_if.sql holds the model and the arithmetic).

The projected step never falls below the critical path that remains: the larger of the device work left
and the host's recorded work per step that does not wait on the device (FLOOR, which `--help` quotes)."""

from __future__ import annotations

import math
from pathlib import Path

from libreyolo_profile.cli_help import WHAT_IF_FLOOR
from libreyolo_profile.errors import UsageError
from libreyolo_profile.metric_catalog import METRICS, is_cpu_profile, null_reason
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import fmt, stdout_console
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.readers.common import OpenProfile, opened, profile_identity, records, run_sql
from libreyolo_profile.readers.provenance import is_unprofiled
from libreyolo_profile.store.document.verdict import blame_bottleneck
from libreyolo_profile.vocabulary import thresholds, verdicts, what_if_modelled

MODEL_TEXT = {
    "launches": "launches removed × steady_launch_us (the steady-state launch call, cold first launches left out; "
    "blame_launch_us, then per_launch_host_us, where it is null), at most the removed launches' share of the "
    "blame's launching time, plus a category's exclusive device time",
    "gpu-work": "GPU time freed (a category: the time it alone held the device, category_exclusive_ms_per_step; "
    "N launches: N × kernel_gap_us)",
    "cpu-ops": "removed ops × per_launch_host_us (on a CPU: framework time ÷ dispatched leaf ops, "
    "the per-op dispatch cost)",
}
# How the projection is bounded: the words `what-if --help` states too (cli_help.py, a plain constant the CLI
# reads at start without importing this reader)
FLOOR = WHAT_IF_FLOOR
# The input each model multiplies by, for the note when it is null.
MODEL_INPUT = {"launches": "per_launch_host_us", "cpu-ops": "per_launch_host_us"}


def _categories(con) -> list[str]:
    return [
        r[0]
        for r in con.execute("SELECT DISTINCT category FROM kernels WHERE category IS NOT NULL ORDER BY 1").fetchall()
    ]


def _validate(doc: dict, m, con, category: str | None, launches: int | None) -> None:
    """`m`: the head's metrics, typed (Loaded.head.metrics); `doc` only for is_cpu_profile."""
    if category is not None:
        if is_cpu_profile(doc):
            raise UsageError(
                "--remove-category needs GPU kernels, and a CPU profile has no kernel categories; "
                "use --remove-launches N (N dispatched ops per step)"
            )
        present = _categories(con)
        if category.lower() not in [c.lower() for c in present]:
            raise UsageError(
                f"no kernel category '{category}' in this profile; categories present: {', '.join(present) or 'none'}"
            )
    if launches is not None:
        per_step = m.launches_per_step
        most = math.floor(per_step) if isinstance(per_step, (int, float)) else 0
        if most < 1:
            raise UsageError(
                f"--remove-launches: this profile records no launches per step "
                f"(launches_per_step = {fmt(per_step)}), so none can be removed"
            )
        if not 1 <= launches <= most:
            raise UsageError(
                f"--remove-launches must be between 1 and {most} (the profile's launches per step), not {launches}"
            )


def _caveat(head, row: dict, inputs: dict) -> str:
    bound = head.verdict.bound
    parts = [
        "the per-launch cost is an approximation: per_launch_host_us averages the whole step's host time over "
        "its launches, and kernel_gap_us is a median, so removing particular work may save more or less; "
        "the only proof is a second measurement (make the change, measure again, `libreyolo profile compare`)"
    ]
    if row["model"] == "launches":
        parts.append(
            f"the launch model assumes the GPU ({fmt(inputs['gpu_util_pct'], 1)}% busy) absorbs the removed "
            "kernels' own work while it waits for the host"
        )
    elif row["model"] == "cpu-ops":
        parts.append("on a CPU only the dispatch cost of the removed ops is counted, not the arithmetic they did")
    if bound not in what_if_modelled():
        if row["bottleneck_ms"] is not None:
            by_verdict = max((inputs["step_ms"] or 0) - row["bottleneck_ms"], 0)
            parts.append(
                f"the profile is {bound}-bound: removing launches or GPU "
                f"work cannot shorten the {fmt(row['bottleneck_ms'])} ms per step that {bound} takes, so "
                f"the saving is at most {fmt(by_verdict)} ms (step_ms − {bound} time)"
            )
        else:
            parts.append(
                f"the profile is {bound}-bound: the bottleneck is not "
                "launches or GPU work, so the estimate is an upper bound"
            )
        if verdicts().get(bound, {}).get("untrusted_step"):
            parts.append("the step time itself was measured under thrashing and cannot be trusted")
        if row["capped"]:
            parts.append(f"uncapped, the parts add up to {fmt(row['uncapped_ms'])} ms")
    if row["host_floor_ms"] is not None and row["floor_ms"] == row["host_floor_ms"]:
        parts.append(
            f"the step cannot shrink below the {fmt(row['host_floor_ms'])} ms of host work per step that does not wait "
            "on the device (host_work_ms less the removed launches: the host's critical path)"
        )
    elif row["remaining_device_ms"] is not None and row["model"] != "cpu-ops":  # a CPU has no device work
        parts.append(
            f"the step cannot shrink below the {fmt(row['remaining_device_ms'])} ms of device work left on its "
            "critical path (the blame's device-busy time minus the time the removed work alone held the device)"
        )
    if "tiny_window" in head.marks:
        parts.append("the profile's window is tiny, so its inputs are noisy")
    return "; ".join(parts)


def _blame_launch_us(m, on_gpu: bool) -> float | None:
    """The host time per launch while the device idled, µs: the blame's launching time per step ÷ launches
    per step (None without a blame or launches). per_launch_host_us also holds syncs and CPU work."""
    launching, launches = m.blame_launching_pct, m.launches_per_step
    step_ms = m.blame_step_ms or m.step_ms  # the blame's shares are of its own step
    if not on_gpu or launching is None or not step_ms or not launches:
        return None
    return launching * step_ms * 10 / launches  # % × ms → µs: ÷ 100 × 1000


def result_inputs(inputs: dict, totals: dict) -> dict:
    """The figures the model used: the profile's metrics, then what the model derived from them."""
    return {
        **inputs,
        "bottleneck_ms": totals["bottleneck_ms"],
        "remaining_device_ms": totals["remaining_device_ms"],
        "host_floor_ms": totals["host_floor_ms"],
        "floor_ms": totals["floor_ms"],
        "cap_ms": totals["cap_ms"],
    }


# The profile's metrics the model reads, shown as its inputs.
INPUT_METRICS = (
    "step_ms",
    "throughput_img_s",
    "gpu_util_pct",
    "launches_per_step",
    "per_launch_host_us",
    "kernel_gap_us",
)


def _model_inputs(m, on_gpu: bool) -> dict:
    """The profile's figures the model reads (`m`: the head's metrics, typed), then the launch costs derived
    from them."""
    inputs = {name: getattr(m, name) for name in INPUT_METRICS}
    inputs["blame_launch_us"] = _blame_launch_us(m, on_gpu)
    inputs["steady_launch_us"] = m.steady_launch_us
    return inputs


def _sql_params(loaded, inputs: dict, on_gpu: bool, category: str | None, launches: int | None) -> dict:
    """what_if.sql's parameters: the verdict, the removal asked for, the model's inputs and the blame's shares."""
    head = loaded.head
    m, bound = head.metrics, head.verdict.bound
    params = {
        "bound": bound,
        "device_type": head.device_type,
        "util_threshold": thresholds()["gpu_util_pct"],
        "category": category,
        "launches": launches,
        **{
            k: inputs[k] for k in ("step_ms", "throughput_img_s", "gpu_util_pct", "per_launch_host_us", "kernel_gap_us")
        },
        **{
            k: getattr(m, k) for k in ("dataload_pct", "to_device_pct", "sync_pct", "preprocess_pct", "postprocess_pct")
        },
    }
    # verdict.py's blame_bottleneck decides from the metrics mapping as written (the verdict's own input, built
    # from every number the file's metrics hold): handed the document's, as the verdict was when written
    metrics_as_written = loaded.doc["metrics"]
    params["blame_bottleneck_pct"], params["device_busy_pct"] = blame_bottleneck(
        metrics_as_written, head.kind, on_gpu, bound
    )
    params["blame_launch_us"] = inputs["blame_launch_us"]
    params["steady_launch_us"] = inputs["steady_launch_us"]
    # the blame's shares are of its own step (blame_step_ms), the ms they stand for too
    launching, blame_step = m.blame_launching_pct, m.blame_step_ms or m.step_ms
    params["blame_step_ms"] = blame_step if params["device_busy_pct"] is not None else None
    params["launching_ms"] = launching * blame_step / 100 if on_gpu and launching is not None and blame_step else None
    params["launches_per_step"] = inputs["launches_per_step"]
    params["host_floor_ms"] = host_floor_ms(m, on_gpu, category, launches)
    return params


def host_floor_ms(m, on_gpu: bool, category: str | None, launches: int | None) -> float | None:
    """The host's recorded work per step that does not wait on the device, with the removed work's launch calls
    left out, ms (None where not measured). A category's launches are the analysis's own (host_work_without_launches);
    N launches are priced at launch_api_us, the mean launch call. On a CPU the ops removed are host work
    themselves, so no host floor applies."""
    if not on_gpu:
        return None
    work = m.host_work_ms
    if category is not None:
        by_category = {k.lower(): v for k, v in _json_map(m.host_work_without_launches).items()}
        work = by_category.get(category.lower())
    if work is None or not launches:
        return work
    per_launch = m.launch_api_us
    return None if per_launch is None else work - launches * per_launch / 1000


def _json_map(raw) -> dict:
    if isinstance(raw, str):
        import json

        raw = json.loads(raw)
    return raw if isinstance(raw, dict) else {}


def _chosen_by(bound: str, model: str, inputs: dict) -> str:
    """Why this model: the verdict where it models one, else the CPU profile or the GPU utilization."""
    if bound in what_if_modelled():
        return f"the verdict, {bound}"
    why = f"the verdict, {bound}, is neither a launch nor a GPU-work verdict"
    return (
        f"the CPU profile ({why})"
        if model == "cpu-ops"
        else f"GPU utilization {fmt(inputs['gpu_util_pct'], 1)}% {'<' if model == 'launches' else '≥'} "
        f"{thresholds()['gpu_util_pct']:.0f}% ({why})"
    )


def _null_notes(rows: list[dict], totals: dict, model: str, doc: dict) -> list[str]:
    """A note for each part the model could not estimate and for a null throughput, naming the null input."""
    notes = []
    for row in rows:
        if row["part_saved_ms"] is None:
            needed = MODEL_INPUT.get(model) or ("kernel_gap_us" if row["part"] == "launches" else "step_ms")
            notes.append(f"{row['part']}: no estimate, {needed} is null ({null_reason(needed, doc)})")
    if totals["baseline_throughput_img_s"] is None:
        notes.append(f"throughput: null ({null_reason('throughput_img_s', doc)})")
    return notes


def what_if_document(trace: Path | OpenProfile, remove_category: str | None, remove_launches: int | None) -> dict:
    """The projection of removing a category and/or N launches; `trace` a path or a profile already open."""
    if remove_category is None and remove_launches is None:
        raise UsageError("what-if needs --remove-category C and/or --remove-launches N, or --op-at-roofline PCT alone")
    profile = opened(trace)
    loaded, con = profile.loaded, profile.con
    doc, head = loaded.doc, loaded.head
    _validate(doc, head.metrics, con, remove_category, remove_launches)
    bound = head.verdict.bound
    on_gpu = not is_cpu_profile(doc)
    inputs = _model_inputs(head.metrics, on_gpu)
    rows = records(*run_sql(con, "what_if.sql", _sql_params(loaded, inputs, on_gpu, remove_category, remove_launches)))
    first = rows[0]  # what_if.sql's totals, on every row
    model = first["model"]
    return {
        "profile": profile_identity(loaded),
        "verdict": {"bound": bound, "reason": head.verdict.reason},
        "model": {
            "name": model,
            "formula": MODEL_TEXT[model],
            "chosen_by": _chosen_by(bound, model, inputs),
            "capped_by_verdict": first["capped_by_verdict"],
        },
        "inputs": {
            **result_inputs(inputs, first),
        },
        "parts": [
            {
                "change": r["part"],
                "target": r["target"],
                "launches_removed": r["launches_removed"],
                "gpu_ms_removed": r["gpu_ms_removed"],
                "saved_ms": r["part_saved_ms"],
            }
            for r in rows
        ],
        "baseline": {"step_ms": first["baseline_step_ms"], "throughput_img_s": first["baseline_throughput_img_s"]},
        "projected": {"step_ms": first["projected_step_ms"], "throughput_img_s": first["projected_throughput_img_s"]},
        "saved_ms": first["saved_ms"],
        "saved_pct": first["saved_pct"],
        "uncapped_saved_ms": first["uncapped_ms"],
        "capped": first["capped"],
        "floor": {
            "model": FLOOR,
            "device_ms": first["remaining_device_ms"],
            "host_ms": first["host_floor_ms"],
            "ms": first["floor_ms"],
        },
        "notes": _null_notes(rows, first, model, doc),
        "caveat": _caveat(head, first, inputs),
        # which inputs were timed without the profiler (the headline) and which under it
        "inputs_measured": {
            name: "unprofiled" if is_unprofiled(name, head) else "profiled" if name in METRICS else "derived"
            for name in result_inputs(inputs, first)
        },
    }


def show_what_if(w: dict) -> None:
    from rich.markup import escape
    from rich.table import Table

    console = stdout_console()
    # the path, verdict and category come from the file or the user: safe_line keeps escape sequences inert
    say = lambda text: console.print(safe_line(text), highlight=False, markup=False)  # noqa: E731
    p, model, inputs = w["profile"], w["model"], w["inputs"]
    say(f"what-if · {p['kind']} profile · {p['device_type']} · {p['path']}")
    say(f"verdict: {w['verdict']['bound']} (`summary` says why)")
    say(f"model: {model['name']}, picked by {model['chosen_by']}: saved = {model['formula']}")
    measured = w.get("inputs_measured") or {}
    for which in ("unprofiled", "profiled", "derived"):
        shown = [
            f"{k} = {fmt(v, unit=METRICS.get(k, ('',))[0])}"
            for k, v in inputs.items()
            if v is not None and measured.get(k, "profiled") == which
        ]
        if shown:
            say(f"inputs, {which}: " + ", ".join(shown))
    parts = Table(
        title="changes (per step)", title_justify="left", header_style="bold", show_edge=False, pad_edge=False
    )
    for header in ("change", "launches removed", "GPU ms removed", "saved ms"):
        parts.add_column(header, justify="left" if header == "change" else "right", no_wrap=header == "change")
    for part in w["parts"]:
        label = (
            f"remove category {part['target']}" if part["change"] == "category" else f"remove {part['target']} launches"
        )
        parts.add_row(
            escape(safe_line(label)),
            fmt(part["launches_removed"], unit="count"),
            fmt(part["gpu_ms_removed"], 3),
            fmt(part["saved_ms"], 3),
        )
    console.print(parts)
    projection = Table(title="projection", title_justify="left", header_style="bold", show_edge=False, pad_edge=False)
    for header in ("", "step ms", "throughput img/s"):
        projection.add_column(header, justify="left" if not header else "right", no_wrap=True)
    base = "baseline (" + (w.get("inputs_measured") or {}).get("step_ms", "profiled") + ")"
    projection.add_row(base, fmt(w["baseline"]["step_ms"], 3), fmt(w["baseline"]["throughput_img_s"]))
    projection.add_row("projected", fmt(w["projected"]["step_ms"], 3), fmt(w["projected"]["throughput_img_s"]))
    console.print(projection)
    saved = f"saving: {fmt(w['saved_ms'], 3)} ms per step ({fmt(w['saved_pct'], 1)}%)" + (
        f", capped from {fmt(w['uncapped_saved_ms'], 3)} ms" if w["capped"] else ""
    )
    say(saved)
    floor = w["floor"]
    if floor["ms"] is not None:
        say(
            f"critical path left: {fmt(floor['ms'], 3)} ms per step, the larger of the device's "
            f"{fmt(floor['device_ms'], 3)} ms and the host's {fmt(floor['host_ms'], 3)} ms of work that does not "
            "wait on the device; the projection never goes below it"
        )
    for note in w["notes"]:
        say(f"note {note}")
    say(f"caveat: {w['caveat']}")


def print_what_if(trace: Path, *, remove_category: str | None, remove_launches: int | None, as_json: bool) -> None:
    w = what_if_document(trace, remove_category, remove_launches)
    if as_json:
        emit_json(w)
    else:
        show_what_if(w)
