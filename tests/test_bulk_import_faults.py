"""Bulk import when things die: the real CLI with `--jobs 2` (local worker processes) and `--scheduler`
(a Dask LocalCluster of worker processes started here), with workers killed from outside.

- SIGTERM to the command stops its workers before it exits, so none survives it and a caller reading its
  output to the end gets EOF;
- a worker killed while it imports an input fails that input alone (tried once more, then its own line),
  every other input is imported, exit 1;
- Dask workers killed mid-run never make an input publish twice; a scheduler with no worker is refused
  with one line instead of a silent wait;
- the publish is idempotent: an attempt that finds its key's profile reports that one.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import TRACES, default_sigint, require_module, require_traces, run_cli, signal_state

LIMIT_S = 300  # every CLI call and wait here is bounded


def _process_tree() -> dict[int, list[int]]:
    """Every process's children, from one pass over /proc (parent pid -> child pids)."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            tree.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    return tree


def _children(pid: int, tree: dict[int, list[int]] | None = None) -> list[int]:
    """The children of `pid`, in `tree` (one snapshot of /proc shared by the lookups of one poll) or now."""
    return list((_process_tree() if tree is None else tree).get(pid, []))


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _workers(pid: int, tree: dict[int, list[int]] | None = None) -> list[int]:
    """The spawned worker processes of the CLI process `pid` (not multiprocessing's resource tracker)."""
    return [c for c in _children(pid, tree) if "spawn_main" in _cmdline(c)]


def _has_open(pid: int, path: str, tree: dict[int, list[int]] | None = None) -> bool:
    """Whether `pid` or one of its descendants has `path` open."""
    tree = _process_tree() if tree is None else tree
    for process in [pid, *_children(pid, tree)]:
        try:
            links = [os.readlink(f"/proc/{process}/fd/{fd}") for fd in os.listdir(f"/proc/{process}/fd")]
        except OSError:
            continue
        if path in links or (process != pid and _has_open(process, path, tree)):
            return True
    return False


def _copies(tmp_path: Path, trace: str, names: list[str]) -> list[str]:
    require_traces()
    paths = []
    for name in names:
        path = tmp_path / "inputs" / f"{name}.json.gz"
        path.parent.mkdir(exist_ok=True)
        shutil.copyfile(TRACES / f"{trace}.json.gz", path)
        paths.append(str(path))
    return paths


def _cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "libreyolo_profile", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,  # one test Ctrl-Cs it
    )


def _wait_for(condition, what: str, limit: float = LIMIT_S) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


def test_sigterm_stops_every_worker_before_the_command_exits(tmp_path):
    inputs = _copies(tmp_path, "v100_resnet50_workers0", [f"run{i}" for i in range(6)])
    project = tmp_path / "p"
    process = _cli("import", *inputs, "--project", str(project), "--jobs", "2")
    seen: set[int] = set()
    try:
        # both workers at work, one input already in: the others are being imported now
        _wait_for(
            lambda: seen.update(_workers(process.pid)) or (len(seen) >= 2 and any(project.rglob("profile.json"))),
            "two workers and a first profile",
        )
        process.send_signal(signal.SIGTERM)
        output: dict = {}
        reader = threading.Thread(target=lambda: output.update(out=process.stdout.read(), err=process.stderr.read()))
        reader.start()
        process.wait(LIMIT_S)
        survivors = [pid for pid in seen if _alive(pid)]
        reader.join(10)  # every holder of the pipes is gone: EOF comes at once
        assert survivors == [], "workers outlived the command"
        assert not reader.is_alive(), "the output pipe was still open after the command exited"
        assert process.returncode == 143 and output["err"].endswith("terminated\n"), (process.returncode, output)
        assert "Traceback" not in output["err"]
        assert not [p for p in project.rglob(".*") if ".tmp-" in p.name]  # no staging left behind
    finally:
        process.kill()
        for pid in seen:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_killed_worker_fails_only_the_input_it_held(tmp_path):
    require_traces()
    victim = _copies(tmp_path, "a100_cutlass_adam_rank0", ["victim"])[0]
    good = [
        str(TRACES / f"{name}.json.gz")
        for name in ("mi250_rocm_minitoy", "cpu_only_rank34", "h100_vit_image_classifier")
    ]
    inputs = [good[0], victim, *good[1:]]
    project = tmp_path / "p"
    process = _cli("import", *inputs, "--project", str(project), "--jobs", "2", "--json")
    kills: list[int] = []

    def kill_whoever_reads_the_victim():  # a worker that dies of this input, every time it is tried
        while process.poll() is None:
            tree = _process_tree()  # one pass over /proc a poll, not one a lookup: the poll runs every 10 ms
            for worker in _workers(process.pid, tree):
                if worker not in kills and _has_open(worker, victim, tree):
                    os.kill(worker, signal.SIGKILL)
                    kills.append(worker)
            time.sleep(0.01)

    killer = threading.Thread(target=kill_whoever_reads_the_victim, daemon=True)
    killer.start()
    try:
        out, err = process.communicate(timeout=LIMIT_S)
    finally:
        process.kill()
    killer.join(5)
    assert process.returncode == 1, err  # documented: 1 when any input failed
    doc = json.loads(out)
    assert [r["trace"] for r in doc["imports"]] == inputs and (doc["imported"], doc["failed"]) == (3, 1)
    failed = doc["imports"][1]
    assert not failed["ok"] and "worker process died while importing it (killed by SIGKILL)" in failed["error"]
    assert len(kills) == 2  # tried once more in a fresh worker, then reported
    for entry in doc["imports"][:1] + doc["imports"][2:]:
        assert entry["ok"] and Path(entry["profile"]).is_file()
    profiles = sorted(str(p.parent.relative_to(project)) for p in project.rglob("profile.json"))
    assert profiles == ["cpu_only_rank34/train", "h100_vit_image_classifier/infer", "mi250_rocm_minitoy/train"]


def test_a_retried_input_is_not_published_twice(tmp_path):
    """The worker that published may die before it reports: the retry finds its key's profile."""
    from libreyolo_profile.importer import import_one

    require_traces()
    trace, project = str(TRACES / "mi250_rocm_minitoy.json.gz"), str(tmp_path / "p")
    first = import_one(trace, project, False, "mi250", "run-a")
    again = import_one(trace, project, False, "mi250", "run-a")
    assert first["ok"] and again["ok"] and again["directory"] == first["directory"]
    assert again["published_by_earlier_attempt"] is True
    other_run = import_one(trace, project, False, "mi250", "run-b")  # another import run imports anew
    assert other_run["directory"] == str(tmp_path / "p" / "mi250" / "train2")
    assert sorted(p.parent.name for p in (tmp_path / "p").rglob("profile.json")) == ["train", "train2"]


# ---------------------------------------------------------------------------------------------
# Dask


def _distributed():
    return require_module("distributed", "dask")


@pytest.fixture(scope="module")
def two_worker_cluster():
    """One LocalCluster of two worker processes for the tests below: each leaves it idle (the kill test's
    workers are restarted by their nannies, and each test waits for its own tasks), so it need not be
    started once a test."""
    distributed = _distributed()
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        yield cluster


def test_a_scheduler_without_workers_is_refused_with_one_line(tmp_path):
    distributed = _distributed()
    require_traces()
    with distributed.LocalCluster(n_workers=0, processes=True, host="127.0.0.1", dashboard_address=None) as cluster:
        result = run_cli(
            "import",
            str(TRACES / "mi250_rocm_minitoy.json.gz"),
            str(TRACES / "cpu_only_rank34.json.gz"),
            "--project",
            str(tmp_path / "p"),
            "--scheduler",
            cluster.scheduler_address,
            env={"LIBREYOLO_PROFILE_DASK_WAIT_S": "1"},  # the refusal, not the length of the wait
            timeout=120,
        )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "has no worker (waited 1 s" in result.stderr, result.stderr
    assert not (tmp_path / "p").exists()


def test_killed_dask_workers_never_make_an_input_publish_twice(tmp_path, two_worker_cluster):
    require_traces()
    slow = _copies(tmp_path, "a100_cutlass_adam_rank0", ["slow"])
    quick = _copies(tmp_path, "mi250_rocm_minitoy", [f"quick{i}" for i in range(4)])
    project = tmp_path / "p"
    cluster = two_worker_cluster
    process = _cli(
        "import", *slow, *quick, "--project", str(project), "--scheduler", cluster.scheduler_address, "--json"
    )
    try:
        # a quick input is published while the slow one still runs: kill every worker now
        _wait_for(lambda: any(project.glob("quick*/train/profile.json")), "a first quick profile")
        for nanny in list(cluster.workers.values()):
            pid = nanny.process.pid if nanny.process is not None else None
            if pid:
                os.kill(pid, signal.SIGKILL)
        out, err = process.communicate(timeout=LIMIT_S)
    finally:
        process.kill()
    assert process.returncode == 0, err
    doc = json.loads(out)
    assert doc["failed"] == 0 and len(doc["imports"]) == 5
    profiles = sorted(str(p.parent.relative_to(project)) for p in project.rglob("profile.json"))
    assert profiles == ["quick0/train", "quick1/train", "quick2/train", "quick3/train", "slow/train"], profiles


def test_ctrl_c_of_the_client_stops_the_tasks_before_they_write(tmp_path, two_worker_cluster):
    distributed = _distributed()
    inputs = _copies(tmp_path, "a100_cutlass_adam_rank0", ["slow0", "slow1", "slow2"])
    project = tmp_path / "p"
    cluster = two_worker_cluster
    process = _cli("import", *inputs, "--project", str(project), "--scheduler", cluster.scheduler_address)
    try:
        # both workers are analysing an input (which takes seconds): Ctrl-C the client now
        _wait_for(
            lambda: sum(len(ws.processing) for ws in cluster.scheduler.workers.values()) >= 2, "two running tasks"
        )
        time.sleep(0.5)
        state = signal_state(process.pid)  # the masks when the signal was sent, should it do nothing
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=LIMIT_S)
        assert process.returncode == 130 and err.endswith("interrupted\n"), (process.returncode, err, state)
        # a running task cannot be interrupted: wait until the workers' threads are idle, then look
        with distributed.Client(cluster) as observer:
            _wait_for(
                lambda: not any(observer.run(lambda dask_worker: len(dask_worker.state.executing)).values()),
                "the workers to finish what they were running",
            )
    finally:
        process.kill()
    assert list(project.rglob("profile.json")) == []
