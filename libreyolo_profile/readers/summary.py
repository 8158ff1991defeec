"""`libreyolo profile summary`: the top-level read of one profile."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.metric_catalog import METRICS, is_cpu_profile, null_reason
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import fmt, short_name, stdout_console, table
from libreyolo_profile.readers.common import OpenProfile, opened, profile_identity, records, run_sql
from libreyolo_profile.readers.phases import phase_rows
from libreyolo_profile.output.textsafe import safe_line

HEADLINE = ["step_ms", "throughput_img_s", "ms_per_img", "gpu_util_pct", "tensorcore_pct", "peak_vram_mb",
            "peak_mem_mb", "host_overhead_ms", "host_overhead_pct", "launches_per_step", "per_launch_host_us",
            "launch_api_us", "kernel_gap_us", "sync_ms", "sync_pct", "memcpy_ms", "dataload_pct", "to_device_pct",
            "leaf_busy_pct", "profiler_overhead_pct"]
LATENCY = ["latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "preprocess_ms", "preprocess_pct",
           "forward_ms", "forward_pct", "postprocess_ms", "postprocess_pct"]


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
                                                  "tensorcore": False, "sort": "time", "top": 10})
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
        "devices": doc.get("devices", []),
        "repeat_n": max((s.get("n", 1) for s in (doc.get("repeat") or {}).values()), default=1),
        "categories": records(cat_cols, cat_rows),
        "top_kernels": records(k_cols, k_rows),
        "phases": records(p_cols, p_rows),
    }


def show_summary(s: dict) -> None:
    from rich.markup import escape
    from rich.panel import Panel

    from libreyolo_profile.readers.report_text import CATEGORY_STYLES, PHASE_STYLES, bar, stacked

    console = stdout_console()
    p, w = s["profile"], s["window"] or {}
    model = s.get("model") or {}
    head = (f"{p['kind']} profile · {p['device_type']} · {w.get('steps')} measured "
            f"{'calls' if p['kind'] == 'infer' else 'steps'} over {fmt(w.get('wall_ms'), 1)} ms")
    if model.get("family"):
        head += f" · {model.get('family')}-{model.get('size')}"
    if s["repeat_n"] > 1:
        head += f" · mean of {s['repeat_n']} trials"
    console.print(safe_line(head), highlight=False, markup=False)
    for name, text in s["marks"].items():
        console.print(f"[yellow]mark[/] {escape(safe_line(name))}: {escape(safe_line(text))}", highlight=False)
    v = s["verdict"]
    console.print(Panel(f"[bold]{escape(safe_line(v['bound']))}[/] — {escape(safe_line(v['reason']))}\n"
                        f"[dim]next:[/] {escape(safe_line(v['next_step']))}",
                        title="verdict", title_align="left", expand=False))
    rows = []
    for name, value in s["metrics"].items():
        unit = METRICS[name][0]
        rows.append([name, fmt(value), unit, s["null_reasons"].get(name, "")])
    console.print(table("Metrics", [("metric", "left"), ("value", "right"), ("unit", "left"), ("why null", "left")], rows))
    others = s["devices"][1:]
    if others:
        console.print(table("Other devices (the headline is the busiest)",
                            [("device", "right"), ("name", "left"), ("busy ms", "right"), ("util %", "right")],
                            [[d["device"], d.get("name") or "", d["busy_ms"], d["gpu_util_pct"]] for d in others]))
    if s["phases"]:
        console.print(table("Phases per step" + (" (inferred)" if "phases_inferred" in s["marks"] else ""),
                            [("phase", "left"), ("wall ms", "right"), ("wall %", "right"), ("", "left"),
                             ("GPU ms", "right"), ("kernels", "right"), ("ops", "right")],
                            [[r["phase"], r["wall_ms"], r["wall_pct"], bar(r["wall_pct"], 20, PHASE_STYLES.get(r["phase"], "white")),
                              r["gpu_ms"], r["kernels"], r["ops"]] for r in s["phases"]]))
        line, key = stacked([(r["phase"], r["wall_ms"]) for r in s["phases"]], PHASE_STYLES)
        if line:
            console.print(f"{'call' if p['kind'] == 'infer' else 'step'} ▕{line}▏", highlight=False)
            console.print(f"     {key}", highlight=False)
    if s["categories"]:
        console.print(table("Kernel composition", [("category", "left"), ("ms/step", "right"), ("share %", "right"),
                                                   ("", "left"), ("calls/step", "right"), ("on TC %", "right")],
                            [[r["category"], r["ms_per_step"], r["share_pct"],
                              bar(r["share_pct"], 20, CATEGORY_STYLES.get(r["category"], "white")), r["calls_per_step"],
                              r["tensorcore_pct"]] for r in s["categories"]]))
    if s["top_kernels"]:
        console.print(table("Top kernels per step", [("kernel", "left"), ("category", "left"), ("ms/step", "right"),
                                                     ("share %", "right"), ("calls/step", "right")],
                            [[short_name(r["name"], 70), r["category"], r["ms_per_step"], r["share_pct"],
                              r["calls_per_step"]] for r in s["top_kernels"]]))


def print_summary(source: Path | OpenProfile, as_json: bool) -> None:
    s = summary_document(source)
    if as_json:
        emit_json(s)
    else:
        show_summary(s)
