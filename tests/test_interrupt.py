"""A measurement killed at any moment (SIGINT, SIGTERM) leaves the previous profile byte-identical
and no partial files; two measurements into one --project at once keep the previous profile and
write two whole new ones beside it (infer2, infer3). A Ctrl-C or SIGTERM at any moment of `import` or
`summary` of an uncached trace (inside DuckDB, pyarrow, an import, the publish) exits 130 or 143 with
the --json error object saying so, and an import leaves either nothing or its whole profile."""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.bad_inputs.make_bad_inputs import T0, kineto_text
from tests.conftest import ALWAYS_SUBPROCESS, REPO, default_sigint, require_traces, run_cli

# --no-overhead skips the unprofiled timing pass: the kill points stay the same, the test gets faster; so do
# 10 profiled calls instead of 40, the late kill still landing in an analysis that takes seconds (its length
# follows the calls' ops, not the image size)
INFER = ["infer", "--device", "cpu", "--imgsz", "64", "--warmup", "1", "--runs", "10", "--no-overhead"]
# two measurements racing for one project need no time to be killed in: a few calls each
SHORT_INFER = ["infer", "--device", "cpu", "--imgsz", "64", "--warmup", "1", "--runs", "4", "--no-overhead"]

# A warm parent for this file's measurements: torch, LibreYOLO and our code imported once, each command a child
# forked from it (tests/zygote.py's child: its own pid, working directory, environment and streams, the entry
# point `python -m libreyolo_profile` runs), which the test watches, signals and waits on, two at once where it
# races them. The imports (~5 CPU-s a fresh `infer`) are no kill point of the forked ones: they are killed at
# warmup and at analysis; the early kill, inside those imports, still goes to a fresh interpreter.
# tempfile's directory, read once by the parent's imports, is forgotten: the child's TMPDIR holds its
# temporary files, as a fresh interpreter's would.
WARM_PARENT = r"""
import importlib, json, os, signal, sys, tempfile
from tests.zygote import WARM_IMPORTS, _child
for name in WARM_IMPORTS:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
replies = os.fdopen(os.dup(1), "w", buffering=1)
for line in sys.stdin:
    request = json.loads(line)
    if "wait" in request:
        replies.write(json.dumps({"status": os.waitpid(request["wait"], 0)[1]}) + "\n")
        continue
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        tempfile.tempdir = None
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _child(request, replies.fileno())
    replies.write(json.dumps({"pid": pid}) + "\n")
os._exit(0)  # every child waited on: nothing of torch's to tear down
"""


class WarmParent:
    """The parent above: start(args) forks a command and answers its pid at once; wait(pid) its exit code. Under
    LIBREYOLO_PROFILE_TEST_SUBPROCESS=1 (every command a fresh interpreter) it starts them fresh instead."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.proc: subprocess.Popen | None = None

    def _ask(self, request: dict, timeout: float) -> dict:
        if self.proc is None:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", WARM_PARENT], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"no answer to {request} in {timeout} s"
        line = self.proc.stdout.readline()
        assert line, f"the warm parent exited ({self.proc.wait()})"
        return json.loads(line)

    def start(self, args: list[str], cwd: Path, env: dict, name: str) -> "Forked | Fresh":
        out, err = self.tmp / f"{name}.out", self.tmp / f"{name}.err"
        if ALWAYS_SUBPROCESS:
            return Fresh(args, cwd, env, out)
        request = {"args": args, "cwd": str(cwd), "env": env, "stdout": str(out), "stderr": str(err)}
        return Forked(self, self._ask(request, 600)["pid"], out, err)  # the first answer waits for the imports

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


class Forked:
    """A forked command, read and signalled as the Popen of a fresh one would be."""

    def __init__(self, parent: WarmParent, pid: int, out: Path, err: Path) -> None:
        self.parent, self.pid, self.out, self.err = parent, pid, out, err
        self.returncode: int | None = None

    def stderr(self) -> str:
        return self.err.read_text(errors="replace") if self.err.exists() else ""

    def stdout(self) -> str:
        return self.out.read_text(errors="replace") if self.out.exists() else ""

    def running(self) -> bool:
        """Not yet exited (a child that exited stays a zombie until its parent waits on it)."""
        if self.returncode is not None:
            return False
        state = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"

    def send_signal(self, sig: int) -> None:
        os.kill(self.pid, sig)

    def wait(self, timeout: float) -> int:
        if self.returncode is None:
            deadline = time.monotonic() + timeout
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.05)
            if self.running():
                os.kill(self.pid, signal.SIGKILL)
            self.returncode = os.waitstatus_to_exitcode(self.parent._ask({"wait": self.pid}, 60)["status"])
        return self.returncode


@pytest.fixture(scope="module")
def warm_parent(tmp_path_factory):
    parent = WarmParent(tmp_path_factory.mktemp("forked"))
    yield parent
    parent.close()


def inference_trace() -> bytes:
    """A small trace without backward work, so `import` files it as an infer profile."""
    events = []
    for step in range(12):
        start = T0 + step * 1000
        events.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{step}",
                "pid": 1,
                "tid": 1,
                "ts": start,
                "dur": 900,
            }
        )
        events.append(
            {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": start + 100, "dur": 600}
        )
    return kineto_text(events, header={"schemaVersion": 1})


def digest(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def previous_profile(warm_parent, tmp_path_factory) -> Path:
    """A --project holding an infer profile, imported once: each test's --project starts as a copy of it."""
    base = tmp_path_factory.mktemp("previous")
    trace = base / "previous_trace.json"
    trace.write_bytes(inference_trace())
    env = dict(os.environ, XDG_CACHE_HOME=str(base / "cache"), TMPDIR=str(base))
    done = warm_parent.start(["import", str(trace), "--project", str(base / "project"), "--json"], base, env, "import")
    assert done.wait(timeout=300) == 0, done.stderr()
    assert json.loads(done.stdout())["kind"] == "infer"
    return base / "project"


@pytest.fixture
def workspace(tmp_path, previous_profile, warm_parent):
    """cwd, TMPDIR, cache and a --project already holding an infer profile."""
    cwd, tmp, cache, project = (tmp_path / n for n in ("cwd", "tmp", "cache", "project"))
    for d in (cwd, tmp, cache):
        d.mkdir()
    shutil.copytree(previous_profile, project)
    env = {"XDG_CACHE_HOME": str(cache), "TMPDIR": str(tmp)}
    return {"cwd": cwd, "tmp": tmp, "project": project, "env": dict(os.environ, **env), "parent": warm_parent}


class Fresh:
    """A command in a fresh interpreter (Popen), read as a Forked one is."""

    def __init__(self, args: list[str], cwd: Path, env: dict, out: Path | None = None) -> None:
        self.out = out
        with open(os.devnull if out is None else out, "w") as stdout:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "libreyolo_profile", *args],
                cwd=cwd,
                env=env,
                stdout=stdout,
                stderr=subprocess.PIPE,
                text=True,
                preexec_fn=default_sigint,
            )
        self.lines: list[str] = []

        def drain():
            for line in self.proc.stderr:
                self.lines.append(line)

        self.drained = threading.Thread(target=drain, daemon=True)
        self.drained.start()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def stderr(self) -> str:
        return "".join(self.lines)

    def stdout(self) -> str:
        return self.out.read_text(errors="replace") if self.out is not None and self.out.exists() else ""

    def running(self) -> bool:
        return self.proc.poll() is None

    def send_signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int:
        code = self.proc.wait(timeout=timeout)
        self.drained.join(timeout=10)
        return code


def start_infer(ws: dict, project: Path, command: list[str] = INFER, name: str = "infer", fresh: bool = False):
    args = [*command, "--project", str(project)]
    if fresh:
        return Fresh(args, ws["cwd"], ws["env"])
    return ws["parent"].start(args, ws["cwd"], ws["env"], f"{ws['cwd'].parent.name}-{name}")


def wait_for(proc, pattern: str | None, seconds: float) -> bool:
    """True once a stderr line contains `pattern` (None: once `seconds` have passed)."""
    deadline = time.monotonic() + (seconds if pattern is None else 240)
    while time.monotonic() < deadline:
        if pattern is not None and pattern in proc.stderr():
            return True
        if not proc.running():
            return False
        time.sleep(0.05)
    return pattern is None


def assert_no_leftovers(ws: dict, profiles: tuple[str, ...] = ("infer",)) -> None:
    stray = [p.name for p in ws["project"].iterdir() if p.name not in profiles]
    assert stray == [], f"stray files in --project: {stray}"
    assert list(ws["cwd"].iterdir()) == [], "files written into the cwd"
    # torch itself keeps a compile cache there (torchinductor_<user>); anything else is ours
    left = [p.name for p in ws["tmp"].iterdir() if not p.name.startswith("torchinductor_")]
    assert left == [], f"temporary files left behind: {left}"


# when to kill: early (inside the imports of torch and LibreYOLO: a fresh interpreter), mid-measurement, at the
# start of analysis and publish (forked from the warm parent: the same points without the imports before them)
KILL_POINTS = [
    ("SIGINT", signal.SIGINT, None, 2.0, True),
    ("SIGTERM", signal.SIGTERM, "warmup", 0.0, False),
    ("SIGTERM-late", signal.SIGTERM, "analysing", 0.0, False),
]


@pytest.mark.slow
@pytest.mark.parametrize("label,sig,pattern,delay,fresh", KILL_POINTS, ids=[k[0] for k in KILL_POINTS])
def test_killed_measurement_keeps_previous_profile(workspace, label, sig, pattern, delay, fresh):
    before = digest(workspace["project"] / "infer")
    proc = start_infer(workspace, workspace["project"], fresh=fresh)
    reached = wait_for(proc, pattern, delay)
    if not reached and not proc.running():
        pytest.fail(f"infer ended before the kill point ({pattern}): rc={proc.wait(60)}\n{proc.stderr()}")
    proc.send_signal(sig)
    proc.wait(timeout=120)
    time.sleep(0.2)
    lines = proc.stderr()
    after = digest(workspace["project"] / "infer")
    assert after == before, f"{label}: the previous profile changed\n{lines}"
    published = ()
    # a signal is its exit code wherever it lands, also after the publish (issue 54: that was -15); 0 only when
    # it came once the process was exiting, the profile written
    finished = proc.returncode == 0 and (workspace["project"] / "infer2").exists()
    assert proc.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143}[sig] or finished, lines
    if (workspace["project"] / "infer2").exists():  # the signal came after the publish: the profile is whole
        assert pattern == "analysing", lines
        doc = json.loads((workspace["project"] / "infer2" / "profile.json").read_text())
        assert doc["kind"] == "infer" and "metrics" in doc
        published = ("infer2",)
    assert "Traceback" not in lines
    assert_no_leftovers(workspace, ("infer", *published))


@pytest.mark.slow
def test_two_measurements_into_one_project(workspace):
    project = workspace["project"]
    previous = digest(project / "infer")
    first = start_infer(workspace, project, SHORT_INFER, "first")
    second = start_infer(workspace, project, SHORT_INFER, "second")
    assert first.wait(timeout=600) == 0, first.stderr()
    assert second.wait(timeout=600) == 0, second.stderr()
    assert digest(project / "infer") == previous  # the imported profile is kept as it was
    for name in ("infer2", "infer3"):  # each measurement whole in its own directory
        doc = json.loads((project / name / "profile.json").read_text())
        assert doc["kind"] == "infer" and doc["settings"]["runs"] == 4
        summary = run_cli("summary", str(project / name), "--json", env=workspace["env"])
        assert summary.returncode == 0, summary.stderr
        assert json.loads(summary.stdout)["window"]["steps"] == 4
    assert_no_leftovers(workspace, ("infer", "infer2", "infer3"))


# a small real trace: a fresh import of it takes about a second, every stage of it (start-up, decode,
# DuckDB's analysis, the publish, the output) a sizeable part of that
SIGNALLED_TRACE = "h100_vit_image_classifier.json.gz"
EXPECTED = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}
# 20 tries a command (issue 54), spread over the command's run from 15% of it on, SIGINT and SIGTERM in turn
TRY_AT = tuple(0.15 + 0.8 * i / 19 for i in range(20))


def _uncached(command: str, trace: Path, base: Path) -> tuple[list[str], dict, Path]:
    """A command on a trace no cache holds (a cache of its own), and its --project for an import."""
    base.mkdir()
    project = base / "project"
    args = [sys.executable, "-m", "libreyolo_profile", command, str(trace), "--json"]
    if command == "import":
        args += ["--project", str(project)]
    return args, dict(os.environ, XDG_CACHE_HOME=str(base / "cache"), TMPDIR=str(base)), project


def _signalled(args: list[str], env: dict, sig: int, delay: float) -> tuple[int, str, str]:
    """(the exit code, stdout, stderr) of the command sent `sig` after `delay` seconds."""
    proc = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint
    )
    time.sleep(delay)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def _check_project(project: Path, env: dict) -> None:
    """Nothing half-written: no profile, or a whole one the readers read."""
    if not project.exists():
        return
    assert [p.name for p in project.iterdir() if p.name.startswith(".")] == [], "staging left behind"
    for profile in project.glob("*/profile.json"):
        done = run_cli("summary", str(profile), "--json", env={"XDG_CACHE_HOME": env["XDG_CACHE_HOME"]})
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["profile"]["path"] == str(profile), done.stdout


@pytest.mark.parametrize("command", ["import", "summary"])
def test_a_signal_anywhere_in_an_uncached_command_exits_130_or_143(command, tmp_path):
    trace = require_traces() / SIGNALLED_TRACE
    args, env, _ = _uncached(command, trace, tmp_path / "whole")
    started = time.monotonic()
    whole = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    took = time.monotonic() - started
    assert whole.returncode == 0, whole.stderr
    # the start-up before our code runs (the interpreter's own imports) is Python's, not ours: from 15% on
    stopped = 0
    for i, fraction in enumerate(TRY_AT):
        sig = (signal.SIGINT, signal.SIGTERM)[i % 2]
        args, env, project = _uncached(command, trace, tmp_path / f"try{i}")
        code, out, err = _signalled(args, env, sig, took * fraction)
        case = f"{signal.Signals(sig).name} at {took * fraction:.2f} s of {took:.2f}: exit {code}\n{err}"
        assert "Traceback" not in err and "Exception ignored" not in err, case
        document = json.loads(out)  # one JSON document, whatever happened
        _check_project(project, env)
        if code == 0 and "error" not in document:  # it had finished (or was tearing down) when the signal came
            continue
        stopped += 1
        exit_code, word = EXPECTED[sig]
        assert code == exit_code and err.strip().splitlines()[-1].startswith(f"libreyolo-profile: {word}"), case
        if "error" in document:
            assert document == {"error": word, "exit_code": exit_code}, case
    # the first run (which times the command) is the coldest: later ones often finish before the late signals
    assert stopped >= len(TRY_AT) // 4, "the signals came too late to test anything: the command got faster"


@pytest.mark.parametrize("raised", [KeyboardInterrupt, "SIGTERM"])
def test_a_stop_after_the_document_adds_no_second_one(raised, capsys):
    """A signal landing after a --json command printed its document (as it tore down) exits 130/143 and says so
    on stderr, but prints no error object after the document: stdout stays one JSON document (the summary's
    signal test caught stdout holding both)."""
    from libreyolo_profile.cli_errors import run_stoppable
    from libreyolo_profile.output.json_out import emit_json
    from libreyolo_profile.stopping import Terminated

    def command():
        emit_json({"answer": 1})
        raise KeyboardInterrupt if raised is KeyboardInterrupt else Terminated()

    def unprinted():
        raise KeyboardInterrupt

    code = run_stoppable(command, "libreyolo-profile", as_json=True)
    out, err = capsys.readouterr()
    assert json.loads(out) == {"answer": 1}
    assert code in (130, 143) and "libreyolo-profile: " in err
    # with nothing printed yet, the error object is the one document
    assert run_stoppable(unprinted, "libreyolo-profile", as_json=True) == 130
    assert json.loads(capsys.readouterr().out) == {"error": "interrupted", "exit_code": 130}
