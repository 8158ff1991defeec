"""`infer --profiled-runs` and `run --profiled-steps` (issue 27): the profiled window holds that many calls
(steps), by default min(--runs, 3) (min(--steps, 10)), while the headline keeps every --runs call (--steps
step) unprofiled; profile.json says which rule made the window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

FIXTURE_YAML = Path(__file__).resolve().parent.parent / "fixtures" / "synth3.yaml"


def profiler_steps(trace) -> int:
    """ProfilerStep ranges in the raw trace: the calls the window recorded."""
    events = json.loads(trace.read_text())["traceEvents"]
    return sum(1 for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))


@pytest.mark.slow
@pytest.mark.parametrize("extra, window", [(["--profiled-runs", "5"], 5), ([], 3)])
def test_the_window_is_shorter_than_the_headline(tmp_path, extra, window):
    result = run_cli(
        "infer",
        "--device",
        "cpu",
        "--imgsz",
        "64",
        "--warmup",
        "1",
        "--runs",
        "12",
        *extra,
        "--no-report",
        "--project",
        str(tmp_path),
        env={"LIBREYOLO_PROFILE_OFFLINE": "1"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    profile = tmp_path / "infer"
    doc = json.loads((profile / "profile.json").read_text())
    assert profiler_steps(profile / "profile_trace.json") == window
    assert doc["settings"]["runs"] == 12 and doc["settings"]["profiled_runs"] == window
    assert doc["timing"]["unprofiled_calls_per_trial"] == [12]
    assert doc["timing"]["profiled_calls_per_trial"] == [window]
    assert "min(--runs, 3)" in doc["timing"]["window_rule"]
    summary = run_cli("summary", str(profile))
    assert f"headline: 12 unprofiled calls · attribution: {window} profiled calls" in summary.stdout


def test_a_window_longer_than_the_runs_is_refused(tmp_path):
    result = run_cli("infer", "--device", "cpu", "--runs", "3", "--profiled-runs", "4", "--project", str(tmp_path))
    assert result.returncode == 2
    assert "--profiled-runs 4: at most --runs (3)" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "infer").exists()


@pytest.mark.slow
def test_the_preflight_call_is_the_first_warmup_call(tmp_path, monkeypatch):
    """The untimed call that checks the model runs is the first trial's first warmup call, on the same
    batch: warmup 2, runs 4, window 2 is eight model calls, not nine; a second trial in the same
    process warms up in full."""
    monkeypatch.setenv("LIBREYOLO_PROFILE_OFFLINE", "1")
    from libreyolo_profile.measure import infer
    from libreyolo_profile.measure.options import InferOptions

    calls = []
    real_call = infer.InferCall.__call__

    def counted(self, images, annotate):
        calls.append(annotate)
        return real_call(self, images, annotate)

    monkeypatch.setattr(infer.InferCall, "__call__", counted)
    for repeat, expected in ((1, 2 + 4 + 2), (2, 2 + 4 + 2 + 2 + 4 + 2)):
        calls.clear()
        opts = InferOptions(
            imgsz=64, warmup=2, runs=4, profiled_runs=2, repeat=repeat, fresh_processes=False,
            device="cpu", project=tmp_path / str(repeat), trace=False,
        )  # fmt: skip
        infer.profile_infer(opts, ["infer"])
        assert len(calls) == expected
        assert calls.count(True) == 2 * repeat  # the profiled window's annotated calls


@pytest.mark.parametrize(
    "kind, steps, window_ms, tiny",
    [
        ("infer", 3, 550.0, False),  # infer's default window: every call the same work, attribution settled
        ("infer", 2, 550.0, True),
        ("infer", 3, 60.0, True),  # a short window is tiny whatever it holds
        ("train", 3, 550.0, True),  # training steps differ step to step: ten of them
        ("train", 10, 550.0, False),
    ],
)
def test_the_tiny_window_mark_counts_calls_against_the_default_window(kind, steps, window_ms, tiny):
    from libreyolo_profile.store.document.assemble import _with_shared_marks

    marks = _with_shared_marks({}, "cuda", {"steps": steps, "window_ms": window_ms}, kind)
    assert ("tiny_window" in marks) is tiny, marks
    if tiny:
        fewest = 3 if kind == "infer" else 10
        assert f"(fewer than {fewest} {'call' if kind == 'infer' else 'step'}s or under 100 ms)" in marks["tiny_window"]


@pytest.mark.slow
def test_run_profiles_its_window_and_times_every_step_unprofiled(tmp_path):
    """--steps 3 --profiled-steps 2: two ProfilerSteps in the trace, three steps in the headline, and the
    profiler's overhead per step from the two against the three."""
    result = run_cli(
        "run", str(FIXTURE_YAML), "--device", "cpu", "--batch", "2", "--imgsz", "64", "--steps", "3",
        "--profiled-steps", "2", "--warmup", "1", "--workers", "0", "--no-amp", "--no-report",
        "--project", str(tmp_path), env={"LIBREYOLO_PROFILE_OFFLINE": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    profile = tmp_path / "train"
    doc = json.loads((profile / "profile.json").read_text())
    assert profiler_steps(profile / "profile_trace.json") == 2
    assert doc["settings"]["steps"] == 3 and doc["settings"]["profiled_steps"] == 2
    assert "the first 2 of them profiled" in doc["settings"]["window"]
    assert doc["timing"]["unprofiled_calls_per_trial"] == [3]
    assert doc["timing"]["profiled_calls_per_trial"] == [2]
    assert "min(--steps, 10)" in doc["timing"]["window_rule"]
    extra = doc["extra"][0]
    assert len(extra["host_step_ms"]) == 2 and len(extra["unprofiled_step_ms"]) == 3
    m = doc["metrics"]
    assert m["steps"] == 2
    # extra's window times are rounded to 1 µs
    assert m["profiled_step_ms"] == pytest.approx(extra["host_window_ms"] / 2, abs=1e-3)
    assert m["step_ms"] == pytest.approx(extra["unprofiled_window_ms"] / 3, abs=1e-3)
    assert m["profiler_overhead_pct"] == pytest.approx(100 * (m["profiled_step_ms"] / m["step_ms"] - 1), rel=1e-6)
    summary = run_cli("summary", str(profile))
    assert "headline: 3 unprofiled steps · attribution: 2 profiled steps" in summary.stdout
    # scalar lists (stride, padding) recorded in the first profiled step only, and the second step's
    # convolutions costed all the same, from the first step's calls at their places (sql/ingest.sql)
    assert doc["settings"]["profiler"]["scalar_lists_recorded"] == "first profiled step"
    with_lists, without = convolutions_by_lists(profile / "profile_trace.json")
    assert with_lists[1] > 0 and without[1] == 0 and with_lists[2] == 0 and without[2] == with_lists[1]
    roofline = json.loads(run_cli("roofline", str(profile), "--top", "10000", "--json").stdout)["roofline"]
    convolutions = [r for r in roofline if r["op"] == "aten::convolution"]
    assert sum(r["calls"] for r in convolutions) == 2 * with_lists[1]
    assert all(r["gflops"] and "Concrete Inputs" not in (r["no_model_reason"] or "") for r in convolutions)


def convolutions_by_lists(trace) -> tuple[dict, dict]:
    """Per ProfilerStep number, the aten::convolution calls whose Input type holds a ScalarList, and the others."""
    events = json.loads(trace.read_text())["traceEvents"]
    steps = [
        (e["ts"], e["ts"] + e["dur"], int(e["name"].split("#")[1]))
        for e in events
        if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
    ]
    with_lists, without = {n: 0 for *_, n in steps}, {n: 0 for *_, n in steps}
    for e in events:
        if e.get("name") == "aten::convolution":
            step = next(n for start, end, n in steps if start <= e["ts"] <= end)
            target = with_lists if "ScalarList" in e["args"]["Input type"] else without
            target[step] += 1
    return with_lists, without


@pytest.mark.parametrize(
    "steps, profiled_steps, overhead, window",
    [(20, None, True, 10), (4, None, True, 4), (20, 3, True, 3), (20, None, False, 20)],
)
def test_runs_default_window_is_at_most_ten_steps(tmp_path, steps, profiled_steps, overhead, window):
    from libreyolo_profile.measure.options import RunOptions

    opts = RunOptions(
        data="coco128", steps=steps, profiled_steps=profiled_steps, overhead=overhead, project=tmp_path / "p"
    )
    assert opts.window_steps == window


def test_runs_default_window_is_the_fewest_steps_that_are_not_tiny():
    from libreyolo_profile.store.document.window import PROFILED_STEPS
    from libreyolo_profile.vocabulary import thresholds

    assert PROFILED_STEPS == thresholds()["tiny_steps"]


def test_a_run_window_longer_than_the_steps_is_refused(tmp_path):
    result = run_cli(
        "run", str(FIXTURE_YAML), "--device", "cpu", "--steps", "3", "--profiled-steps", "4",
        "--project", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 2
    assert "--profiled-steps 4: at most --steps (3)" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "train").exists()
