"""One story per verdict (issue 50, item 6): on every shared trace, a figure printed beside a verdict measures
the same thing the metric of the same name does, or the reason says how they differ.

Read from what the product prints (`summary --json`'s verdict) and what it answers (`get --json`):
- every figure of the verdict's evidence that `get` also answers is that metric's value;
- in the reason and the next step, every `<cause> <x>%` is the cause's blame share (blame_<cause>_pct), a
  `<x>% (<metric>` is that metric, `<x>% of the profiled step (<y> ms)` and `<cause> <x>% (<y> ms` give y = x% of
  the blamed step, and `of a <y> ms profiled step` is blame_step_ms: the reason's ms are of the blame's own step;
- a metric the reason names beside a figure it does not equal is named with the words that say how it differs
  (its own name, so the reader can look it up), never under another metric's name.
Rounding: a figure printed with d decimals is within half a unit of its last digit.
"""

from __future__ import annotations

import re

import pytest

from libreyolo_profile.vocabulary import causes
from tests.conftest import cli_json, trace_files, trace_id

NUMBER = r"(\d[\d,]*(?:\.\d+)?)"


def _value(text: str) -> float:
    return float(text.replace(",", ""))


def _tolerance(text: str) -> float:
    """Half a unit of the printed figure's last digit, and a hair for the float."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10**-decimals + 1e-9


def printed_figures(sentence: str, cause_names: set[str]) -> list[tuple[str, str, str]]:
    """(what, printed number, kind) for every figure the sentence ties to a name: kind 'cause_pct' (a cause's
    share, %), 'metric' (a number followed by the metric it is, in parentheses, or a metric named and then its
    number: 'dataload_pct, 39.6%'), 'cause_ms' (a cause's ms beside
    its share: `<cause> <x>% (<y> ms`, what = 'cause:x'), 'step_ms' (`of a <y> ms profiled step`)."""
    found = []
    for name, number in re.findall(r"\b([a-z_]+) " + NUMBER + r"%", sentence):
        if name in cause_names:
            found.append((name, number, "cause_pct"))
    for number, metric in re.findall(NUMBER + r"(?:%| ms)?(?: [a-z ]{1,30})? \((\w+_(?:pct|ms|us))\b", sentence):
        found.append((metric, number, "metric"))
    for metric, number in re.findall(r"\b([a-z_]+_(?:pct|ms|us)),? " + NUMBER + r"(?:%| ms| µs)", sentence):
        found.append((metric, number, "metric"))  # the metric named first: 'dataload_pct, 39.6% = …'
    for share, ms in re.findall(NUMBER + r"% (?:of the profiled step |of the step )?\(" + NUMBER + r" ms\b", sentence):
        found.append((share, ms, "cause_ms"))
    for ms in re.findall(r"of a " + NUMBER + r" ms profiled (?:step|call)", sentence):
        found.append(("blame_step_ms", ms, "step_ms"))
    return found


def test_the_reader_finds_every_kind_of_figure():
    sentence = (
        "device work holds 78.8% of each profiled step (blame_device_busy_pct, under 80%), and the largest cause "
        "of its idle time is launching 11.9% (15.43 ms: device idle …) of a 129.40 ms profiled step; next sync: "
        "sync_bubble 5.9%; dataload_pct, 39.6% = 69.30 ms, is the phase's whole wall time"
    )
    assert printed_figures(sentence, {"launching", "sync_bubble"}) == [
        ("launching", "11.9", "cause_pct"),
        ("sync_bubble", "5.9", "cause_pct"),
        ("blame_device_busy_pct", "78.8", "metric"),
        ("dataload_pct", "39.6", "metric"),
        ("11.9", "15.43", "cause_ms"),
        ("blame_step_ms", "129.40", "step_ms"),
    ]


def _metrics(path) -> dict:
    return {name: entry["value"] for name, entry in cli_json("get", str(path)).items()}


def inconsistencies(verdict: dict, metrics: dict, cause_names: set[str]) -> list[str]:
    """Every figure of the verdict (its evidence, its reason, its next step) that is not the metric it names."""
    wrong = []
    for name, value in (verdict.get("evidence") or {}).items():
        if name in metrics and isinstance(value, (int, float)) and metrics[name] is not None:
            if value != pytest.approx(metrics[name], rel=1e-9, abs=1e-9):
                wrong.append(f"evidence {name} {value} but the metric is {metrics[name]}")
    step_ms = metrics.get("blame_step_ms")
    for field in ("reason", "next_step"):
        sentence = verdict.get(field) or ""
        for what, number, kind in printed_figures(sentence, cause_names):
            if kind == "cause_pct":
                metric = metrics.get(f"blame_{what}_pct")
                if metric is None or abs(metric - _value(number)) > _tolerance(number):
                    wrong.append(f"{field}: {what} {number}% but blame_{what}_pct is {metric}")
            elif kind == "metric":
                if what not in metrics:
                    continue  # a figure no metric answers (the reason's own arithmetic names its inputs)
                metric = metrics[what]
                if metric is None or abs(metric - _value(number)) > _tolerance(number):
                    wrong.append(f"{field}: {number} beside ({what}) but {what} is {metric}")
            elif kind == "cause_ms" and step_ms:
                expected = _value(what) / 100 * step_ms
                # the share is itself rounded: its half-unit carries into the ms
                slack = _tolerance(number) + _tolerance(what) / 100 * step_ms
                if abs(expected - _value(number)) > slack:
                    wrong.append(f"{field}: {what}% printed as {number} ms, but {what}% of {step_ms} is {expected:.3f}")
            elif kind == "step_ms" and step_ms is not None and abs(step_ms - _value(number)) > _tolerance(number):
                wrong.append(f"{field}: a {number} ms profiled step but blame_step_ms is {step_ms}")
    return wrong


def test_a_figure_that_is_not_its_metric_is_found():
    """The issue's case: a sync verdict quoting 42.7% of the step beside a sync share the metrics put at 0.26%."""
    verdict = {
        "bound": "sync",
        "reason": "the largest cause of its idle time is sync_bubble 42.7% (12.00 ms: …) of a 28.10 ms profiled step",
        "evidence": {"blame_sync_bubble_pct": 42.7, "sync_pct": 0.26},
    }
    metrics = {"blame_sync_bubble_pct": 42.7, "sync_pct": 0.26, "blame_step_ms": 28.1}
    assert inconsistencies(verdict, metrics, {"sync_bubble"}) == []
    for changed, needle in (
        ({"blame_sync_bubble_pct": 0.26}, "sync_bubble 42.7% but blame_sync_bubble_pct is 0.26"),
        ({"sync_pct": 42.7}, "evidence sync_pct 0.26 but the metric is 42.7"),
        ({"blame_step_ms": 40.0}, "a 28.10 ms profiled step but blame_step_ms is 40.0"),
    ):
        found = inconsistencies(verdict, {**metrics, **changed}, {"sync_bubble"})
        assert any(needle in line for line in found), (changed, found)


@pytest.mark.parametrize("path", trace_files(), ids=trace_id)
def test_every_verdict_figure_is_the_metric_it_names(path):
    doc = cli_json("summary", str(path))
    verdict = doc.get("verdict") or {}
    if not verdict.get("reason"):
        pytest.skip("no verdict")
    wrong = inconsistencies(verdict, _metrics(path), set(causes()))
    assert not wrong, f"{verdict.get('bound')}: " + "; ".join(wrong)
