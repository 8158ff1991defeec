"""The performance gate of `libreyolo profile compare --fail-on RULE` (issue #18).

A rule is `METRIC:±THRESHOLD[UNIT]`: `step_ms:+5%`, `throughput_img_s:-3%`, `latency_p99_ms:+2ms`,
`gpu_util_pct:-5pp`. `+` fails when the metric goes up by more than the threshold, `-` when it goes
down by more than it. Units: `%` is relative (Δ%), `pp` absolute for a percentage metric, `ms`
absolute for a millisecond metric, no unit absolute in the metric's own unit.

A rule fails only when the change passes its threshold AND sql/compare.sql calls it significant:
this module reads the SQL's Δ, Δ% and `significant` and never recomputes them, so there is one
definition of significance. Plain Python: parsing a rule needs neither DuckDB nor pyarrow.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from libreyolo_profile.errors import EXIT_OK, EXIT_REGRESSION, UsageError
from libreyolo_profile.metric_catalog import METRICS

SYNTAX = ("a rule is METRIC:+N% | METRIC:-N% | METRIC:±Npp (a _pct metric) | METRIC:±Nms (a _ms metric) | "
          "METRIC:±N (in the metric's unit), e.g. step_ms:+5%, throughput_img_s:-3%, latency_p99_ms:+2ms, "
          "gpu_util_pct:-5pp")
_RULE = re.compile(r"^(?P<metric>[A-Za-z0-9_]+):(?P<direction>[+-])(?P<threshold>\d+(?:\.\d+)?|\.\d+)"
                   r"(?P<unit>%|pp|ms)?$")
# the verdict and the marks are not numbers: nothing to put a threshold on
GATEABLE = [name for name in METRICS if name not in ("bound", "bound_reason", "thrashing")]

PASS, FAIL, NOT_EVALUABLE = "pass", "fail", "not-evaluable"


@dataclass(frozen=True)
class Rule:
    text: str  # as the user wrote it
    metric: str
    direction: str  # '+': fail when it goes up by more than threshold; '-': when it goes down by more
    threshold: float
    unit: str  # '%', 'pp', 'ms' or '' (the metric's own unit)

    @property
    def relative(self) -> bool:
        return self.unit == "%"

    def to_json(self) -> dict:
        return {"rule": self.text, "metric": self.metric, "direction": self.direction,
                "threshold": self.threshold, "unit": self.unit or METRICS[self.metric][0],
                "compares": "delta_pct" if self.relative else "delta"}


def _unknown_metric(metric: str, text: str) -> UsageError:
    close = difflib.get_close_matches(metric, GATEABLE, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    return UsageError(f"unknown metric '{metric}' in --fail-on {text}: {hint}metrics: {', '.join(GATEABLE)}")


def parse_rule(text: str) -> Rule:
    """One --fail-on value as a Rule; a malformed one or an unknown metric is a usage error (exit 2)."""
    match = _RULE.match(text.strip())
    if not match:
        metric = text.split(":", 1)[0].strip()
        if ":" in text and metric and metric not in GATEABLE:
            raise _unknown_metric(metric, text)
        raise UsageError(f"bad --fail-on rule '{text}': {SYNTAX}")
    metric, unit = match["metric"], match["unit"] or ""
    if metric not in GATEABLE:
        raise _unknown_metric(metric, text)
    metric_unit = METRICS[metric][0]
    if unit == "pp" and metric_unit != "%":
        raise UsageError(f"bad --fail-on rule '{text}': pp (percentage points) applies to a percentage metric "
                         f"(…_pct); {metric} is in {metric_unit}. {SYNTAX}")
    if unit == "ms" and metric_unit != "ms":
        raise UsageError(f"bad --fail-on rule '{text}': ms applies to a metric in milliseconds (…_ms); "
                         f"{metric} is in {metric_unit}. {SYNTAX}")
    return Rule(text.strip(), metric, match["direction"], float(match["threshold"]), unit)


def parse_rules(texts: list[str] | None) -> list[Rule]:
    return [parse_rule(t) for t in texts or []]


def check_kind(rules: list[Rule], kind: str | None) -> None:
    """A rule on a metric these profiles never have (latency on train) is a configuration error."""
    for rule in rules:
        kinds = METRICS[rule.metric][1]
        if kind not in kinds:
            raise UsageError(f"--fail-on {rule.text}: {rule.metric} applies to {' and '.join(kinds)} profiles; "
                             f"these are {kind} profiles")


def _shown(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    suffix = {"%": " %", "pp": " pp", "ms": " ms"}.get(unit, "")
    return f"{value:+.2f}{suffix}"


def _limit(rule: Rule) -> str:
    return _shown(rule.threshold if rule.direction == "+" else -rule.threshold, rule.unit)


def evaluate(rule: Rule, row: dict, sides: dict[str, int]) -> dict:
    """The rule against one row of compare.sql: its inputs, whether the change passed the threshold,
    the SQL's significance, and the outcome with the reason in words.

    sides: trials per side ({'before': n, 'after': n}); a side with one trial cannot be significant."""
    change = row["delta_pct"] if rule.relative else row["delta"]
    unit = rule.unit or ""
    result = {**rule.to_json(), "before": row["before"], "after": row["after"], "before_se": row["before_se"],
              "after_se": row["after_se"], "delta": row["delta"], "delta_pct": row["delta_pct"],
              "se_combined": row["se_combined"], "significance_threshold": row["threshold"],
              "significant": row["significant"], "change": change, "passed_threshold": None}
    if change is None:
        why = row.get("note") or ("before is 0, so there is no relative change" if rule.relative and row["delta"] is not None
                                  else "no change could be computed")
        return {**result, "outcome": NOT_EVALUABLE, "reason": why}
    crossed = change > rule.threshold if rule.direction == "+" else change < -rule.threshold
    result["passed_threshold"] = crossed
    moved = (f"Δ {_shown(change, unit)} "
             f"{'passes' if crossed else 'stays within'} the limit {_limit(rule)}")
    single = [side for side, n in sides.items() if n < 2]
    if single:
        return {**result, "outcome": NOT_EVALUABLE,
                "reason": f"{moved}, but {_single_run(single)}, so no change can be significant"}
    if row["significant"] is None:
        return {**result, "outcome": NOT_EVALUABLE,
                "reason": f"{moved}, but fewer than 2 trials have a value on a side, so significance is untested"}
    if crossed and row["significant"]:
        return {**result, "outcome": FAIL, "reason": f"{moved} and is significant (|Δ| > 2·SE)"}
    if crossed:
        return {**result, "outcome": PASS, "reason": f"{moved} but is not significant (|Δ| ≤ 2·SE)"}
    return {**result, "outcome": PASS, "reason": moved}


def decide(rules: list[Rule], rows: list[dict], sides: dict[str, int], noisy: list[dict],
           strict_noise: bool) -> dict:
    """The gate: every rule's outcome, the noisy sides, and whether the build fails (exit 4)."""
    by_metric = {r["metric"]: r for r in rows}
    results = [evaluate(rule, by_metric[rule.metric], sides) for rule in rules]
    reasons = [f"{r['rule']}: {r['reason']}" for r in results if r["outcome"] == FAIL]
    if strict_noise:
        reasons += [f"noisy side: {n['side']} ({n['path']}): {n['reason']}" for n in noisy]
    single = [side for side, n in sides.items() if n < 2]
    return {
        "rules": results,
        "noisy": noisy,
        "strict_noise": strict_noise,
        "single_run": bool(single),
        "failed": bool(reasons),
        "exit_code": EXIT_REGRESSION if reasons else EXIT_OK,
        "reasons": reasons,
        "sentence": _sentence(reasons, results, single),
    }


def _single_run(sides: list[str]) -> str:
    return "both sides have a single run" if len(sides) == 2 else f"the {sides[0]} side has a single run"


def _sentence(reasons: list[str], results: list[dict], single: list[str]) -> str:
    if reasons:
        return f"gate: FAIL (exit {EXIT_REGRESSION}): " + "; ".join(reasons)
    if single:
        return (f"gate: pass: {_single_run(single)}, and a single run can never fail the gate (no change can be "
                "significant); measure both sides with --repeat ≥ 2, or add --require-repeats to refuse single runs")
    unevaluable = [r["rule"] for r in results if r["outcome"] == NOT_EVALUABLE]
    tail = f" ({len(unevaluable)} not evaluable: {', '.join(unevaluable)})" if unevaluable else ""
    return f"gate: pass{tail}"
