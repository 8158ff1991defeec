"""`libreyolo profile compare`: before vs after, with significance when both sides repeat
(sql/compare.sql does the arithmetic, sql/gate.sql the gate; this module gathers the trial values,
compare_trials.py reads them from a profile, compare_settings.py says how the two sides were measured
differently; the end of this module prints them: the terminal table and `--markdown`).

Needs only the two profile documents (no sidecar tables): the per-trial scalars live in
profile.json / profile_repeat.json (`trials`, `repeat`), and a foreign trace has one trial.
A side may also be a directory of several profiles of one setup (a baseline kept from several CI
runs): their trials are pooled into one sample, each profile once (a copy or a symlink of a profile
is the same profile), and never the after profile itself. `--fail-on` rules turn the comparison into
a gate (readers/gate.py); `--markdown` prints it as a table for a pull-request comment.

Everything printed that comes from a profile (paths, kinds, verdicts, marks, settings) is text someone else
wrote. On the terminal safe_line keeps its escape sequences inert; in markdown it goes inside a code
span, where GitHub renders no HTML, no link, no emphasis, no @mention and no #reference.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from libreyolo_profile.errors import ProfileError, UnanalysableError, UsageError
from libreyolo_profile.metric_catalog import METRICS, compared_metrics, null_reason
from libreyolo_profile.output.terminal import fmt, fmt_count, short_names, stderr_note, stdout_console, table
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.readers import gate, gate_rules
from libreyolo_profile.readers.common import profile_identity, records
from libreyolo_profile.readers.compare_items import requested_changes
from libreyolo_profile.readers.compare_pool import (
    check_same_setup,
    created_order,
    once_each,
    plain,
    profile_files,
    same_profile_keys,
    verdict_change,
)
from libreyolo_profile.readers.compare_ranks import COLUMNS as RANK_COLUMNS
from libreyolo_profile.readers.compare_ranks import compare_ranks, show_compare_ranks, straggler_cell
from libreyolo_profile.readers.compare_settings import measured_as, settings_differences
from libreyolo_profile.readers.compare_trials import as_double, json_kind, raw_trials, trial_count
from libreyolo_profile.readers.model_identity import differences_line, model_differences
from libreyolo_profile.store.disk.loader import Loaded, load_document

RULE = "significant when |Δ| > 2·√(SE_b² + SE_a²), SE = s/√n per side (s: sample standard deviation, n − 1)"
SINGLE_RUN = "a single run cannot support a verdict: measure both sides with --repeat ≥ 2"


def _null_note(metric: str, before: Loaded, after: Loaded, row: dict) -> str | None:
    if row["invalid_n"]:
        plural = "s" if row["invalid_n"] != 1 else ""
        return f"not evidence: {row['invalid_reason']} ({row['invalid_n']} such trial value{plural})"
    missing = [
        (side, loaded)
        for side, loaded, value in (("before", before, row["before"]), ("after", after, row["after"]))
        if value is None
    ]
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


@dataclass
class Side:
    name: str  # 'before' | 'after'
    path: Path  # what the user named
    members: list[Loaded]  # one profile, or the pooled ones, oldest first
    left_out: list[dict] = field(default_factory=list)  # profiles found but not pooled, with why

    @property
    def newest(self) -> Loaded:
        return self.members[-1]

    @property
    def pooled(self) -> bool:
        return len(self.members) > 1

    def samples(self, metric: str) -> list[tuple[object, str, int]]:
        """Every trial's raw value of the metric over all members: (value, source file, trial number)."""
        return [
            (value, str(member.path), trial)
            for member in self.members
            for trial, value in enumerate(raw_trials(member.doc, metric), start=1)
        ]

    def trials(self) -> int:
        return sum(trial_count(member.doc) for member in self.members)

    def noisy(self) -> list[dict]:
        """The members carrying a `noisy` mark (issue #13), each with the mark's sentence."""
        found = []
        for member in self.members:
            reason = member.head.marks.get("noisy")
            if reason:
                found.append({"side": self.name, "path": str(member.path), "reason": reason})
        return found

    def verdict(self) -> tuple[str | None, str | None]:
        """(bound, reason): the profile's own, or for a pool that disagrees, the count of each."""
        bounds = Counter(plain(member.head.verdict.bound) for member in self.members)
        newest = self.newest.head.verdict
        if len(bounds) == 1:
            return newest.bound, newest.reason
        mixed = ", ".join(f"{bound} ×{count}" for bound, count in bounds.most_common())
        return f"mixed ({mixed})", f"the {len(self.members)} pooled profiles disagree: {mixed}"

    def identity(self) -> dict:
        identity = {
            **profile_identity(self.newest),
            "path": str(self.path),
            "trials": self.trials(),
            "noisy": self.noisy(),
            "left_out": self.left_out,
        }
        if self.pooled:
            identity["profiles"] = [str(member.path) for member in self.members]
        return identity


def load_side(name: str, path: Path | Loaded) -> Side:
    """A file, a profile directory, or a directory of several profiles of one setup (pooled, each
    profile once); or a profile another reader already loaded (report --vs), taken as it is."""
    if isinstance(path, Loaded):
        return Side(name, path.path, [path])
    path = Path(path)
    files = profile_files(path) if path.is_dir() else []
    if len(files) == 1 and files[0].parent != path:
        # one profile, however deep: read as that profile, under the name the user gave
        inner = load_document(files[0].parent)
        return Side(name, path, [Loaded(inner.doc, inner.home, path, inner.head)])  # the head decoded once
    if len(files) < 2:
        return Side(name, path, [load_document(path)])  # the loader names what is missing
    readable, unreadable = _readable(path, files)
    members, left_out = once_each(sorted(readable, key=created_order))
    check_same_setup(path, members)
    return Side(name, path, members, unreadable + left_out)


def _readable(directory: Path, files: list[Path]) -> tuple[list[Loaded], list[dict]]:
    """The profiles of a pooled side that can be read, and those left out (each with a note, as `query`
    leaves them out); named alone, an unreadable profile fails the comparison instead."""
    members, unreadable = [], []
    for file in files:
        try:
            members.append(load_document(file))
        except ProfileError as exc:
            stderr_note(f"libreyolo profile: skipped {exc.message}")
            unreadable.append({"path": str(file), "reason": f"unreadable: {exc.message}"})
    if not members:
        raise UnanalysableError(f"no readable profile under {directory} (each one is named above)")
    return members, unreadable


def _without_after(before: Side, after: Side, gating: bool) -> None:
    """The after profile is never part of the before pool: left out of it, and said so. Comparing
    one profile with itself is allowed (Δ 0), but never as a gate: it would pass every rule."""
    after_keys = set().union(*(same_profile_keys(m) for m in after.members))
    kept = [m for m in before.members if not same_profile_keys(m) & after_keys]
    if len(kept) == len(before.members):
        return
    if kept:
        before.left_out += [
            {"path": str(m.path), "reason": "the after profile itself: never part of the baseline"}
            for m in before.members
            if m not in kept
        ]
        before.members = kept
    elif gating:
        raise UsageError(
            f"before ({before.path}) and after ({after.path}) are the same profile: a gate needs a "
            f"baseline measured apart from the change"
        )


def _catalogue(kind: str | None, rules: list[gate_rules.Rule]) -> list[tuple[str, bool | None]]:
    """The compared metrics: the headline ones of the kind (sql/metric_catalog.sql compare_order, better), then
    any other metric a rule names (no better direction: a rule says which change fails)."""
    catalogue = compared_metrics(kind)
    shown = {metric for metric, _ in catalogue}
    extra = [metric for metric in dict.fromkeys(rule.metric for rule in rules) if metric not in shown]
    return catalogue + [(metric, None) for metric in extra]


def _compare_sql(con, catalogue: list[tuple[str, bool | None]], before: Side, after: Side) -> list[dict]:
    """compare.sql over every raw trial value of both sides, kept on `con` as the table `comparison`
    (sql/gate.sql reads it); its rows in catalogue order."""
    from libreyolo_profile.sqlmodules import run_module

    params = {
        "metrics": [m for m, _ in catalogue],
        "higher_is_better": [h for _, h in catalogue],
        "lowest": [gate_rules.plausible(m)[0] for m, _ in catalogue],
        "highest": [gate_rules.plausible(m)[1] for m, _ in catalogue],
        **{
            key: []
            for key in ("sample_side", "sample_metric", "sample_value", "sample_kind", "sample_source", "sample_trial")
        },
    }
    for side in (before, after):
        for metric, _ in catalogue:
            for value, source, trial in side.samples(metric):
                for key, item in (
                    ("side", side.name),
                    ("metric", metric),
                    ("value", as_double(value)),
                    ("kind", json_kind(value)),
                    ("source", source),
                    ("trial", trial),
                ):
                    params[f"sample_{key}"].append(item)
    run_module(con, "compare.sql", params)  # after the significance rule's macros (sql/compare_rule.sql)
    cursor = con.execute("SELECT * FROM comparison")
    rows = records([d[0] for d in cursor.description], cursor.fetchall())
    order = {metric: i for i, (metric, _) in enumerate(catalogue)}
    return sorted(rows, key=lambda r: order[r["metric"]])


def _require_repeats(rows: list[dict], rules: list[gate_rules.Rule], before: Side, after: Side) -> None:
    """Each side needs ≥ 2 trials that hold a value (evidence) of every gated metric (step_ms without
    rules): empty trial entries, garbage and a claimed count do not count."""
    by_metric = {r["metric"]: r for r in rows}
    for side in (before, after):
        for metric in dict.fromkeys([rule.metric for rule in rules] or ["step_ms"]):
            held = by_metric[metric][f"{side.name}_n"]
            if held < 2:
                what = "a single run" if held == 1 else "no trial holding a value"
                raise UsageError(
                    f"--require-repeats: the {side.name} side ({side.path}) has {what} of {metric} "
                    f"({side.trials()} trial entr{'ies' if side.trials() != 1 else 'y'}), and a gate needs "
                    f"≥ 2 trials per side holding a value: measure it with --repeat ≥ 2 (or pool "
                    f"several profiles in a directory)"
                )


def _same_kind(before: Side, after: Side) -> str | None:
    """The kind both sides share; a train profile compared with an infer one is a usage error."""
    kind_b, kind_a = before.newest.head.kind, after.newest.head.kind
    if kind_b != kind_a:
        raise UsageError(
            f"cannot compare {_article(kind_b)} profile ({before.path}) with {_article(kind_a)} profile "
            f"({after.path}): measure both with the same subcommand"
        )
    return kind_b


def _annotate(metrics: list[dict], before: Side, after: Side) -> None:
    """Each compared metric's unit, why it has no change where a side is null or not evidence, and which
    calls each side timed it on."""
    for row in metrics:
        row["unit"] = METRICS[row["metric"]][0]
        row["note"] = _null_note(row["metric"], before.newest, after.newest, row)
        row["measured"] = measured_as(row["metric"], before.newest.head, after.newest.head)


def _significance(before: Side, after: Side) -> dict:
    """Whether the deltas were tested: only when both sides hold ≥ 2 trials."""
    n_before, n_after = before.trials(), after.trials()
    repeated = n_before >= 2 and n_after >= 2
    return {
        "tested": repeated,
        "rule": RULE if repeated else None,
        "n_before": n_before,
        "n_after": n_after,
        "sentence": (f"{RULE}; n_before = {n_before}, n_after = {n_after}" if repeated else SINGLE_RUN),
    }


def compare_document(
    before_path: Path | Loaded,
    after_path: Path | Loaded,
    rules: list[gate_rules.Rule] | None = None,
    strict_noise: bool = False,
    require_repeats: bool = False,
    require_conclusive: bool = False,
    items: tuple[str, ...] = (),
) -> dict:
    """The comparison; with rules or strict_noise also the gate (`gate` is None otherwise); `items`
    ("ops", "kernels") adds each one's changes (readers/compare_items.py)."""
    from libreyolo_profile.connections import scratch_connection

    rules = rules or []
    before, after = load_side("before", before_path), load_side("after", after_path)
    kind = _same_kind(before, after)
    gate_rules.check_kind(rules, kind)
    _without_after(before, after, gating=bool(rules))
    catalogue = _catalogue(kind, rules)
    con = scratch_connection()
    try:
        metrics = _compare_sql(con, catalogue, before, after)
        if require_repeats:
            _require_repeats(metrics, rules, before, after)
        _annotate(metrics, before, after)
        noisy = before.noisy() + after.noisy()
        gate_result = (  # read from the comparison table on `con`, so before it closes
            gate.decide(gate.evaluate(con, rules, metrics, bool(noisy)), noisy, strict_noise, require_conclusive)
            if rules or strict_noise
            else None
        )
    finally:
        con.close()
    return {
        "kind": kind,
        "before": before.identity(),
        "after": after.identity(),
        "significance": _significance(before, after),
        "metrics": metrics,
        "model_differs": model_differences(before.newest.doc, after.newest.doc),
        "settings_differ": settings_differences(before.newest.doc, after.newest.doc),
        "environment_differ": settings_differences(before.newest.doc, after.newest.doc, "environment"),
        "verdict": verdict_change(before, after),
        # two job profiles: the straggler and each rank before and after (readers/compare_ranks.py)
        "ranks": compare_ranks(before.newest, after.newest),
        "gate": gate_result,
        **requested_changes(items, before.members, after.members),
    }


def print_comparison(
    before: Path,
    after: Path,
    as_json: bool,
    fail_on: list[str] | None = None,
    as_markdown: bool = False,
    strict_noise: bool = False,
    require_repeats: bool = False,
    require_conclusive: bool = False,
    items: tuple[str, ...] = (),
    top: int = 10,
) -> int:
    """Print the comparison; returns the exit code: 4 when the gate failed, 5 when it could not
    tell under --require-conclusive, else 0."""
    from libreyolo_profile.errors import EXIT_OK
    from libreyolo_profile.output.json_out import emit_json

    if as_json and as_markdown:
        raise UsageError("--json and --markdown are two outputs of one run: pick one")
    rules = gate_rules.parse_rules(fail_on)  # a bad rule exits 2 before any file is read
    if top < 1:
        raise UsageError(f"--top must be at least 1, not {top}")
    c = compare_document(
        before,
        after,
        rules,
        strict_noise=strict_noise,
        require_repeats=require_repeats,
        require_conclusive=require_conclusive,
        items=items,
    )
    if as_json:
        emit_json(c)
    elif as_markdown:
        sys.stdout.write(comparison_markdown(c, top))
    else:
        show_comparison(c)
        if c["ranks"] is not None:
            show_compare_ranks(c["ranks"])
        show_item_changes(c, top)
    loud = gate.loud_line(c["gate"]) if c["gate"] is not None else None
    if loud:
        stderr_note(f"libreyolo profile compare: {loud}")
    return c["gate"]["exit_code"] if c["gate"] is not None else EXIT_OK


# ---------------------------------------------------------------------------------------------
# printing: the terminal table, and --markdown for a pull-request comment


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
