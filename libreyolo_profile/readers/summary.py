"""`libreyolo profile summary`: the top-level read of one profile.

`--json` carries every headline metric, null ones with their reason. The terminal shows the first screen
(readers/summary_screen.py); `--full` every table, fitted to the device: rows that cannot apply on one
line, nulls sharing a reason on one line, every share naming its whole, and for a CPU profile where its
time goes (top ops by self time) instead of empty GPU tables."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.metric_catalog import (
    GPU,
    METRICS,
    is_cpu_profile,
    measured_unit,
    metric_note,
    null_reason,
    share_of,
    shown_as_phase,
    summary_metrics,
)
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import fmt, fmt_metric, short_name, short_names, stdout_console, table
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.readers.common import OpenProfile, opened, profile_identity, records, run_sql
from libreyolo_profile.readers.model_identity import model_line
from libreyolo_profile.readers.modules import print_module_tree, top_modules
from libreyolo_profile.readers.phases import launches_label, phase_rows
from libreyolo_profile.readers.provenance import header_line, is_unprofiled, profiled_label, unprofiled_label
from libreyolo_profile.readers.ranks import ranks_document, render_ranks
from libreyolo_profile.readers.roofline import above_roof_lines, above_roof_rows
from libreyolo_profile.readers.summary_charts import bar_cells, print_blame, print_step_bar
from libreyolo_profile.readers.summary_screen import show_first_screen
from libreyolo_profile.store.disk.loader import Loaded
from libreyolo_profile.store.document.marks import NO_DEVICE_EVENTS

TOP_ROWS = 10

# The metrics shown, their order, the whole each share is of and the figures the phases table already shows
# are sql/metric_catalog.sql's (summary_order, share_of, shown_as_phase).
NOT_ON_CPU = "no device kernels were recorded, so GPU figures cannot be measured"


def headline_metrics(loaded: Loaded) -> tuple[dict, dict]:
    """The summary's metrics of this kind of profile on this device ({name: value}) and the reason of each
    null one ({name: reason}): what `summary --json` and the Python API's Profile.metrics carry."""
    doc, head = loaded.doc, loaded.head
    on_cpu = is_cpu_profile(doc)
    names = [n for n in summary_metrics(head.kind) if not (METRICS[n][2] == "cpu" and not on_cpu)]
    metrics = {n: getattr(head.metrics, n) for n in names}
    return metrics, {n: null_reason(n, doc) for n, v in metrics.items() if v is None}


def summary_document(source: Path | OpenProfile) -> dict:
    """What `summary --json` prints, from a path or a profile already opened."""
    from libreyolo_profile.readers.compare_trials import trial_count  # statistics: only once a profile is read

    profile = opened(source)
    loaded, con, doc, head = profile.loaded, profile.con, profile.doc, profile.head
    metrics, reasons = headline_metrics(loaded)
    notes = {n: metric_note(n, doc) for n in metrics if metric_note(n, doc)}
    cat_cols, cat_rows = run_sql(con, "categories.sql")
    k_cols, k_rows = run_sql(
        con,
        "kernels.sql",
        {"phase": None, "category": None, "grep": None, "tensorcore": False, "sort": "time", "top": TOP_ROWS},
    )
    o_cols, o_rows = run_sql(con, "ops.sql", {"phase": None, "top": TOP_ROWS})
    p_cols, p_rows = phase_rows(loaded, con)
    return {
        "profile": profile_identity(loaded),
        "kind_inferred": head.kind_inferred,
        # the file's own objects, shown as written (every key, in its order): copied, not read
        "model": doc.get("model"),
        "window": doc.get("window"),
        "metrics": metrics,
        "null_reasons": reasons,
        "metric_notes": notes,
        "verdict": doc["verdict"],  # as written, like model and window (its evidence keys are the verdict's own)
        "marks": head.marks,
        "headline": head.timing.headline,
        "devices": doc.get("devices", []),  # as written, like model and window
        "repeat_n": trial_count(doc),  # the trials the profile holds, never the n a repeat block claims
        # where each kind of figure comes from, said on the screen beside it (readers/provenance.py)
        "provenance": {
            "headline": unprofiled_label(head) or profiled_label(head, tables=False),
            "profiled_metrics": profiled_label(head, tables=False),
            "tables": profiled_label(head),
            "unprofiled_metrics": sorted(n for n in metrics if is_unprofiled(n, head)),
            "line": header_line(head, fmt(head.window.wall_ms, 1)),
        },
        "categories": records(cat_cols, cat_rows),
        "top_kernels": records(k_cols, k_rows),
        "top_ops": records(o_cols, o_rows),
        "phases": records(p_cols, p_rows),
        # a job profile's ranks and straggler (readers/ranks.py); None for one trace
        "job": ranks_document(profile) if head.job is not None else None,
        "blame": blame_by_step(con),
        "modules": top_modules(con),
        "above_roof": above_roof_rows(con),
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
    return {
        "steps": list(steps.values()),
        "total": {c: 100.0 * ms / wall for c, ms in sorted(total.items(), key=lambda kv: -kv[1])} if wall else {},
        # the whole of `total`'s shares (and of the blame table's share_pct, per step)
        "whole": "step_ms summed over the blame's steps",
    }


def _headline(s: dict) -> str:
    p = s["profile"]
    model = s.get("model") or {}
    # a GPU run whose device activity was not recorded is read on its host side only, yet it is no CPU run
    device = "gpu, device activity not recorded" if NO_DEVICE_EVENTS in (s.get("marks") or {}) else p["device_type"]
    head = f"{p['kind']} profile · {device}"
    if model.get("family"):
        head += f" · {model_line(model)}"
    # the headline's calls and the trace's calls are different calls: both said, each with its role
    return head + "\n" + s["provenance"]["line"]


def _unit(name: str, on_cpu: bool, noun: str = "step") -> str:
    if name == "launches_per_step":  # per measured step: an inference profile's is a call
        return f"{launches_label(on_cpu)}/{noun}"
    return (share_of(name) or METRICS[name][0]).replace(" step", f" {noun}")


def metric_rows(s: dict) -> tuple[list[list], list[str], dict[str, list[str]]]:
    """The terminal's metric rows, the metrics that cannot apply to a CPU, and the other nulls grouped
    by their reason (each reason printed once, with every metric it explains)."""
    on_cpu, noun = s["profile"]["device_type"] == "cpu", measured_unit(s["profile"]["kind"])
    with_phases = bool(s["phases"])
    unprofiled = set(s["provenance"]["unprofiled_metrics"])
    rows, inapplicable, unavailable = [], [], {}
    for name, value in s["metrics"].items():
        if with_phases and shown_as_phase(name) and name not in unprofiled and value is not None:
            continue  # its phase row shows the same number; a null one still says why below
        if value is not None:
            relative = name in (s.get("metric_notes") or {})  # a peak of a trace of Bytes only
            rows.append(
                [name, fmt_metric(name, value), "MiB above start (at least)" if relative else _unit(name, on_cpu, noun)]
            )
        elif on_cpu and METRICS[name][2] == GPU:
            inapplicable.append(name)
        else:
            unavailable.setdefault(s["null_reasons"].get(name) or "not measured", []).append(name)
    return rows, inapplicable, unavailable


def _print_metrics(console, s: dict) -> None:
    rows, inapplicable, unavailable = metric_rows(s)
    where, unprofiled = s["provenance"], set(s["provenance"]["unprofiled_metrics"])
    columns = [("metric", "left"), ("value", "right"), ("unit", "left")]
    headline = [r for r in rows if r[0] in unprofiled]
    if headline:
        console.print(table(f"Metrics · headline, {where['headline']}", columns, headline))
    attribution = [r for r in rows if r[0] not in unprofiled]
    if attribution:
        title = (
            f"Metrics · attribution, {where['profiled_metrics']}"
            if headline
            else f"Metrics · {where['profiled_metrics']}"
        )
        console.print(table(title, columns, attribution))
    if inapplicable:
        console.print(
            safe_line(f"not applicable to a CPU profile ({NOT_ON_CPU}): {', '.join(inapplicable)}"),
            highlight=False,
            markup=False,
        )
    for reason, names in unavailable.items():
        console.print(safe_line(f"— {', '.join(names)}: {reason}"), highlight=False, markup=False)


def _print_phases(console, s: dict) -> None:
    from libreyolo_profile.readers.report_text import PHASE_STYLES, bar

    on_cpu = s["profile"]["device_type"] == "cpu"
    noun = measured_unit(s["profile"]["kind"])
    title = "Stage split per call" if noun == "call" else "Phases per step"
    title += " (inferred)" if "phases_inferred" in s["marks"] else ""
    title += f" · {s['provenance']['tables']}"
    columns = [("phase", "left"), ("ms", "right"), (f"% of {noun}", "right"), ("", "left")]
    columns += [] if on_cpu else [("GPU ms", "right"), ("kernels", "right")]
    columns += [("ops", "right")]
    rows = []
    for r in s["phases"]:
        row = [
            r["phase"],
            r["wall_ms"],
            r["step_pct"],
            bar(r["step_pct"], bar_cells(console, 20, 12), PHASE_STYLES.get(r["phase"], "white")),
        ]
        row += [] if on_cpu else [r["gpu_ms"], r["kernels"]]
        rows.append(row + [r["ops"]])
    console.print(table(title, columns, rows))
    print_step_bar(console, s, noun)


def _print_top_ops(console, s: dict) -> None:
    noun = measured_unit(s["profile"]["kind"])
    console.print(
        table(
            f"Top ops per {noun}, by self CPU time · {s['provenance']['tables']}",
            [("op", "left"), ("self ms", "right"), ("% of op self time", "right"), ("calls/" + noun, "right")],
            [
                [short_name(r["name"], 70), r["self_ms_per_step"], r["self_pct"], r["calls_per_step"]]
                for r in s["top_ops"]
            ],
        )
    )


def _print_device_time(console, s: dict) -> None:
    from libreyolo_profile.readers.report_text import CATEGORY_STYLES, bar

    # kernels.sql and categories.sql share the same whole: every device activity, copies included;
    # "% of kernel time" is the whole of the gemm/memory-bound/communication metrics
    console.print(
        table(
            f"Device time by category (kernels, memcpy and memset) · {s['provenance']['tables']}",
            [
                ("category", "left"),
                ("ms/step", "right"),
                ("% of device time", "right"),
                ("", "left"),
                ("% of kernel time", "right"),
                ("calls/step", "right"),
                ("% on TC", "right"),
            ],
            [
                [
                    r["category"],
                    r["ms_per_step"],
                    r["share_pct"],
                    bar(r["share_pct"], bar_cells(console, 20, 8), CATEGORY_STYLES.get(r["category"], "white")),
                    r.get("kernel_share_pct"),
                    r["calls_per_step"],
                    r["tensorcore_pct"],
                ]
                for r in s["categories"]
            ],
        )
    )
    if s["top_kernels"]:
        console.print(
            table(
                f"Top kernels per step · {s['provenance']['tables']}",
                [
                    ("kernel", "left"),
                    ("category", "left"),
                    ("ms/step", "right"),
                    ("% of device time", "right"),
                    ("calls/step", "right"),
                ],
                [
                    [name, r["category"], r["ms_per_step"], r["share_pct"], r["calls_per_step"]]
                    for name, r in zip(
                        short_names([r["name"] for r in s["top_kernels"]], 200), s["top_kernels"], strict=True
                    )
                ],
            )
        )


def show_summary(s: dict, full: bool = False) -> None:
    """The first screen (readers/summary_screen.py), or with `full` every table and figure."""
    from rich.markup import escape
    from rich.panel import Panel

    console = stdout_console()
    if not full:
        rows, _, unavailable = metric_rows(s)
        show_first_screen(console, s, _headline(s).split("\n"), rows, unavailable, table)
        return
    for line in _headline(s).split("\n"):
        console.print(safe_line(line), highlight=False, markup=False)
    for name, text in s["marks"].items():
        # whole, wrapped between words: the end of a mark is often its remedy
        console.print(f"[yellow]mark[/] {escape(' '.join(f'{safe_line(name)}: {safe_line(text)}'.split()))}")
    v = s["verdict"]
    console.print(
        Panel(
            f"[bold]{escape(safe_line(v['bound']))}[/] — {escape(safe_line(v['reason']))}\n"
            f"[dim]next:[/] {escape(safe_line(v['next_step']))}",
            title=f"verdict · {escape(s['provenance']['profiled_metrics'])}",
            title_align="left",
            expand=False,
        )
    )
    print_blame(console, s)
    _print_metrics(console, s)
    for line in above_roof_lines(s.get("above_roof") or [], measured_unit(s["profile"]["kind"])):
        console.print(safe_line(f"time over the roofline: {line}"), highlight=False, markup=False)
    others = s["devices"][1:]
    if others:
        console.print(
            table(
                "Other devices (the headline is the busiest)",
                [("device", "right"), ("name", "left"), ("busy ms", "right"), ("% of window", "right")],
                [[d["device"], d.get("name") or "", d["busy_ms"], d["gpu_util_pct"]] for d in others],
            )
        )
    if s.get("job"):
        render_ranks(s["job"])
    if s["phases"]:
        _print_phases(console, s)
    print_module_tree(
        console,
        s.get("modules") or [],
        s["profile"]["device_type"] == "cpu",
        s["provenance"]["tables"],
        measured_unit(s["profile"]["kind"]),
    )
    if s["profile"]["device_type"] == "cpu":
        if s["top_ops"]:
            _print_top_ops(console, s)
    elif s["categories"]:
        _print_device_time(console, s)


def print_summary(source: Path | OpenProfile, as_json: bool, full: bool = False) -> None:
    s = summary_document(source)
    if as_json:
        emit_json(s)
    else:
        show_summary(s, full)
