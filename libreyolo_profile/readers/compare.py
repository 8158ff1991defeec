"""`libreyolo profile compare`: before vs after, with significance when both sides repeat
(sql/compare.sql does the arithmetic; this module gathers the trial values and renders).

Needs only the two profile documents (no sidecar tables): the per-trial scalars live in
profile.json / profile_repeat.json (`trials`, `repeat`), and a foreign trace has one trial.
"""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.metric_catalog import METRICS, null_reason
from libreyolo_profile.readers.common import emit_json, fmt, profile_identity, records, run_sql, stdout_console
from libreyolo_profile.store.loader import Loaded, load_document

# (metric, True when higher is better / False when lower is better / None when neither is)
COMMON = [("throughput_img_s", True), ("ms_per_img", False), ("step_ms", False), ("gpu_util_pct", True),
          ("host_overhead_ms", False), ("host_overhead_pct", False), ("launches_per_step", False)]
BY_KIND = {
    "train": [("dataload_pct", False), ("to_device_pct", False)],
    "infer": [("latency_p50_ms", False), ("latency_p90_ms", False), ("latency_p99_ms", False),
              ("preprocess_pct", None), ("forward_pct", None), ("postprocess_pct", None)],
}
RULE = "significant when |Δ| > 2·√(SE_b² + SE_a²), SE = s/√n per side (s: sample standard deviation, n − 1)"
SINGLE_RUN = "a single run cannot support a verdict: measure both sides with --repeat ≥ 2"


def trial_count(doc: dict) -> int:
    """How many trials a profile holds: its `trials` list, or the largest n in its repeat stats."""
    from_repeat = max((s.get("n") or 0 for s in (doc.get("repeat") or {}).values()), default=0)
    return max(len(doc.get("trials") or []), from_repeat, 1)


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def trial_values(doc: dict, metric: str) -> list[float | None]:
    """The metric's value in every trial: repeat stats first, then `trials`, else the one scalar."""
    stat = (doc.get("repeat") or {}).get(metric) or {}
    values = stat.get("values")
    if isinstance(values, list) and len(values) >= 2 and all(_number(v) is not None for v in values):
        return [float(v) for v in values]
    trials = doc.get("trials") or []
    if len(trials) >= 2:
        values = [_number(t.get(metric)) for t in trials]
        if all(v is not None for v in values):
            return values
    return [_number(doc.get("metrics", {}).get(metric))]


def _null_note(metric: str, before: Loaded, after: Loaded, row: dict) -> str | None:
    missing = [(side, loaded) for side, loaded, value in (("before", before, row["before"]),
                                                          ("after", after, row["after"])) if value is None]
    if not missing:
        return None
    if len(missing) == 2:
        return f"null on both sides: {null_reason(metric, before.doc)}"
    side, loaded = missing[0]
    return f"null on the {side} side, so no change is computed: {null_reason(metric, loaded.doc)}"


def _article(kind: str | None) -> str:
    return f"an {kind}" if str(kind)[:1] in "aeiou" else f"a {kind}"


def build(before_path: Path, after_path: Path) -> dict:
    import duckdb

    before, after = load_document(before_path), load_document(after_path)
    kind_b, kind_a = before.doc.get("kind"), after.doc.get("kind")
    if kind_b != kind_a:
        raise UsageError(f"cannot compare {_article(kind_b)} profile ({before_path}) with {_article(kind_a)} profile "
                         f"({after_path}): measure both with the same subcommand")
    catalogue = COMMON + BY_KIND.get(kind_b, [])
    sides, names, values = [], [], []
    for side, loaded in (("before", before), ("after", after)):
        for metric, _ in catalogue:
            for value in trial_values(loaded.doc, metric):
                sides.append(side)
                names.append(metric)
                values.append(value)
    con = duckdb.connect(":memory:")
    columns, rows = run_sql(con, "compare.sql", {
        "metrics": [m for m, _ in catalogue], "higher_is_better": [h for _, h in catalogue],
        "sample_side": sides, "sample_metric": names, "sample_value": values})
    metrics = records(columns, rows)
    for row in metrics:
        row["unit"] = METRICS[row["metric"]][0]
        row["note"] = _null_note(row["metric"], before, after, row)

    n_before, n_after = trial_count(before.doc), trial_count(after.doc)
    repeated = n_before >= 2 and n_after >= 2
    bound_b, bound_a = before.doc["verdict"].get("bound"), after.doc["verdict"].get("bound")
    return {
        "kind": kind_b,
        "before": {**profile_identity(before), "trials": n_before},
        "after": {**profile_identity(after), "trials": n_after},
        "significance": {
            "tested": repeated,
            "rule": RULE if repeated else None,
            "n_before": n_before,
            "n_after": n_after,
            "sentence": (f"{RULE}; n_before = {n_before}, n_after = {n_after}" if repeated else SINGLE_RUN),
        },
        "metrics": metrics,
        "verdict": {"before": bound_b, "after": bound_a, "changed": bound_b != bound_a,
                    "before_reason": before.doc["verdict"].get("reason"),
                    "after_reason": after.doc["verdict"].get("reason")},
    }


def _significance_cell(row: dict) -> str:
    if row["significant"] is None:
        return "—"
    if not row["significant"]:
        return "no"
    return {"after": "[green]yes (better)[/]", "before": "[red]yes (worse)[/]"}.get(row["better"], "yes")


def _with_std(mean, std) -> str:
    return fmt(mean) if std is None else f"{fmt(mean)} ± {fmt(std)}"


def render(c: dict) -> None:
    from rich.table import Table

    console = stdout_console()
    b, a = c["before"], c["after"]
    console.print(f"compare · {c['kind']} profiles", highlight=False, markup=False)
    console.print(f"  before: {b['path']} ({b['device_type']}, {b['trials']} trial{'s' if b['trials'] != 1 else ''})",
                  highlight=False, markup=False)
    console.print(f"  after:  {a['path']} ({a['device_type']}, {a['trials']} trial{'s' if a['trials'] != 1 else ''})",
                  highlight=False, markup=False)
    tested = c["significance"]["tested"]
    # Units are in the metric names (_ms, _pct, _img_s) and in --json; the table stays narrow.
    headers = [("metric", "left"), ("before", "right"), ("after", "right"), ("Δ", "right"), ("Δ %", "right")] + ([("2·SE", "right"), ("significant", "left")] if tested else [])
    result = Table(title_justify="left", header_style="bold", show_edge=False, pad_edge=False)
    for header, justify in headers:
        result.add_column(header, justify=justify, no_wrap=header == "metric")
    for r in c["metrics"]:
        cells = [r["metric"], _with_std(r["before"], r["before_std"]), _with_std(r["after"], r["after_std"]),
                 fmt(r["delta"]), fmt(r["delta_pct"], 1)]
        if tested:
            cells += [fmt(r["threshold"]), _significance_cell(r)]
        result.add_row(*cells)
    if not console.is_terminal:
        # Piped into a file or a log: print rows whole rather than folded to 80 columns.
        console.width = max(console.width, console.measure(result, options=console.options.update_width(400)).maximum)
    console.print(result)
    v = c["verdict"]
    console.print(f"verdict: {v['before']} → {v['after']}" + (" (changed)" if v["changed"] else " (unchanged)"),
                  highlight=False, markup=False)
    for r in c["metrics"]:
        if r["note"]:
            console.print(f"note {r['metric']}: {r['note']}", highlight=False, markup=False)
    console.print(c["significance"]["sentence"], highlight=False, markup=False)


def main(before: Path, after: Path, as_json: bool) -> None:
    c = build(before, after)
    if as_json:
        emit_json(c)
    else:
        render(c)
