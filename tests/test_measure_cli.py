"""`libreyolo profile infer` and `libreyolo profile run` end to end on the CPU, as a user runs them:
a subprocess in an empty cwd with a private HOME, offline, random-init LibreYOLO9-t.

Checks the files written (and that nothing else is: no weights/, runs/, datasets or lock files in
the cwd or HOME), the trace contract (ProfilerStep#n ranges with the phase ranges inside), the
marks, the exit codes of the error paths, and that every reader present accepts the profile.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli, run_measurement

REPO = Path(__file__).resolve().parents[1]
FIXTURE_YAML = REPO / "fixtures" / "synth3.yaml"
READERS = ("summary", "phases", "ops", "kernels")

pytestmark = pytest.mark.slow


def make_sandbox(root: Path) -> tuple[Path, Path, dict]:
    """An empty cwd, an empty HOME, and the env a subprocess gets."""
    cwd = root / "cwd"
    home = root / "home"
    cwd.mkdir()
    home.mkdir()
    env = dict(os.environ)
    env.update(HOME=str(home), LIBREYOLO_PROFILE_OFFLINE="1", PYTHONPATH=str(REPO), COLUMNS="200")
    env.pop("LIBREYOLO_DATASETS_DIR", None)
    return cwd, home, env


@pytest.fixture
def sandbox(tmp_path):
    return make_sandbox(tmp_path)


def cli(sandbox, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    cwd, _, env = sandbox
    return run_measurement(*args, cwd=cwd, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def sample_infer(tmp_path_factory) -> tuple[tuple[Path, Path, dict], subprocess.CompletedProcess]:
    """`infer` on LibreYOLO's sample image, in its own sandbox, measured once for the two tests that read it:
    the files, trace, marks and readers (test_infer_sample_image_cpu) and what --threads 1, contention and
    the CPU roof record (test_infer_threads_contention_and_the_roof_say_what_they_did)."""
    sandbox = make_sandbox(tmp_path_factory.mktemp("sample-infer"))
    args = ("--imgsz", "64", "--warmup", "1", "--runs", "3", "--threads", "1", "--project", "out")
    return sandbox, cli(sandbox, "infer", "--device", "cpu", *args)


def assert_only(sandbox, *names: str) -> None:
    cwd, home, _ = sandbox
    assert sorted(os.listdir(cwd)) == sorted(names), "files written in the cwd outside --project"
    assert sorted(p for p in os.listdir(home) if p != ".cache") == [], "files written in HOME"
    for name in names:  # no temp dir left behind, no lock files anywhere under --project
        leftovers = [
            p for p in (cwd / name).rglob("*") if p.name.startswith(".libreyolo-profile-") or p.name.endswith(".lock")
        ]
        assert leftovers == []


@functools.lru_cache(maxsize=1)
def raw_events(trace: Path) -> list[dict]:
    """The trace's events, parsed once for the checks that read the same trace one after another (the
    latest trace only: a training trace parsed is large)."""
    return json.loads(trace.read_text())["traceEvents"]


@pytest.fixture(scope="module", autouse=True)
def _forget_parsed_traces():
    """The parsed trace freed when the file is done, not held by the worker for the rest of the suite."""
    yield
    raw_events.cache_clear()


def trace_steps(trace: Path) -> tuple[list[str], set[str]]:
    events = raw_events(trace)
    names = [e.get("name", "") for e in events if e.get("ph") == "X"]
    steps = sorted((n for n in names if n.startswith("ProfilerStep#")), key=lambda n: int(n.split("#")[1]))
    phases = {n for n in names if n.startswith("## ") and n.endswith(" ##")}
    return steps, phases


HOST_READS = ("aten::item", "aten::_local_scalar_dense")  # a host read of a device scalar: a sync on a GPU


def step_events(trace: Path) -> list[dict[str, list[tuple[float, float]]]]:
    """Per ProfilerStep, in order: name -> the (start, end) of each complete event starting inside it."""
    events = [e for e in raw_events(trace) if e.get("ph") == "X"]
    steps = sorted((e for e in events if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    per_step = []
    for step in steps:
        inside: dict[str, list[tuple[float, float]]] = {}
        for e in events:
            if step["ts"] <= e["ts"] <= step["ts"] + step["dur"]:
                inside.setdefault(e["name"], []).append((e["ts"], e["ts"] + e["dur"]))
        per_step.append(inside)
    return per_step


def within(spans: list[tuple[float, float]], outer: list[tuple[float, float]]) -> list[tuple[float, float]]:
    return [s for s in spans if any(o[0] <= s[0] and s[1] <= o[1] for o in outer)]


def optimizer_phase_reads(step: dict) -> dict[str, list[tuple[float, float]]]:
    """The host reads in the step's `## optimizer ##` phase, where the trainer's logging reads sit."""
    return {name: within(step.get(name, []), step["## optimizer ##"]) for name in HOST_READS}


def readers_accept(sandbox, profile: Path) -> None:
    """Every reader on the profile, answered in this process (the conftest's runner: the same entry point,
    environment, cwd and captured streams as a subprocess, without a process per reader)."""
    cwd, _, env = sandbox
    for name in READERS:
        r = run_cli(name, str(profile), "--json", cwd=cwd, env=env)
        assert r.returncode == 0, f"{name}: {r.stderr}"
        json.loads(r.stdout)
    r = run_cli("get", str(profile), "step_ms", cwd=cwd, env=env)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout.strip()) > 0


def libreyolo9t_parameter_count() -> int:
    """LibreYOLO9-t's parameters, counted from LibreYOLO's own model (80 COCO classes), not from ours."""
    import libreyolo
    import torch

    torch.manual_seed(0)
    wrapper = libreyolo.LibreYOLO9(None, size="t", device="cpu")
    return sum(p.numel() for p in wrapper.model.parameters())


def test_infer_sample_image_cpu(sample_infer):
    sandbox, r = sample_infer
    cwd, _, _ = sandbox
    assert r.returncode == 0, r.stderr
    out = cwd / "out" / "infer"
    doc = json.loads((out / "profile.json").read_text())
    assert doc["kind"] == "infer"
    assert doc["settings"]["imgsz"] == 64 and doc["settings"]["runs"] == 3
    assert doc["settings"]["decode_in_latency"] is False
    assert doc["model"]["family"] == "LibreYOLO9"
    assert doc["model"]["parameter_count"] == libreyolo9t_parameter_count()
    assert doc["model"]["weights_source"].startswith("random-init")
    assert "random_weights" in doc["marks"]
    assert doc["environment"]["libreyolo"] and doc["environment"]["torch"]
    assert "RANDOMLY INITIALIZED" in r.stderr
    steps, phases = trace_steps(out / "profile_trace.json")
    assert steps == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]
    assert phases == {"## preprocess ##", "## forward ##", "## postprocess ##"}
    # --overhead (the default) times the same calls unprofiled: the headline metric is measured
    assert isinstance(doc["metrics"]["profiler_overhead_pct"], float)
    # the CLI, not the measurement, writes the report and says where both files are
    assert (out / "report.html").is_file()
    assert "profile: out/infer/profile.json" in r.stderr and "report: out/infer/report.html" in r.stderr
    assert_only(sandbox, "out")
    readers_accept(sandbox, out / "profile.json")


def test_infer_threads_contention_and_the_roof_say_what_they_did(sample_infer):
    """--threads is applied and recorded; contention, when the noise record shows it, is one mark line of at
    most 80 columns with its remedy and its figures in the settings; a noisy or contended profile projects no
    saving; on a busy machine or where an op beat the roof, the CPU roof was probed again and says why."""
    sandbox, r = sample_infer
    cwd, _, _ = sandbox
    assert r.returncode == 0, r.stderr
    doc = json.loads((cwd / "out" / "infer" / "profile.json").read_text())
    s, marks, env = doc["settings"], doc["marks"], doc["environment"]
    assert s["threads_requested"] == 1 and s["torch_threads"] == 1 and env["torch_threads"] == 1
    allowed = os.sched_getaffinity(0)
    if len(allowed) > 1:  # the timed calls held to one CPU of those allowed (measure/common.py: pinned)
        assert len(s["cpus_pinned"]) == 1 and s["cpus_pinned"][0] in allowed and s["cpus_pinned_null_reason"] is None
    else:
        assert s["cpus_pinned"] is None and "every CPU" in s["cpus_pinned_null_reason"]
    assert env["cpu_peak"]["threads"] == 1  # the roof is the one of the threads the calls ran with
    machines = doc["timing"]["machine"]
    assert all("run_queue_wait_pct" in m and m["torch_threads"] == 1 for m in machines)
    assert ("contention" in s) == ("contended" in marks)
    if "contended" in marks:
        assert len(f"mark contended: {marks['contended']}") <= 80
        assert s["contention"]["remedy"] == "a quieter machine"  # one thread already
    if "noisy" in marks or "contended" in marks:
        assert "projected saving" not in doc["verdict"]["next_step"]
        assert "reprobed" in env["cpu_peak"] and env["cpu_peak"]["reprobed"]["why"]
        assert "probed again after the measurement" in env["cpu_peak"]["method"]
    for line in r.stdout.splitlines():  # the first screen's mark lines, as printed at COLUMNS=200
        if line.startswith("mark contended:"):
            assert len(line) <= 80


def test_infer_directory_batch_repeat_no_trace(sandbox):
    cwd, _, _ = sandbox
    src = REPO / "fixtures" / "synth3" / "images" / "val"
    r = cli(
        sandbox,
        "infer",
        str(src),
        "--device",
        "cpu",
        "--imgsz",
        "64",
        "--batch",
        "3",
        "--warmup",
        "1",
        "--runs",
        "2",
        "--repeat",
        "2",
        "--same-process",  # the trials' fresh processes are tests/test_headline_timing.py's
        "--no-trace",
        "--no-overhead",
        "--json",
        "--project",
        "out",
    )
    assert r.returncode == 0, r.stderr
    out = cwd / "out" / "infer"
    assert (out / "profile.json").is_file() and (out / "profile_repeat.json").is_file()
    assert not (out / "profile_trace.json").exists()
    doc = json.loads((out / "profile.json").read_text())
    assert doc["settings"]["batch"] == 3 and doc["settings"]["source_images"] == 8
    assert doc["settings"]["source_kind"] == "directory"
    json.loads(r.stdout)  # --json: stdout is exactly one JSON document
    assert_only(sandbox, "out")


def test_run_fixture_cpu(sandbox):
    cwd, _, _ = sandbox
    r = cli(
        sandbox,
        "run",
        str(FIXTURE_YAML),
        "--device",
        "cpu",
        "--batch",
        "2",
        "--imgsz",
        "64",
        "--steps",
        "2",
        "--warmup",
        "1",
        "--workers",
        "0",
        "--project",
        "out",
    )
    assert r.returncode == 0, r.stderr
    out = cwd / "out" / "train"
    doc = json.loads((out / "profile.json").read_text())
    assert doc["kind"] == "train"
    s = doc["settings"]
    assert (s["batch"], s["steps"], s["warmup"], s["workers"], s["imgsz"]) == (2, 2, 1, 0, 64)
    assert s["data_yaml"] == str(FIXTURE_YAML) and s["train_images"] == 32
    # --amp is the default: on the CPU it is simply off, said once in the settings, neither a mark nor a warning
    assert s["amp"] is True and s["amp_active"] is False and "CUDA-only" in s["amp_off"]
    assert "amp_inactive" not in doc["marks"] and "random_weights" in doc["marks"]
    assert "AMP" not in r.stderr
    assert doc["model"]["nb_classes"] == 3 and doc["model"]["aux_weight"] == 0.25
    steps, phases = trace_steps(out / "profile_trace.json")
    assert steps == ["ProfilerStep#1", "ProfilerStep#2"]
    assert phases == {"## dataload ##", "## to_device ##", "## forward ##", "## backward ##", "## optimizer ##"}
    # the trainer's step, in its order: zero_grad between forward and backward; after the optimizer
    # step and EMA, the per-step logging reads loss.item() (+ the loss components), in every step
    assert s["loss_item"] is True and s["departures"] == [] and "departs_from_trainer" not in doc["marks"]
    for step in step_events(out / "profile_trace.json"):
        zero_grads = step["Optimizer.zero_grad#SGD.zero_grad"]
        assert zero_grads and within(zero_grads, step["## backward ##"]) == zero_grads
        reads = optimizer_phase_reads(step)
        assert len(reads["aten::item"]) >= 1 and len(reads["aten::_local_scalar_dense"]) == len(reads["aten::item"])
        step_end = max(end for _, end in step["Optimizer.step#SGD.step"])
        assert all(start >= step_end for start, _ in reads["aten::item"])
    assert_only(sandbox, "out")
    readers_accept(sandbox, out / "profile.json")


def test_run_no_loss_item_departs_and_says_so(sandbox):
    """--no-loss-item drops the trainer's logging reads from every step and is recorded, not silent. With
    --threads 1 and a dataloader worker: the training held to one CPU, its worker forked from it runs."""
    cwd, _, _ = sandbox
    r = cli(
        sandbox,
        "run",
        str(FIXTURE_YAML),
        "--device",
        "cpu",
        "--batch",
        "2",
        "--imgsz",
        "64",
        "--steps",
        "2",
        "--warmup",
        "1",
        "--workers",
        "1",
        "--threads",
        "1",
        "--no-overhead",
        "--no-report",
        "--no-loss-item",
        "--project",
        "out",
    )
    assert r.returncode == 0, r.stderr
    out = cwd / "out" / "train"
    doc = json.loads((out / "profile.json").read_text())
    assert doc["settings"]["loss_item"] is False and doc["settings"]["departures"] == ["--no-loss-item"]
    pinned, allowed = doc["settings"]["cpus_pinned"], os.sched_getaffinity(0)
    assert (len(pinned) == 1 and pinned[0] in allowed) if len(allowed) > 1 else pinned is None
    assert doc["settings"]["workers"] == 1 and doc["settings"]["torch_threads"] == 1
    assert "--no-loss-item" in doc["marks"]["departs_from_trainer"]
    assert "loss.item() logging is left out" in doc["settings"]["synchronization"]
    steps = step_events(out / "profile_trace.json")
    assert len(steps) == 2
    for step in steps:
        assert step["Optimizer.step#SGD.step"]  # the optimizer phase still ran its step
        assert optimizer_phase_reads(step) == {name: [] for name in HOST_READS}


def test_run_too_small_is_exit_3(sandbox):
    r = cli(
        sandbox,
        "run",
        str(FIXTURE_YAML),
        "--device",
        "cpu",
        "--batch",
        "16",
        "--steps",
        "3",
        "--warmup",
        "1",
        "--workers",
        "0",
        "--project",
        "out",
    )
    assert r.returncode == 3, r.stderr
    msg = r.stderr
    assert "32 training images" in msg and "= 64 images" in msg
    assert "--steps 1" in msg and "--batch 8" in msg and "at least 64" in msg
    assert r.stdout == ""
    cwd, _, _ = sandbox
    assert not (cwd / "out" / "train").exists()


@pytest.mark.parametrize(
    "args, needle",
    [
        (["infer", "--device", "0"], "--device cpu"),
        (["infer", "weights=x.pt", "--device", "cpu"], "--weights x.pt"),
        (["infer", "no/such/image.jpg", "--device", "cpu"], "no such file"),
        (["infer", "--device", "cpu", "--half"], "--half"),
        (["infer", "--device", "cpu", "--amp-dtype", "float32"], "float16 or bfloat16"),
        (["run", "coco128", "--device", "cpu"], "local dataset YAML"),
        (["run", "no_such_dataset_xyz", "--device", "cpu"], "dataset YAML"),
    ],
)
def test_usage_errors_exit_2(sandbox, args, needle):
    r = cli(sandbox, *args, "--project", "out", timeout=120)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert needle in r.stderr
    assert r.stdout == ""
    cwd, home, _ = sandbox
    assert os.listdir(cwd) == [] or os.listdir(cwd) == ["out"] and not any((cwd / "out").iterdir())
    assert not (home / "datasets").exists(), "LibreYOLO's dataset lookup created ~/datasets"


def test_sigterm_leaves_no_partial_files(sandbox):
    """SIGTERM mid-measurement: exit, temp dir gone, the older profile untouched."""
    cwd, _, env = sandbox
    old = cwd / "out" / "infer"
    old.mkdir(parents=True)
    (old / "profile.json").write_text('{"older": true}')
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "libreyolo_profile",
            "infer",
            "--device",
            "cpu",
            "--imgsz",
            "64",
            "--warmup",
            "1",
            "--runs",
            "2000",
            "--project",
            "out",
        ],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not any(
            p.name.startswith(".libreyolo-profile-") for p in (cwd / "out").iterdir()
        ):
            time.sleep(0.2)
        time.sleep(3)  # inside model build or the measured calls
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert "terminated" in err
    assert (old / "profile.json").read_text() == '{"older": true}'
    assert sorted(os.listdir(cwd / "out")) == ["infer"]
    assert sorted(os.listdir(old)) == ["profile.json"]


def test_auto_batch_cpu_rule():
    """--batch -1 on the CPU: a documented rule, capped by what the dataset can supply; never a crash."""
    import libreyolo
    import torch

    from libreyolo_profile.measure.autobatch import auto_batch

    torch.manual_seed(0)
    w = libreyolo.LibreYOLO9(None, size="t", device="cpu")
    w._rebuild_for_new_classes(3)
    w.model.enable_aux(weight=0.25)
    batch, why, probed = auto_batch(w.model, 64, torch.device("cpu"), None, supply_cap=3)
    assert 1 <= batch <= 3
    assert why.startswith("CPU rule") and "capped at 3" in why
    # the memory it measured per probed batch size is reported, with what it measured
    assert [p["batch"] for p in probed] == [2, 4]
    assert all(p["measure"].startswith("growth of the process's resident memory") for p in probed)
    assert all(isinstance(p["memory_mb"], float) for p in probed)
