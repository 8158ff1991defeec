"""`libreyolo profile query` and `db` as a user runs them (the real CLI in fresh processes) over real
profile directories of different kinds: two training profiles and one inference profile made from the
real GPU traces, and a LibreYOLO built-in profile imported with `libreyolo profile import`."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from conftest import REPO, cli_json, require_traces, run_cli

BUILTIN = REPO.parent / "shared" / "libreyolo_builtin_profiles"
TOP_KERNELS = (
    "SELECT name, count(DISTINCT profile) AS runs, sum(ms_per_step) AS ms FROM kernels "
    "GROUP BY name ORDER BY ms DESC, name LIMIT 5"
)
OVER_TIME = "SELECT created, profile, kind, throughput_img_s, step_ms FROM profiles ORDER BY created"
# when each profile was measured, as a measurement would record it (the trace-made ones are written now)
CREATED = {"w0": "2026-01-01T10:00:00+00:00", "h100": "2026-01-02T10:00:00+00:00", "w4": "2026-01-03T10:00:00+00:00"}


@pytest.fixture(scope="module")
def root(tmp_path_factory, analysed_traces):
    from libreyolo_profile.store.disk.writer import write_directory

    traces = require_traces()
    root = tmp_path_factory.mktemp("cross-run") / "runs"
    for key, name in (
        ("w0", "v100_resnet50_workers0"),
        ("h100", "h100_vit_image_classifier"),
        ("w4", "v100_resnet50_workers4"),
    ):
        doc = analysed_traces.document(traces / f"{name}.json.gz")
        doc["created"] = CREATED[key]
        write_directory(doc, root / key / doc["kind"])
    if not BUILTIN.is_dir():
        pytest.fail(f"missing {BUILTIN}")
    result = run_cli("import", str(BUILTIN / "run_profile_repeat.json"), "--project", str(root / "old"))
    assert result.returncode == 0, result.stderr
    return root


def _docs(root: Path) -> dict[str, dict]:
    return {str(p.parent): json.loads(p.read_text()) for p in sorted(root.rglob("profile.json"))}


def test_finds_every_profile_of_every_kind(root):
    rows = cli_json("query", "SELECT profile, kind, device_type, source_type FROM profiles ORDER BY profile", str(root))
    docs = _docs(root)
    assert [r["profile"] for r in rows] == sorted(docs)
    assert {(r["kind"], r["source_type"]) for r in rows} == {
        ("train", "trace"),
        ("infer", "trace"),
        ("train", "libreyolo-builtin"),
    }
    for r in rows:
        assert r["kind"] == docs[r["profile"]]["kind"] and r["device_type"] == docs[r["profile"]]["device_type"]


def test_top_kernels_across_all_runs(root):
    rows = cli_json("query", TOP_KERNELS, str(root))
    # the same answer computed without DuckDB, from the tables embedded in each profile.json
    totals, runs = {}, {}
    for directory, doc in _docs(root).items():
        table = doc["tables"]["kernels"]
        name_at, ms_at = table["columns"].index("name"), table["columns"].index("ms_per_step")
        for row in table["rows"]:
            totals[row[name_at]] = totals.get(row[name_at], 0.0) + row[ms_at]
            runs.setdefault(row[name_at], set()).add(directory)
    expected = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    assert [r["name"] for r in rows] == [name for name, _ in expected]
    for r, (name, ms) in zip(rows, expected, strict=True):
        assert r["ms"] == pytest.approx(ms, rel=1e-9) and r["runs"] == len(runs[name])
    assert any(r["runs"] == 2 for r in rows)  # the two V100 runs share their heaviest kernels


def test_throughput_per_run_over_time(root):
    rows = cli_json("query", OVER_TIME, str(root))
    docs = _docs(root)
    assert len(rows) == len(docs) == 4
    assert [r["created"] for r in rows] == sorted(r["created"] for r in rows)
    assert [r["profile"] for r in rows[:3]] == [
        str(root / k / docs_kind) for k, docs_kind in (("w0", "train"), ("h100", "infer"), ("w4", "train"))
    ]
    for r in rows:
        metrics = docs[r["profile"]]["metrics"]
        assert r["throughput_img_s"] == metrics["throughput_img_s"] and r["step_ms"] == metrics["step_ms"]
    # the DataLoader-worker change shows between the two V100 runs
    assert rows[2]["throughput_img_s"] > rows[0]["throughput_img_s"]


def test_identity_is_on_every_table_row(root):
    sql = " UNION ALL ".join(
        f"SELECT '{table}' AS tab, t.profile, t.kind, t.created, t.device_type, p.profile AS joined, count(*) AS n "
        f"FROM {table} t JOIN profiles p USING (profile_id) GROUP BY ALL"
        for table in ("kernels", "ops", "phases", "steps")
    )
    rows = cli_json("query", f"SELECT * FROM ({sql}) ORDER BY ALL", str(root))
    docs = _docs(root)
    assert {r["tab"] for r in rows} == {"kernels", "ops", "phases", "steps"}
    for r in rows:
        assert r["profile"] == r["joined"] and r["kind"] == docs[r["profile"]]["kind"]
        assert r["n"] == len(docs[r["profile"]]["tables"][r["tab"]]["rows"])


def test_table_output_and_default_root(root, tmp_path):
    shutil.copytree(root, tmp_path / "runs" / "profile")
    result = run_cli(
        "query",
        "SELECT kind, count(*) AS profiles, '[/x] [bold]' AS markup FROM profiles GROUP BY kind ORDER BY kind",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "kind" in result.stdout and "infer" in result.stdout and "train" in result.stdout
    assert "[/x] [bold]" in result.stdout  # printed as text, never parsed as rich markup


def test_db_round_trip_and_refresh(root, tmp_path):
    out = tmp_path / "all.duckdb"
    summary = cli_json("db", str(out), str(root))
    assert summary["profiles"] == 4
    queried = cli_json("query", "SELECT profile, name, phase, ms_per_step FROM kernels ORDER BY ALL", str(root))
    with duckdb.connect(str(out), read_only=True) as con:
        tables = {r[0] for r in con.execute("SHOW TABLES").fetchall()}
        stored = con.execute("SELECT profile, name, phase, ms_per_step FROM kernels ORDER BY ALL").fetchall()
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in summary["rows"]}
    assert {"profiles", "kernels", "ops", "phases", "steps", "about"} <= tables
    assert [tuple(r.values()) for r in queried] == stored
    assert counts == summary["rows"]
    # it works alone: the parquet files are not needed to open it
    moved = tmp_path / "copy"
    shutil.copytree(root, moved)
    cli_json("db", str(out), str(moved))
    shutil.rmtree(moved)
    with duckdb.connect(str(out), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM kernels").fetchone()[0] == counts["kernels"]
    # re-running refreshes it in place, leaving no temporary file
    shutil.copytree(root / "h100", tmp_path / "more" / "h100")
    refreshed = cli_json("db", str(out), str(root), str(tmp_path / "more"))
    assert refreshed["profiles"] == 5 and refreshed["rows"]["kernels"] > counts["kernels"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["all.duckdb", "more"]


def _refused(sql: str, root: Path) -> str:
    """query.print_query as the CLI calls it; the message of the exit-2 error it raises."""
    from libreyolo_profile.errors import ProfileError
    from libreyolo_profile.readers import query

    with pytest.raises(ProfileError) as caught:
        query.print_query(sql, [root], True)
    assert caught.value.exit_code == 2, caught.value.message
    return caught.value.message


def test_bad_sql_exits_2_with_one_line(root):
    for sql, expected in (("SELEC name FROM kernels", "syntax error"), ("SELECT * FROM nope", "nope")):
        result = run_cli("query", sql, str(root))
        assert result.returncode == 2, (sql, result.stderr)
        assert expected in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert result.stdout == "" and "Traceback" not in result.stderr
    for sql, expected in (
        ("SELECT no_such_column FROM kernels", "no_such_column"),
        ("", "empty SQL"),
        ("SELECT 1 +", "syntax error"),
    ):
        message = _refused(sql, root)
        assert expected in message and "\n" not in message


def test_write_attempts_are_refused(root, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    sidecar = root / "w0" / "train" / "kernels.parquet"
    before = hashlib.sha256(sidecar.read_bytes()).hexdigest()
    result = run_cli("query", f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}'", str(root), cwd=tmp_path)
    assert result.returncode == 2 and "read-only" in result.stderr
    attempts = [
        f"COPY kernels TO '{sidecar}' (FORMAT parquet)",
        "SELECT * FROM read_csv('/etc/passwd')",
        "CREATE TABLE t AS SELECT 1",
        f"ATTACH '{tmp_path / 'x.duckdb'}' AS x",
        "INSTALL httpfs",
        "SET enable_external_access = true",
        "DROP VIEW kernels",
        "SELECT 1; COPY (SELECT 1) TO 'x.csv'",
        f"EXPORT DATABASE '{tmp_path / 'exp'}'",
        f"SELECT * FROM read_text('{sidecar.parent / 'profile.json'}')",
        f"SELECT * FROM read_parquet('{sidecar}') WHERE 1 = 0 UNION ALL SELECT * FROM read_csv('x.csv')",
    ]
    for sql in attempts:
        _refused(sql, root)
    assert capsys.readouterr().out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert hashlib.sha256(sidecar.read_bytes()).hexdigest() == before


def test_no_profile_under_the_roots_exits_2(tmp_path):
    (tmp_path / "empty").mkdir()
    result = run_cli("query", "SELECT 1", str(tmp_path / "empty"))
    assert result.returncode == 2 and str(tmp_path / "empty") in result.stderr
    result = run_cli("query", "SELECT 1", str(tmp_path / "absent"))
    assert result.returncode == 2 and "absent" in result.stderr
    result = run_cli("db", str(tmp_path / "x.duckdb"), str(tmp_path / "empty"))
    assert result.returncode == 2 and not (tmp_path / "x.duckdb").exists()


def test_stale_or_missing_sidecars_are_rebuilt_in_the_cache(root, tmp_path, private_cache):
    work = tmp_path / "runs"
    shutil.copytree(root, work)
    count = (
        "SELECT profile, count(*) AS n, any_value(p.sidecar_dir) AS dir "
        "FROM kernels JOIN profiles p USING (profile_id, profile) GROUP BY ALL"
    )
    first = {r["profile"]: r for r in cli_json("query", count, str(work))}  # fills the validation cache
    assert all(r["dir"] == r["profile"] for r in first.values() if "old" not in r["profile"])
    # a profile.json copied over another run's directory: its parquet files belong to the other run
    shutil.copyfile(work / "h100" / "infer" / "profile.json", work / "w0" / "train" / "profile.json")
    # a lone profile.json: no parquet files at all
    for parquet in (work / "w4" / "train").glob("*.parquet"):
        parquet.unlink()
    listing = {p: sorted(x.name for x in p.iterdir()) for p in (work / "w0" / "train", work / "w4" / "train")}
    after = {r["profile"]: r for r in cli_json("query", count, str(work))}
    h100_rows = len(json.loads((work / "h100" / "infer" / "profile.json").read_text())["tables"]["kernels"]["rows"])
    assert after[str(work / "w0" / "train")]["n"] == h100_rows != first[str(work / "w0" / "train")]["n"]
    assert after[str(work / "w4" / "train")]["n"] == first[str(work / "w4" / "train")]["n"]
    for directory in (work / "w0" / "train", work / "w4" / "train"):
        assert after[str(directory)]["dir"].startswith(str(private_cache))
        assert sorted(x.name for x in directory.iterdir()) == listing[directory]  # nothing written beside them


def test_builtin_profile_json_under_a_root_is_read_directly(tmp_path):
    shutil.copyfile(BUILTIN / "infer_profile.json", tmp_path / "profile.json")
    rows = cli_json(
        "query",
        "SELECT kind, source_type, step_ms, latency_p50_ms, bound, launches_per_step, host_overhead_ms FROM profiles",
        str(tmp_path),
    )
    raw = json.loads((BUILTIN / "infer_profile.json").read_text())
    assert rows == [
        {
            "kind": "infer",
            "source_type": "libreyolo-builtin",
            "step_ms": raw["step_ms"],
            "latency_p50_ms": raw["latency"]["p50_ms"],
            "bound": "unknown",
            "launches_per_step": None,
            "host_overhead_ms": None,
        }
    ]


def test_roots_may_name_files_and_json_keeps_duplicate_columns(root, trace):
    rows = cli_json(
        "query",
        "SELECT a.profile, a.source_type, b.profile FROM profiles a JOIN profiles b USING (profile_id) ORDER BY 1",
        str(trace("cpu_only_rank34")),
        str(BUILTIN / "infer_profile.json"),
        str(root / "h100"),
    )
    assert [(r["profile"], r["source_type"]) for r in rows] == sorted(
        [
            (str(trace("cpu_only_rank34")), "trace"),
            (str(BUILTIN / "infer_profile.json"), "libreyolo-builtin"),
            (str(root / "h100" / "infer"), "trace"),
        ]
    )
    assert all(r["profile_1"] == r["profile"] for r in rows)
