"""How `libreyolo profile compare` prints a comparison (readers/compare.py builds it): the terminal
table, and `--markdown`, a table for a pull-request comment.

Everything that comes from a profile (paths, kinds, verdicts, marks, settings) is text someone else
wrote. On the terminal safe_line keeps its escape sequences inert; in markdown it goes inside a code
span, where GitHub renders no HTML, no link, no emphasis, no @mention and no #reference.
"""

from __future__ import annotations

import json

from libreyolo_profile.metric_catalog import METRICS
from libreyolo_profile.output.terminal import fmt, fmt_count, short_names, stdout_console, table
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.readers import gate
from libreyolo_profile.readers.compare_ranks import COLUMNS as RANK_COLUMNS
from libreyolo_profile.readers.compare_ranks import straggler_cell
from libreyolo_profile.readers.model_identity import differences_line


def _significance_cell(row: dict) -> str:
    if row["significant"] is None:
        return "—"
    if not row["significant"]:
        return "no"
    return {"after": "[green]yes (better)[/]", "before": "[red]yes (worse)[/]"}.get(row["better"], "yes")


def _mean_se(mean, se, unit: str | None = None) -> str:
    return fmt(mean, unit=unit) if se is None else f"{fmt(mean, unit=unit)} ± {fmt(se)}"


def setting_text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def settings_line(differences: dict, what: str = "settings") -> str | None:
    if not differences:
        return None
    return f"{what} differ: " + "; ".join(
        f"{k} {setting_text(b)} → {setting_text(a)}" for k, (b, a) in differences.items()
    )


def measured_differently(c: dict) -> dict:
    """Every setting the two sides were measured with that differs: the model's, the measurement's and
    the environment's, one {name: [before, after]} (model fields prefixed `model.`)."""
    return {
        **{f"model.{k}": v for k, v in (c.get("model_differs") or {}).items()},
        **(c.get("settings_differ") or {}),
        **{f"environment.{k}": v for k, v in (c.get("environment_differ") or {}).items()},
    }


def side_settings(c: dict, index: int) -> str:
    """'batch 1, imgsz 320': this side's value of each setting that differs (the header's clause)."""
    shown = [(k.removeprefix("model."), v[index]) for k, v in measured_differently(c).items()]
    return ", ".join(f"{k} {setting_text(v)}" for k, v in shown[:MAX_HEADER_SETTINGS]) + (
        f", … {len(shown) - MAX_HEADER_SETTINGS} more below" if len(shown) > MAX_HEADER_SETTINGS else ""
    )


MAX_HEADER_SETTINGS = 4


def _metric_table(c: dict):
    from rich.text import Text

    tested = c["significance"]["tested"]
    # Units are in the metric names (_ms, _pct, _img_s) and in --json; the table fits the terminal (80
    # columns in a pipe), leaving out Δ % and 2·SE before a number is cut.
    # ± is the standard error of the trials' mean (s/√n), as in --markdown and the 2·SE threshold
    columns = [("metric", "left"), ("before ± SE", "right"), ("after ± SE", "right"), ("Δ", "right"), ("Δ %", "right")]
    columns += [("2·SE", "right"), ("significant", "left")] if tested else []
    # the headline's rows (timed without the profiler) first, then the attribution's, each titled
    groups = [(g, [r for r in c["metrics"] if r.get("measured", "profiled") == g]) for g in PROVENANCE_GROUPS]
    groups += [
        (
            "measured differently",
            [r for r in c["metrics"] if r.get("measured", "profiled") not in PROVENANCE_GROUPS],
        )
    ]
    rows = []
    for group, members in groups:
        if members:
            rows.append([Text(PROVENANCE_GROUPS.get(group, group), style="italic")] + [""] * (len(columns) - 1))
        rows += [_metric_cells(r, tested) for r in members]
    return table(None, columns, rows)


PROVENANCE_GROUPS = {"unprofiled": "headline · unprofiled", "profiled": "attribution · profiled"}


def _metric_cells(r: dict, tested: bool) -> list:
    from rich.text import Text

    unit = METRICS.get(r["metric"], ("",))[0]  # counts (launches, kernels per step) print whole
    cells = [
        r["metric"],
        _mean_se(r["before"], r["before_se"], unit),
        _mean_se(r["after"], r["after_se"], unit),
        fmt(r["delta"], unit=unit),
        fmt(r["delta_pct"], 1),
    ]
    if tested:
        cells += [fmt(r["threshold"]), Text.from_markup(_significance_cell(r))]  # our words, coloured
    return cells


def show_comparison(c: dict) -> None:
    console = stdout_console()
    b, a = c["before"], c["after"]
    # paths, device types and verdicts come from the files: safe_line keeps their escape sequences inert
    say = lambda text: console.print(safe_line(text), highlight=False, markup=False)  # noqa: E731
    say(f"compare · {c['kind']} profiles")
    say(f"  before: {_side_summary(b, side_settings(c, 0))}")
    say(f"  after:  {_side_summary(a, side_settings(c, 1))}")
    if measured_differently(c):
        say("  measured differently: the Δ below includes the effect of every setting named above")
    for side in (b, a):
        for left in side["left_out"]:
            say(f"  left out of the {'before' if side is b else 'after'} side: {left['path']}: {left['reason']}")
    console.print(_metric_table(c))
    for line in (
        differences_line(c.get("model_differs") or {}),
        settings_line(c.get("settings_differ") or {}),
        settings_line(c.get("environment_differ") or {}, "environment"),
    ):
        if line:
            say(line)
    v = c["verdict"]
    say(f"verdict: {v['before']} → {v['after']}" + (" (changed)" if v["changed"] else " (unchanged)"))
    for r in c["metrics"]:
        if r["note"]:
            say(f"note {r['metric']}: {r['note']}")
    for noisy in b["noisy"] + a["noisy"]:
        say(f"noisy {noisy['side']} side: {noisy['path']}: {noisy['reason']}")  # whole: its remedy ends it
    say(c["significance"]["sentence"])
    if c["gate"] is not None:
        # one line per rule, never folded, so a CI log can be grepped for it
        whole = lambda text: console.print(safe_line(text), highlight=False, markup=False, soft_wrap=True)  # noqa: E731
        for rule in c["gate"]["rules"]:
            whole(f"rule {rule['rule']}: {rule['outcome']}: {rule['reason']}")
        whole(c["gate"]["sentence"])


def _signed(value, digits: int = 2) -> str:
    """A change as a person reads it: an explicit + on a rise, the number as fmt prints it."""
    return fmt(value, digits) if value is None or value <= 0 else "+" + fmt(value, digits)


def _item_cells(row: dict, name: str, tested: bool) -> list:
    # an item on one side only: its Δ % says so (gone is −100 %, new has no percentage of nothing)
    pct = {"new": "new", "gone": "gone"}.get(row["presence"]) or _signed(row["delta_pct"], digits=1)
    cells = [name, row["before_ms"], row["after_ms"], _signed(row["delta_ms"]), pct]
    cells += [row["before_calls"], row["after_calls"]]
    return cells + ([row["threshold"], _significant_word(row["significant"])] if tested else [])


def show_item_changes(c: dict, top: int) -> None:
    """compare --ops / --kernels: each requested kind's largest changes, with how they were judged."""
    console = stdout_console()
    for what, header in (("ops", "op"), ("kernels", "kernel")):
        changes = c.get(what)
        if changes is None:
            continue
        rows, tested = changes["rows"][:top], changes["tested"]
        names = short_names([r["name"] for r in rows], 70)
        columns = [(header, "left"), ("before ms", "right"), ("after ms", "right"), ("Δ ms", "right")]
        columns += [("Δ %", "right"), ("calls before", "right"), ("calls after", "right")]
        columns += [("2·SE ms", "right"), ("significant", "left")] if tested else []
        console.print()
        console.print(
            table(
                f"{what} by |Δ| per measured step · {changes['measure']}",
                columns,
                [_item_cells(r, n, tested) for r, n in zip(rows, names, strict=True)],
            )
        )
        counts = {p: sum(r["presence"] == p for r in changes["rows"]) for p in ("new", "gone")}
        more = len(changes["rows"]) - len(rows)
        said = f"{len(changes['rows'])} {what} in all ({counts['new']} new, {counts['gone']} gone)"
        console.print(safe_line(said + (f"; {more} more below --top {top}, all in --json" if more > 0 else "")))
        console.print(safe_line(changes["sentence"]), highlight=False, markup=False)


def _side_details(side: dict) -> str:
    trials = f"{side['trials']} trial{'s' if side['trials'] != 1 else ''}"
    pooled = f" pooled from {len(side['profiles'])} profiles" if side.get("profiles") else ""
    return f"{side['device_type']}, {trials}{pooled}"


def _side_summary(side: dict, settings: str = "") -> str:
    return f"{side['path']} ({_side_details(side)}{'; ' + settings if settings else ''})"


# ---------------------------------------------------------------------------------------------
# --markdown: the comparison as a pull-request comment

MARKDOWN_OUTCOME = {
    gate.PASS: "pass",
    gate.FAIL: "**FAIL**",
    gate.INCONCLUSIVE: "**inconclusive**",
    gate.INVALID: "**INVALID**",
}


def markdown_number(value, digits: int = 2, signed: bool = False) -> str:
    """A number as the markdown table prints it: fixed decimals (three significant digits below 1,
    so a small standard error is not printed as 0.00), no thousands separator; None as a dash."""
    if value is None:
        return "—"
    sign = "+" if signed else ""
    if value == 0 or abs(value) >= 1:
        return f"{value:{sign}.{digits}f}"
    return f"{value:{sign}.3g}"


def md_text(text) -> str:
    """Text from a profile in markdown: a code span, so nothing in it is markup (GitHub renders no
    HTML, link, emphasis, mention or reference inside one). Its backticks become ' so it cannot close
    the span, and `|` is escaped, which a table needs even inside a code span (GFM)."""
    inner = safe_line(text).replace("`", "'").replace("|", "\\|").strip()
    return f"`{inner}`" if inner else "—"


def _with_se(mean, se, unit: str = "") -> str:
    if unit == "count":  # launches per step: 3089, never 3089.00 (its spread keeps its decimals)
        shown = "—" if mean is None else f"{mean:.0f}"
        return shown if se is None else f"{shown} ± {markdown_number(se)}"
    return markdown_number(mean) if se is None else f"{markdown_number(mean)} ± {markdown_number(se)}"


def _significant_word(value) -> str:
    return "—" if value is None else "yes" if value else "no"


def _result_cell(rule: dict) -> str:
    more = (
        f" · --repeat {rule['trials_needed']}" if rule["outcome"] == gate.INCONCLUSIVE and rule["trials_needed"] else ""
    )
    return MARKDOWN_OUTCOME[rule["outcome"]] + more


def _settings_table(c: dict) -> list[str]:
    rows = [(k, b, a) for k, (b, a) in measured_differently(c).items()]
    if not rows:
        return []
    return ["", "| setting that differs | before | after |", "| --- | --- | --- |"] + [
        f"| {md_text(k)} | {md_text(setting_text(b))} | {md_text(setting_text(a))} |" for k, b, a in rows
    ]


def comparison_markdown(c: dict, top: int = 10) -> str:
    """Metric, before ± SE, after ± SE, Δ, Δ%, significant, rule, result; the settings that differ;
    then both verdicts and the gate. The numbers are the --json ones, rounded by markdown_number."""
    rules_by_metric: dict[str, list[dict]] = {}
    for rule in (c["gate"] or {}).get("rules", []):
        rules_by_metric.setdefault(rule["metric"], []).append(rule)
    lines = [
        f"#### libreyolo profile compare · {md_text(c['kind'])}",
        "",
        f"before: {md_text(c['before']['path'])} ({md_text(_side_details(c['before']))}"
        + (f"; {md_text(side_settings(c, 0))}" if measured_differently(c) else "")
        + ")  ",
        f"after: {md_text(c['after']['path'])} ({md_text(_side_details(c['after']))}"
        + (f"; {md_text(side_settings(c, 1))}" if measured_differently(c) else "")
        + ")",
        "",
        "± is the standard error of each side's mean over its trials (s/√n).",
        "",
        "| metric | before ± SE | after ± SE | Δ | Δ% | significant | rule | result |",
        "| --- | ---: | ---: | ---: | ---: | :---: | --- | --- |",
    ]
    for r in c["metrics"]:
        rules = rules_by_metric.get(r["metric"], [])
        lines.append(
            "| "
            + " | ".join(
                [
                    r["metric"],
                    _with_se(r["before"], r["before_se"], r.get("unit", "")),
                    _with_se(r["after"], r["after_se"], r.get("unit", "")),
                    f"{r['delta']:+.0f}"
                    if r.get("unit") == "count" and r["delta"] is not None
                    else markdown_number(r["delta"], signed=True),
                    markdown_number(r["delta_pct"], 1, signed=True),
                    _significant_word(r["significant"]),
                    "<br>".join(f"`{rule['rule']}`" for rule in rules) or "—",
                    "<br>".join(_result_cell(rule) for rule in rules) or "—",
                ]
            )
            + " |"
        )
    lines += _settings_table(c)
    lines += _ranks_markdown(c.get("ranks"))
    v = c["verdict"]
    lines += [
        "",
        f"verdict: before {md_text(v['before'])} → after {md_text(v['after'])}"
        + (" (changed)" if v["changed"] else " (unchanged)"),
    ]
    for side in ("before", "after"):
        for noisy in c[side]["noisy"]:
            lines.append(f"noisy {side} side: {md_text(noisy['path'])}: {md_text(noisy['reason'])}  ")
        for left in c[side]["left_out"]:
            lines.append(f"left out of the {side} side: {md_text(left['path'])}: {md_text(left['reason'])}  ")
    lines.append(c["significance"]["sentence"])
    lines += _items_markdown(c, top)
    if c["gate"] is not None:
        lines += ["", _gate_markdown(c["gate"])]
    return "\n".join(lines) + "\n"


def _items_markdown(c: dict, top: int) -> list[str]:
    """--ops / --kernels: each requested kind's largest changes, as the terminal shows them."""
    lines = []
    for what in ("ops", "kernels"):
        changes = c.get(what)
        if changes is None:
            continue
        lines += ["", f"{what} by |Δ| per measured step ({changes['measure']}), largest {top}:", ""]
        lines += [f"| {what[:-1]} | before ms | after ms | Δ ms | calls before | calls after | significant |"]
        lines += ["| --- | ---: | ---: | ---: | ---: | ---: | :---: |"]
        for r in changes["rows"][:top]:
            delta = {"new": " (new)", "gone": " (gone)"}.get(r["presence"], "")
            cells = [md_text(r["name"]), markdown_number(r["before_ms"]), markdown_number(r["after_ms"])]
            cells += [markdown_number(r["delta_ms"], signed=True) + delta]
            cells += [fmt_count(r["before_calls"]), fmt_count(r["after_calls"]), _significant_word(r["significant"])]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", changes["sentence"]]
    return lines


def _rank_cell(row: dict, key: str) -> str:
    if key == "straggler":
        return straggler_cell(row) or "—"
    return str(row["rank"]) if key == "rank" else markdown_number(row[key], signed=key.endswith("_delta"))


def _ranks_markdown(r: dict | None) -> list[str]:
    """Two job profiles: each rank before and after and the straggler on each side (readers/compare_ranks.py)."""
    if r is None:
        return []
    lines = ["", "ranks of the two jobs, per measured step (ms):", ""]
    lines += ["| " + " | ".join(h for h, _, _ in RANK_COLUMNS) + " |"]
    lines += ["| " + " | ".join("---:" if j == "right" else "---" for _, j, _ in RANK_COLUMNS) + " |"]
    for row in r["ranks"]:
        lines.append("| " + " | ".join(_rank_cell(row, key) for _, _, key in RANK_COLUMNS) + " |")
    said = {side: "none" if rank is None else f"rank {rank}" for side, rank in r["straggler"].items()}
    return lines + ["", f"straggler: {said['before']} before, {said['after']} after"]


def _gate_markdown(g: dict) -> str:
    """The gate's sentence: its outcome in bold (our words), the reasons (with paths and numbers
    from the files) in a code span."""
    return f"**gate: {g['status']}**" + (f": {md_text(g['details'])}" if g["details"] else "")
