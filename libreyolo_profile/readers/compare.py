"""`libreyolo profile compare`: before vs after, with significance when both sides repeat
(sql/compare.sql does the arithmetic, sql/gate.sql the gate; this module gathers the trial values,
compare_trials.py reads them from a profile, compare_settings.py says how the two sides were measured
differently, compare_render.py prints them).

Needs only the two profile documents (no sidecar tables): the per-trial scalars live in
profile.json / profile_repeat.json (`trials`, `repeat`), and a foreign trace has one trial.
A side may also be a directory of several profiles of one setup (a baseline kept from several CI
runs): their trials are pooled into one sample, each profile once (a copy or a symlink of a profile
is the same profile), and never the after profile itself. `--fail-on` rules turn the comparison into
a gate (readers/gate.py); `--markdown` prints it as a table for a pull-request comment.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from libreyolo_profile.errors import ProfileError, UnanalysableError, UsageError
from libreyolo_profile.metric_catalog import METRICS, compared_metrics, null_reason
from libreyolo_profile.output.terminal import stderr_note
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
from libreyolo_profile.readers.compare_ranks import compare_ranks, show_compare_ranks
from libreyolo_profile.readers.compare_settings import measured_as, settings_differences
from libreyolo_profile.readers.compare_trials import as_double, json_kind, raw_trials, trial_count
from libreyolo_profile.readers.model_identity import model_differences
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
        return Side(name, path, [Loaded(inner.doc, inner.home, path)])
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
    from libreyolo_profile.output.terminal import stderr_note
    from libreyolo_profile.readers import compare_render

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
        sys.stdout.write(compare_render.comparison_markdown(c, top))
    else:
        compare_render.show_comparison(c)
        if c["ranks"] is not None:
            show_compare_ranks(c["ranks"])
        compare_render.show_item_changes(c, top)
    loud = gate.loud_line(c["gate"]) if c["gate"] is not None else None
    if loud:
        stderr_note(f"libreyolo profile compare: {loud}")
    return c["gate"]["exit_code"] if c["gate"] is not None else EXIT_OK
