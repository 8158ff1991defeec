"""`libreyolo profile compare --fail-on` as a CI gate (issue #18), through the real CLI.

Profiles are built from a real trace with known per-trial values (test_compare.with_trials), so every
expected outcome is derived here from those values: Δ, Δ% and 2·SE by hand, then "fail" exactly when
the change passes the rule's threshold and |Δ| > 2·SE. The values sit just above and just below each
threshold. Also: single runs never fail, noisy sides, --markdown against --json, pooled baseline
directories, the baseline query, bad rules. Two real `infer` measurements at the end are marked slow.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import statistics
from pathlib import Path

import pytest
from conftest import REPO, require_traces, run_cli
from test_compare import expected_threshold, ingested, row, with_trials, write

EXIT_REGRESSION = 4


@pytest.fixture(scope="module")
def traces():
    return require_traces()


@pytest.fixture(scope="module")
def cache(reader_cache_env):
    return reader_cache_env


@pytest.fixture(scope="module")
def v100_doc(traces, cache):
    return ingested(traces / "v100_resnet50_workers0.json.gz", cache)


def compare(*args, cache) -> tuple[int, dict, str]:
    """(exit code, the --json document, stderr)."""
    result = run_cli("compare", *map(str, args), "--json", env=cache)
    assert result.returncode in (0, EXIT_REGRESSION), result.stderr
    return result.returncode, json.loads(result.stdout), result.stderr


def rule_result(report: dict, text: str) -> dict:
    return next(r for r in report["gate"]["rules"] if r["rule"] == text)


# ---------------------------------------------------------------------------------------------
# the rule edges: one before/after pair, every rule judged in one run

BEFORE = {
    "step_ms": [100.0, 102.0, 98.0],
    "gpu_util_pct": [50.0, 51.0, 49.0],
    "throughput_img_s": [200.0, 204.0, 196.0],
}
# step_ms +5.1 ms (+5.1 %), 2·SE 3.06 ms; gpu_util_pct −5.1 pp (−10.2 %), 2·SE 2.31 pp: both well beyond
# 2·SE; throughput −5 % but with a spread so wide that the drop is not significant
AFTER = {"step_ms": [104.1, 106.1], "gpu_util_pct": [43.9, 45.9], "throughput_img_s": [150.0, 230.0]}

# (rule, what it is meant to show); the outcome itself is derived by expected_outcome
EDGE_RULES = [
    ("step_ms:+5%", "Δ% +5.1 just above +5 %, significant: fail"),
    ("step_ms:+5.2%", "Δ% +5.1 just below +5.2 %, but Δ + 2·SE = 8.16 % is not: inconclusive"),
    ("step_ms:+8.1%", "the upper end 8.16 % just past +8.1 %: inconclusive"),
    ("step_ms:+8.2%", "the upper end 8.16 % just within +8.2 %: pass"),
    ("step_ms:+5ms", "Δ +5.1 ms just above +5 ms"),
    ("step_ms:+5.2ms", "Δ +5.1 ms just below +5.2 ms"),
    ("step_ms:+8.2ms", "Δ + 2·SE = 8.16 ms within +8.2 ms"),
    ("step_ms:+5", "a plain number is in the metric's own unit (ms)"),
    ("step_ms:-1%", "a '-' rule watches drops only; step_ms rose, and even Δ − 2·SE is above −1 %"),
    ("gpu_util_pct:-5pp", "Δ −5.1 pp just beyond −5 pp"),
    ("gpu_util_pct:-5.2pp", "Δ −5.1 pp just within −5.2 pp, Δ − 2·SE = −7.41 pp is not"),
    ("gpu_util_pct:-7.5pp", "Δ − 2·SE = −7.41 pp within −7.5 pp"),
    ("gpu_util_pct:-10%", "the same drop is −10.2 % relative: beyond −10 %"),
    ("gpu_util_pct:-10.5%", "… within −10.5 %, its lower end −14.8 % is not"),
    ("gpu_util_pct:-15%", "… its lower end −14.8 % within −15 %"),
    ("throughput_img_s:-3%", "−5 % passes −3 % but is not significant: inconclusive"),
    ("launches_per_step:+0", "unchanged between all trials: no spread, no change: pass"),
]
RULE_SYNTAX = re.compile(r"^(\w+):([+-])([\d.]+)(%|pp|ms)?$")
Z80 = 0.8416212335729143  # Φ⁻¹(0.8), the power the trials-needed figure is documented with


def expected_outcome(rule: str, before: dict, after: dict) -> tuple[bool, bool, str, int | None]:
    """(threshold passed, significant, outcome, trials needed) from the trial values, by the issue's
    definitions and the formula of docs/SCHEMA.md, in plain Python."""
    metric, direction, threshold, unit = RULE_SYNTAX.match(rule).groups()
    b, a = before[metric], after[metric]
    limit, sign = float(threshold), 1 if direction == "+" else -1
    delta = statistics.fmean(a) - statistics.fmean(b)
    scale = 100 / abs(statistics.fmean(b)) if unit == "%" else 1
    toward = sign * delta * scale
    margin = expected_threshold(b, a) * scale
    significant = abs(delta) > expected_threshold(b, a)
    crossed = toward > limit
    outcome = "fail" if crossed and significant else "pass" if toward + margin <= limit + 1e-9 else "inconclusive"
    spread = math.sqrt(statistics.variance(b) + statistics.variance(a)) * scale
    if spread == 0:
        needed = 2
    elif toward < limit:
        needed = math.ceil(((2 + Z80) * spread / (limit - toward)) ** 2)
    else:
        needed = math.ceil(max((Z80 * spread / (toward - limit)) ** 2, ((2 + Z80) * spread / toward) ** 2))
    return crossed, significant, outcome, max(2, needed)


@pytest.fixture(scope="module")
def edge_pair(v100_doc, tmp_path_factory):
    root = tmp_path_factory.mktemp("gate-edges")
    launches = v100_doc["metrics"]["launches_per_step"]
    before = write(with_trials(v100_doc, {**BEFORE, "launches_per_step": [launches] * 3}), root / "before")
    after = write(with_trials(v100_doc, {**AFTER, "launches_per_step": [launches] * 2}), root / "after")
    return before, after


def test_each_rule_passes_fails_or_cannot_tell_by_its_evidence(edge_pair, v100_doc, cache):
    before, after = edge_pair
    args = [a for rule, _ in EDGE_RULES for a in ("--fail-on", rule)]
    code, report, stderr = compare(before, after, *args, cache=cache)

    launches = v100_doc["metrics"]["launches_per_step"]
    known_b = {**BEFORE, "launches_per_step": [launches] * 3}
    known_a = {**AFTER, "launches_per_step": [launches] * 2}
    outcomes = {}
    for rule, why in EDGE_RULES:
        crossed, significant, outcome, needed = expected_outcome(rule, known_b, known_a)
        got = rule_result(report, rule)
        assert got["outcome"] == outcome, (rule, why, got["reason"])
        assert got["passed_threshold"] is crossed, (rule, why)
        assert got["trials_needed"] == needed, (rule, why)
        # the gate reads the SQL's Δ, Δ% and significance: the same numbers as the metric table
        metric_row = row(report, got["metric"])
        for key in ("delta", "delta_pct", "significant", "before_se", "after_se"):
            assert got[key] == metric_row[key], (rule, key)
        assert got["significant"] is significant, (rule, why)
        outcomes[rule] = outcome
    # the fixture really straddles every edge: all three outcomes occur
    assert {"fail", "pass", "inconclusive"} == set(outcomes.values())
    assert rule_result(report, "throughput_img_s:-3%")["basis"] == "past_limit_not_significant"
    assert "not significant" in rule_result(report, "throughput_img_s:-3%")["reason"]
    assert "to resolve ±5.2% here, use --repeat" in rule_result(report, "step_ms:+5.2%")["reason"]

    failed = [rule for rule, outcome in outcomes.items() if outcome == "fail"]
    assert code == EXIT_REGRESSION
    assert report["gate"]["failed"] is True and report["gate"]["exit_code"] == EXIT_REGRESSION
    assert [reason.split(":", 2)[0] + ":" + reason.split(":", 2)[1] for reason in report["gate"]["reasons"]] == failed
    assert len(stderr.strip().splitlines()) == 1 and "regression" in stderr and "Traceback" not in stderr

    # the human output says the same, one line per rule
    text = run_cli("compare", str(before), str(after), *args, env=cache)
    assert text.returncode == EXIT_REGRESSION, text.stderr
    for rule, outcome in outcomes.items():
        assert f"rule {rule}: {outcome}:" in text.stdout
    assert "gate: FAIL (exit 4)" in text.stdout


def test_a_passing_gate_exits_0(edge_pair, cache):
    before, after = edge_pair
    code, report, stderr = compare(
        before,
        after,
        "--fail-on",
        "step_ms:+8.2%",
        "--fail-on",
        "gpu_util_pct:-7.5pp",
        "--require-conclusive",
        cache=cache,
    )
    assert code == 0 and report["gate"]["failed"] is False and report["gate"]["reasons"] == []
    assert [r["outcome"] for r in report["gate"]["rules"]] == ["pass", "pass"]
    assert report["gate"]["sentence"].startswith("gate: pass") and stderr == ""


def test_markdown_renders_the_numbers_of_json(edge_pair, cache):
    from libreyolo_profile.readers.compare import markdown_number

    before, after = edge_pair
    rules = ["--fail-on", "step_ms:+5%", "--fail-on", "throughput_img_s:-3%", "--fail-on", "step_ms:+8.2%"]
    _, report, _ = compare(before, after, *rules, cache=cache)
    result = run_cli("compare", str(before), str(after), *rules, "--markdown", env=cache)
    assert result.returncode == EXIT_REGRESSION, result.stderr
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| metric |"))
    assert [c.strip() for c in lines[header].strip("|").split("|")] == [
        "metric",
        "before ± SE",
        "after ± SE",
        "Δ",
        "Δ%",
        "significant",
        "rule",
        "result",
    ]
    body = [line for line in lines[header + 2 :] if line.startswith("| ")]
    cells = {c[0]: c for c in ([x.strip() for x in line.strip("|").split("|")] for line in body)}
    assert list(cells) == [r["metric"] for r in report["metrics"]]

    def close(cell: str, value) -> None:
        """The cell is the JSON value, rounded to the decimals the cell shows."""
        if value is None:
            assert cell == "—"
            return
        decimals = len(cell.split(".")[1]) if "." in cell else 0
        assert float(cell) == pytest.approx(value, abs=0.5 * 10**-decimals + 1e-12), (cell, value)

    for r in report["metrics"]:
        metric, before_cell, after_cell, delta, delta_pct, significant, rule, outcome = cells[r["metric"]]
        for cell, mean, se in ((before_cell, r["before"], r["before_se"]), (after_cell, r["after"], r["after_se"])):
            parts = cell.split(" ± ")
            close(parts[0], mean)
            close(parts[1] if se is not None else "—", se)
        close(delta, r["delta"])
        close(delta_pct, r["delta_pct"])
        assert significant == {True: "yes", False: "no", None: "—"}[r["significant"]]
        ruled = [g for g in report["gate"]["rules"] if g["metric"] == r["metric"]]
        assert rule == ("<br>".join(f"`{g['rule']}`" for g in ruled) or "—")
        assert outcome == (
            "<br>".join(
                {"fail": "**FAIL**", "pass": "pass"}.get(
                    g["outcome"], f"**inconclusive** · --repeat {g['trials_needed']}"
                )
                for g in ruled
            )
            or "—"
        )
    # SE is s/√n: the markdown shows the standard error, not the standard deviation
    step = row(report, "step_ms")
    assert step["before_se"] == pytest.approx(statistics.stdev(BEFORE["step_ms"]) / math.sqrt(3))
    assert markdown_number(step["before_se"]) in cells["step_ms"][1]
    v = report["verdict"]
    assert f"verdict: before `{v['before']}` → after `{v['after']}`" in result.stdout
    assert "**gate: FAIL (exit 4)" in result.stdout


def test_json_and_markdown_together_are_a_usage_error(edge_pair, cache):
    before, after = edge_pair
    result = run_cli("compare", str(before), str(after), "--markdown", "--json", env=cache)
    assert result.returncode == 2 and "pick one" in result.stderr


# ---------------------------------------------------------------------------------------------
# what can never fail the gate, and what the gate refuses


def test_a_and_a_with_repeats_passes(v100_doc, tmp_path, cache):
    a1 = write(with_trials(v100_doc, {"step_ms": [100.0, 102.0, 98.0]}), tmp_path / "a1")
    a2 = write(with_trials(v100_doc, {"step_ms": [101.0, 99.0, 100.5]}), tmp_path / "a2")
    code, report, _ = compare(a1, a2, "--fail-on", "step_ms:+5%", "--fail-on", "throughput_img_s:-3%", cache=cache)
    assert code == 0 and report["gate"]["failed"] is False
    assert all(r["outcome"] == "pass" for r in report["gate"]["rules"])


def test_a_single_run_is_inconclusive_never_a_pass_nor_a_failure(traces, v100_doc, tmp_path, cache):
    before, after = traces / "v100_resnet50_workers0.json.gz", traces / "v100_resnet50_workers4.json.gz"
    # step time fell by about a fifth between these two traces: the rule's threshold is passed by far
    rules = ["--fail-on", "step_ms:-5%", "--fail-on", "throughput_img_s:+5%"]
    code, report, stderr = compare(before, after, *rules, cache=cache)
    assert code == 0 and report["gate"]["failed"] is False and report["gate"]["single_run"] is True
    for rule in report["gate"]["rules"]:
        assert rule["passed_threshold"] is True and rule["significant"] is None
        assert rule["outcome"] == "inconclusive" and "single run" in rule["reason"]
        assert rule["trials_needed"] is None and "--repeat ≥ 2" in rule["reason"]  # no spread known yet
    assert report["gate"]["sentence"].startswith("gate: INCONCLUSIVE")
    assert "INCONCLUSIVE" in stderr and len(stderr.strip().splitlines()) == 1  # the loud line, even at exit 0

    # one side repeated, the other a single run: the repeated side's spread stands for both
    repeated = write(with_trials(v100_doc, {"step_ms": [300.0, 301.0, 302.0]}), tmp_path / "repeated")
    code, report, _ = compare(repeated, after, "--fail-on", "step_ms:-5%", cache=cache)
    rule = report["gate"]["rules"][0]
    assert code == 0 and rule["outcome"] == "inconclusive" and "the after side has a single run" in rule["reason"]
    spread = math.sqrt(2) * 1.0 * 100 / 301.0  # s = 1 ms before, in % of the before mean
    assert rule["spread"] == pytest.approx(spread)
    toward = -rule["change"]  # a '-' rule watches drops
    assert toward > 5  # so fail is what more trials would settle
    needed = max(2, math.ceil(max((Z80 * spread / (toward - 5)) ** 2, ((2 + Z80) * spread / toward) ** 2)))
    assert (
        rule["trials_needed"] == needed
        and f"to resolve ±5% here, use --repeat {needed} on both sides" in rule["reason"]
    )

    text = run_cli("compare", str(before), str(after), *rules, env=cache)
    assert text.returncode == 0 and "gate: INCONCLUSIVE" in text.stdout
    conclusive = run_cli("compare", str(before), str(after), *rules, "--require-conclusive", env=cache)
    assert conclusive.returncode == 5 and "gate: INCONCLUSIVE (exit 5" in conclusive.stdout

    refused = run_cli("compare", str(before), str(after), *rules, "--require-repeats", env=cache)
    assert refused.returncode == 2 and refused.stdout == ""
    assert "--require-repeats" in refused.stderr and "single run" in refused.stderr


def test_a_metric_null_on_a_side_is_inconclusive_never_a_failure(traces, cache, tmp_path):
    # two training profiles, one on a GPU and one on a CPU (cpu_only_rank34 is a gloo DDP rank: train, issue 24)
    gpu = ingested(traces / "v100_resnet50_workers0.json.gz", cache)
    cpu = ingested(traces / "cpu_only_rank34.json.gz", cache)
    assert gpu["metrics"]["gpu_util_pct"] is not None and cpu["metrics"]["gpu_util_pct"] is None
    # both sides repeated, so the null is the only thing standing in the rule's way
    step = [cpu["metrics"]["step_ms"] * f for f in (1.0, 1.01, 0.99)]
    before = write(
        with_trials(gpu, {"step_ms": [gpu["metrics"]["step_ms"] * f for f in (1.0, 1.01, 0.99)]}), tmp_path / "gpu"
    )
    after = write(with_trials(cpu, {"step_ms": step}), tmp_path / "cpu")
    code, report, _ = compare(before, after, "--fail-on", "gpu_util_pct:-5pp", cache=cache)
    assert code == 0 and report["gate"]["failed"] is False
    rule = report["gate"]["rules"][0]
    assert rule["outcome"] == "inconclusive" and rule["change"] is None and rule["passed_threshold"] is None
    assert "null on the after side" in rule["reason"] and "CPU profile" in rule["reason"]
    assert rule["trials_needed"] is None and "--repeat" not in rule["reason"]  # more trials would not help
    assert "1 of 1 rule cannot tell" in report["gate"]["sentence"]


def test_a_noisy_side_is_named_can_neither_pass_nor_fail_a_rule_and_fails_the_gate_only_under_strict_noise(
    v100_doc, tmp_path, cache
):
    noisy_doc = with_trials(v100_doc, {"step_ms": [101.0, 99.0, 100.5]})
    noisy_doc["marks"]["noisy"] = "trial-to-trial spread above the noise limit"
    before = write(with_trials(v100_doc, {"step_ms": [100.0, 102.0, 98.0]}), tmp_path / "before")
    quiet = write(with_trials(v100_doc, {"step_ms": [101.0, 99.0, 100.5]}), tmp_path / "quiet")
    after = write(noisy_doc, tmp_path / "after")

    # the same numbers, once quiet and once marked noisy: Δ +0.17 % ± 2.6 % is bounded within +5 %
    code, report, _ = compare(before, quiet, "--fail-on", "step_ms:+5%", cache=cache)
    assert code == 0 and report["gate"]["rules"][0]["outcome"] == "pass"
    code, report, stderr = compare(before, after, "--fail-on", "step_ms:+5%", cache=cache)
    rule = report["gate"]["rules"][0]
    assert code == 0 and report["gate"]["failed"] is False
    # a noisy mark says the machine drifted more than the trials spread: their 2·SE bounds nothing
    assert rule["outcome"] == "inconclusive" and rule["basis"] == "bounded_but_noisy", rule["reason"]
    assert "marked noisy" in rule["reason"] and "quiet machine" in rule["reason"] and "INCONCLUSIVE" in stderr
    assert report["before"]["noisy"] == []
    assert report["after"]["noisy"] == [
        {"side": "after", "path": str(after), "reason": "trial-to-trial spread above the noise limit"}
    ]
    text = run_cli("compare", str(before), str(after), env=cache)
    assert text.returncode == 0 and "noisy after side" in text.stdout

    # nor can it fail: +5.2 % with 2·SE 2.6 % would fail +5 % from quiet sides
    regressed = write(with_trials(v100_doc, {"step_ms": [106.2, 104.2, 105.7]}), tmp_path / "regressed")
    noisy_regressed = with_trials(v100_doc, {"step_ms": [106.2, 104.2, 105.7]})
    noisy_regressed["marks"]["noisy"] = "trial-to-trial spread above the noise limit"
    noisy_regressed = write(noisy_regressed, tmp_path / "noisy-regressed")
    code, report, _ = compare(before, regressed, "--fail-on", "step_ms:+5%", cache=cache)
    assert code == EXIT_REGRESSION and report["gate"]["rules"][0]["outcome"] == "fail"
    code, report, _ = compare(before, noisy_regressed, "--fail-on", "step_ms:+5%", cache=cache)
    rule = report["gate"]["rules"][0]
    assert code == 0 and rule["outcome"] == "inconclusive" and rule["basis"] == "significant_but_noisy"
    assert f"({rule['trials_needed']} trials per side would resolve it at this spread)" in rule["reason"]

    code, report, stderr = compare(before, after, "--fail-on", "step_ms:+5%", "--strict-noise", cache=cache)
    assert code == EXIT_REGRESSION and report["gate"]["failed"] is True
    assert [r.split(":")[0] for r in report["gate"]["reasons"]] == ["noisy side"]
    assert "noisy side" in stderr
    code, _, _ = compare(before, before, "--strict-noise", cache=cache)  # nothing noisy: nothing fails
    assert code == 0


@pytest.mark.parametrize(
    "rule, message",
    [
        ("step_m:+5%", "did you mean step_ms?"),
        ("troughput_img_s:-3%", "did you mean throughput_img_s?"),
        ("step_ms:5%", "a rule is METRIC:"),
        ("step_ms", "a rule is METRIC:"),
        ("step_ms:+5pp", "pp (percentage points) applies to a percentage metric"),
        ("throughput_img_s:-3ms", "ms applies to a metric in milliseconds"),
        ("bound:+1", "unknown metric 'bound'"),
        # thresholds a change can never pass make rules that can never fail (issue #26)
        ("step_ms:+" + "9" * 400 + "%", "the threshold is not a finite number"),
        ("step_ms:-150%", "cannot fall by more than 100 %"),
        ("step_ms:+20000%", "gates nothing"),
        ("step_ms:+" + "9" * 20 + "ms", "step_ms only ranges over 0…8.64e+07 ms"),
        ("gpu_util_pct:-20000pp", "can never be passed"),
    ],
)
def test_a_bad_rule_is_a_usage_error(edge_pair, cache, rule, message):
    before, after = edge_pair
    result = run_cli("compare", str(before), str(after), "--fail-on", rule, env=cache)
    assert result.returncode == 2 and result.stdout == ""
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    if "finite" in message:
        assert "9" * 100 not in result.stderr  # a 400-digit threshold is quoted shortened
    if "did you mean" in message or "unknown metric" in message:
        assert "metrics: step_ms, throughput_img_s" in result.stderr  # the list of gateable metrics


def test_a_rule_on_a_metric_of_the_other_kind_is_a_usage_error(edge_pair, cache):
    before, after = edge_pair  # train profiles
    result = run_cli("compare", str(before), str(after), "--fail-on", "latency_p99_ms:+2ms", env=cache)
    assert result.returncode == 2 and "applies to infer profiles" in result.stderr


def test_a_rule_may_name_a_metric_outside_the_table(edge_pair, cache):
    before, after = edge_pair
    code, report, _ = compare(before, after, "--fail-on", "ops_per_step:+1", cache=cache)
    assert code == 0 and row(report, "ops_per_step")["delta"] == 0
    assert report["gate"]["rules"][0]["outcome"] == "pass"


def test_noise_as_wide_as_the_change_is_inconclusive_and_says_how_many_trials_would_tell(v100_doc, tmp_path, cache):
    """The busy machine of issue #26: 160 → 320 px measured +38.8 % with 3 trials a side and 2·SE over
    500 ms, both sides marked noisy. The old gate said "not significant" → pass; it cannot tell."""
    before_steps, after_steps = [800.0, 1300.0, 1100.0], [1900.0, 1100.0, 1440.0]
    before_doc = with_trials(v100_doc, {"step_ms": before_steps})
    after_doc = with_trials(v100_doc, {"step_ms": after_steps})
    for doc in (before_doc, after_doc):
        doc["marks"]["noisy"] = "other processes used 60% of the machine's CPUs while it measured"
    before, after = write(before_doc, tmp_path / "before"), write(after_doc, tmp_path / "after")

    code, report, stderr = compare(before, after, "--fail-on", "step_ms:+5%", cache=cache)
    rule = report["gate"]["rules"][0]
    assert rule["delta_pct"] == pytest.approx(38.8, abs=0.1) and rule["significant"] is False
    assert code == 0 and rule["outcome"] == "inconclusive" and rule["basis"] == "past_limit_not_significant"
    _, _, _, needed = expected_outcome("step_ms:+5%", {"step_ms": before_steps}, {"step_ms": after_steps})
    assert rule["trials_needed"] == needed
    loud = f"to resolve ±5% here, use --repeat {needed} on both sides"
    assert loud in rule["reason"] and loud in report["gate"]["sentence"]
    assert "INCONCLUSIVE" in stderr and loud in stderr

    strict = run_cli("compare", str(before), str(after), "--fail-on", "step_ms:+5%", "--require-conclusive", env=cache)
    assert strict.returncode == 5 and "gate: INCONCLUSIVE (exit 5" in strict.stdout and loud in strict.stdout


# ---------------------------------------------------------------------------------------------
# a directory of several profiles as one side (a baseline kept from several CI runs)


def _profile(v100_doc, per_trial: list[float], created: str, **settings) -> dict:
    if len(per_trial) >= 2:
        doc = with_trials(v100_doc, {"step_ms": per_trial})
    else:  # a single run: its one value is the profile's metric
        doc = copy.deepcopy(v100_doc)
        doc["metrics"]["step_ms"] = per_trial[0]
        doc["trials"] = [{**doc["trials"][-1], "step_ms": per_trial[0]}]
    doc["created"] = created
    doc["settings"] = {**doc["settings"], **settings}
    return doc


def test_a_directory_of_profiles_pools_their_trials(v100_doc, tmp_path, cache):
    runs = {
        "ci-1": ([100.0, 102.0], "2026-01-01T10:00:00+00:00"),
        "ci-2": ([98.0, 101.0, 99.0], "2026-01-03T10:00:00+00:00"),
        "ci-3": ([103.0], "2026-01-02T10:00:00+00:00"),
    }
    baseline = tmp_path / "baseline"
    for name, (values, created) in runs.items():
        write(_profile(v100_doc, values, created), baseline / name / "train")
    pooled = [v for values, _ in runs.values() for v in values]
    after = write(with_trials(v100_doc, {"step_ms": [100.0, 101.0]}), tmp_path / "after")

    code, report, _ = compare(baseline, after, "--fail-on", "step_ms:+5%", cache=cache)
    step = row(report, "step_ms")
    assert step["before_n"] == len(pooled) and report["significance"]["n_before"] == len(pooled)
    assert step["before"] == pytest.approx(statistics.fmean(pooled))
    assert step["before_std"] == pytest.approx(statistics.stdev(pooled))
    assert step["threshold"] == pytest.approx(expected_threshold(pooled, [100.0, 101.0]))
    assert report["before"]["path"] == str(baseline)
    assert report["before"]["profiles"] == [
        str(baseline / n / "train" / "profile.json") for n in ("ci-1", "ci-3", "ci-2")
    ]
    assert code == 0 and report["gate"]["failed"] is False

    text = run_cli("compare", str(baseline), str(after), env=cache)
    # the line wraps with the terminal width (and the temp path's length): compare its words
    assert text.returncode == 0 and f"{len(pooled)} trials pooled from 3 profiles" in " ".join(text.stdout.split())


def test_a_directory_with_one_profile_is_that_profile(v100_doc, tmp_path, cache):
    deep = write(with_trials(v100_doc, {"step_ms": [100.0, 102.0]}), tmp_path / "one" / "ci-1" / "train")
    _, report, _ = compare(tmp_path / "one", deep, cache=cache)
    assert "profiles" not in report["before"] and report["before"]["trials"] == 2
    assert row(report, "step_ms")["delta"] == 0


@pytest.mark.parametrize("odd_one, difference", [("imgsz", "imgsz differs (320 in"), ("kind", "kind differs")])
def test_a_directory_mixing_setups_is_a_usage_error(v100_doc, traces, tmp_path, cache, odd_one, difference):
    baseline = tmp_path / "baseline"
    write(_profile(v100_doc, [100.0, 102.0], "2026-01-01T10:00:00+00:00", imgsz=320), baseline / "a" / "train")
    if odd_one == "imgsz":
        write(_profile(v100_doc, [100.0, 102.0], "2026-01-02T10:00:00+00:00", imgsz=640), baseline / "b" / "train")
    else:
        infer = ingested(traces / "h100_vit_image_classifier.json.gz", cache)
        write(infer, baseline / "b" / "infer")
    result = run_cli("compare", str(baseline), str(baseline / "a" / "train"), env=cache)
    assert result.returncode == 2 and "cannot pool" in result.stderr and difference in result.stderr


def test_query_picks_the_newest_profile_of_a_setup_as_baseline(v100_doc, tmp_path, cache):
    """The baseline query of docs/SCHEMA.md, narrowed to one setup, returns the newest profile."""
    root = tmp_path / "baselines"
    for name, created, imgsz in (
        ("old", "2026-01-01T10:00:00+00:00", 640),
        ("new", "2026-02-01T10:00:00+00:00", 640),
        ("other", "2026-03-01T10:00:00+00:00", 320),
    ):
        write(_profile(v100_doc, [100.0, 102.0], created, imgsz=imgsz), root / name / "train")
    sql = (
        "SELECT profile_json FROM profiles WHERE kind = 'train' AND imgsz = 640 "
        "QUALIFY row_number() OVER (PARTITION BY kind, model_family, model_size, device_name, imgsz, batch "
        "ORDER BY created DESC) = 1"
    )
    result = run_cli("query", sql, str(root), "--json", env=cache)
    assert result.returncode == 0, result.stderr
    assert [Path(r["profile_json"]) for r in json.loads(result.stdout)] == [root / "new" / "train" / "profile.json"]


# ---------------------------------------------------------------------------------------------
# real measurements: two tiny `infer` pairs on the CPU (320, 320 again, 640)

MEASURE = [
    "--device",
    "cpu",
    "--warmup",
    "2",
    "--runs",
    "8",
    "--repeat",
    "3",
    # the trials of a side in one process: the gate's arithmetic is what is tested here (fresh processes
    # per trial are tested in test_headline_timing.py), and 9 processes importing torch took ~80 s
    "--same-process",
    # the gated step_ms is the headline: the 8 unprofiled calls of each trial. The profiled window (the
    # attribution, which no rule here reads) is one call: each profiled call costs the profiler's recording
    # and the trial's trace analysis (--no-overhead made all 8 calls the profiled window: ~45 % more CPU)
    "--profiled-runs",
    "1",
    "--no-report",
    "--no-trace",
]


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate-measured")
    # One compute thread: on a CPU shared with other work, OpenMP threads spin-waiting for a core
    # slowed calls here from ~55 ms to over 1 s and spread the trials by ±70 %; pinned, ±7 %. (torch sizes
    # MKL's pool from OpenMP's; an MKL_NUM_THREADS of its own would also cost each run the warm parent
    # of tests/zygote.py: a fresh interpreter importing torch, ~4 s a run.)
    env = {
        "LIBREYOLO_PROFILE_OFFLINE": "1",
        "HOME": str(root / "home"),
        "PYTHONPATH": str(REPO),
        "OMP_NUM_THREADS": "1",
    }
    os.makedirs(env["HOME"])
    profiles = {}
    for name, imgsz in (("a320", "320"), ("b320", "320"), ("c640", "640")):
        result = run_cli(
            "infer", *MEASURE, "--imgsz", imgsz, "--project", str(root / name), cwd=root, env=env, timeout=900
        )
        assert result.returncode == 0, result.stderr
        profiles[name] = root / name / "infer"
    return profiles


@pytest.mark.slow
def test_measured_a_and_a_never_fails_a_25_percent_gate(measured, cache):
    # Two identical measurements on a shared CPU differ by the load of the moment, which can shift all
    # three trials of one run together (so 2·SE does not absorb it): here 320 px runs ranged 52–59 ms
    # per call between trials and runs, i.e. up to ~13 %. +25 % leaves room for that, and is still far
    # below the 320 → 640 jump (4× the pixels: ~55 → ~170 ms per call, about +200 %). Whether 3 trials
    # bound the change within +25 % depends on the spread of the moment: pass or inconclusive, never fail.
    code, report, _ = compare(measured["a320"], measured["b320"], "--fail-on", "step_ms:+25%", cache=cache)
    rule = report["gate"]["rules"][0]
    assert report["significance"]["tested"] is True and report["gate"]["single_run"] is False
    assert code == 0 and rule["outcome"] in ("pass", "inconclusive"), rule["reason"]
    if report["gate"]["noisy"]:
        assert rule["outcome"] == "inconclusive"
    assert rule["trials_needed"] is not None


@pytest.mark.slow
def test_measured_320_to_640_fails_a_5_percent_step_gate(measured, cache):
    code, report, stderr = compare(measured["a320"], measured["c640"], "--fail-on", "step_ms:+5%", cache=cache)
    rule = report["gate"]["rules"][0]
    assert rule["passed_threshold"] is True and rule["significant"] is True, rule
    if report["gate"]["noisy"]:
        # the machine says it was busy: then no 2·SE proves anything, however large the change
        assert code == 0 and rule["outcome"] == "inconclusive" and rule["basis"] == "significant_but_noisy"
        strict = run_cli(
            "compare",
            str(measured["a320"]),
            str(measured["c640"]),
            "--fail-on",
            "step_ms:+5%",
            "--require-conclusive",
            env=cache,
        )
        assert strict.returncode == 5
    else:
        assert code == EXIT_REGRESSION and "step_ms:+5%" in stderr
