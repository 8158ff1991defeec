"""Contention said and solved (#52): the noise record's run-queue wait, read from the scheduler for our own
threads (measure/noise.py), the `contended` mark in one line of at most 80 columns with its remedy, the
figures in the settings, and no saving projected from a measurement a noisy or contended mark disowns."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from libreyolo_profile.measure import common, noise
from libreyolo_profile.store.document import marks as mark
from libreyolo_profile.store.document.verdict import SAVING_LEAD, disown_saving

SCHEDSTAT = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/schedstat")


def machine(**figures) -> dict:
    return {"cpu_count": 2, "other_cpu_pct": 10.0, "run_queue_wait_pct": 5.0, "torch_threads": 2, **figures}


def test_quiet_threads_are_not_contended():
    assert noise.contention([machine(), None, {}]) is None
    assert noise.contention([machine(torch_threads=1, other_cpu_pct=90.0)]) is None  # one thread cannot be fewer


def test_starved_and_oversubscribed_are_told_apart_with_the_worst_trial_kept():
    found = noise.contention([machine(run_queue_wait_pct=40.0), machine(run_queue_wait_pct=180.0)])
    assert found["starved"] and found["run_queue_wait_pct"] == 180.0 and found["remedy"].startswith("--threads 1")
    over = noise.contention([machine(torch_threads=8, other_cpu_pct=50.0, cpu_count=8)])  # 4 CPUs left for 8
    assert over["oversubscribed"] and not over["starved"] and over["free_cpus"] == 4.0
    assert "8 torch threads, 4.0 CPUs free: use --threads 1" == mark.contended(over)
    alone = noise.contention([machine(torch_threads=1, run_queue_wait_pct=300.0)])
    assert alone["remedy"] == "a quieter machine" and "quiet machine" in mark.contended(alone)


@pytest.mark.parametrize(
    "found",
    [
        {"starved": True, "run_queue_wait_pct": 123456.0, "torch_threads": 512, "free_cpus": 0.0, "remedy": "x"},
        {"starved": False, "run_queue_wait_pct": None, "torch_threads": 4096, "free_cpus": 1023.5, "remedy": "x"},
        {
            "starved": True,
            "run_queue_wait_pct": 99999.0,
            "torch_threads": 1,
            "free_cpus": 0.0,
            "remedy": "a quieter machine",
        },
    ],
)
def test_the_mark_is_one_line_that_fits_80_columns_with_its_remedy(found):
    line = f"mark {mark.CONTENDED}: {mark.contended(found)}"  # as summary's first screen prints a mark
    assert len(line) <= mark.MARK_LINE_COLUMNS and "\n" not in line, line
    assert "--threads 1" in line or "quiet machine" in line


def test_contention_is_marked_and_recorded_in_the_settings():
    settings, marks = {}, {}
    common.mark_contention([machine(run_queue_wait_pct=75.0)], settings, marks)
    assert marks[mark.CONTENDED] == "threads waited 75% of run time for a CPU: use --threads 1"
    assert settings["contention"]["remedy"] == "--threads 1 (or OMP_NUM_THREADS=1)"
    assert settings["contention"]["starved_at_pct"] == noise.STARVED_WAIT_PCT
    quiet_settings, quiet_marks = {}, {}
    common.mark_contention([machine()], quiet_settings, quiet_marks)
    assert quiet_settings == {} and quiet_marks == {}


@pytest.mark.skipif(not SCHEDSTAT.is_file(), reason="no schedstat on this kernel")
def test_the_sampler_reads_a_real_run_queue_wait():
    """More busy processes of ours than CPUs: each waits for a CPU about as long as the others run, which
    the scheduler's own schedstat shows; the children stay alive until the sampler has read them."""
    cpus = len(os.sched_getaffinity(0))
    spin = "import time\nend = time.time() + 30\nwhile time.time() < end: pass\n"
    sampler = noise.LoadSampler(threads=1)
    children = []
    try:
        sampler.start()
        children = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(3 * cpus)]
        time.sleep(2.0)
        figures = sampler.stop()
    finally:
        for child in children:
            child.kill()
            child.wait()
    # 3 runnable spinners per CPU wait ~2 s for every 1 s they run (less any idle CPUs the machine had)
    assert figures["run_queue_wait_pct"] is not None and figures["run_queue_wait_pct"] >= noise.STARVED_WAIT_PCT
    assert figures["threads_ran_s"] > 0 and figures["torch_threads"] == 1


VERDICT = {
    "bound": "host-cpu",
    "reason": "…",
    "next_step": f"take the work out of the step — because it held 90%{SAVING_LEAD}3173.00 ms per profiled "
    "call (90.0% of it: the time that work held the call)",
    "evidence": {"advice_rule": "r", "advice_saving_ms": 3173.0},
}


@pytest.mark.parametrize("disowning", [mark.NOISY, mark.CONTENDED])
def test_no_saving_is_projected_from_a_disowned_measurement(disowning):
    disowned = disown_saving(VERDICT, {disowning: "…", mark.CPU_PROFILE: "…"})
    assert "projected saving" not in disowned["next_step"] and "3173" not in disowned["next_step"]
    assert disowned["next_step"].endswith(f"; no saving projected from a measurement marked {disowning}")
    assert disowned["next_step"].startswith("take the work out of the step — because it held 90%")
    assert disowned["evidence"]["advice_saving_ms"] is None and VERDICT["evidence"]["advice_saving_ms"] == 3173.0
    assert disown_saving(VERDICT, {mark.CPU_PROFILE: "…"}) is VERDICT  # an undisputed measurement keeps it


def test_when_the_cpu_roof_is_in_doubt(tmp_path):
    """Before the analysis: a busy or contended machine; after it: an op faster than the roof, or a noisy mark."""
    assert common.machine_busy([machine()], None) is None
    assert common.machine_busy([machine()], {"starved": True}) == "the measurement was contended"
    assert "used 60% of the CPUs" in common.machine_busy([machine(), machine(other_cpu_pct=60.0)], None)
    assert "stole 7.0%" in common.machine_busy([machine(steal_pct=7.0)], None)

    import duckdb

    table = tmp_path / "roofline.parquet"
    for beaten, expected in ((0, None), (2, "2 op(s) ran faster than the roof")):
        # (device_us, roofline_us), as the roofline sidecar holds them: faster than the roof allows, then slower
        rows = [(500, 1000)] * beaten + [(2000, 1000)] * 3
        duckdb.sql(
            f"COPY (SELECT * FROM (VALUES {', '.join(f'({d}, {r})' for d, r in rows)}) AS t(device_us, roofline_us)) "
            f"TO '{table}' (FORMAT parquet)"
        )
        assert common.roof_doubted({"marks": {}}, tmp_path) == expected
    table.unlink()
    assert common.roof_doubted({"marks": {mark.NOISY: "…"}}, tmp_path) == "the measurement was marked noisy"
    assert common.roof_doubted({"marks": {}}, tmp_path) is None


def test_threads_choose_their_cpus():
    """--threads N: N CPUs of those allowed, from the one the process runs on; a job's ranks take their own N;
    none where N covers every CPU (with the reason)."""
    allowed = sorted(os.sched_getaffinity(0))
    whole = common._cpus_to_pin(len(allowed), None)
    assert whole["cpus"] is None and "every CPU" in whole["reason"]
    if len(allowed) < 2:
        pytest.skip("one CPU: nothing to choose")
    common.apply_threads(None)  # no --threads: nothing held, whatever an earlier measurement chose
    assert common.pinning_settings() == {"cpus_pinned": None, "cpus_pinned_null_reason": common._UNPINNED["reason"]}
    alone = common._cpus_to_pin(1, None)["cpus"]
    assert len(alone) == 1 and alone[0] in allowed
    ranks = [common._cpus_to_pin(1, rank)["cpus"][0] for rank in range(len(allowed))]
    assert sorted(ranks) == allowed  # one CPU per rank, none shared


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU: nothing to pin to")
def test_a_pinned_trial_runs_on_its_cpu_and_its_forked_children_on_all(monkeypatch):
    """Inside `pinned` every thread of the process may run only on the chosen CPU; a process forked there (a
    dataloader worker) gets every CPU back; after the block the threads do too."""
    allowed = os.sched_getaffinity(0)
    chosen = [max(allowed)]
    monkeypatch.setattr(common, "_pin", {"cpus": chosen, "reason": None})
    release = threading.Event()
    helper = threading.Thread(target=release.wait)  # a thread of ours born before the block (the progress line's)
    helper.start()
    with common.pinned():
        inside = os.sched_getaffinity(0)
        helper_inside = os.sched_getaffinity(helper.native_id)
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # the child: report its CPUs and leave at once
            os.write(write, repr(sorted(os.sched_getaffinity(0))).encode())
            os._exit(0)
        os.close(write)
        in_child = os.read(read, 4096).decode()
        os.close(read)
        os.waitpid(child, 0)
    helper_after = os.sched_getaffinity(helper.native_id)
    release.set()
    helper.join()
    assert inside == helper_inside == set(chosen)
    assert in_child == repr(sorted(allowed))
    assert os.sched_getaffinity(0) == helper_after == allowed
    assert common.pinning_settings() == {"cpus_pinned": chosen, "cpus_pinned_null_reason": None}


def test_a_near_idle_thread_does_not_speak_for_the_work():
    """A progress-line thread that ran 25 ms of a 16 s stretch but waited 9 s over its wake-ups is left out:
    the wait is the working thread's own (5 s of 10 s run: 50%), not 140%."""
    ms = 1_000_000
    begin = {(1, 1): (0, 0), (1, 2): (0, 0)}
    end = {(1, 1): (10_000 * ms, 5_000 * ms), (1, 2): (25 * ms, 9_000 * ms)}
    figures = noise._waits(begin, end, {}, wall_s=16.0)
    assert figures["run_queue_wait_pct"] == 50.0 and figures["working_threads"] == 1
    # where no thread reached the share (a very short stretch), all of them count
    assert noise._waits(begin, end, {}, wall_s=10_000.0)["run_queue_wait_pct"] == round(100 * 14_000 / 10_025, 1)
