"""Shared test fixtures: the real traces in ../shared/traces, a private cache, the CLI."""

from __future__ import annotations

import gc
import io
import json
import os
import subprocess as _subprocess
import sys
from pathlib import Path

import pytest

from tests import trace_analyses
from tests.trace_analyses import AnalysedTraces
from tests.zygote import WORKER_ZYGOTE

REPO = Path(__file__).resolve().parents[1]
# the real traces: ../shared/traces beside the checkout, or wherever LIBREYOLO_PROFILE_TRACES points
TRACES = Path(os.environ.get("LIBREYOLO_PROFILE_TRACES") or REPO.parent / "shared" / "traces").absolute()
# what a trace file's name ends with (Kineto writes *.pt.trace.json, often gzipped)
TRACE_SUFFIXES = (".json", ".json.gz")
ON_CI = os.environ.get("CI", "").lower() == "true"

# The suite runs a test file per core (pytest-xdist) and many files measure real models: torch's OpenMP
# threads, one per core in every measuring process, then spin-wait for cores the other workers hold (6 CPU
# calls beside one busy core: ~100 s instead of ~20 s). One compute thread per measuring process keeps each
# worker to its own core; a test that wants more sets OMP_NUM_THREADS itself.
os.environ.setdefault("OMP_NUM_THREADS", "1")


# What the heaviest test files cost, in worker seconds of the whole suite on a 2-core machine (pytest's
# --junitxml times summed per file, `CI=true python -m pytest -q -n auto --dist loadfile --junitxml=…`: in the
# suite, where the trace analyses are shared, not alone): the order the workers take the files in is longest
# first, so that the last files to start are short ones and both cores finish together. A file not listed is
# estimated from its tests (SECONDS_PER_TEST each, SLOW_FILE_SECONDS at least where one runs a real model); a
# file that becomes much slower belongs here.
MEASURED_SECONDS = {
    "tests/test_bad_inputs.py": 70,
    "tests/test_launches.py": 64,
    "tests/test_interrupt.py": 49,
    "tests/test_seed_examples.py": 48,
    "tests/test_corpus_4.py": 40,
    "tests/test_writers_safe.py": 40,
    "tests/test_measure_cli.py": 37,
    "tests/test_object_storage_faults.py": 31,
    "tests/test_corpus_3.py": 31,
    "tests/test_corpus.py": 29,
    "tests/test_blame.py": 29,
    "tests/test_job.py": 29,
    "tests/test_fuzz.py": 28,
    "tests/test_cache_safety.py": 27,
    "tests/test_job_measured.py": 27,
    "tests/test_corpus_2.py": 26,
    "tests/test_zygote.py": 25,
    "tests/test_profile_mutations.py": 25,
    "tests/test_modules.py": 25,
    "tests/test_profiled_window.py": 25,
    "tests/test_compare_gate.py": 25,
    "tests/test_exports.py": 25,
    "tests/test_local_writes_safe.py": 25,
    "tests/test_memory.py": 25,
    "tests/test_bulk_import_faults.py": 25,
    "tests/test_spark.py": 24,
    "tests/test_window_edges.py": 24,
    "tests/test_roofline.py": 23,
    "tests/test_families.py": 22,
    "tests/test_report_timeline.py": 21,
    "tests/test_object_storage.py": 20,
    "tests/test_notebook.py": 20,
    "tests/test_report.py": 19,
    "tests/test_api_analyses.py": 19,
    "tests/test_provenance.py": 18,
    "tests/test_headline_timing.py": 18,
    "tests/test_api.py": 17,
    "tests/test_import.py": 16,
    "tests/test_terminal_safety.py": 15,
    "tests/test_sections_fail_alone.py": 15,
}
SECONDS_PER_TEST = 0.3
SLOW_FILE_SECONDS = 15.0  # a real model measured in a warm fork: ~5-10 s a measurement


def estimated_seconds(path: str, tests: list) -> float:
    """What a test file is expected to cost (MEASURED_SECONDS, else from its tests)."""
    if path in MEASURED_SECONDS:
        return MEASURED_SECONDS[path]
    floor = SLOW_FILE_SECONDS if any(t.get_closest_marker("slow") for t in tests) else 0.0
    return max(floor, SECONDS_PER_TEST * len(tests))


def pytest_collection_modifyitems(items):
    """Test files in the order the workers should start them: longest first (estimated_seconds). pytest-xdist
    hands out whole files in collection order (pyproject.toml turns its own reordering, by test count alone,
    off): a long file started last leaves one core working alone at the end (the seed examples, 130 s, did;
    so did the whole corpus in one file)."""
    by_file: dict[str, list] = {}
    for item in items:
        by_file.setdefault(item.nodeid.split("::")[0], []).append(item)
    order = sorted(by_file.items(), key=lambda entry: -estimated_seconds(*entry))
    items[:] = [item for _, tests in order for item in tests]


def require_traces() -> Path:
    """The shared traces folder: skipped where absent, a failure under CI=true (SPEC §10)."""
    if not TRACES.is_dir():
        if ON_CI:
            pytest.fail(f"CI=true but the shared traces are missing at {TRACES}")
        pytest.skip(f"shared traces not found at {TRACES}")
    return TRACES


def trace_files(root: Path | None = None) -> list[Path]:
    """Every trace file under `root` (the traces folder), at any depth, in a stable order: a file dropped in
    is one more; a job's ranks are traces too. Empty where the folder is absent."""
    root = TRACES if root is None else root
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*") if p.name.endswith(TRACE_SUFFIXES) and p.is_file())


def job_folders(root: Path | None = None) -> list[Path]:
    """Every multi-rank job under the traces folder: each folder inside `multirank/` (its traces are the
    ranks of one job)."""
    jobs = (TRACES if root is None else root) / "multirank"
    return sorted(p for p in jobs.iterdir() if p.is_dir() and trace_files(p)) if jobs.is_dir() else []


def trace_id(path: Path) -> str:
    """A trace's test id: its path under the traces folder."""
    return path.relative_to(TRACES).as_posix() if path.is_relative_to(TRACES) else path.name


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
def trace(traces_dir, private_cache):
    """A shared trace by name; the test's cache holds its analysis unless it is marked `cold_cache`
    (private_cache)."""

    def named(name: str) -> Path:
        path = traces_dir / (name if name.endswith(TRACE_SUFFIXES) else f"{name}.json.gz")
        if not path.is_file():
            pytest.fail(f"missing shared trace {path}")
        if trace_analyses.CURRENT is not None and private_cache.resolve() in trace_analyses.CURRENT.caches:
            trace_analyses.CURRENT.provide(path, private_cache)
        return path

    return named


@pytest.fixture(scope="session")
def analysed_traces(tmp_path_factory) -> AnalysedTraces:
    """This worker's analyses of the traces, made as tests ask for them (tests/trace_analyses.py), in a cache
    every worker of the session shares (beside the workers' own temporary folders): a trace is analysed once."""
    own = tmp_path_factory.mktemp("analysed-traces")
    shared = None
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the workers' folders are popen-gw0, popen-gw1… in the session's
        shared = tmp_path_factory.getbasetemp().parent / "analysed-traces-shared"
        shared.mkdir(exist_ok=True)
    analysed = AnalysedTraces(own, TRACES, run_cli_in_process, shared)
    trace_analyses.CURRENT = analysed
    # what the worker holds by now (the collected tests, the readers' imports) lives until it exits: frozen,
    # the collector's full passes stop rescanning it (they took ~2 % of the in-process readers' test time)
    gc.freeze()
    return analysed


@pytest.fixture(scope="session")
def reader_cache_env(analysed_traces, tmp_path_factory) -> dict:
    """The environment of a reader cache the compare, what-if and gate tests share across their files
    (they read the same traces and their trials again and again); it takes the traces' analyses on demand."""
    return {"XDG_CACHE_HOME": str(analysed_traces.seeded(tmp_path_factory.mktemp("compare-what-if-cache")))}


@pytest.fixture(autouse=True)
def private_cache(request, tmp_path_factory, monkeypatch):
    """Every test gets its own reader cache, so nothing leaks into ~/.cache and no test sees another's
    derived files: only what AnalysedTraces shares (the analyses of the traces it reads, the remembered
    entries)."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    if request.node.get_closest_marker("cold_cache") is not None:
        yield cache
        return
    analysed = request.getfixturevalue("analysed_traces")
    yield analysed.seeded(cache)
    analysed.release(cache)


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
        "launches",
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
    if args and args[0] in IN_PROCESS_COMMANDS and trace_analyses.CURRENT is not None:
        trace_analyses.CURRENT.provide_for(args, cwd, env)
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
