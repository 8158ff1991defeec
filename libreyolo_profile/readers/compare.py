"""`libreyolo profile compare`: before vs after, with significance when both sides repeat
(sql/compare.sql does the arithmetic; this module gathers the trial values and renders).

Needs only the two profile documents (no sidecar tables): the per-trial scalars live in
profile.json / profile_repeat.json (`trials`, `repeat`), and a foreign trace has one trial.
A side may also be a directory of several profiles of one setup (a baseline kept from several CI
runs): their trials are pooled into one sample. `--fail-on` rules turn the comparison into a gate
(readers/gate.py); `--markdown` prints it as a table for a pull-request comment.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from libreyolo_profile.errors import EXIT_OK, UsageError
from libreyolo_profile.readers import gate
from libreyolo_profile.metric_catalog import METRICS, null_reason
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import fmt, stderr_note, stdout_console
from libreyolo_profile.readers.common import profile_identity, records, run_sql
from libreyolo_profile.readers.model_identity import differences_line, model_differences
from libreyolo_profile.store.disk.loader import Loaded, load_document
from libreyolo_profile.store.schema import PROFILE_FILE, REPEAT_FILE
from libreyolo_profile.output.textsafe import safe_line

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


# ---------------------------------------------------------------------------------------------
# a side: one profile, or the trials of several profiles of one setup pooled from a directory

# What must match for profiles to be pooled: the `profiles` columns of `query` that fix the setup.
SAME_SETUP = ("kind", "model_family", "model_size", "imgsz", "batch", "device_type", "device_name", "half", "amp")


@dataclass
class Side:
    name: str  # 'before' | 'after'
    path: Path  # what the user named
    members: list[Loaded]  # one profile, or the pooled ones, oldest first

    @property
    def newest(self) -> Loaded:
        return self.members[-1]

    @property
    def pooled(self) -> bool:
        return len(self.members) > 1

    def values(self, metric: str) -> list[float | None]:
        """Every trial's value of the metric, over all members (None where a member lacks it)."""
        return [value for member in self.members for value in trial_values(member.doc, metric)]

    def trials(self) -> int:
        return sum(trial_count(member.doc) for member in self.members)

    def noisy(self) -> list[dict]:
        """The members carrying a `noisy` mark (issue #13), each with the mark's sentence."""
        found = []
        for member in self.members:
            marks = member.doc.get("marks")
            reason = marks.get("noisy") if isinstance(marks, dict) else None
            if reason:
                found.append({"side": self.name, "path": str(member.path), "reason": str(reason)})
        return found

    def verdict(self) -> tuple[str | None, str | None]:
        """(bound, reason): the profile's own, or for a pool that disagrees, the count of each."""
        bounds = Counter(member.doc["verdict"].get("bound") for member in self.members)
        if len(bounds) == 1:
            return self.newest.doc["verdict"].get("bound"), self.newest.doc["verdict"].get("reason")
        mixed = ", ".join(f"{bound} ×{count}" for bound, count in bounds.most_common())
        return f"mixed ({mixed})", f"the {len(self.members)} pooled profiles disagree: {mixed}"

    def identity(self) -> dict:
        identity = {**profile_identity(self.newest), "path": str(self.path), "trials": self.trials(),
                    "noisy": self.noisy()}
        if self.pooled:
            identity["profiles"] = [str(member.path) for member in self.members]
        return identity


def _profile_files(directory: Path) -> list[Path]:
    """Every profile under `directory` at any depth, hidden directories skipped (as `query` does):
    per directory its profile.json, or its profile_repeat.json when it has no profile.json (both
    files of a repeated profile describe the same trials, so only one is read)."""
    found = []
    for folder, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in (PROFILE_FILE, REPEAT_FILE):
            if name in filenames and os.path.isfile(os.path.join(folder, name)):
                found.append(Path(folder) / name)
                break
    return found


def _created(loaded: Loaded) -> tuple[float, str]:
    try:
        return datetime.fromisoformat(str(loaded.doc.get("created"))).timestamp(), str(loaded.path)
    except (TypeError, ValueError, OverflowError):
        return float("-inf"), str(loaded.path)


def _check_same_setup(directory: Path, members: list[Loaded]) -> None:
    from libreyolo_profile.store.crossrun.columns import profile_row

    rows = [profile_row(m.doc) for m in members]
    for member, row in zip(members[1:], rows[1:]):
        for key in SAME_SETUP:
            if row[key] != rows[0][key]:
                raise UsageError(f"cannot pool the profiles under {directory} into one side: {key} differs "
                                 f"({rows[0][key]} in {members[0].path}, {row[key]} in {member.path}); "
                                 f"keep one setup per baseline directory")


def load_side(name: str, path: Path | Loaded) -> Side:
    """A file, a profile directory, or a directory of several profiles of one setup (pooled); or a
    profile another reader already loaded (report --vs), taken as it is."""
    if isinstance(path, Loaded):
        return Side(name, path.path, [path])
    path = Path(path)
    files = _profile_files(path) if path.is_dir() else []
    if len(files) == 1 and files[0].parent != path:
        # one profile, however deep: read as that profile, under the name the user gave
        inner = load_document(files[0].parent)
        return Side(name, path, [Loaded(inner.doc, inner.home, path)])
    if len(files) < 2:
        return Side(name, path, [load_document(path)])  # the loader names what is missing
    members = sorted((load_document(file) for file in files), key=_created)
    _check_same_setup(path, members)
    return Side(name, path, members)


def _require_repeats(before: Side, after: Side) -> None:
    for side in (before, after):
        if side.trials() < 2:
            raise UsageError(f"--require-repeats: the {side.name} side ({side.path}) has a single run, which can "
                             f"never be significant: measure it with --repeat ≥ 2 (or pool several profiles in "
                             f"a directory)")


def _catalogue(kind: str | None, rules: list[gate.Rule]) -> list[tuple[str, bool | None]]:
    """The compared metrics: the headline ones of the kind, then any other metric a rule names."""
    catalogue = COMMON + BY_KIND.get(kind, [])
    shown = {metric for metric, _ in catalogue}
    extra = [metric for metric in dict.fromkeys(rule.metric for rule in rules) if metric not in shown]
    return catalogue + [(metric, None) for metric in extra]


def compare_document(before_path: Path | Loaded, after_path: Path | Loaded, rules: list[gate.Rule] | None = None,
                     strict_noise: bool = False, require_repeats: bool = False) -> dict:
    """The comparison; with rules or strict_noise also the gate (`gate` is None otherwise)."""
    import duckdb

    rules = rules or []
    before, after = load_side("before", before_path), load_side("after", after_path)
    kind_b, kind_a = before.newest.doc.get("kind"), after.newest.doc.get("kind")
    if kind_b != kind_a:
        raise UsageError(f"cannot compare {_article(kind_b)} profile ({before.path}) with {_article(kind_a)} profile "
                         f"({after.path}): measure both with the same subcommand")
    gate.check_kind(rules, kind_b)
    if require_repeats:
        _require_repeats(before, after)
    catalogue = _catalogue(kind_b, rules)
    sides, names, values = [], [], []
    for side in (before, after):
        for metric, _ in catalogue:
            for value in side.values(metric):
                sides.append(side.name)
                names.append(metric)
                values.append(value)
    con = duckdb.connect(":memory:")
    columns, rows = run_sql(con, "compare.sql", {
        "metrics": [m for m, _ in catalogue], "higher_is_better": [h for _, h in catalogue],
        "sample_side": sides, "sample_metric": names, "sample_value": values})
    metrics = records(columns, rows)
    for row in metrics:
        row["unit"] = METRICS[row["metric"]][0]
        row["note"] = _null_note(row["metric"], before.newest, after.newest, row)

    n_before, n_after = before.trials(), after.trials()
    repeated = n_before >= 2 and n_after >= 2
    (bound_b, reason_b), (bound_a, reason_a) = before.verdict(), after.verdict()
    noisy = before.noisy() + after.noisy()
    return {
        "kind": kind_b,
        "before": before.identity(),
        "after": after.identity(),
        "significance": {
            "tested": repeated,
            "rule": RULE if repeated else None,
            "n_before": n_before,
            "n_after": n_after,
            "sentence": (f"{RULE}; n_before = {n_before}, n_after = {n_after}" if repeated else SINGLE_RUN),
        },
        "metrics": metrics,
        "model_differs": model_differences(before.newest.doc, after.newest.doc),
        "verdict": {"before": bound_b, "after": bound_a, "changed": bound_b != bound_a,
                    "before_reason": reason_b, "after_reason": reason_a},
        "gate": (gate.decide(rules, metrics, {"before": n_before, "after": n_after}, noisy, strict_noise)
                 if rules or strict_noise else None),
    }


def _significance_cell(row: dict) -> str:
    if row["significant"] is None:
        return "—"
    if not row["significant"]:
        return "no"
    return {"after": "[green]yes (better)[/]", "before": "[red]yes (worse)[/]"}.get(row["better"], "yes")


def _with_std(mean, std, unit: str | None = None) -> str:
    return fmt(mean, unit=unit) if std is None else f"{fmt(mean, unit=unit)} ± {fmt(std)}"


def show_comparison(c: dict) -> None:
    from rich.table import Table

    console = stdout_console()
    b, a = c["before"], c["after"]
    # paths, device types and verdicts come from the files: safe_line keeps their escape sequences inert
    say = lambda text: console.print(safe_line(text), highlight=False, markup=False)  # noqa: E731
    say(f"compare · {c['kind']} profiles")
    say(f"  before: {_side_summary(b)}")
    say(f"  after:  {_side_summary(a)}")
    tested = c["significance"]["tested"]
    # Units are in the metric names (_ms, _pct, _img_s) and in --json; the table stays narrow.
    headers = [("metric", "left"), ("before", "right"), ("after", "right"), ("Δ", "right"), ("Δ %", "right")] + ([("2·SE", "right"), ("significant", "left")] if tested else [])
    result = Table(title_justify="left", header_style="bold", show_edge=False, pad_edge=False)
    for header, justify in headers:
        result.add_column(header, justify=justify, no_wrap=header == "metric")
    for r in c["metrics"]:
        unit = METRICS.get(r["metric"], ("",))[0]  # counts (launches, kernels per step) print whole
        cells = [r["metric"], _with_std(r["before"], r["before_std"], unit),
                 _with_std(r["after"], r["after_std"], unit), fmt(r["delta"], unit=unit), fmt(r["delta_pct"], 1)]
        if tested:
            cells += [fmt(r["threshold"]), _significance_cell(r)]
        result.add_row(*cells)
    if not console.is_terminal:
        # Piped into a file or a log: print rows whole rather than folded to 80 columns.
        console.width = max(console.width, console.measure(result, options=console.options.update_width(400)).maximum)
    console.print(result)
    if differences_line(c.get("model_differs") or {}):
        say(differences_line(c["model_differs"]))
    v = c["verdict"]
    say(f"verdict: {v['before']} → {v['after']}" + (" (changed)" if v["changed"] else " (unchanged)"))
    for r in c["metrics"]:
        if r["note"]:
            say(f"note {r['metric']}: {r['note']}")
    for noisy in b["noisy"] + a["noisy"]:
        say(f"noisy {noisy['side']} side: {noisy['path']}: {noisy['reason']}")
    say(c["significance"]["sentence"])
    if c["gate"] is not None:
        # one line per rule, never folded, so a CI log can be grepped for it
        whole = lambda text: console.print(safe_line(text), highlight=False, markup=False, soft_wrap=True)  # noqa: E731
        for rule in c["gate"]["rules"]:
            whole(f"rule {rule['rule']}: {rule['outcome']}: {rule['reason']}")
        whole(c["gate"]["sentence"])


def _side_details(side: dict) -> str:
    trials = f"{side['trials']} trial{'s' if side['trials'] != 1 else ''}"
    pooled = f" pooled from {len(side['profiles'])} profiles" if side.get("profiles") else ""
    return f"{side['device_type']}, {trials}{pooled}"


def _side_summary(side: dict) -> str:
    return f"{side['path']} ({_side_details(side)})"


# ---------------------------------------------------------------------------------------------
# --markdown: the comparison as a pull-request comment

MARKDOWN_OUTCOME = {gate.PASS: "pass", gate.FAIL: "**FAIL**", gate.NOT_EVALUABLE: "not evaluable"}


def markdown_number(value, digits: int = 2, signed: bool = False) -> str:
    """A number as the markdown table prints it: fixed decimals (three significant digits below 1,
    so a small standard error is not printed as 0.00), no thousands separator; None as a dash."""
    if value is None:
        return "—"
    sign = "+" if signed else ""
    if value == 0 or abs(value) >= 1:
        return f"{value:{sign}.{digits}f}"
    return f"{value:{sign}.3g}"


def _md(text) -> str:
    """Text from the files inside a table cell: terminal-safe, and no `|` or backtick to break the table."""
    return safe_line(text).replace("|", "\\|").replace("`", "'")


def _with_se(mean, se) -> str:
    return markdown_number(mean) if se is None else f"{markdown_number(mean)} ± {markdown_number(se)}"


def _significant_word(value) -> str:
    return "—" if value is None else "yes" if value else "no"


def comparison_markdown(c: dict) -> str:
    """Metric, before ± SE, after ± SE, Δ, Δ%, significant, rule, result; then both verdicts and
    the gate. The numbers are the --json ones, rounded by markdown_number."""
    rules_by_metric: dict[str, list[dict]] = {}
    for rule in (c["gate"] or {}).get("rules", []):
        rules_by_metric.setdefault(rule["metric"], []).append(rule)
    lines = [f"#### libreyolo profile compare · {_md(c['kind'])}", "",
             f"before: `{_md(c['before']['path'])}` ({_md(_side_details(c['before']))})  ",
             f"after: `{_md(c['after']['path'])}` ({_md(_side_details(c['after']))})", "",
             "| metric | before ± SE | after ± SE | Δ | Δ% | significant | rule | result |",
             "| --- | ---: | ---: | ---: | ---: | :---: | --- | --- |"]
    for r in c["metrics"]:
        rules = rules_by_metric.get(r["metric"], [])
        lines.append("| " + " | ".join([
            r["metric"], _with_se(r["before"], r["before_se"]), _with_se(r["after"], r["after_se"]),
            markdown_number(r["delta"], signed=True), markdown_number(r["delta_pct"], 1, signed=True),
            _significant_word(r["significant"]),
            "<br>".join(f"`{rule['rule']}`" for rule in rules) or "—",
            "<br>".join(MARKDOWN_OUTCOME[rule["outcome"]] for rule in rules) or "—"]) + " |")
    v = c["verdict"]
    lines += ["", f"verdict: before **{_md(v['before'])}** → after **{_md(v['after'])}**"
                  + (" (changed)" if v["changed"] else " (unchanged)")]
    for noisy in c["before"]["noisy"] + c["after"]["noisy"]:
        lines.append(f"noisy {noisy['side']} side: `{_md(noisy['path'])}`: {_md(noisy['reason'])}")
    lines.append(_md(c["significance"]["sentence"]))
    if c["gate"] is not None:
        lines.append("")
        lines.append(f"**{_md(c['gate']['sentence'])}**" if c["gate"]["failed"] else _md(c["gate"]["sentence"]))
    return "\n".join(lines) + "\n"


def print_comparison(before: Path, after: Path, as_json: bool, fail_on: list[str] | None = None, as_markdown: bool = False,
         strict_noise: bool = False, require_repeats: bool = False) -> int:
    """Print the comparison; returns the exit code: 4 when the gate failed, else 0."""
    if as_json and as_markdown:
        raise UsageError("--json and --markdown are two outputs of one run: pick one")
    rules = gate.parse_rules(fail_on)  # a bad rule exits 2 before any file is read
    c = compare_document(before, after, rules, strict_noise=strict_noise, require_repeats=require_repeats)
    if as_json:
        emit_json(c)
    elif as_markdown:
        sys.stdout.write(comparison_markdown(c))
    else:
        show_comparison(c)
    if c["gate"] is not None and c["gate"]["failed"]:
        stderr_note(f"libreyolo profile compare: regression: {'; '.join(c['gate']['reasons'])}")
        return c["gate"]["exit_code"]
    return EXIT_OK
