"""Shared test fixtures: the real traces in ../shared/traces, a private cache, the CLI."""

from __future__ import annotations

import gc
import io
import json
import os
import shutil
import subprocess as _subprocess
import sys
from pathlib import Path

import pytest

from tests.zygote import WORKER_ZYGOTE

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "traces"
ON_CI = os.environ.get("CI", "").lower() == "true"

# The suite runs a test file per core (pytest-xdist) and many files measure real models: torch's OpenMP
# threads, one per core in every measuring process, then spin-wait for cores the other workers hold (6 CPU
# calls beside one busy core: ~100 s instead of ~20 s). One compute thread per measuring process keeps each
# worker to its own core; a test that wants more sets OMP_NUM_THREADS itself.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_collection_modifyitems(items):
    """Test files in the order the workers should start them: the ones that run real models first (the
    longest), then by how many tests they hold. pytest-xdist hands out whole files in collection order
    (pyproject.toml turns its own reordering, by test count alone, off): a long file started last leaves
    one core working alone at the end (the seed examples, 130 s, did)."""
    by_file: dict[str, list] = {}
    for item in items:
        by_file.setdefault(item.nodeid.split("::")[0], []).append(item)

    def cost(tests: list) -> tuple[bool, int]:
        return (not any(t.get_closest_marker("slow") for t in tests), -len(tests))

    items[:] = [item for tests in sorted(by_file.values(), key=cost) for item in tests]


def require_traces() -> Path:
    """The shared traces folder: skipped where absent, a failure under CI=true (SPEC §10)."""
    if not TRACES.is_dir():
        if ON_CI:
            pytest.fail(f"CI=true but the shared traces are missing at {TRACES}")
        pytest.skip(f"shared traces not found at {TRACES}")
    return TRACES


def require_module(name: str, extra: str):
    """An optional dependency, imported: skipped where absent, a failure under CI=true (it installs every extra)."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        if ON_CI:
            pytest.fail(f"CI=true but {name} is missing: install the [{extra}] extra")
        pytest.skip(f"{name} is not installed (the [{extra}] extra)")


@pytest.fixture
def traces_dir() -> Path:
    return require_traces()


@pytest.fixture
def trace(traces_dir):
    """A shared trace by name; the test's cache holds its analysis unless it is marked `cold_cache`
    (private_cache)."""

    def named(name: str) -> Path:
        path = traces_dir / (name if name.endswith(".gz") or name.endswith(".json") else f"{name}.json.gz")
        if not path.is_file():
            pytest.fail(f"missing shared trace {path}")
        return path

    return named


class AnalysedTraces:
    """The shared traces analysed by the product itself (`summary`), each once per session (per xdist
    worker), all of them before the first test that does not want a cold cache: every test's private
    cache starts with them (copy_into), instead of paying 1-3 s per trace per test (a test reading a shared
    trace by its path, not through the `trace` fixture, analysed it again: 115 analyses, 152 s of CPU, in
    one suite). So do the entries measuring commands remember (a model's FLOP count, the CPU's roof:
    measure/remembered.py), gathered from each test's cache after it: ~1 s of every CPU measurement
    otherwise. A test that needs the cache empty is marked `cold_cache`."""

    def __init__(self, root: Path):
        self.root = root
        self.done: set[Path] = set()

    def analyse_shared(self) -> None:
        """Every shared trace at the top of ../shared/traces (a job's ranks are imported, not summarised)."""
        for path in sorted(TRACES.glob("*.json.gz")) if TRACES.is_dir() else ():
            self.analyse(path)

    def seeded(self, cache: Path) -> Path:
        """`cache` (an XDG_CACHE_HOME) holding the shared traces analysed."""
        self.copy_into(cache)
        return cache

    def document(self, path: Path) -> dict:
        """The profile document the product's analysis of a trace wrote in the cache."""
        from libreyolo_profile.store.disk.cache import trace_key

        self.analyse(path)
        return json.loads((self.entries / trace_key(path) / "profile.json").read_text())

    @property
    def entries(self) -> Path:
        return self.root / "libreyolo-profile" / "traces"

    def analyse(self, path: Path) -> None:
        if path in self.done:
            return
        result = run_cli_in_process("summary", str(path), "--json", env={"XDG_CACHE_HOME": str(self.root)})
        assert result.returncode == 0, result.stderr
        self.done.add(path)

    def copy_into(self, cache: Path) -> None:
        # the analyses' files linked, not copied (4 ms a test instead of 25): the product replaces a cache
        # entry whole through a rename and never writes into one, so a test's cache never changes them here
        if self.entries.is_dir():
            shutil.copytree(
                self.entries, cache / "libreyolo-profile" / "traces", dirs_exist_ok=True, copy_function=_link_or_copy
            )
        for area in REMEMBERED_AREAS:
            _copy_entries(self.root / "libreyolo-profile" / area, cache / "libreyolo-profile" / area)

    def gather_remembered(self, cache: Path) -> None:
        for area in REMEMBERED_AREAS:
            _copy_entries(cache / "libreyolo-profile" / area, self.root / "libreyolo-profile" / area)


REMEMBERED_AREAS = ("flops", "cpu_peak")


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _copy_entries(source: Path, target: Path) -> None:
    """The regular *.json files of `source` into `target` (a test may plant links or other files there, or
    leave its cache unreadable: then nothing is shared, which only costs the next test a measurement)."""
    try:
        for entry in source.glob("*.json") if source.is_dir() else ():
            if entry.is_file() and not entry.is_symlink():
                target.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(entry, target / entry.name)
    except OSError:
        pass


@pytest.fixture(scope="session")
def analysed_traces(tmp_path_factory) -> AnalysedTraces:
    analysed = AnalysedTraces(tmp_path_factory.mktemp("analysed-traces"))
    analysed.analyse_shared()
    # what the worker holds by now (the collected tests, the readers' imports) lives until it exits: frozen,
    # the collector's full passes stop rescanning it (they took ~2 % of the in-process readers' test time)
    gc.freeze()
    return analysed


@pytest.fixture(scope="session")
def reader_cache_env(analysed_traces, tmp_path_factory) -> dict:
    """The environment of a reader cache the compare, what-if and gate tests share across their files
    (they read the same traces and their trials again and again), starting with the shared traces analysed."""
    return {"XDG_CACHE_HOME": str(analysed_traces.seeded(tmp_path_factory.mktemp("compare-what-if-cache")))}


@pytest.fixture(autouse=True)
def private_cache(request, tmp_path_factory, monkeypatch):
    """Every test gets its own reader cache, so nothing leaks into ~/.cache and no test sees another's
    derived files: only what AnalysedTraces shares (the shared traces' analyses, the remembered entries)."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    if request.node.get_closest_marker("cold_cache") is not None:
        yield cache
        return
    analysed = request.getfixturevalue("analysed_traces")
    yield analysed.seeded(cache)
    analysed.gather_remembered(cache)


# The readers answer in-process (Typer's app called as `python -m libreyolo_profile` would call it, with
# the same stdout, stderr and exit code): a fresh interpreter per call cost ~0.6 s, ~500 times a suite.
# Measurement (`run`, `infer`), `import` and anything asked for with `subprocess=True` still get a
# fresh process; tests/test_cli_contract.py holds every reader to giving the same answer both ways.
IN_PROCESS_COMMANDS = frozenset(
    {
        "summary",
        "get",
        "phases",
        "kernels",
        "ops",
        "modules",
        "memory",
        "compare",
        "what-if",
        "query",
        "db",
        "report",
        "roofline",
        "ranks",
    }
)
ALWAYS_SUBPROCESS = os.environ.get("LIBREYOLO_PROFILE_TEST_SUBPROCESS") == "1"
# Measurement and import commands are forked from a warm parent that has torch, LibreYOLO and our code
# imported (tests/zygote.py): a fresh process each, without the 1-4 s of imports, ~200 times a suite.
FORKED_COMMANDS = frozenset({"infer", "run", "import"})


def pytest_sessionfinish(session):
    WORKER_ZYGOTE.close()


def run_measurement(
    *args: str, cwd: Path | str | None = None, env: dict | None = None, timeout: float = 600
) -> _subprocess.CompletedProcess:
    """`python -m libreyolo_profile *args` with this complete environment (os.environ's when None), as
    subprocess.run(capture_output=True, text=True) gives it; forked from the warm parent when it can be."""
    return WORKER_ZYGOTE.run(list(args), cwd, dict(os.environ) if env is None else env, timeout)


def default_sigint() -> None:
    """preexec_fn of a process a test will Ctrl-C: a suite started in the background (nohup, `cmd &`) runs
    with SIGINT ignored, which its children inherit, and Python then never raises KeyboardInterrupt; a
    user's Ctrl-C arrives with the default disposition."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def signal_state(pid: int) -> str:
    """A process's blocked, ignored and caught signal masks (/proc), for a message when a Ctrl-C did nothing."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError as exc:
        return f"no /proc state ({exc})"
    return " ".join(line.replace("\t", "") for line in lines if line.startswith(("SigBlk", "SigIgn", "SigCgt")))


def run_cli(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 300, subprocess: bool = False
) -> _subprocess.CompletedProcess:
    """The real CLI: `python -m libreyolo_profile …`, in this process for the readers, forked from the warm
    parent for the measurements and imports, else a fresh interpreter (always one with subprocess=True)."""
    if not (subprocess or ALWAYS_SUBPROCESS) and args and args[0] in IN_PROCESS_COMMANDS:
        return run_cli_in_process(*args, cwd=cwd, env=env)
    full_env = dict(os.environ)
    full_env.update(env or {})
    if not subprocess and args and args[0] in FORKED_COMMANDS:
        return run_measurement(*args, cwd=cwd, env=full_env, timeout=timeout)
    return _subprocess.run(
        [sys.executable, "-m", "libreyolo_profile", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_cli_in_process(*args: str, cwd: Path | None = None, env: dict | None = None) -> _subprocess.CompletedProcess:
    """One reader command run by the entry point `python -m libreyolo_profile` uses, with its own
    environment, working directory and captured (non-TTY) stdout/stderr, all restored afterwards."""
    from libreyolo_profile.launcher import profile_main

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdout, sys.stderr, sys.stdin
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="", write_through=True)
    saved_argv = sys.argv
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        sys.stdout, sys.stderr, sys.stdin = out, err, io.StringIO("")
        sys.argv = ["libreyolo-profile", *args]
        try:
            profile_main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved_streams
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return _subprocess.CompletedProcess(["libreyolo-profile", *args], code, _text(out), _text(err))


def _text(stream: io.TextIOWrapper) -> str:
    """What a subprocess with text=True would have read: the bytes decoded, newlines universal."""
    stream.flush()
    raw = stream.buffer.getvalue().decode("utf-8", errors="replace")
    return raw.replace("\r\n", "\n").replace("\r", "\n")


def cli_json(*args: str, **kwargs) -> dict:
    result = run_cli(*args, "--json", **kwargs)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
