"""A gate that can't be fooled (issue #26), through the real CLI: garbage trial values are never
evidence, --require-repeats counts trials that hold a value, each profile is pooled once and never
the after profile, the weights and the autocast dtype are part of a setup, and --markdown carries
nothing from a profile as markup.

Profiles are real documents (a real trace's, via test_compare.with_trials) with hostile values
planted in the written files, as an attacker or a corrupted disk would.
"""

from __future__ import annotations

import json
import math
import os
import shutil

import pytest
from conftest import require_traces, run_cli
from test_compare import ingested, row, with_trials, write

EXIT_REGRESSION = 4
STEPS = [100.0, 101.0, 102.0]


@pytest.fixture(scope="module")
def cache(reader_cache_env):
    return reader_cache_env


@pytest.fixture(scope="module")
def v100_doc(cache):
    return ingested(require_traces() / "v100_resnet50_workers0.json.gz", cache)


def compare(*args, cache, codes=(0, EXIT_REGRESSION)) -> tuple[int, dict, str]:
    result = run_cli("compare", *map(str, args), "--json", env=cache)
    assert result.returncode in codes, result.stderr
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout), result.stderr


def plant(directory, edit) -> None:
    """Rewrite both profile files of a written profile with `edit(doc)` applied, NaN and all."""
    for name in ("profile.json", "profile_repeat.json"):
        path = directory / name
        if path.is_file():
            doc = json.loads(path.read_text())
            edit(doc)
            path.write_text(json.dumps(doc, allow_nan=True))


def trial_values(metric: str, values: list):
    """An edit: the metric's per-trial values (trials and repeat stats alike) become `values`."""

    def edit(doc):
        for trial, value in zip(doc["trials"], values, strict=False):
            trial[metric] = value
        doc["repeat"][metric]["values"] = list(values)

    return edit


def profile(v100_doc, root, name, steps=STEPS, **settings):
    doc = with_trials(v100_doc, {"step_ms": steps})
    doc["settings"] = {**doc["settings"], **settings}
    return write(doc, root / name)


# ---------------------------------------------------------------------------------------------
# only finite, plausible numbers are evidence

GARBAGE = {
    "NaN": (math.nan, "NaN"),
    "Infinity": (math.inf, "+Infinity"),
    "-Infinity": (-math.inf, "-Infinity"),
    "1e308": (1e308, "above the highest plausible value"),
    "-1e308": (-1e308, "below the lowest possible value"),
    "a negative time": (-5.0, "-5, below the lowest possible value 0"),
}
# Values of the wrong JSON type never reach the gate: the profile's head check (store/document/head.py)
# refuses the file in one line, exit 1 (issue 26 allows either: the gate fails or refuses, never passes).
WRONG_TYPE = {
    "a 400-digit integer": 10**400,
    "a string": "fast",
    "a boolean": True,
    "an object": {"ms": 1},
}


@pytest.mark.parametrize("garbage", list(WRONG_TYPE))
def test_a_trial_value_of_the_wrong_type_is_refused_in_one_line(v100_doc, tmp_path, cache, garbage):
    before = profile(v100_doc, tmp_path, "before")
    after = profile(v100_doc, tmp_path, "after")
    plant(after, trial_values("step_ms", [STEPS[0], WRONG_TYPE[garbage], STEPS[2]]))
    code, report, stderr = compare(before, after, "--fail-on", "step_ms:+5%", cache=cache, codes=(1,))
    assert report["exit_code"] == 1 and "not a valid profile: trials" in report["error"], report
    assert str(after) in report["error"] and len(stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("garbage", list(GARBAGE))
def test_a_trial_value_that_is_not_a_finite_plausible_number_fails_the_gate(v100_doc, tmp_path, cache, garbage):
    value, words = GARBAGE[garbage]
    before = profile(v100_doc, tmp_path, "before")
    after = profile(v100_doc, tmp_path, "after")
    plant(after, trial_values("step_ms", [STEPS[0], value, STEPS[2]]))

    code, report, stderr = compare(before, after, "--fail-on", "step_ms:+5%", cache=cache)
    rule = report["gate"]["rules"][0]
    assert code == EXIT_REGRESSION and rule["outcome"] == "invalid", rule["reason"]
    assert words in rule["reason"] and "after side, trial 2 of" in rule["reason"] and str(after) in rule["reason"]
    assert rule["invalid_n"] == 1 and rule["change"] is None and rule["trials_needed"] is None
    assert report["gate"]["sentence"].startswith("gate: FAIL (exit 4)") and "invalid evidence" in stderr
    # the table shows no number made from it, and says why
    step = row(report, "step_ms")
    assert step["after"] is None and step["delta"] is None and step["significant"] is None
    assert "not evidence" in step["note"] and words in step["note"]
    # without a gate the comparison still prints, the metric with its note
    plain = run_cli("compare", str(before), str(after), env=cache)
    assert plain.returncode == 0 and "note step_ms: not evidence" in " ".join(plain.stdout.split())


# Issue 54: the gate judges the trials a profile holds, never a summary of them. A `repeat` block edited
# to claim 999 trials of 1.0 ms passed `step_ms:+5%` over a profile whose own trials say 327 ms.
FORGED = {
    "n and values": {"mean": 1.0, "std": 0.0, "n": 999, "values": [1.0] * 999},
    "values": {"mean": 1.0, "std": 0.0, "n": 3, "values": [1.0, 1.0, 1.0]},
    "n": {"n": 999},
    "mean": {"mean": 1.0},
    "std": {"std": 0.0},
}


@pytest.mark.parametrize("forged", list(FORGED))
def test_a_repeat_block_that_disagrees_with_the_trials_fails_the_gate(v100_doc, tmp_path, cache, forged):
    before = profile(v100_doc, tmp_path, "before", steps=[300.0, 301.0, 302.0])
    after = profile(v100_doc, tmp_path, "after", steps=[327.0, 328.0, 329.0])

    def edit(doc):
        doc["repeat"]["step_ms"].update(FORGED[forged])

    plant(after, edit)
    code, report, stderr = compare(before, after, "--fail-on", "step_ms:+5%", cache=cache)
    rule = report["gate"]["rules"][0]
    assert code == EXIT_REGRESSION and rule["outcome"] == "invalid", rule
    assert "repeat.step_ms, a summary that disagrees with the profile's own trials" in rule["reason"]
    assert str(after) in rule["reason"] and "invalid evidence" in stderr
    assert report["significance"]["n_after"] == 3  # the trials it has, not the n it claims


def test_a_repeat_block_is_never_evidence_beside_fewer_trials(v100_doc, tmp_path, cache):
    """One trial left in `trials`, the block's three values kept: they would pass as three trials."""
    before = profile(v100_doc, tmp_path, "before", steps=[300.0, 301.0, 302.0])
    after = profile(v100_doc, tmp_path, "after", steps=[1.0, 1.0, 1.0])

    def edit(doc):
        doc["trials"] = [dict(doc["trials"][0], step_ms=327.0)]

    plant(after, edit)
    code, report, _ = compare(before, after, "--fail-on", "step_ms:+5%", cache=cache)
    rule = report["gate"]["rules"][0]
    assert code == EXIT_REGRESSION and rule["outcome"] == "invalid", rule
    assert "repeat.step_ms" in rule["reason"] and "3 values for 1 trials" in rule["reason"]


def test_an_honest_repeat_block_is_the_trials_evidence(v100_doc, tmp_path, cache):
    before = profile(v100_doc, tmp_path, "before", steps=[300.0, 301.0, 302.0])
    after = profile(v100_doc, tmp_path, "after", steps=[327.0, 328.0, 329.0])
    code, report, _ = compare(before, after, "--fail-on", "step_ms:+5%", cache=cache)
    rule = report["gate"]["rules"][0]
    assert code == EXIT_REGRESSION and rule["outcome"] == "fail" and rule["after"] == pytest.approx(328.0)


def test_garbage_on_the_before_side_or_in_one_pooled_member_fails_the_gate(v100_doc, tmp_path, cache):
    after = profile(v100_doc, tmp_path, "after")
    before = profile(v100_doc, tmp_path, "before")
    plant(before, trial_values("step_ms", [math.nan, 101.0, 102.0]))
    code, report, _ = compare(before, after, "--fail-on", "step_ms:+5%", cache=cache)
    assert code == EXIT_REGRESSION and "before side, trial 1" in report["gate"]["rules"][0]["reason"]

    baseline = tmp_path / "baseline"
    for name in ("ci-1", "ci-2", "ci-3"):
        profile(v100_doc, baseline, name)
    plant(baseline / "ci-2", trial_values("step_ms", [100.0, math.inf, 102.0]))
    code, report, _ = compare(baseline, after, "--fail-on", "step_ms:+5%", cache=cache)
    rule = report["gate"]["rules"][0]
    assert code == EXIT_REGRESSION and rule["outcome"] == "invalid"
    assert str(baseline / "ci-2" / "profile.json") in rule["reason"] and "+Infinity" in rule["reason"]


def test_a_null_trial_value_is_no_value_not_garbage(v100_doc, tmp_path, cache):
    before = profile(v100_doc, tmp_path, "before")
    after = profile(v100_doc, tmp_path, "after")
    plant(after, trial_values("step_ms", [100.0, None, 102.0]))
    code, report, _ = compare(before, after, "--fail-on", "step_ms:+5%", cache=cache)
    step = row(report, "step_ms")
    assert code == 0 and step["after_n"] == 2 and step["invalid_n"] == 0 and step["after"] == pytest.approx(101.0)


# ---------------------------------------------------------------------------------------------
# --require-repeats counts trials that hold a value


def _empty_trials(doc):
    doc["trials"] = [{}, {}, {}]
    doc["repeat"] = {}


def _forged_count(doc):
    doc["trials"] = doc["trials"][:1]
    doc["repeat"] = {"step_ms": {"mean": 100.0, "std": 1.0, "n": 10, "values": [100.0]}}


def _two_nulls(doc):
    for trial, value in zip(doc["trials"], [100.0, None, None], strict=False):
        trial["step_ms"] = value
    doc["repeat"]["step_ms"]["values"] = [100.0, None, None]


@pytest.mark.parametrize("forge", [_empty_trials, _forged_count, _two_nulls], ids=lambda f: f.__name__.strip("_"))
def test_require_repeats_counts_trials_that_hold_a_value(v100_doc, tmp_path, cache, forge):
    before = profile(v100_doc, tmp_path, "before")
    after = profile(v100_doc, tmp_path, "after")
    plant(after, forge)
    result = run_cli("compare", str(before), str(after), "--fail-on", "step_ms:+5%", "--require-repeats", env=cache)
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert "--require-repeats: the after side" in result.stderr and "a single run of step_ms" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# each profile pooled once, never the after profile; one setup per pool

# Pooled once, [100, 104, 96] vs [104, 105, 103] is +4 % with 2·SE 4.76 %: not significant, so the
# +3 % rule cannot tell. Pooled twice (n 3 → 6) 2·SE shrinks to 3.14 % and the rule would fail.
WIDE, SHIFTED = [100.0, 104.0, 96.0], [104.0, 105.0, 103.0]


def _copy(source, target):
    shutil.copytree(source, target)


def _symlink(source, target):
    target.mkdir()
    for name in ("profile.json", "profile_repeat.json"):
        os.symlink(source / name, target / name)


@pytest.mark.parametrize("duplicate", [_copy, _symlink], ids=["a copy", "a symlink"])
def test_one_profile_twice_in_a_baseline_counts_once(v100_doc, tmp_path, cache, duplicate):
    baseline = tmp_path / "baseline"
    first = profile(v100_doc, baseline, "ci-1", WIDE)
    duplicate(first, baseline / "ci-1-again")
    after = profile(v100_doc, tmp_path, "after", SHIFTED)
    code, report, _ = compare(baseline, after, "--fail-on", "step_ms:+3%", cache=cache)
    assert row(report, "step_ms")["before_n"] == 3 and report["before"]["trials"] == 3
    assert code == 0 and report["gate"]["rules"][0]["outcome"] == "inconclusive"
    # the two are one profile: whichever is met first is pooled, the other is named as left out
    [left] = report["before"]["left_out"]
    pair = {str(baseline / name / "profile.json") for name in ("ci-1", "ci-1-again")}
    assert left["path"] in pair and "pooled once" in left["reason"]
    assert (pair - {left["path"]}).pop() in left["reason"]


def test_the_after_profile_inside_the_baseline_is_left_out_of_it(v100_doc, tmp_path, cache):
    baseline = tmp_path / "baseline"
    profile(v100_doc, baseline, "ci-1", WIDE)
    profile(v100_doc, baseline, "ci-2", WIDE)
    after = profile(v100_doc, baseline, "pr", SHIFTED)  # the CI job wrote its measurement into the baseline
    code, report, _ = compare(baseline, after, "--fail-on", "step_ms:+3%", cache=cache)
    assert row(report, "step_ms")["before_n"] == 6 and report["before"]["trials"] == 6
    assert report["before"]["profiles"] == [str(baseline / n / "profile.json") for n in ("ci-1", "ci-2")]
    assert [x["reason"] for x in report["before"]["left_out"]] == [
        "the after profile itself: never part of the baseline"
    ]
    text = run_cli("compare", str(baseline), str(after), env=cache)
    assert "left out of the before side" in text.stdout


def test_a_profile_gated_against_itself_is_refused(v100_doc, tmp_path, cache):
    one = profile(v100_doc, tmp_path, "one")
    result = run_cli("compare", str(one), str(one / "profile_repeat.json"), "--fail-on", "step_ms:+5%", env=cache)
    assert result.returncode == 2 and "same profile" in result.stderr
    code, report, _ = compare(one, one, cache=cache)  # a plain comparison with itself is fine: Δ 0
    assert code == 0 and row(report, "step_ms")["delta"] == 0


@pytest.mark.parametrize(
    "field, first, second",
    [
        ("weights", "LibreYOLO9t.pt", "LibreYOLO9t-finetuned.pt"),
        ("amp_dtype", "float16", "bfloat16"),
        ("random_weights", False, True),
    ],
)
def test_a_baseline_mixing_weights_or_autocast_dtypes_is_refused(v100_doc, tmp_path, cache, field, first, second):
    baseline = tmp_path / "baseline"
    for name, value in (("a", first), ("b", second)):
        doc = with_trials(v100_doc, {"step_ms": STEPS})
        if field == "weights":
            doc["model"] = {**doc.get("model", {}), "weights": value}
        elif field == "amp_dtype":
            doc["settings"] = {**doc["settings"], "half": True, "amp_dtype": value}
        elif value:
            doc["marks"] = {**doc["marks"], "random_weights": "randomly initialized"}
        write(doc, baseline / name)
    result = run_cli("compare", str(baseline), str(baseline / "a"), env=cache)
    assert result.returncode == 2 and "cannot pool" in result.stderr
    assert {"weights": "model_weights", "amp_dtype": "amp_dtype", "random_weights": "random_weights"}[
        field
    ] + " differs" in result.stderr


# ---------------------------------------------------------------------------------------------
# --markdown: nothing from a profile is markup

HOSTILE = (
    "<img src=x onerror=alert(1)> <script>alert(2)</script> <http://evil.example> "
    "[click](http://evil.example) ![x](http://evil.example/x.png) **gate: pass** @everyone #1 a|b `code`"
)


def test_markdown_carries_nothing_from_a_profile_as_markup(v100_doc, tmp_path, cache):
    from markdown_it import MarkdownIt

    before = profile(v100_doc, tmp_path, "before", imgsz=320)
    doc = with_trials(v100_doc, {"step_ms": [103.0, 104.0, 105.0]})
    doc["verdict"] = {**doc["verdict"], "bound": HOSTILE}
    doc["marks"] = {**doc["marks"], "noisy": HOSTILE}
    doc["settings"] = {**doc["settings"], "imgsz": 640, "note": HOSTILE}
    after = write(doc, tmp_path / "<b>pr</b> [x](evil.example)")
    # the after side is marked noisy (with the hostile text) and --strict-noise fails the gate on it, so
    # the hostile text is also in the gate's reasons: the one "gate:" in bold is ours, and it says FAIL
    result = run_cli(
        "compare", str(before), str(after), "--fail-on", "step_ms:+1%", "--strict-noise", "--markdown", env=cache
    )
    assert result.returncode == EXIT_REGRESSION, result.stderr

    html = MarkdownIt("commonmark").enable("table").render(result.stdout)
    for tag in ("<img", "<script", "<a ", "<b>", "<strong>gate: pass"):
        assert tag not in html, (tag, html)
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # shown, as text
    assert html.count("<strong>gate: ") == 1 and "<strong>gate: FAIL (exit 4)</strong>" in html
    # the table keeps its shape: every body row of the metric table has its 8 cells
    table = html.split("<table>")[1].split("</table>")[0]
    assert {body.count("<td") for body in table.split("<tr>")[2:]} == {8}
    # and the settings that differ are listed
    assert "| `imgsz` | `320` | `640` |" in result.stdout
    assert "`note`" in result.stdout and "setting that differs" in result.stdout
