"""A foreign trace is ingested once: the next reader call answers from the cache without parsing,
a changed file is ingested again, a damaged cache entry is rebuilt, and nothing is ever written
beside the input (it may sit in a read-only directory)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bad_inputs.make_bad_inputs import clean_events, kineto_text

# what these tests check is the cache itself: it starts empty
pytestmark = pytest.mark.cold_cache

# the real CLI entry, with parse_trace wrapped by a counter that is reported on stderr
COUNTING = r"""
import sys
import libreyolo_profile.store.ingest.analyse as analyse
calls = []
original = analyse.parse_trace
def counted(*args, **kwargs):
    calls.append(args[0])
    return original(*args, **kwargs)
analyse.parse_trace = counted
from libreyolo_profile.launcher import _run
code = _run(sys.argv[1:], "libreyolo-profile")
sys.stderr.write(f"PARSES={len(calls)}\n")
sys.exit(code)
"""


def run_counted(*args: str, cache: Path) -> tuple[int, str, int]:
    proc = subprocess.run(
        [sys.executable, "-c", COUNTING, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, XDG_CACHE_HOME=str(cache)),
    )
    parses = int(re.search(r"PARSES=(\d+)", proc.stderr).group(1))
    return proc.returncode, proc.stdout, parses


def snapshot(directory: Path) -> dict:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in directory.iterdir()}


@pytest.fixture
def read_only_trace(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    trace = folder / "trace.json"
    trace.write_bytes(kineto_text(clean_events()))
    trace.chmod(0o444)
    folder.chmod(0o555)
    yield trace
    folder.chmod(0o755)
    trace.chmod(0o644)


def test_second_call_does_not_parse(read_only_trace, tmp_path):
    cache = tmp_path / "cache"
    before = snapshot(read_only_trace.parent)
    rc, first, parses = run_counted("summary", str(read_only_trace), "--json", cache=cache)
    assert rc == 0 and parses == 1
    rc, second, parses = run_counted("summary", str(read_only_trace), "--json", cache=cache)
    assert rc == 0 and parses == 0, "the cached ingest was parsed again"
    assert json.loads(second) == json.loads(first)
    for reader in (["kernels", str(read_only_trace), "--json"], ["get", str(read_only_trace), "step_ms"]):
        rc, _, parses = run_counted(*reader, cache=cache)
        assert rc == 0 and parses == 0, reader
    assert snapshot(read_only_trace.parent) == before, "something was written beside the input"
    assert any((cache / "libreyolo-profile" / "traces").iterdir())


# the fast `get` path (launcher → loader → cache hit), reporting which heavy modules it imported
IMPORTS_PROBE = r"""
import sys
from libreyolo_profile.launcher import _run

code = _run(sys.argv[1:], "libreyolo-profile")
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("pyarrow", "numpy", "duckdb", "msgspec", "typer")
               or m.startswith(("libreyolo_profile.store.decode", "libreyolo_profile.store.ingest")))
sys.stderr.write("HEAVY=" + ",".join(heavy) + "\n")
sys.exit(code)
"""


def heavy_imports(*args: str, cache: Path) -> tuple[str, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", IMPORTS_PROBE, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, XDG_CACHE_HOME=str(cache)),
    )
    assert proc.returncode == 0, proc.stderr
    listed = re.search(r"HEAVY=(.*)", proc.stderr).group(1)
    return proc.stdout, [m for m in listed.split(",") if m]


def test_cached_trace_is_read_without_the_ingest_stack(trace, tmp_path):
    """Issue #11: `get` on a trace read before answers from the cached profile.json and imports
    nothing of the decoder, ingest, pyarrow, numpy or DuckDB (its cold start is the product)."""
    cache = tmp_path / "cache"
    path = str(trace("cpu_only_rank34"))
    first, ingest = heavy_imports("get", path, "steps", cache=cache)
    # the probe sees the stack when it is used: the first read parses the trace
    assert "libreyolo_profile.store.decode.parse" in ingest or any(m.startswith("pyarrow") for m in ingest), ingest
    second, cached = heavy_imports("get", path, "steps", cache=cache)
    assert cached == [] and second == first


def test_modified_file_is_ingested_again(read_only_trace, tmp_path):
    cache = tmp_path / "cache"
    rc, first, parses = run_counted("get", str(read_only_trace), "steps", "--json", cache=cache)
    assert rc == 0 and parses == 1 and json.loads(first)["value"] == 12
    read_only_trace.parent.chmod(0o755)
    read_only_trace.chmod(0o644)
    read_only_trace.write_bytes(kineto_text(clean_events(steps=7)))
    rc, second, parses = run_counted("get", str(read_only_trace), "steps", "--json", cache=cache)
    assert rc == 0 and parses == 1
    assert json.loads(second)["value"] == 7


def test_damaged_cache_entry_is_rebuilt(read_only_trace, tmp_path):
    cache = tmp_path / "cache"
    rc, first, _ = run_counted("summary", str(read_only_trace), "--json", cache=cache)
    assert rc == 0
    for cached in (cache / "libreyolo-profile" / "traces").rglob("profile.json"):
        cached.write_text('{"schema": "libreyolo-profile", "trunc')
    rc, again, parses = run_counted("summary", str(read_only_trace), "--json", cache=cache)
    assert rc == 0 and parses == 1
    assert json.loads(again) == json.loads(first)


def test_sweep_removes_only_dead_processes_leftovers(read_only_trace, tmp_path):
    """What a killed reader left under <cache>/work goes on the next run; a live process's work
    directory, and anything not named like ours, stay."""
    from libreyolo_profile.store.workdir import host_tag

    cache = tmp_path / "cache"
    work = cache / "libreyolo-profile" / "work"
    work.mkdir(parents=True)
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(finished.stdout)  # exited and reaped: no such process (short of pid reuse)
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        dead = work / f"{dead_pid}-ingest-{host_tag()}-abc123"
        alive = work / f"{live.pid}-ingest-{host_tag()}-def456"
        foreign = work / "notes-of-the-user"
        for directory in (dead, alive, foreign):
            directory.mkdir()
            (directory / "events.arrow").write_bytes(b"x" * 1000)
        rc, _, _ = run_counted("get", str(read_only_trace), "steps", cache=cache)
        assert rc == 0
        assert not dead.exists(), "a dead process's leftover was not swept"
        assert alive.exists() and foreign.exists(), "the sweep removed what is not a dead process's"
        assert sorted(p.name for p in work.iterdir()) == sorted([alive.name, foreign.name]), (
            "the reader left its own work directories behind"
        )
    finally:
        live.stdin.close()
        live.wait(timeout=30)


def test_analysis_version_covers_the_sql_that_defines_the_metrics():
    """The cache key must change when a metric's SQL changes: the SQL it hashes is the SQL the product runs
    (an editable install maps libreyolo_profile.sql onto the top-level sql/, not under the package)."""
    from libreyolo_profile.sqlfiles import sql_directory, sql_text

    metrics = sql_directory() / "metrics.sql"
    assert metrics.is_file()
    assert metrics.read_text(encoding="utf-8") == sql_text("metrics.sql")
