"""`infer --profiled-runs` (issue 27): the profiled window holds that many calls, by default min(--runs, 10),
while the headline keeps every --runs call unprofiled; profile.json says which rule made the window."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli


def profiler_steps(trace) -> int:
    """ProfilerStep ranges in the raw trace: the calls the window recorded."""
    events = json.loads(trace.read_text())["traceEvents"]
    return sum(1 for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))


@pytest.mark.slow
@pytest.mark.parametrize("extra, window", [(["--profiled-runs", "3"], 3), ([], 10)])
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
    assert "min(--runs, 10)" in doc["timing"]["window_rule"]
    summary = run_cli("summary", str(profile))
    assert f"headline: 12 unprofiled calls · attribution: {window} profiled calls" in summary.stdout


def test_a_window_longer_than_the_runs_is_refused(tmp_path):
    result = run_cli("infer", "--device", "cpu", "--runs", "3", "--profiled-runs", "4", "--project", str(tmp_path))
    assert result.returncode == 2
    assert "--profiled-runs 4: at most --runs (3)" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "infer").exists()
