"""Bulk import: `libreyolo profile import TRACE… --jobs N` (local processes) and `--scheduler ADDRESS`
(a Dask distributed cluster: a LocalCluster of two worker processes started here). Every input is
imported or reported failed on its own line, the others still go in, the exit code is 1 when any failed,
and nothing is half-written (no directory for a failed input, no staging left behind). The profiles are
the same as one-by-one imports give.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import TRACES, cli_json, require_module, require_traces, run_cli

GOOD = ("mi250_rocm_minitoy", "cpu_only_rank34", "h100_vit_image_classifier")
SAME = (
    "SELECT regexp_extract(profile, '([^/]+)/[^/]+$', 1) AS input, kind, device_type, step_ms, "
    "launches_per_step, kernels_per_step, gpu_util_pct FROM profiles ORDER BY input"
)


def _inputs(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """The good traces plus three bad inputs: (all inputs in order, bad input -> what its error says)."""
    require_traces()
    truncated = tmp_path / "truncated.json.gz"
    truncated.write_bytes((TRACES / f"{GOOD[0]}.json.gz").read_bytes()[:300])  # cut off mid-stream
    not_a_trace = tmp_path / "notes.json"
    not_a_trace.write_text(json.dumps({"hello": "world"}))
    bad = {
        str(truncated): "gzip stream is damaged",
        str(tmp_path / "missing.json.gz"): "no such file",
        str(not_a_trace): "without trace events",
    }
    inputs = [
        str(TRACES / f"{GOOD[0]}.json.gz"),
        *list(bad)[:2],
        *[str(TRACES / f"{n}.json.gz") for n in GOOD[1:]],
        list(bad)[2],
    ]
    return inputs, bad


def _check(result, inputs, bad, project: Path) -> None:
    assert result.returncode == 1, result.stderr  # documented: 1 when any input failed
    doc = json.loads(result.stdout)
    assert (doc["imported"], doc["failed"]) == (len(GOOD), len(bad))
    assert [r["trace"] for r in doc["imports"]] == inputs  # one entry per input, in the order given
    for entry in doc["imports"]:
        if entry["trace"] in bad:
            assert not entry["ok"] and entry["exit_code"] in (1, 2)
            assert bad[entry["trace"]] in entry["error"], entry
            assert not (project / Path(entry["trace"]).name.split(".")[0]).exists()  # nothing written for it
        else:
            assert entry["ok"] and Path(entry["profile"]).is_file()
            assert Path(entry["directory"]).parent.name == Path(entry["trace"]).name.removesuffix(".json.gz")
    leftovers = [p for p in project.rglob(".*") if ".tmp-" in p.name or ".old-" in p.name]
    assert leftovers == []  # no staging directory survives, failed or not


@pytest.fixture(scope="module")
def serial(tmp_path_factory) -> list[dict]:
    """The good traces imported one by one, the way import always worked, and SAME over them: what both the
    --jobs and the --scheduler imports must equal (imported once for the two)."""
    require_traces()
    project = tmp_path_factory.mktemp("serial")
    for name in GOOD:
        assert run_cli("import", str(TRACES / f"{name}.json.gz"), "--project", str(project / name)).returncode == 0
    return cli_json("query", SAME, str(project))


def test_jobs_imports_in_parallel_reports_each_failure_and_matches_serial(tmp_path, serial):
    inputs, bad = _inputs(tmp_path)
    parallel = tmp_path / "parallel"
    result = run_cli("import", *inputs, "--project", str(parallel), "--jobs", "2", "--json")
    _check(result, inputs, bad, parallel)
    assert cli_json("query", SAME, str(parallel)) == serial


def test_text_output_names_each_failure(tmp_path):
    inputs, bad = _inputs(tmp_path)
    result = run_cli("import", *inputs, "--project", str(tmp_path / "p"), "--jobs", "2")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    for path in bad:
        assert any(line.startswith(f"failed {path}: ") for line in lines), result.stdout
    assert lines[-1] == f"{len(GOOD)} imported, {len(bad)} failed"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--jobs", "0"], "--jobs takes 1 or more"),
        (["--jobs", "2", "--scheduler", "tcp://127.0.0.1:1"], "not both"),
    ],
)
def test_bad_bulk_options_are_usage_errors(tmp_path, args, message):
    result = run_cli("import", str(tmp_path / "x.json"), "--project", str(tmp_path), *args)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def dask_cluster():
    LocalCluster = require_module("distributed", "dask").LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None)
    try:
        yield cluster
    finally:
        cluster.close()


def test_scheduler_imports_on_a_dask_cluster(tmp_path, dask_cluster, serial):
    inputs, bad = _inputs(tmp_path)
    project = tmp_path / "dask"
    result = run_cli(
        "import", *inputs, "--project", str(project), "--scheduler", dask_cluster.scheduler_address, "--json"
    )
    _check(result, inputs, bad, project)
    assert cli_json("query", SAME, str(project)) == serial


def test_unreachable_scheduler_is_a_usage_error(tmp_path):
    pytest.importorskip("distributed")
    # a refused connection is retried for min(10 s, LIBREYOLO_PROFILE_DASK_WAIT_S), then refused in one line
    started = time.monotonic()
    result = run_cli(
        "import",
        str(TRACES / f"{GOOD[0]}.json.gz"),
        "--project",
        str(tmp_path),
        "--scheduler",
        "tcp://127.0.0.1:9",
        env={"LIBREYOLO_PROFILE_DASK_WAIT_S": "1"},
    )
    assert result.returncode == 2 and "cannot reach the Dask scheduler" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert time.monotonic() - started < 9, "the shorter LIBREYOLO_PROFILE_DASK_WAIT_S did not bound the connection"
