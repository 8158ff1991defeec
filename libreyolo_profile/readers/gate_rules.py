"""The rules of `libreyolo profile compare --fail-on RULE` (issues #18, #26), and what counts as a
plausible value of each metric.

A rule is `METRIC:±THRESHOLD[UNIT]`: `step_ms:+5%`, `throughput_img_s:-3%`, `latency_p99_ms:+2ms`,
`gpu_util_pct:-5pp`. `+` watches rises, `-` drops. Units: `%` is relative (Δ%), `pp` absolute for a
percentage metric, `ms` absolute for a millisecond metric, no unit absolute in the metric's own unit.
A threshold must be a finite number a change of the metric can reach, else the rule could never
fail: the rule is refused (exit 2) before any file is read.

The range a metric's value can take is sql/metric_catalog.sql's (metric_catalog.plausible): sql/compare.sql
receives it as binds and refuses trial values outside it, and rule parsing bounds thresholds with it.
Parsing a rule needs neither DuckDB nor pyarrow (the vocabulary's rows are cached).
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass

from libreyolo_profile.errors import UsageError
from libreyolo_profile.metric_catalog import FROM_THE_DOCUMENT, METRICS, plausible

SYNTAX = (
    "a rule is METRIC:+N% | METRIC:-N% | METRIC:±Npp (a _pct metric) | METRIC:±Nms (a _ms metric) | "
    "METRIC:±N (in the metric's unit), e.g. step_ms:+5%, throughput_img_s:-3%, latency_p99_ms:+2ms, "
    "gpu_util_pct:-5pp"
)
_RULE = re.compile(
    r"^(?P<metric>[A-Za-z0-9_]+):(?P<direction>[+-])(?P<threshold>\d+(?:\.\d+)?|\.\d+)"
    r"(?P<unit>%|pp|ms)?$"
)
# the verdict and the marks are not numbers: nothing to put a threshold on
GATEABLE = [name for name in METRICS if name not in FROM_THE_DOCUMENT]
# the largest relative threshold a rule may name: a rule that tolerates a hundredfold rise gates nothing
MAX_RELATIVE_PCT = 1e4


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

    @property
    def span(self) -> str:
        """The threshold as a band, for "to resolve ±5% here": the number and its unit, no sign."""
        return f"±{self.threshold:g}{' ' if self.unit in ('pp', 'ms') else ''}{self.unit}"

    def to_json(self) -> dict:
        return {
            "rule": self.text,
            "metric": self.metric,
            "direction": self.direction,
            "threshold": self.threshold,
            "unit": self.unit or METRICS[self.metric][0],
            "compares": "delta_pct" if self.relative else "delta",
        }


def _unknown_metric(metric: str, text: str) -> UsageError:
    close = difflib.get_close_matches(metric, GATEABLE, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    return UsageError(f"unknown metric '{metric}' in --fail-on {text}: {hint}metrics: {', '.join(GATEABLE)}")


def _quoted(text: str) -> str:
    """A rule as an error message quotes it: a 400-digit threshold shortened to keep the line readable."""
    return text if len(text) <= 80 else text[:77] + "…"


def _check_threshold(text: str, metric: str, direction: str, threshold: float, unit: str) -> None:
    """A threshold no change of the metric can pass makes a rule that can never fail: refused."""
    lowest, highest = plausible(metric)
    if not math.isfinite(threshold):
        raise UsageError(f"bad --fail-on rule '{_quoted(text)}': the threshold is not a finite number")
    if unit == "%":
        most = 100.0 if direction == "-" and lowest >= 0 else MAX_RELATIVE_PCT
        why = (
            "a metric that cannot be negative cannot fall by more than 100 %"
            if most == 100.0
            else f"a rule tolerating more than a {MAX_RELATIVE_PCT / 100:g}-fold change gates nothing"
        )
    else:
        most = highest - lowest
        why = f"{metric} only ranges over {lowest:g}…{highest:g} {METRICS[metric][0]}"
    if threshold > most:
        raise UsageError(
            f"bad --fail-on rule '{_quoted(text)}': the threshold {threshold:g}{unit} can never be passed "
            f"({why}); the most is {most:g}{unit}"
        )


def parse_rule(text: str) -> Rule:
    """One --fail-on value as a Rule; a malformed one, an unknown metric or an unreachable threshold
    is a usage error (exit 2)."""
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
        raise UsageError(
            f"bad --fail-on rule '{text}': pp (percentage points) applies to a percentage metric "
            f"(…_pct); {metric} is in {metric_unit}. {SYNTAX}"
        )
    if unit == "ms" and metric_unit != "ms":
        raise UsageError(
            f"bad --fail-on rule '{text}': ms applies to a metric in milliseconds (…_ms); "
            f"{metric} is in {metric_unit}. {SYNTAX}"
        )
    threshold = float(match["threshold"])  # digits only: a 400-digit number is inf, never an error
    _check_threshold(text.strip(), metric, match["direction"], threshold, unit)
    return Rule(text.strip(), metric, match["direction"], threshold, unit)


def parse_rules(texts: list[str] | None) -> list[Rule]:
    return [parse_rule(t) for t in texts or []]


def check_kind(rules: list[Rule], kind: str | None) -> None:
    """A rule on a metric these profiles never have (latency on train) is a configuration error."""
    for rule in rules:
        kinds = METRICS[rule.metric][1]
        if kind not in kinds:
            raise UsageError(
                f"--fail-on {rule.text}: {rule.metric} applies to {' and '.join(kinds)} profiles; "
                f"these are {kind} profiles"
            )
