"""`libreyolo profile query` harms nothing the user has (issue #10, part A): the user's SQL can write
nowhere (not even through EXPLAIN ANALYZE, which runs the statement it wraps), read no file but the
profiles, runs under a time limit, stops on Ctrl-C with exit 130, and a FIFO under the roots is refused
instead of blocking forever. Every attack runs against real profile directories (made from a real GPU
trace by `libreyolo profile import`) and against a real reader-cache entry; every file under them is
hashed before and after."""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import cli_json, default_sigint, require_traces, run_cli, signal_state

TRACE = "h100_vit_image_classifier.json.gz"  # small real GPU trace: profiles with kernels, ops, phases, steps
ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
IDENTITY = "profile_id, profile, kind, created, device_type, device_name, model_family, model_size, batch, imgsz"
FORGED_ROWS = f"SELECT * EXCLUDE ({IDENTITY}) REPLACE ('forged' AS name) FROM kernels"


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """One profile directory made the way a user makes one; each test works on its own copy."""
    traces = require_traces()
    project = tmp_path_factory.mktemp("template") / "runs"
    result = run_cli("import", str(traces / TRACE), "--project", str(project))
    assert result.returncode == 0, result.stderr
    return project


@pytest.fixture
def root(template, tmp_path) -> Path:
    copy = tmp_path / "runs"
    shutil.copytree(template, copy)
    return copy


@pytest.fixture
def cwd(tmp_path) -> Path:
    """An empty working directory: nothing may appear in it."""
    work = tmp_path / "cwd"
    work.mkdir()
    return work


def snapshot(*directories: Path) -> dict[str, str]:
    """sha256 of every file under the directories, by path (a new, removed or changed file shows)."""
    out = {}
    for directory in directories:
        for path in sorted(directory.rglob("*")):
            if path.is_file() or path.is_symlink():
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "link"
    return out


def sidecar_attacks(sidecar: Path, generation: str) -> list[str]:
    """Ways to overwrite, truncate or forge one profile's kernels sidecar from the SQL of `query`."""
    # USE_TMP_FILE false: DuckDB writes the file in place (its default stages a tmp_ file beside it)
    forge_footer = f"USE_TMP_FILE false, KV_METADATA {{'libreyolo_profile.generation': '{generation}'}}"
    return [
        # truncate: a 2-byte CSV written straight over the parquet file
        f"EXPLAIN ANALYZE COPY (SELECT 1) TO '{sidecar}' (FORMAT csv, USE_TMP_FILE false)",
        # overwrite with forged rows
        f"EXPLAIN ANALYZE COPY ({FORGED_ROWS}) TO '{sidecar}' (FORMAT parquet, USE_TMP_FILE false)",
        # forged rows with the generation footer forged too, so the profile still looks consistent
        f"EXPLAIN ANALYZE COPY ({FORGED_ROWS}) TO '{sidecar}' (FORMAT parquet, {forge_footer})",
        f"EXPLAIN (ANALYZE, FORMAT json) COPY ({FORGED_ROWS}) TO '{sidecar}' (FORMAT parquet, {forge_footer})",
        f"EXPLAIN (ANALYZE true) COPY (SELECT 1) TO '{sidecar}' (FORMAT csv, USE_TMP_FILE false)",
        f"/* a comment first */ explain analyse COPY (SELECT 1) TO '{sidecar}' (FORMAT csv, USE_TMP_FILE false)",
        f"EXPLAIN COPY (SELECT 1) TO '{sidecar}' (FORMAT csv)",
        f"COPY ({FORGED_ROWS}) TO '{sidecar}' (FORMAT parquet, {forge_footer})",
        f"COPY (WITH c AS ({FORGED_ROWS}) SELECT * FROM c) TO '{sidecar}' (FORMAT parquet)",
        f"WITH c AS (SELECT 1) COPY c TO '{sidecar}'",
        f"EXPLAIN ANALYZE EXPLAIN ANALYZE COPY (SELECT 1) TO '{sidecar}' (FORMAT csv)",
        f"SELECT * FROM query('COPY (SELECT 1) TO ''{sidecar}'' (FORMAT csv)')",
    ]


def other_attacks(scratch: Path, profile_dir: Path) -> list[str]:
    """Anything else that writes a file, changes a setting, or reads a file that is not a profile."""
    return [
        "CREATE TABLE t AS SELECT 1",
        "EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1",
        f"ATTACH '{scratch / 'x.duckdb'}' AS x",
        f"EXPLAIN ANALYZE ATTACH '{scratch / 'x.duckdb'}' AS x",
        f"EXPLAIN ANALYZE EXPORT DATABASE '{scratch / 'export'}'",
        "INSTALL httpfs",
        "EXPLAIN ANALYZE INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "EXPLAIN ANALYZE SET enable_external_access = true",
        f"SET profiling_output = '{scratch / 'profile.txt'}'",
        "PRAGMA enable_profiling",
        f"SET temp_directory = '{scratch}'",
        "DROP VIEW kernels",
        "EXPLAIN ANALYZE DROP VIEW kernels",
        "SELECT * FROM read_text('/etc/passwd')",
        "SELECT * FROM read_blob('/etc/passwd')",
        "SELECT * FROM glob('/*')",
        "EXPLAIN ANALYZE SELECT * FROM read_text('/etc/passwd')",
        f"SELECT * FROM read_text('{profile_dir / 'profile.json'}')",
        f"SELECT * FROM read_parquet('{profile_dir / 'kernels.parquet'}')",
        f"SELECT * FROM parquet_kv_metadata('{profile_dir / 'kernels.parquet'}')",
    ]


def refused(sql: str, roots: list[Path]) -> str:
    """query.print_query as the CLI calls it: it must raise the one-line exit-2 error, having printed nothing."""
    from libreyolo_profile.errors import ProfileError
    from libreyolo_profile.readers import query

    try:
        query.print_query(sql, roots, True)
    except ProfileError as exc:
        assert exc.exit_code == 2, (sql, exc.message)
        assert "\n" not in exc.message, exc.message
        return exc.message
    pytest.fail(f"ran without error: {sql}")


def _generation(profile_dir: Path) -> str:
    return json.loads((profile_dir / "profile.json").read_text())["generation"]


def _kernel_names(roots: list[Path], cwd: Path) -> set[str]:
    return {r["name"] for r in cli_json("query", "SELECT DISTINCT name FROM kernels", *map(str, roots), cwd=cwd)}


def test_explain_analyze_copy_cannot_touch_a_sidecar(root, cwd):
    """The attack as reported, through the real CLI: it exited 0 and truncated kernels.parquet."""
    profile_dir = root / "infer"
    sidecar = profile_dir / "kernels.parquet"
    before = snapshot(root, cwd)
    result = run_cli(
        "query",
        f"EXPLAIN ANALYZE COPY (SELECT 1) TO '{sidecar}' (FORMAT csv, USE_TMP_FILE false)",
        str(root),
        cwd=cwd,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert "read-only" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert snapshot(root, cwd) == before


def test_no_sidecar_attack_writes_a_profile(root, cwd, monkeypatch, capsys):
    monkeypatch.chdir(cwd)
    profile_dir = root / "infer"
    names = _kernel_names([root], cwd)
    assert names and "forged" not in names
    before = snapshot(root, cwd)
    for sql in sidecar_attacks(profile_dir / "kernels.parquet", _generation(profile_dir)):
        refused(sql, [root])
        assert snapshot(root, cwd) == before, sql
    assert capsys.readouterr().out == ""
    assert _kernel_names([root], cwd) == names


@pytest.mark.cold_cache  # it counts the entries a read leaves in the cache
def test_no_sidecar_attack_writes_a_cache_entry(trace, private_cache, cwd, monkeypatch, capsys):
    """A foreign trace read once leaves a converted profile in the reader cache; `query` over the cache
    must not be able to rewrite it either (a forged entry would be served to every later reader)."""
    monkeypatch.chdir(cwd)
    summary = run_cli("summary", str(trace(TRACE)), "--json", cwd=cwd)
    assert summary.returncode == 0, summary.stderr
    entries = sorted(p.parent for p in private_cache.rglob("kernels.parquet"))
    assert len(entries) == 1, entries
    entry = entries[0]
    names = _kernel_names([private_cache], cwd)
    before = snapshot(private_cache, cwd)
    for sql in sidecar_attacks(entry / "kernels.parquet", _generation(entry)):
        refused(sql, [private_cache])
        assert snapshot(private_cache, cwd) == before, sql
    assert capsys.readouterr().out == ""
    assert _kernel_names([private_cache], cwd) == names
    # and the cached entry still serves the same answer to a per-trace reader
    again = run_cli("summary", str(trace(TRACE)), "--json", cwd=cwd)
    assert again.returncode == 0 and json.loads(again.stdout) == json.loads(summary.stdout)


def test_no_other_write_setting_or_file_read(root, cwd, monkeypatch, capsys):
    monkeypatch.chdir(cwd)
    before = snapshot(root, cwd)
    home_duckdb = Path.home() / ".duckdb"
    had_home_duckdb = snapshot(home_duckdb) if home_duckdb.is_dir() else None
    for sql in other_attacks(cwd, root / "infer"):
        refused(sql, [root])
        assert snapshot(root, cwd) == before, sql
    assert capsys.readouterr().out == ""
    assert (snapshot(home_duckdb) if home_duckdb.is_dir() else None) == had_home_duckdb  # nothing installed
    # the views are all still there and answer as before
    rows = cli_json("query", "SELECT count(*) AS n FROM kernels", str(root), cwd=cwd)
    assert rows[0]["n"] == len(json.loads((root / "infer" / "profile.json").read_text())["tables"]["kernels"]["rows"])


def test_the_locked_connection_itself_can_write_nothing(root, cwd, monkeypatch):
    """The statement check aside, the connection the user's SQL runs on has no path it may open: every
    attack, executed on it directly, fails inside DuckDB, while the loaded tables still answer."""
    import duckdb

    from libreyolo_profile.readers import query
    from libreyolo_profile.store.crossrun.views import open_cross_run
    from libreyolo_profile.store.schema import TABLES

    monkeypatch.chdir(cwd)
    profile_dir = root / "infer"
    before = snapshot(root, cwd)
    con, _, files = open_cross_run([root])
    try:
        query.lock_down(con, files, TABLES)
        for sql in sidecar_attacks(profile_dir / "kernels.parquet", _generation(profile_dir)) + other_attacks(
            cwd, profile_dir
        ):
            try:
                con.execute(sql).fetchall()
            except duckdb.Error:
                pass
            else:  # only what stays in memory may run: a table of the session's own
                assert sql == "CREATE TABLE t AS SELECT 1", sql
            assert snapshot(root, cwd) == before, sql
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        con.close()
    tables = json.loads((profile_dir / "profile.json").read_text())["tables"]
    assert counts == {t: len(tables[t]["rows"]) for t in TABLES}


def test_explain_of_a_select_still_works(root, cwd):
    for sql in (
        "EXPLAIN SELECT count(*) FROM kernels",
        "EXPLAIN (FORMAT json) SELECT name FROM kernels",
        "EXPLAIN ANALYZE SELECT name, sum(ms_per_step) FROM kernels GROUP BY name",
        "EXPLAIN ANALYZE WITH k AS (SELECT * FROM kernels) SELECT count(*) FROM k JOIN profiles USING (profile_id)",
        "EXPLAIN ANALYZE (SELECT count(*) FROM steps) UNION ALL SELECT count(*) FROM ops",
    ):
        rows = cli_json("query", sql, str(root), cwd=cwd)
        assert rows and set(rows[0]) == {"explain_key", "explain_value"}, (sql, rows)
    plan = cli_json("query", "EXPLAIN (FORMAT json) SELECT name FROM kernels", str(root), cwd=cwd)
    assert isinstance(json.loads(plan[0]["explain_value"]), list)


def test_timeout_stops_an_endless_query(root, cwd):
    before = snapshot(root, cwd)
    started = time.monotonic()
    result = run_cli("query", ENDLESS, str(root), "--timeout", "1", cwd=cwd, timeout=60)
    elapsed = time.monotonic() - started
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "query exceeded --timeout 1 s" in lines[0], result.stderr
    assert result.stdout == ""
    assert elapsed < 15, elapsed  # one second of query plus process start, on a loaded machine
    assert snapshot(root, cwd) == before


def test_timeout_zero_means_none_and_bad_values_exit_2(root, cwd):
    rows = cli_json("query", "SELECT count(*) AS n FROM profiles", str(root), "--timeout", "0", cwd=cwd)
    assert rows == [{"n": 1}]
    for bad in ("-1", "soon", "nan", "inf"):
        result = run_cli("query", "SELECT 1", str(root), "--timeout", bad, cwd=cwd)
        assert result.returncode == 2, (bad, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


# The real CLI (cli.run_cli, what `libreyolo profile` runs) in a fresh process, with a watcher thread that
# announces on stderr the moment the query's worker thread exists, so SIGINT lands while DuckDB is busy.
_ANNOUNCING_CLI = """
import sys, threading, time
from libreyolo_profile.cli import run_cli
from libreyolo_profile.readers.query_worker import QUERY_THREAD

def announce():
    while not any(t.name == QUERY_THREAD for t in threading.enumerate()):
        time.sleep(0.01)
    sys.stderr.write("QUERY STARTED\\n")
    sys.stderr.flush()

threading.Thread(target=announce, daemon=True).start()
sys.exit(run_cli(sys.argv[1:], "libreyolo profile"))
"""


def _read_line(stream, deadline: float) -> str:
    ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
    return stream.readline() if ready else ""


def test_ctrl_c_interrupts_an_endless_recursive_query(root, cwd):
    before = snapshot(root, cwd)
    process = subprocess.Popen(
        [sys.executable, "-c", _ANNOUNCING_CLI, "query", ENDLESS, str(root)],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
        preexec_fn=default_sigint,
    )
    try:
        line = _read_line(process.stderr, time.monotonic() + 60)
        assert line == "QUERY STARTED\n", line
        interrupted_at = time.monotonic()
        state = signal_state(process.pid)  # the masks when the signal was sent, should it do nothing
        process.send_signal(signal.SIGINT)
        try:
            stdout, stderr = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"Ctrl-C did not stop the query in 30 s; its signal masks: {state}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert time.monotonic() - interrupted_at < 10
    assert process.returncode == 130, stderr
    assert stderr.strip().splitlines() == ["libreyolo profile: interrupted"], stderr
    assert stdout == ""
    assert snapshot(root, cwd) == before


def test_a_fifo_root_exits_2_at_once(tmp_path, cwd):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for command in (["query", "SELECT 1", str(fifo)], ["db", str(tmp_path / "out.duckdb"), str(fifo)]):
        result = run_cli(*command, cwd=cwd, timeout=30)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and str(fifo) in lines[0] and "FIFO" in lines[0], result.stderr
    assert not (tmp_path / "out.duckdb").exists()


def test_a_fifo_named_profile_json_exits_2_at_once(root, tmp_path, cwd):
    """A FIFO named profile.json, directly or through a link, is refused by its mode, never opened."""
    planted = root / "planted"
    planted.mkdir()
    os.mkfifo(planted / "profile.json")
    linked = tmp_path / "linked"
    (linked / "run").mkdir(parents=True)
    os.mkfifo(tmp_path / "elsewhere")
    (linked / "run" / "profile.json").symlink_to(tmp_path / "elsewhere")
    for target, where in ((root, planted / "profile.json"), (linked, linked / "run" / "profile.json")):
        for command in (["query", "SELECT 1", str(target)], ["db", str(tmp_path / "out.duckdb"), str(target)]):
            result = run_cli(*command, cwd=cwd, timeout=30)
            assert result.returncode == 2, result.stderr
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and str(where) in lines[0] and "FIFO" in lines[0], result.stderr


def test_a_fifo_sidecar_is_not_opened(root, cwd, private_cache):
    """A FIFO in place of a parquet sidecar: the profile's tables come from its profile.json instead
    (rebuilt into the cache), and the FIFO is left alone."""
    profile_dir = root / "infer"
    expected = len(json.loads((profile_dir / "profile.json").read_text())["tables"]["kernels"]["rows"])
    (profile_dir / "kernels.parquet").unlink()
    os.mkfifo(profile_dir / "kernels.parquet")
    rows = cli_json(
        "query",
        "SELECT count(*) AS n, any_value(p.sidecar_dir) AS dir FROM kernels JOIN profiles p USING (profile_id)",
        str(root),
        cwd=cwd,
        timeout=60,
    )
    assert rows[0]["n"] == expected and rows[0]["dir"].startswith(str(private_cache))
    assert (profile_dir / "kernels.parquet").is_fifo()
