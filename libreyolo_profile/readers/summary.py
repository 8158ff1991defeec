"""`libreyolo profile summary`: the top-level read of one profile.

`--json` carries every headline metric, null ones with their reason. The terminal view is the first
screen a user reads, so it fits the device: rows that cannot apply are named on one line, nulls that
share a reason share one line, every share says what it is a share of, and a CPU profile shows where
its time goes (top ops by self time) instead of empty GPU tables."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.metric_catalog import GPU, METRICS, is_cpu_profile, null_reason
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import fmt, fmt_metric, short_name, stdout_console, table
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.readers.common import OpenProfile, opened, profile_identity, records, run_sql
from libreyolo_profile.readers.modules import print_module_tree, top_modules
from libreyolo_profile.readers.phases import launches_label, phase_rows
from libreyolo_profile.readers.model_identity import model_line

HEADLINE = ["step_ms", "throughput_img_s", "ms_per_img", "gpu_util_pct", "tensorcore_pct", "gemm_pct",
            "memory_bound_pct", "communication_pct", "peak_vram_mb", "peak_mem_mb", "host_overhead_ms",
            "host_overhead_pct", "launches_per_step", "per_launch_host_us", "launch_api_us", "kernel_gap_us",
            "sync_ms", "sync_pct", "memcpy_ms", "dataload_pct", "to_device_pct", "leaf_busy_pct",
            "profiled_step_ms", "profiler_overhead_pct", "timing_cv_pct"]
LATENCY = ["latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "preprocess_ms", "preprocess_pct",
           "forward_ms", "forward_pct", "postprocess_ms", "postprocess_pct"]
TOP_ROWS = 10
BLAME_STEPS_SHOWN = 10  # steps drawn as their own blame bar; the total bar covers them all

# What each share on the screen is a share of (the catalogue's unit is a bare "%").
SHARE_OF = {
    "gpu_util_pct": "% of window",
    "tensorcore_pct": "% of kernel time", "gemm_pct": "% of kernel time",
    "memory_bound_pct": "% of kernel time", "communication_pct": "% of kernel time",
    "host_overhead_pct": "% of step", "sync_pct": "% of step", "dataload_pct": "% of step",
    "to_device_pct": "% of step", "leaf_busy_pct": "% of step",
    "preprocess_pct": "% of call", "forward_pct": "% of call", "postprocess_pct": "% of call",
    "profiler_overhead_pct": "% slower",
}
# Per-phase figures the phases table already shows, with the same number: not repeated as metric rows.
SHOWN_AS_PHASES = {"dataload_pct", "to_device_pct", "preprocess_ms", "preprocess_pct", "forward_ms",
                   "forward_pct", "postprocess_ms", "postprocess_pct"}
NOT_ON_CPU = "no device kernels were recorded, so GPU figures cannot be measured"


def _bar_cells(console, wide: int, narrow: int) -> int:
    """A share bar's width: full in a wide terminal, short enough in 80 columns that no header is cut."""
    return wide if console.width >= 100 else narrow


def summary_document(source: Path | OpenProfile) -> dict:
    """What `summary --json` prints, from a path or a profile already opened."""
    profile = opened(source)
    loaded, con, doc = profile.loaded, profile.con, profile.doc
    kind = doc["kind"]
    on_cpu = is_cpu_profile(doc)
    names = [n for n in HEADLINE + (LATENCY if kind == "infer" else [])
             if kind in METRICS[n][1] and not (METRICS[n][2] == "cpu" and not on_cpu)]
    metrics = {n: doc["metrics"].get(n) for n in names}
    reasons = {n: null_reason(n, doc) for n, v in metrics.items() if v is None}
    cat_cols, cat_rows = run_sql(con, "categories.sql")
    k_cols, k_rows = run_sql(con, "kernels.sql", {"phase": None, "category": None, "grep": None,
                                                  "tensorcore": False, "sort": "time", "top": TOP_ROWS})
    o_cols, o_rows = run_sql(con, "ops.sql", {"phase": None, "top": TOP_ROWS})
    p_cols, p_rows = phase_rows(loaded, con)
    return {
        "profile": profile_identity(loaded),
        "kind_inferred": doc.get("kind_inferred"),
        "model": doc.get("model"),
        "window": doc.get("window"),
        "metrics": metrics,
        "null_reasons": reasons,
        "verdict": doc["verdict"],
        "marks": doc.get("marks", {}),
        "headline": (doc.get("timing") or {}).get("headline"),
        "devices": doc.get("devices", []),
        "repeat_n": max((s.get("n", 1) for s in (doc.get("repeat") or {}).values()), default=1),
        "categories": records(cat_cols, cat_rows),
        "top_kernels": records(k_cols, k_rows),
        "top_ops": records(o_cols, o_rows),
        "phases": records(p_cols, p_rows),
        "blame": blame_by_step(con),
        "modules": top_modules(con),
    }


def blame_by_step(con) -> dict:
    """The blame table (sql/table_blame.sql) per step and in total: {"steps": [{step, step_ms, causes:
    {cause: ms}}], "total": {cause: % of all steps' wall time}}; empty lists where there is no blame."""
    rows = con.execute("SELECT step, cause, ms, step_ms FROM blame ORDER BY step, ns DESC").fetchall()
    steps: dict[int, dict] = {}
    for step, cause, ms, step_ms in rows:
        steps.setdefault(step, {"step": step, "step_ms": step_ms, "causes": {}})["causes"][cause] = ms
    wall = sum(s["step_ms"] for s in steps.values())
    total: dict[str, float] = {}
    for s in steps.values():
        for cause, ms in s["causes"].items():
            total[cause] = total.get(cause, 0.0) + ms
    return {"steps": list(steps.values()),
            "total": {c: 100.0 * ms / wall for c, ms in sorted(total.items(), key=lambda kv: -kv[1])} if wall else {}}


def _headline(s: dict) -> str:
    p, w = s["profile"], s["window"] or {}
    model = s.get("model") or {}
    steps = w.get("steps")
    noun = "call" if p["kind"] == "infer" else "step"
    head = (f"{p['kind']} profile · {p['device_type']} · {fmt(steps, unit='count')} measured "
            f"{noun}{'' if steps == 1 else 's'} over {fmt(w.get('wall_ms'), 1)} ms")
    if model.get("family"):
        head += f" · {model_line(model)}"
    if s["repeat_n"] > 1:
        head += f" · mean of {s['repeat_n']} trials"
    return head


def _unit(name: str, on_cpu: bool) -> str:
    if name == "launches_per_step":
        return launches_label(on_cpu) + "/step"
    return SHARE_OF.get(name, METRICS[name][0])


def metric_rows(s: dict) -> tuple[list[list], list[str], dict[str, list[str]]]:
    """The terminal's metric rows, the metrics that cannot apply to a CPU, and the other nulls grouped
    by their reason (each reason printed once, with every metric it explains)."""
    on_cpu = s["profile"]["device_type"] == "cpu"
    with_phases = bool(s["phases"])
    rows, inapplicable, unavailable = [], [], {}
    for name, value in s["metrics"].items():
        if with_phases and name in SHOWN_AS_PHASES and value is not None:
            continue  # its phase row shows the same number; a null one still says why below
        if value is not None:
            rows.append([name, fmt_metric(name, value), _unit(name, on_cpu)])
        elif on_cpu and METRICS[name][2] == GPU:
            inapplicable.append(name)
        else:
            unavailable.setdefault(s["null_reasons"].get(name) or "not measured", []).append(name)
    return rows, inapplicable, unavailable


def _print_metrics(console, s: dict) -> None:
    rows, inapplicable, unavailable = metric_rows(s)
    console.print(table("Metrics", [("metric", "left"), ("value", "right"), ("unit", "left")], rows))
    if inapplicable:
        console.print(safe_line(f"not applicable to a CPU profile ({NOT_ON_CPU}): {', '.join(inapplicable)}"),
                      highlight=False, markup=False)
    for reason, names in unavailable.items():
        console.print(safe_line(f"— {', '.join(names)}: {reason}"), highlight=False, markup=False)


def _print_phases(console, s: dict) -> None:
    from libreyolo_profile.readers.report_text import PHASE_STYLES, bar

    on_cpu = s["profile"]["device_type"] == "cpu"
    noun = "call" if s["profile"]["kind"] == "infer" else "step"
    title = ("Stage split per call" if noun == "call" else "Phases per step")
    title += " (inferred)" if "phases_inferred" in s["marks"] else ""
    title += " · under the profiler" if s.get("headline") == "unprofiled" else ""
    columns = [("phase", "left"), ("ms", "right"), (f"% of {noun}", "right"), ("", "left")]
    columns += [] if on_cpu else [("GPU ms", "right"), ("kernels", "right")]
    columns += [("ops", "right")]
    rows = []
    for r in s["phases"]:
        row = [r["phase"], r["wall_ms"], r["step_pct"], bar(r["step_pct"], _bar_cells(console, 20, 12), PHASE_STYLES.get(r["phase"], "white"))]
        row += [] if on_cpu else [r["gpu_ms"], r["kernels"]]
        rows.append(row + [r["ops"]])
    console.print(table(title, columns, rows))
    _print_step_bar(console, s, noun)


def _print_step_bar(console, s: dict, noun: str) -> None:
    """The step as one stacked bar, its legend quoting the table's "% of step": on a GPU the step can
    outlast the host's phases while the device finishes, and that rest is drawn as its own segment
    rather than stretched over the phases (which would quote a second, larger share for each)."""
    from libreyolo_profile.readers.report_text import PHASE_STYLES, stacked

    segments = [(r["phase"], r["step_pct"]) for r in s["phases"]]
    rest = 100.0 - sum(share or 0.0 for _, share in segments)
    if rest >= 0.5:
        segments.append(("outside phases", rest))
    line, key = stacked(segments, {**PHASE_STYLES, "outside phases": "grey50"})
    if line:
        console.print(f"{noun} ▕{line}▏", highlight=False)
        console.print(f"     {key}", highlight=False)


def _print_top_ops(console, s: dict) -> None:
    noun = "call" if s["profile"]["kind"] == "infer" else "step"
    console.print(table(f"Top ops per {noun}, by self (exclusive) CPU time",
                        [("op", "left"), ("self ms", "right"), ("% of op self time", "right"),
                         ("calls/" + noun, "right")],
                        [[short_name(r["name"], 70), r["self_ms_per_step"], r["self_pct"], r["calls_per_step"]]
                         for r in s["top_ops"]]))


def _print_device_time(console, s: dict) -> None:
    from libreyolo_profile.readers.report_text import CATEGORY_STYLES, bar

    # kernels.sql and categories.sql share the same whole: every device activity, copies included
    console.print(table("Device time by category (kernels, memcpy and memset)",
                        [("category", "left"), ("ms/step", "right"), ("% of device time", "right"), ("", "left"),
                         ("calls/step", "right"), ("% on TC", "right")],
                        [[r["category"], r["ms_per_step"], r["share_pct"],
                          bar(r["share_pct"], _bar_cells(console, 20, 8), CATEGORY_STYLES.get(r["category"], "white")), r["calls_per_step"],
                          r["tensorcore_pct"]] for r in s["categories"]]))
    if s["top_kernels"]:
        console.print(table("Top kernels per step", [("kernel", "left"), ("category", "left"), ("ms/step", "right"),
                                                     ("% of device time", "right"), ("calls/step", "right")],
                            [[short_name(r["name"], 200), r["category"], r["ms_per_step"], r["share_pct"], r["calls_per_step"]]
                             for r in s["top_kernels"]]))


def _print_blame(console, s: dict) -> None:
    """The blame as a stacked bar per step and in total, the verdict beside the total (sql/blame.sql)."""
    from rich.markup import escape

    from libreyolo_profile.readers.report_text import BLAME_STYLES, stacked

    blame = s.get("blame") or {}
    if not blame.get("steps"):
        return
    noun = "call" if s["profile"]["kind"] == "infer" else "step"
    cells = _bar_cells(console, 60, 36)
    console.print(f"[bold]Blame[/]: what held each {noun}'s critical path (% of its wall time)", highlight=False)
    for row in blame["steps"][:BLAME_STEPS_SHOWN]:
        line, _ = stacked(list(row["causes"].items()), BLAME_STYLES, cells)
        console.print(f"{noun} {row['step']:>4} ▕{line}▏ {fmt(row['step_ms'], 2)} ms", highlight=False)
    hidden = len(blame["steps"]) - BLAME_STEPS_SHOWN
    if hidden > 0:
        console.print(f"[dim]… {hidden} more {noun}s in the total[/]", highlight=False)
    line, key = stacked(list(blame["total"].items()), BLAME_STYLES, cells)
    console.print(f"{'total':<{len(noun) + 5}} ▕{line}▏ verdict: [bold]{escape(safe_line(s['verdict']['bound']))}[/]",
                  highlight=False)
    console.print(f"     {key}", highlight=False)


def show_summary(s: dict) -> None:
    from rich.markup import escape
    from rich.panel import Panel

    console = stdout_console()
    console.print(safe_line(_headline(s)), highlight=False, markup=False)
    for name, text in s["marks"].items():
        console.print(f"[yellow]mark[/] {escape(safe_line(name))}: {escape(safe_line(text))}", highlight=False)
    v = s["verdict"]
    console.print(Panel(f"[bold]{escape(safe_line(v['bound']))}[/] — {escape(safe_line(v['reason']))}\n"
                        f"[dim]next:[/] {escape(safe_line(v['next_step']))}",
                        title="verdict", title_align="left", expand=False))
    _print_blame(console, s)
    _print_metrics(console, s)
    others = s["devices"][1:]
    if others:
        console.print(table("Other devices (the headline is the busiest)",
                            [("device", "right"), ("name", "left"), ("busy ms", "right"), ("% of window", "right")],
                            [[d["device"], d.get("name") or "", d["busy_ms"], d["gpu_util_pct"]] for d in others]))
    if s["phases"]:
        _print_phases(console, s)
    print_module_tree(console, s.get("modules") or [], s["profile"]["device_type"] == "cpu")
    if s["profile"]["device_type"] == "cpu":
        if s["top_ops"]:
            _print_top_ops(console, s)
    elif s["categories"]:
        _print_device_time(console, s)


def print_summary(source: Path | OpenProfile, as_json: bool) -> None:
    s = summary_document(source)
    if as_json:
        emit_json(s)
    else:
        show_summary(s)
