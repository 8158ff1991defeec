"""A warm parent for the measurement and import commands the suite starts (`infer`, `run`, `import`).

Each such command started as `python -m libreyolo_profile …` spends 1-4 s importing torch, LibreYOLO and
our code before it does anything, ~200 times a suite. This parent imports them once per
test worker and forks one child per command: the child is a fresh process (its own pid, working directory,
environment, argv and standard streams: stdin /dev/null, stdout and stderr to files, as `capture_output`
gives) that runs the same entry point `python -m libreyolo_profile` runs and exits with its code.

What a fork cannot give, a fresh interpreter still does (`Zygote.run` falls back to `subprocess.run`): an
environment that changes how the interpreter or its thread pools start (PYTHON*, LD_PRELOAD, OMP_*, MKL_*), a test
that signals the process or needs its startup, and every run under LIBREYOLO_PROFILE_TEST_SUBPROCESS=1.
tests/test_cli_contract.py and the seed examples keep the interpreter's own start covered.

Run as a script, this file is the parent: one JSON request per line on stdin, two JSON lines back on stdout
per request (the child's pid, then its exit status).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# variables read while the interpreter, its libraries or their thread pools start: a child forked from a
# parent started under other values would not see them (LD_LIBRARY_PATH is left out: OpenCV's import
# appends its own directory to it, in whichever process imports it first)
STARTUP_PREFIXES = ("PYTHON", "LD_PRELOAD", "LD_AUDIT", "OMP_", "MKL_", "KMP_", "GOMP_", "MALLOC_", "ARROW_")
WARM_IMPORTS = (  # what `infer` and `run` import on a CPU (LibreYOLO loads its models lazily)
    "torch",
    "torchvision",
    "torchvision.transforms",
    "libreyolo",
    "libreyolo.models",
    "libreyolo.training",
    "libreyolo.data",
    "libreyolo.validation",
    "scipy.spatial",
    "pyarrow.parquet",
    "duckdb",
    "yaml",
    "cv2",
    "libreyolo_profile.cli",
    "libreyolo_profile.cli_measure",
    "libreyolo_profile.measure.infer",
    "libreyolo_profile.measure.train",
    "libreyolo_profile.store.ingest.analyse",
    "libreyolo_profile.readers.summary",
    "libreyolo_profile.importer",
    "libreyolo_profile.bulk",
)


REPO = Path(__file__).resolve().parents[1]


def _startup_env(env: dict) -> dict:
    """The variables a fork would not honour. The repository on PYTHONPATH (many tests put it there) is
    always on the parent's: the package is installed from it, so only the order of sys.path differs."""
    startup = {k: v for k, v in env.items() if k.startswith(STARTUP_PREFIXES)}
    entries = [e for e in startup.pop("PYTHONPATH", "").split(os.pathsep) if e and Path(e).resolve() != REPO]
    if entries:
        startup["PYTHONPATH"] = os.pathsep.join(entries)
    return startup


class Zygote:
    """The warm parent of one test worker, started at its first request."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.env: dict = {}
        self.lock = threading.Lock()

    def _start(self) -> subprocess.Popen:
        """The parent, started under the worker's environment of now: one started under another (a library
        the worker imported since, Dask's for one, sets PYTHONHASHSEED for good) is replaced."""
        if self.proc is not None and _startup_env(self.env) != _startup_env(dict(os.environ)):
            self.close()
        if self.proc is None or self.proc.poll() is not None:
            self.env = dict(os.environ)
            path = [str(REPO), *[e for e in self.env.get("PYTHONPATH", "").split(os.pathsep) if e]]
            self.proc = subprocess.Popen(
                [sys.executable, __file__],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=dict(self.env, PYTHONPATH=os.pathsep.join(path)),
                cwd=REPO,
                preexec_fn=_default_signals,
                start_new_session=True,  # its own process group: discard() kills it with every child it forked
            )
        return self.proc

    def can_fork(self, env: dict) -> bool:
        if os.environ.get("LIBREYOLO_PROFILE_TEST_SUBPROCESS") == "1":
            return False
        return _startup_env(env) == _startup_env(dict(os.environ))

    def run(self, args: list[str], cwd: Path | str | None, env: dict, timeout: float) -> subprocess.CompletedProcess:
        """`python -m libreyolo_profile *args` with this cwd and complete environment, as subprocess.run
        with capture_output=True, text=True and this timeout would run it."""
        argv = [sys.executable, "-m", "libreyolo_profile", *args]
        if not self.can_fork(env):
            return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        with self.lock, tempfile.TemporaryDirectory(prefix="zygote-") as streams:
            out, err = Path(streams) / "stdout", Path(streams) / "stderr"
            request = {"args": args, "cwd": str(cwd or os.getcwd()), "env": env, "stdout": str(out), "stderr": str(err)}
            proc, status = self._start(), None
            try:
                proc.stdin.write(json.dumps(request).encode() + b"\n")
                proc.stdin.flush()
                # a parent started just now answers once its imports are done: on a loaded machine that can
                # take longer than any command
                pid = json.loads(self._line(proc, max(60.0, timeout)))["pid"]
                try:
                    status = json.loads(self._line(proc, timeout))["status"]
                except subprocess.TimeoutExpired:
                    os.kill(pid, signal.SIGKILL)
                    self._line(proc, 60)  # the killed child's status: nothing is owed any more, the parent serves on
            except BaseException:
                # a reply still owed would answer the next request: no later request reads this pipe
                self.discard()
                raise
            if status is None:
                raise subprocess.TimeoutExpired(argv, timeout)
            code = os.waitstatus_to_exitcode(status)
            return subprocess.CompletedProcess(argv, code, _read(out), _read(err))

    def _line(self, proc: subprocess.Popen, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired("zygote", timeout)
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if ready:
                line = proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"the measurement zygote exited ({proc.wait()})")
                return line

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.discard()
        self.proc = None

    def discard(self) -> None:
        """The parent and every process it forked killed at once (they share its process group), so the next
        request starts a fresh parent with an empty pipe."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            for pipe in (self.proc.stdin, self.proc.stdout):
                try:
                    pipe.close()
                except OSError:
                    pass
        self.proc = None


# one per test worker: conftest.py is imported twice (by pytest as `conftest`, by the tests as
# `tests.conftest`), this module once
WORKER_ZYGOTE = Zygote()


def _read(path: Path) -> str:
    """What subprocess.run(text=True) would give: decoded with the locale's codec, universal newlines."""
    raw = path.read_bytes() if path.exists() else b""
    return raw.decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _default_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _child(request: dict, replies: int) -> None:
    """In the forked child: become the command's process, run it, never return."""
    code = 1
    try:
        os.close(replies)
        sys.path[0] = request["cwd"]  # as `python -m` puts the working directory first
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # the warm imports cached the parent's; the command's TMPDIR decides, as fresh
        devnull = os.open(os.devnull, os.O_RDONLY)
        out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for fd, target in ((devnull, 0), (out, 1), (err, 2)):
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as a fresh interpreter starts
        import libreyolo_profile.__main__ as entry

        sys.argv = [entry.__file__, *request["args"]]
        from libreyolo_profile.launcher import profile_main

        profile_main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # what the interpreter would print before exiting 1
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def serve() -> None:
    import importlib

    for name in WARM_IMPORTS:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # the child imports it (and says what is missing) as a fresh process would
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request, replies.fileno())
        replies.write(json.dumps({"pid": pid}) + "\n")
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"status": status}) + "\n")


if __name__ == "__main__":
    serve()
