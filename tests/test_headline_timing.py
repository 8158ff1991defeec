"""Issue #13: the headline comes from unprofiled calls, trials run in fresh processes, percentiles
need enough calls, and a busy machine is called out.

Unit tests derive the expected figures by hand on tiny inputs; the end-to-end tests run the real CLI
on LibreYOLO9-t (tiny image size) and check the profile against plain Python over the raw per-call
times it stores, and against what the processes and the machine really did.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from libreyolo_profile.measure.noise import LoadSampler
from libreyolo_profile.store.document import headline
from libreyolo_profile.store.document.capture import TrialCapture, UnprofiledTiming
from libreyolo_profile.vocabulary import thresholds
from tests.conftest import run_cli, run_measurement

REPO = Path(__file__).resolve().parents[1]


def timing(call_ms, walls, stages=None, images=1):
    return UnprofiledTiming(
        call_ms=call_ms,
        block_wall_ms=walls,
        stage_ms=stages or {},
        images_per_call=images,
        clock="host perf_counter",
        where="test",
    )


# ---------------------------------------------------------------------------------------------
# the figures, by hand


def test_infer_headline_from_unprofiled_calls_by_hand():
    t = timing(
        [10.0, 20.0, 30.0, 40.0],
        [45.0, 55.0],
        {"preprocess": [1.0, 1.0, 2.0, 4.0], "forward": [8.0, 18.0, 27.0, 35.0], "postprocess": [1.0, 1.0, 1.0, 1.0]},
        images=2,
    )
    m = headline.unprofiled_metrics("infer", t)
    assert m["step_ms"] == pytest.approx(25.0)  # mean of the four calls
    # linear interpolation: position q·(n−1) = 1.5, 2.7, 2.97 between sorted 10, 20, 30, 40
    assert m["latency_p50_ms"] == pytest.approx(25.0)
    assert m["latency_p90_ms"] == pytest.approx(37.0)
    assert m["latency_p99_ms"] == pytest.approx(39.7)
    assert m["throughput_img_s"] == pytest.approx(8 / 0.1)  # 4 calls × 2 images over 100 ms of blocks
    assert m["ms_per_img"] == pytest.approx(12.5)
    assert m["preprocess_ms"] == pytest.approx(2.0) and m["preprocess_pct"] == pytest.approx(8.0)
    assert m["forward_ms"] == pytest.approx(22.0) and m["postprocess_ms"] == pytest.approx(1.0)
    # sample standard deviation of 10, 20, 30, 40 is 12.9099…; ÷ 25
    assert m["timing_cv_pct"] == pytest.approx(100 * 12.909944 / 25, rel=1e-6)


def test_train_headline_is_block_wall_per_step():
    t = timing([90.0, 110.0, 100.0], [330.0], {"dataload": [30.0, 33.0, 36.0], "to_device": [3.0, 3.0, 3.0]}, images=4)
    m = headline.unprofiled_metrics("train", t)
    assert m["step_ms"] == pytest.approx(110.0)  # 330 ms of wall ÷ 3 steps (the block ends after the device)
    assert m["throughput_img_s"] == pytest.approx(12 / 0.33)
    assert m["dataload_ms"] == pytest.approx(33.0) and m["dataload_pct"] == pytest.approx(30.0)
    assert m["latency_p50_ms"] is None and m["latency_p99_ms"] is None  # a training step has no latency percentiles


def test_a_stage_not_timed_on_every_call_is_left_out():
    t = timing([10.0, 20.0], [30.0], {"preprocess": [1.0], "forward": [8.0, 18.0]})
    m = headline.unprofiled_metrics("infer", t)
    assert "preprocess_ms" not in m  # one value for two calls would average a different set of calls
    assert m["forward_ms"] == pytest.approx(13.0) and m["forward_pct"] == pytest.approx(100 * 13 / 15)


def test_trial_spread_by_hand():
    spread = headline.trial_spread({"step_ms": [10.0, 12.0, 14.0], "gpu_util_pct": [50.0]})
    assert spread["step_ms"] == {"mean": 12.0, "std": pytest.approx(2.0), "n": 3, "values": [10.0, 12.0, 14.0]}
    assert spread["gpu_util_pct"]["std"] is None and spread["gpu_util_pct"]["n"] == 1  # n − 1 = 0: no spread
    assert list(spread) == ["step_ms", "gpu_util_pct"] and headline.trial_spread({}) == {}


def test_overhead_is_the_profiled_step_against_the_unprofiled_one():
    m = {"kind": "infer", "step_ms": 50.0}  # the trace's (profiled) step time
    capture = TrialCapture(
        trace_path=Path("x"), images_per_step=1, profiled_step_ms=44.0, unprofiled=timing([40.0, 40.0], [80.0])
    )
    headline.apply_headline(m, capture)
    assert m["step_ms"] == 40.0 and m["profiled_step_ms"] == 44.0
    assert m["profiler_overhead_pct"] == pytest.approx(10.0)


def test_without_unprofiled_calls_the_trace_stays_the_headline():
    m = {"kind": "infer", "step_ms": 50.0, "latency_p50_ms": 49.0}
    headline.apply_headline(m, TrialCapture(trace_path=Path("x"), images_per_step=1, profiled_step_ms=50.0))
    assert m["step_ms"] == 50.0 and m["profiler_overhead_pct"] is None and m["timing_cv_pct"] is None
    record = headline.timing_record("infer", [TrialCapture(trace_path=Path("x"), images_per_step=1)])
    assert record["headline"] == "trace" and "--no-overhead" in record["why"]
    assert headline.timing_record("infer", [None])["headline"] == "trace"


@pytest.mark.parametrize("calls, p90, p99", [(19, None, None), (20, 1.0, None), (99, 1.0, None), (100, 1.0, 1.0)])
def test_percentiles_need_enough_calls(calls, p90, p99):
    m = {"latency_p50_ms": 1.0, "latency_p90_ms": 1.0, "latency_p99_ms": 1.0}
    reasons = headline.drop_thin_percentiles(m, calls)
    assert (m["latency_p50_ms"], m["latency_p90_ms"], m["latency_p99_ms"]) == (1.0, p90, p99)
    for name in ("latency_p90_ms", "latency_p99_ms"):
        assert (name in reasons) == (m[name] is None)
        if name in reasons:
            assert f"timed {calls}" in reasons[name] and "--runs" in reasons[name]


def test_noise_evidence_names_each_finding_with_its_figures():
    quiet = TrialCapture(
        trace_path=Path("x"),
        images_per_step=1,
        machine={"other_cpu_pct": 3.0, "steal_pct": 0.0, "cpu_count": 2, "loadavg_1m_end": 1.0},
    )
    busy = TrialCapture(
        trace_path=Path("x"),
        images_per_step=1,
        machine={
            "other_cpu_pct": 61.0,
            "steal_pct": 7.5,
            "cpu_count": 2,
            "loadavg_1m_end": 3.2,
            "gpu": {
                "start": {
                    "throttle_reasons": ["hardware thermal slowdown"],
                    "sm_clock_mhz": 900,
                    "sm_clock_max_mhz": 1980,
                }
            },
        },
    )
    assert headline.noise_evidence("infer", [quiet], [{"timing_cv_pct": 4.0}], thresholds()) == []
    found = headline.noise_evidence(
        "infer", [quiet, busy], [{"timing_cv_pct": 4.0}, {"timing_cv_pct": 35.0}], thresholds()
    )
    text = " | ".join(found)
    assert "61% of the machine's 2 CPUs" in text and "(trial 2)" in text and "(trial 1)" not in text
    assert "stole 7.5%" in text and "hardware thermal slowdown" in text and "900 of 1980 MHz" in text
    assert "varied by 35%" in text
    # training steps differ by nature (mosaic, dataload): their spread alone is not a noisy machine
    assert headline.noise_evidence("train", [quiet], [{"timing_cv_pct": 35.0}], thresholds()) == []


# ---------------------------------------------------------------------------------------------
# the machine's load, read from /proc

BURN = "import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass\n"


def spin(seconds: float) -> None:
    end = time.time() + seconds
    while time.time() < end:
        pass


@pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="needs Linux /proc")
def test_our_own_work_and_our_children_count_as_ours():
    """Our share against getrusage's account of the same stretch (this process and its waited-for child),
    whatever else the machine is doing meanwhile."""
    import resource

    def cpu_seconds() -> float:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    before = cpu_seconds()
    sampler = LoadSampler()
    sampler.start()
    child = subprocess.Popen([sys.executable, "-c", BURN.format(seconds=1.5)])  # a worker of ours, alive
    spin(1.5)
    child.wait()  # read while it was alive: it counts; getrusage sees it once it is waited for
    figures = sampler.stop()
    used = cpu_seconds() - before
    expected_pct = 100.0 * used / (figures["wall_s"] * os.cpu_count())
    assert figures["our_cpu_pct"] == pytest.approx(expected_pct, abs=max(4.0, 0.25 * expected_pct)), figures
    assert figures["cpu_count"] == os.cpu_count() and figures["loadavg_1m_end"] is not None


@pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="needs Linux /proc")
def test_a_process_outside_our_tree_counts_as_other():
    # double fork: the shell exits at once, so the burner is re-parented away from this process
    subprocess.run(["sh", "-c", f"{sys.executable} -c '{BURN.format(seconds=2.5)}' >/dev/null 2>&1 &"], check=True)
    time.sleep(0.3)
    sampler = LoadSampler()
    sampler.start()
    time.sleep(1.5)  # we sleep: whatever the CPUs did, we did not do it
    figures = sampler.stop()
    assert figures["other_cpu_pct"] >= 100.0 / os.cpu_count() * 0.6, figures
    assert figures["our_cpu_pct"] < 10.0, figures


# ---------------------------------------------------------------------------------------------
# end to end, the real CLI


def cli(cwd: Path, *args: str, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(cwd), LIBREYOLO_PROFILE_OFFLINE="1", PYTHONPATH=str(REPO), **(env or {}))
    return run_measurement(*args, cwd=cwd, env=env, timeout=timeout)


def reader(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """A reader command, answered in this process (the conftest's runner: the same entry point, environment,
    cwd and captured streams as a subprocess, without a process per reader)."""
    return run_cli(*args, cwd=cwd, env=dict(os.environ, HOME=str(cwd), LIBREYOLO_PROFILE_OFFLINE="1"))


INFER = ("infer", "--device", "cpu", "--imgsz", "96", "--warmup", "1", "--runs", "20", "--no-report", "--no-trace")


@pytest.mark.slow
def test_repeat_runs_each_trial_in_a_fresh_process_and_the_headline_is_unprofiled(tmp_path):
    r = cli(tmp_path, *INFER, "--repeat", "2", "--project", "out")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "out" / "infer" / "profile.json").read_text())
    processes = doc["timing"]["processes"]
    assert [p["fresh"] for p in processes] == [True, True]
    assert len({p["pid"] for p in processes}) == 2  # two processes, neither of them the test's
    assert all(p["pid"] != os.getpid() for p in processes)
    assert doc["timing"]["headline"] == "unprofiled" and "overhead_method" in doc["timing"]
    assert "profiled_step_ms" in doc["timing"]["overhead_method"]
    # each trial's headline is plain Python over its own stored unprofiled call times
    for trial, extra in zip(doc["trials"], doc["extra"], strict=False):
        calls = extra["unprofiled_latency_ms"]
        assert len(calls) == 20
        assert trial["step_ms"] == pytest.approx(sum(calls) / len(calls), rel=1e-3)
        ordered = sorted(calls)
        assert trial["latency_p50_ms"] == pytest.approx((ordered[9] + ordered[10]) / 2, rel=1e-3)
        profiled = extra["host_latency_ms"]
        assert trial["profiled_step_ms"] == pytest.approx(sum(profiled) / len(profiled), rel=1e-3)
        assert trial["profiler_overhead_pct"] == pytest.approx(
            100 * (trial["profiled_step_ms"] - trial["step_ms"]) / trial["step_ms"], rel=1e-6
        )
        assert trial["latency_p99_ms"] is None  # 20 calls cannot give a p99 …
        assert trial["latency_p90_ms"] is not None  # … but can give a p90
    assert "needs at least 100 calls" in doc["null_reasons"]["latency_p99_ms"]
    assert doc["repeat"]["step_ms"]["n"] == 2
    assert doc["metrics"]["step_ms"] == pytest.approx(sum(t["step_ms"] for t in doc["trials"]) / 2)
    assert len(doc["timing"]["machine"]) == 2 and doc["timing"]["machine"][0]["cpu_count"] == os.cpu_count()
    assert list((tmp_path / "out").iterdir()) == [tmp_path / "out" / "infer"]  # no workspace left behind


@pytest.mark.slow
def test_a_busy_machine_gets_the_noisy_mark_in_profile_summary_and_compare(tmp_path):
    burners = [
        subprocess.Popen([sys.executable, "-c", BURN.format(seconds=600)], start_new_session=True)
        # half the CPUs busy is twice the 25 % threshold, and leaves the rest of the suite a core
        for _ in range(max(1, (os.cpu_count() or 2) // 2))
    ]
    try:
        # the burners are our children, so the measurement (a separate process tree) sees them as other work;
        # a few calls are enough to see them
        # one compute thread: OpenMP threads spin-waiting for the burnt core made 6 calls take ~100 s
        few = [a if a != "20" else "6" for a in INFER]
        r = cli(tmp_path, *few, "--same-process", "--project", "busy", env={"OMP_NUM_THREADS": "1"})
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    assert r.returncode == 0, r.stderr
    profile = tmp_path / "busy" / "infer" / "profile.json"
    doc = json.loads(profile.read_text())
    assert "other processes used" in doc["marks"]["noisy"], doc["timing"]["machine"]
    assert doc["metrics"]["other_cpu_pct"] >= thresholds()["noisy_other_cpu_pct"]
    summary = reader(tmp_path, "summary", str(profile))
    assert summary.returncode == 0 and "noisy" in summary.stdout
    compared = reader(tmp_path, "compare", str(profile), str(profile), "--json")
    report = json.loads(compared.stdout)
    assert [n["side"] for n in report["before"]["noisy"] + report["after"]["noisy"]] == ["before", "after"]


@pytest.mark.slow
def test_a_trial_process_that_fails_fails_the_command_with_its_own_error(tmp_path):
    """The child's one-line error and exit code are the command's; nothing is left in --project."""
    # no CUDA here (or, on a GPU machine, not 99 of them): the trial's process refuses the device
    r = cli(tmp_path, "infer", "--device", "99", "--repeat", "2", "--project", "out", "--json")
    assert r.returncode == 2, r.stderr
    error = json.loads(r.stdout)
    assert set(error) == {"error", "exit_code"} and error["exit_code"] == 2
    assert "--device 99" in error["error"] and "\n" not in error["error"]
    assert "Traceback" not in r.stderr and r.stderr.count("--device 99") == 1
    assert not (tmp_path / "out").exists()
