"""The performance gate of `libreyolo profile compare --fail-on RULE` (issues #18, #26).

Each rule has one of four outcomes, decided by sql/gate.sql over compare.sql's rows (never here):
  pass          the evidence bounds the change within the threshold (Δ ± 2·SE stays inside it)
  fail          the change passed the threshold and is significant (|Δ| > 2·SE)
  inconclusive  neither: the evidence cannot tell (a single run, a null metric, noise as wide as the
                threshold, or a side marked noisy, whose 2·SE neither bounds nor proves a change);
                each such rule says how many trials per side would resolve it, or what else would
  invalid       a trial value is not evidence (not a number, NaN, ±Infinity, impossible, absurd)
The gate fails (exit 4) on a fail, an invalid rule, or with --strict-noise a noisy side; an
inconclusive rule exits 0 with a loud line on stderr, or 5 with --require-conclusive.
Rule syntax and validation live in gate_rules.py.
"""

from __future__ import annotations

from libreyolo_profile.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION
from libreyolo_profile.readers.common import records, run_sql
from libreyolo_profile.readers.gate_rules import Rule

PASS, FAIL, INCONCLUSIVE, INVALID = "pass", "fail", "inconclusive", "invalid"
# the comparison row's inputs a rule's JSON carries beside its outcome
ROW_KEYS = (
    "before",
    "after",
    "before_se",
    "after_se",
    "before_n",
    "after_n",
    "delta",
    "delta_pct",
    "se_combined",
    "significant",
    "invalid_n",
    "invalid_reason",
)


def _shown(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    suffix = {"%": " %", "pp": " pp", "ms": " ms"}.get(unit, "")
    return f"{value:+.2f}{suffix}"


def _limit(rule: Rule) -> str:
    return _shown(rule.threshold if rule.direction == "+" else -rule.threshold, rule.unit)


def _end(rule: Rule, r: dict) -> str:
    """The end of Δ ± 2·SE the rule watches: the upper end for a '+' rule, the lower for a '-' rule."""
    sign = 1 if rule.direction == "+" else -1
    return f"{'upper' if sign > 0 else 'lower'} end {_shown(r['change'] + sign * r['margin'], rule.unit)}"


def _single_run(sides: list[str]) -> str:
    return "both sides have a single run" if len(sides) == 2 else f"the {sides[0]} side has a single run"


def _resolve(rule: Rule, r: dict) -> str:
    """What would settle the rule: the trials per side, or why no number of trials would."""
    n = r["trials_needed"]
    if r["basis"] in ("no_change", "invalid_evidence"):
        return ""  # more trials of the same garbage, or of a metric never measured, settle nothing
    if r["basis"] in ("bounded_but_noisy", "significant_but_noisy"):
        at = f" ({n} trials per side would resolve it at this spread)" if n is not None else ""
        return (
            f"re-measure the noisy side on a quiet machine{at}, or pool several runs as the baseline so "
            f"that the spread includes the drift between runs"
        )
    if n is not None:
        if r["outcome"] == INCONCLUSIVE:
            return f"to resolve {rule.span} here, use --repeat {n} on both sides"
        return f"{n} trials per side resolve it at this spread"
    if r["spread"] is None:
        return "a single run shows no spread: measure both sides with --repeat ≥ 2 to learn how many trials it needs"
    return "the change sits on the threshold: no number of trials resolves it"


def _reason(rule: Rule, r: dict, row: dict) -> str:
    """The outcome in words, with the numbers it rests on."""
    unit, basis = rule.unit, r["basis"]
    if basis == "invalid_evidence":
        return (
            f"{r['invalid_n']} trial value{'s' if r['invalid_n'] != 1 else ''} of {rule.metric} "
            f"{'are' if r['invalid_n'] != 1 else 'is'} not evidence ({r['invalid_reason']}): only finite, "
            f"plausible numbers are"
        )
    if basis == "no_change":
        return row.get("note") or (
            "before is 0, so there is no relative change" if rule.relative else "no change could be computed"
        )
    moved = f"Δ {_shown(r['change'], unit)}"
    if basis == "single_run":
        single = [side for side in ("before", "after") if r[f"{side}_n"] < 2]
        return (
            f"{moved} {'passes' if r['passed_threshold'] else 'stays within'} the limit {_limit(rule)}, but "
            f"{_single_run(single)}: one trial gives no spread, so the change can be neither bounded nor significant"
        )
    band = f"{moved} ± {_shown(r['margin'], unit).lstrip('+')} (2·SE)"
    return {
        "significant_past_limit": f"{moved} passes the limit {_limit(rule)} and is significant (|Δ| > 2·SE, "
        f"{_shown(r['margin'], unit).lstrip('+')})",
        "bounded_within_limit": f"{band}: even its {_end(rule, r)} stays within the limit {_limit(rule)}",
        "bounded_but_noisy": f"{band} stays within the limit {_limit(rule)}, but a side is marked noisy: its "
        f"trials spread less than the machine drifted, so 2·SE bounds nothing",
        "significant_but_noisy": f"{moved} passes the limit {_limit(rule)} by more than 2·SE "
        f"({_shown(r['margin'], unit).lstrip('+')}), but a side is marked noisy: its trials "
        f"spread less than the machine drifted, so 2·SE proves nothing",
        "past_limit_not_significant": f"{moved} passes the limit {_limit(rule)} but is not significant (2·SE "
        f"{_shown(r['margin'], unit).lstrip('+')}): it may be noise",
        "interval_reaches_limit": f"{band}: its {_end(rule, r)} lies past the limit {_limit(rule)}, so a change "
        f"beyond it is not ruled out",
    }[basis]


def evaluate(con, rules: list[Rule], rows: list[dict], noisy: bool) -> list[dict]:
    """Every rule against the `comparison` table on `con` (compare.sql's rows, also given as `rows`):
    its inputs, its outcome from sql/gate.sql, the reason in words and the trials that resolve it.
    noisy: a profile of either side carries the `noisy` mark."""
    if not rules:
        return []
    judged = records(
        *run_sql(
            con,
            "gate.sql",
            {
                "noisy": noisy,
                "rule_text": [r.text for r in rules],
                "rule_metric": [r.metric for r in rules],
                "rule_direction": [r.direction for r in rules],
                "rule_limit": [r.threshold for r in rules],
                "rule_relative": [r.relative for r in rules],
            },
        )
    )
    by_metric = {row["metric"]: row for row in rows}
    results = []
    for rule, r in zip(rules, judged, strict=False):
        row = by_metric[rule.metric]
        result = {
            **rule.to_json(),
            **{key: row[key] for key in ROW_KEYS},
            "significance_threshold": row["threshold"],
            **{
                key: r[key]
                for key in (
                    "change",
                    "passed_threshold",
                    "margin",
                    "worst_case",
                    "spread",
                    "trials_needed",
                    "outcome",
                    "basis",
                )
            },
        }
        resolve = _resolve(rule, result)
        result["reason"] = _reason(rule, result, row) + (f"; {resolve}" if resolve else "")
        result["resolve"] = resolve or None
        results.append(result)
    return results


def decide(results: list[dict], noisy: list[dict], strict_noise: bool, require_conclusive: bool) -> dict:
    """The gate over every rule's outcome: whether the build fails (exit 4), cannot tell (0, or 5 with
    require_conclusive), or passes (0)."""
    reasons = [f"{r['rule']}: {r['reason']}" for r in results if r["outcome"] == FAIL]
    reasons += [f"{r['rule']}: {r['reason']}" for r in results if r["outcome"] == INVALID]
    if strict_noise:
        reasons += [f"noisy side: {n['side']} ({n['path']}): {n['reason']}" for n in noisy]
    unsure = [r for r in results if r["outcome"] == INCONCLUSIVE]
    exit_code = EXIT_REGRESSION if reasons else EXIT_INCONCLUSIVE if unsure and require_conclusive else EXIT_OK
    gate = {
        "rules": results,
        "noisy": noisy,
        "strict_noise": strict_noise,
        "require_conclusive": require_conclusive,
        "single_run": any(r["basis"] == "single_run" for r in results),
        "failed": bool(reasons),
        "inconclusive": [r["rule"] for r in unsure],
        "exit_code": exit_code,
        "reasons": reasons,
        **dict(zip(("status", "details"), _status(reasons, results, unsure, exit_code), strict=False)),
    }
    gate["sentence"] = f"gate: {gate['status']}" + (f": {gate['details']}" if gate["details"] else "")
    return gate


def _status(reasons: list[str], results: list[dict], unsure: list[dict], exit_code: int) -> tuple[str, str]:
    """(the gate's outcome in a few words, the details): the sentence is "gate: STATUS: DETAILS"."""
    if reasons:
        return f"FAIL (exit {EXIT_REGRESSION})", "; ".join(reasons)
    if unsure:
        status = (
            f"INCONCLUSIVE (exit {EXIT_INCONCLUSIVE}, --require-conclusive)"
            if exit_code == EXIT_INCONCLUSIVE
            else f"INCONCLUSIVE (exit 0 without --require-conclusive, which makes it exit {EXIT_INCONCLUSIVE})"
        )
        return status, (
            f"{len(unsure)} of {len(results)} rule{'s' if len(results) != 1 else ''} cannot tell, "
            f"nothing is proven: " + "; ".join(f"{r['rule']}: {r['resolve'] or r['reason']}" for r in unsure)
        )
    return "pass", ("every rule's evidence bounds the change within its limit" if results else "")


def loud_line(gate: dict) -> str | None:
    """The stderr line for a gate that did not pass cleanly; None when it passed."""
    if gate["failed"]:
        outcomes = {r["outcome"] for r in gate["rules"]}
        kinds = [word for outcome, word in ((FAIL, "regression"), (INVALID, "invalid evidence")) if outcome in outcomes]
        return f"{' and '.join(kinds) or 'gate failed'}: {'; '.join(gate['reasons'])}"
    if gate["inconclusive"]:
        unsure = [r for r in gate["rules"] if r["outcome"] == INCONCLUSIVE]
        return "INCONCLUSIVE: " + "; ".join(f"{r['rule']}: {r['resolve'] or r['reason']}" for r in unsure)
    return None
