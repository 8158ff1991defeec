"""Which sidecars `query` trusts and what it remembers (issue 22, items 12 and 14), through the real CLI
entry: a parquet file whose footer carries the right generation but other columns is not used (its
profile is rebuilt from profile.json, with a note), and a lone profile.json (no sidecars beside it) is
rebuilt into the cache once and remembered, not read and rebuilt again on every query."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.bad_inputs.make_bad_inputs import build
from tests.conftest import REPO, run_cli

# the real CLI entry, counting the profiles the index read the slow way (whole profile.json, sidecars
# checked or rebuilt): index._full_load
COUNTED = r"""
import sys
from libreyolo_profile.store.crossrun import index
calls = []
full_load = index._full_load
index._full_load = lambda item: calls.append(item) or full_load(item)
from libreyolo_profile.launcher import _run
code = _run(sys.argv[1:], "libreyolo-profile")
sys.stderr.write(f"SLOW_READS={len(calls)}\n")
sys.exit(code)
"""


def counted(*args: str, cache: Path) -> tuple[subprocess.CompletedProcess, int]:
    done = subprocess.run(
        [sys.executable, "-c", COUNTED, *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**__import__("os").environ, "XDG_CACHE_HOME": str(cache)},
    )
    slow = int(done.stderr.rsplit("SLOW_READS=", 1)[1].split()[0])
    return done, slow


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    work = tmp_path_factory.mktemp("sidecar-trust")
    build(work / "corpus")
    done = run_cli(
        "import",
        str(work / "corpus" / "clean.json"),
        "--project",
        str(work / "runs"),
        "--json",
        env={"XDG_CACHE_HOME": str(work / "cache")},
    )
    assert done.returncode == 0, done.stderr
    return work / "runs" / json.loads(done.stdout)["kind"]


def _kernel_rows(directory: Path) -> int:
    return pq.read_metadata(directory / "kernels.parquet").num_rows


def test_sidecar_with_the_generation_but_another_schema_is_not_trusted(base, tmp_path):
    root = tmp_path / "root"
    for name in ("good", "other_schema"):
        shutil.copytree(base, root / name)
    generation = json.loads((base / "profile.json").read_text())["generation"]
    planted = root / "other_schema" / "kernels.parquet"
    metadata = pq.read_schema(planted).metadata  # the same key-value metadata: the right generation
    pq.write_table(pa.table({"unexpected": [1, 2, 3]}).replace_schema_metadata(metadata), planted)
    assert generation.encode() in planted.read_bytes()
    done, _ = counted(
        "query",
        "SELECT profile, count(*) AS n FROM kernels GROUP BY profile ORDER BY profile",
        str(root),
        "--json",
        cache=tmp_path / "cache",
    )
    assert done.returncode == 0, done.stderr  # the old code: every FROM kernels under the root failed
    rows = {Path(r["profile"]).name: r["n"] for r in json.loads(done.stdout)}
    assert rows == {"good": _kernel_rows(base), "other_schema": _kernel_rows(base)}  # rebuilt from profile.json
    assert f"{planted} holds other columns than the kernels table: not used" in done.stderr
    single = run_cli("kernels", str(root / "other_schema"), "--json", env={"XDG_CACHE_HOME": str(tmp_path / "c2")})
    assert single.returncode == 0 and "holds other columns than the kernels table" in single.stderr
    assert planted.read_bytes().count(b"unexpected") >= 1  # the user's file is left as it was


def test_same_columns_of_another_type_are_not_trusted(base, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(base, root / "retyped")
    planted = root / "retyped" / "kernels.parquet"
    table = pq.read_table(planted)
    calls = table.schema.get_field_index("calls")
    pq.write_table(table.set_column(calls, "calls", table["calls"].cast(pa.float64())), planted)
    done, slow = counted(
        "query", "SELECT typeof(calls) AS t FROM kernels LIMIT 1", str(root), "--json", cache=tmp_path / "cache"
    )
    assert done.returncode == 0 and json.loads(done.stdout) == [{"t": "BIGINT"}], done.stderr
    assert slow == 1


def test_lone_profile_json_is_rebuilt_once_and_remembered(base, tmp_path):
    root = tmp_path / "root"
    for i in range(3):
        (root / f"lone{i}").mkdir(parents=True)
        doc = json.loads((base / "profile.json").read_text())
        doc["generation"] = f"{doc['generation'][:-1]}{i}"
        (root / f"lone{i}" / "profile.json").write_text(json.dumps(doc))
    cache = tmp_path / "cache"
    sql = "SELECT profile, sidecar_dir, step_ms FROM profiles ORDER BY profile"
    first, slow_first = counted("query", sql, str(root), "--json", cache=cache)
    second, slow_second = counted("query", sql, str(root), "--json", cache=cache)
    assert first.returncode == second.returncode == 0, (first.stderr, second.stderr)
    assert slow_first == 3 and slow_second == 0  # the old code read and checked all three every time
    assert json.loads(second.stdout) == json.loads(first.stdout)
    assert all(str(cache) in row["sidecar_dir"] for row in json.loads(first.stdout))
    kernels, slow = counted("query", "SELECT count(*) AS n FROM kernels", str(root), "--json", cache=cache)
    assert slow == 0 and json.loads(kernels.stdout) == [{"n": 3 * _kernel_rows(base)}]

    # a rewritten profile.json is read again, and only that one
    edited = json.loads((root / "lone1" / "profile.json").read_text())
    edited["metrics"]["step_ms"] = 123.5
    (root / "lone1" / "profile.json").write_text(json.dumps(edited))
    third, slow_third = counted("query", sql, str(root), "--json", cache=cache)
    assert slow_third == 1 and json.loads(third.stdout)[1]["step_ms"] == 123.5
    # cache entries removed: rebuilt, never read from where they were
    shutil.rmtree(cache / "libreyolo-profile" / "sidecars")
    fourth, slow_fourth = counted("query", "SELECT count(*) AS n FROM kernels", str(root), "--json", cache=cache)
    assert fourth.returncode == 0 and slow_fourth == 3, fourth.stderr
    assert json.loads(fourth.stdout) == [{"n": 3 * _kernel_rows(base)}]
