"""`libreyolo profile compare` through the real CLI: Δ and Δ% on the real traces, the significance
rule on both sides of its threshold (profiles built from a real trace with known trial values),
the single-run sentence, null-on-one-side handling, and train vs infer (exit 2)."""

from __future__ import annotations

import copy
import json
import math
import statistics
import uuid
from pathlib import Path

import pytest
from conftest import require_traces, run_cli

from libreyolo_profile.metric_catalog import METRICS

SINGLE_RUN = "a single run cannot support a verdict: measure both sides with --repeat ≥ 2"


@pytest.fixture(scope="module")
def traces():
    return require_traces()


@pytest.fixture(scope="module")
def cache(reader_cache_env):
    return reader_cache_env


def ingested(path, cache) -> dict:
    """The profile document the CLI's own ingest wrote for a trace (a `get` run fills the cache)."""
    from libreyolo_profile.store.disk.cache import trace_key

    home = Path(cache["XDG_CACHE_HOME"]) / "libreyolo-profile" / "traces" / trace_key(path)
    if not (home / "profile.json").is_file():
        result = run_cli("get", str(path), "steps", env=cache)
        assert result.returncode == 0, result.stderr
    return json.loads((home / "profile.json").read_text())


@pytest.fixture(scope="module")
def v100_doc(traces, cache):
    return ingested(traces / "v100_resnet50_workers0.json.gz", cache)


def compare_json(before, after, cache) -> dict:
    result = run_cli("compare", str(before), str(after), "--json", env=cache)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def row(report: dict, metric: str) -> dict:
    return next(r for r in report["metrics"] if r["metric"] == metric)


def with_trials(doc: dict, values: dict[str, list[float]]) -> dict:
    """The document as if measured with len(values) trials: every trial equal to the original,
    except the given metrics, which take the given per-trial values (mean, std, n recomputed)."""
    doc = copy.deepcopy(doc)
    n = len(next(iter(values.values())))
    trials = [dict(doc["trials"][-1]) for _ in range(n)]
    for metric, per_trial in values.items():
        for trial, value in zip(trials, per_trial, strict=True):
            trial[metric] = value
    repeat = {}
    for name in METRICS:
        column = [t.get(name) for t in trials]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in column):
            repeat[name] = {"mean": statistics.fmean(column), "std": statistics.stdev(column), "n": n, "values": column}
            doc["metrics"][name] = repeat[name]["mean"]
    doc.update(trials=trials, repeat=repeat, generation=uuid.uuid4().hex)
    return doc


def write(doc: dict, target):
    from libreyolo_profile.store.disk.writer import write_directory

    write_directory(doc, target, repeat=len(doc["trials"]) > 1)
    return target


def expected_threshold(before: list[float], after: list[float]) -> float:
    se_b = statistics.stdev(before) / math.sqrt(len(before))
    se_a = statistics.stdev(after) / math.sqrt(len(after))
    return 2 * math.sqrt(se_b**2 + se_a**2)


@pytest.mark.parametrize("factor, significant", [(1.02, True), (0.98, False)])
def test_significance_on_both_sides_of_twice_the_combined_standard_error(
    v100_doc, tmp_path, cache, factor, significant
):
    before_steps = [100.0, 102.0, 98.0]
    after_centre = [-1.0, 1.0]  # n = 2 after, n = 3 before: each side's SE uses its own n
    threshold = expected_threshold(before_steps, after_centre)
    delta = factor * threshold
    after_steps = [100.0 + delta + d for d in after_centre]
    before = write(with_trials(v100_doc, {"step_ms": before_steps}), tmp_path / "before")
    after = write(with_trials(v100_doc, {"step_ms": after_steps}), tmp_path / "after")

    # Either file of a repeated profile, or its directory, is accepted.
    report = compare_json(before, after / "profile_repeat.json", cache)
    step = row(report, "step_ms")
    assert step["before_n"] == 3 and step["after_n"] == 2
    assert step["before_std"] == pytest.approx(statistics.stdev(before_steps))
    assert step["after_std"] == pytest.approx(statistics.stdev(after_steps))
    assert step["delta"] == pytest.approx(delta)
    assert step["delta_pct"] == pytest.approx(100 * delta / 100.0)
    assert step["threshold"] == pytest.approx(threshold)
    assert step["significant"] is significant
    assert step["better"] == "before"  # a longer step is worse
    # Metrics that did not move between trials: zero spread, zero change, not significant.
    launches = row(report, "launches_per_step")
    assert launches["delta"] == 0 and launches["significant"] is False
    sig = report["significance"]
    assert sig["tested"] is True and sig["n_before"] == 3 and sig["n_after"] == 2
    assert "2·√(SE_b² + SE_a²)" in sig["sentence"] and "n_before = 3, n_after = 2" in sig["sentence"]
    assert SINGLE_RUN not in sig["sentence"]

    text = run_cli("compare", str(before / "profile.json"), str(after), env=cache)
    assert text.returncode == 0, text.stderr
    assert "2·√(SE_b² + SE_a²)" in text.stdout and "n_before = 3, n_after = 2" in text.stdout
    step_line = next(line for line in text.stdout.splitlines() if line.startswith("step_ms"))
    assert ("yes" in step_line) is significant and ("no" in step_line.split()[-1]) is (not significant)


def test_one_side_with_a_single_trial_prints_the_single_run_sentence(v100_doc, tmp_path, cache, traces):
    repeated = write(with_trials(v100_doc, {"step_ms": [170.0, 180.0, 175.0]}), tmp_path / "repeated")
    single = traces / "v100_resnet50_workers4.json.gz"
    report = compare_json(repeated, single, cache)
    assert report["significance"]["tested"] is False
    assert report["significance"]["sentence"] == SINGLE_RUN
    assert report["significance"]["n_before"] == 3 and report["significance"]["n_after"] == 1
    assert all(r["significant"] is None and r["threshold"] is None for r in report["metrics"])
    step = row(report, "step_ms")
    assert step["before"] == pytest.approx(175.0) and step["before_n"] == 3 and step["after_n"] == 1

    text = run_cli("compare", str(repeated), str(single), env=cache)
    assert text.returncode == 0, text.stderr
    assert SINGLE_RUN in text.stdout
    assert "SE_b" not in text.stdout


def test_v100_dataloader_workers_pair_changes_the_verdict(traces, cache):
    before, after = traces / "v100_resnet50_workers0.json.gz", traces / "v100_resnet50_workers4.json.gz"
    report = compare_json(before, after, cache)
    got = {}
    for side, path in (("before", before), ("after", after)):
        listing = run_cli("get", str(path), "--json", env=cache)
        assert listing.returncode == 0, listing.stderr
        got[side] = {k: v["value"] for k, v in json.loads(listing.stdout).items()}
    assert report["kind"] == "train"
    assert report["verdict"]["before"] == got["before"]["bound"] == "dataloader"
    assert report["verdict"]["after"] == got["after"]["bound"] != "dataloader"
    assert report["verdict"]["changed"] is True
    for metric in ("throughput_img_s", "step_ms", "gpu_util_pct", "dataload_pct", "launches_per_step"):
        r = row(report, metric)
        b, a = got["before"][metric], got["after"][metric]
        assert r["before"] == pytest.approx(b) and r["after"] == pytest.approx(a)
        assert r["delta"] == pytest.approx(a - b)
        assert r["delta_pct"] == pytest.approx(100 * (a - b) / abs(b))
    assert row(report, "throughput_img_s")["better"] == "after"
    assert row(report, "dataload_pct")["delta"] < 0
    assert report["significance"]["sentence"] == SINGLE_RUN

    text = run_cli("compare", str(before), str(after), env=cache)
    assert text.returncode == 0, text.stderr
    assert f"verdict: dataloader → {report['verdict']['after']} (changed)" in text.stdout
    assert SINGLE_RUN in text.stdout


def test_a_metric_null_on_one_side_is_null_with_a_note_never_a_full_change(traces, cache, tmp_path):
    # a CPU inference trace of two calls (cpu_only_rank34, used here before, is a training rank since issue 24)
    from tests.synthetic_traces import annotation, op, write_trace

    gpu = traces / "h100_vit_image_classifier.json.gz"
    cpu = write_trace(
        tmp_path / "cpu_infer.json",
        [
            annotation("ProfilerStep#1", 0, 100),
            op("aten::conv2d", 5, 80, [[1, 3, 64, 64]]),
            annotation("ProfilerStep#2", 100, 100),
            op("aten::conv2d", 105, 80, [[1, 3, 64, 64]]),
        ],
    )
    report = compare_json(gpu, cpu, cache)
    assert report["kind"] == "infer"
    util = row(report, "gpu_util_pct")
    assert isinstance(util["before"], float) and util["after"] is None
    assert util["delta"] is None and util["delta_pct"] is None and util["better"] is None
    assert "null on the after side" in util["note"] and "CPU profile" in util["note"]
    # Δ% is null when the before value is 0 (the GPU trace has no preprocess stage), Δ is not.
    pre = row(report, "preprocess_pct")
    assert pre["before"] == 0 and pre["delta"] is not None and pre["delta_pct"] is None
    # The latency rows of an infer comparison are there.
    assert {"latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "forward_pct"} <= {
        r["metric"] for r in report["metrics"]
    }

    text = run_cli("compare", str(gpu), str(cpu), env=cache)
    assert text.returncode == 0, text.stderr
    assert "note gpu_util_pct: null on the after side" in " ".join(text.stdout.split())
    util_line = next(line for line in text.stdout.splitlines() if line.startswith("gpu_util_pct"))
    assert "100.0" not in util_line and util_line.count("—") >= 3


def test_train_against_infer_is_a_usage_error(traces, cache):
    result = run_cli(
        "compare",
        str(traces / "v100_resnet50_workers0.json.gz"),
        str(traces / "h100_vit_image_classifier.json.gz"),
        "--json",
        env=cache,
    )
    assert result.returncode == 2
    error = json.loads(result.stdout)  # under --json a failure still gives the pipe one JSON object
    assert error["exit_code"] == 2 and "train" in error["error"] and "infer" in error["error"]
    assert "train" in result.stderr and "infer" in result.stderr and "Traceback" not in result.stderr


def test_a_missing_side_is_a_usage_error(traces, tmp_path, cache):
    result = run_cli("compare", str(traces / "v100_resnet50_workers0.json.gz"), str(tmp_path / "nope.json"), env=cache)
    assert result.returncode == 2 and "no such file" in result.stderr


def test_trials_alone_suffice_when_the_repeat_stats_are_absent(v100_doc, tmp_path):
    """`compare` finds the trials in either place (SPEC §10): here only profile.json's `trials`."""
    from libreyolo_profile.readers.compare import compare_document

    before_doc = with_trials(v100_doc, {"step_ms": [100.0, 104.0, 96.0]})
    after_doc = with_trials(v100_doc, {"step_ms": [120.0, 121.0, 119.0]})
    for doc in (before_doc, after_doc):
        doc["repeat"] = {}
    before, after = write(before_doc, tmp_path / "b"), write(after_doc, tmp_path / "a")
    report = compare_document(before / "profile.json", after / "profile.json")
    step = row(report, "step_ms")
    assert (step["before_n"], step["after_n"]) == (3, 3)
    assert step["before_std"] == pytest.approx(4.0) and step["after_std"] == pytest.approx(1.0)
    assert step["threshold"] == pytest.approx(expected_threshold([100.0, 104.0, 96.0], [120.0, 121.0, 119.0]))
    assert step["significant"] is True and report["significance"]["tested"] is True
