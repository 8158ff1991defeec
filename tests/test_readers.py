"""The reader lenses as a user drives them: every flag, bad values, exit codes, the store's
round trip (sidecars present or rebuilt), and the promise that readers never load torch."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from conftest import cli_json, run_cli

V100 = "v100_resnet50_workers0"
A100 = "a100_cutlass_adam_rank0"


@pytest.fixture(scope="module")
def profile_dir(tmp_path_factory, analysed_traces):
    """A profile directory of ours, built from a real trace through the writer."""
    from conftest import require_traces

    from libreyolo_profile.store.disk.writer import write_directory

    doc = analysed_traces.document(require_traces() / f"{A100}.json.gz")
    target = tmp_path_factory.mktemp("profiles") / "train"
    write_directory(doc, target)
    return target


def test_group_without_subcommand_lists_them():
    result = run_cli()
    assert result.returncode == 0
    for sub in ("run", "infer", "summary", "get", "phases", "kernels", "ops", "compare", "what-if"):
        assert sub in result.stdout


def test_key_value_argument_is_refused_with_the_flag_spelling(trace):
    result = run_cli("kernels", str(trace(V100)), "top=5")
    assert result.returncode == 2
    assert "--top 5" in result.stderr and "Traceback" not in result.stderr


def test_missing_file_exits_2():
    result = run_cli("summary", "/nonexistent/profile.json")
    assert result.returncode == 2 and "no such file" in result.stderr


def test_get_lists_fields_and_prints_one_number(profile_dir):
    listing = run_cli("get", str(profile_dir))
    assert listing.returncode == 0
    names = [line.split()[0] for line in listing.stdout.splitlines()]
    assert {"gpu_util_pct", "step_ms", "tensorcore_pct", "bound"} <= set(names)
    value = run_cli("get", str(profile_dir / "profile.json"), "gpu_util_pct")
    assert value.returncode == 0 and value.stderr == ""
    # the expected value derived straight from the trace JSON, with plain Python (no product code)
    from conftest import require_traces
    from test_real_traces import reference

    expected = reference(require_traces() / f"{A100}.json.gz")["gpu_util_pct"]
    assert float(value.stdout.strip()) == pytest.approx(expected, abs=0.01)


def test_get_unknown_field_exits_2_and_lists(profile_dir):
    result = run_cli("get", str(profile_dir), "gpu_utilisation")
    assert result.returncode == 2 and "gpu_util_pct" in result.stderr


def test_get_null_metric_prints_null_and_the_reason(profile_dir):
    result = run_cli("get", str(profile_dir), "peak_vram_mb")
    assert result.returncode == 0 and result.stdout.strip() == "null" and "allocator" in result.stderr
    doc = cli_json("get", str(profile_dir), "peak_vram_mb")
    assert set(doc) == {"field", "value", "unit", "reason"} and doc["value"] is None and doc["reason"]


def test_kernels_flags_combined(trace):
    doc = cli_json(
        "kernels",
        str(trace(A100)),
        "--category",
        "gemm",
        "--phase",
        "backward",
        "--tensorcore",
        "--sort",
        "count",
        "--top",
        "5",
    )
    rows = doc["kernels"]
    assert 0 < len(rows) <= 5
    assert all(r["category"] == "gemm" and r["tensorcore"] and "backward" in r["phases"] for r in rows)
    counts = [r["calls_per_step"] for r in rows]
    assert counts == sorted(counts, reverse=True)


def test_kernels_grep_sort_name_and_top(trace):
    rows = cli_json("kernels", str(trace(V100)), "--grep", "^void cudnn", "--sort", "name", "--top", "50")["kernels"]
    assert rows and all(r["name"].startswith("void cudnn") for r in rows)
    assert [r["name"] for r in rows] == sorted(r["name"] for r in rows)
    text = run_cli("kernels", str(trace(V100)), "--top", "3")
    assert text.returncode == 0 and "GPU kernels" in text.stdout


def test_kernels_shares_are_of_device_time(trace):
    rows = cli_json("kernels", str(trace(V100)), "--top", "100000")["kernels"]
    assert sum(r["share_pct"] for r in rows) == pytest.approx(100.0)


@pytest.mark.parametrize("hostile", ["'; DROP TABLE kernels; --", '" OR 1=1 --', "gemm'; SELECT 1; --", "a;b"])
def test_hostile_filter_values_are_data_not_sql(trace, hostile):
    for flag in ("--category", "--grep"):
        result = run_cli("kernels", str(trace(V100)), flag, hostile, "--json")
        if flag == "--grep" and result.returncode == 2:
            assert "regular expression" in result.stderr  # an invalid RE2 pattern, refused as such
            continue
        if flag == "--category":  # part of no category: refused as such (issue #15), quoted whole
            assert result.returncode == 2 and f"unknown kernel category '{hostile}'" in result.stderr
            continue
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["kernels"] == []
    phase = run_cli("kernels", str(trace(V100)), "--phase", hostile)
    assert phase.returncode == 2 and "phases in this profile" in phase.stderr
    # the tables are still there afterwards
    assert cli_json("kernels", str(trace(V100)), "--top", "1")["kernels"]


def test_category_absent_from_the_profile_notes_the_categories(trace):
    """A real category the profile has no kernel of (the V100 run has no NCCL): empty, exit 0, and
    stderr names the categories it does have. A category that exists nowhere is a usage error
    (tests/test_formatting.py)."""
    result = run_cli("kernels", str(trace(V100)), "--category", "communication", "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["kernels"] == []
    assert "categories present" in result.stderr and "gemm" in result.stderr


def test_invalid_regex_and_unknown_phase_and_sort_exit_2(trace):
    assert run_cli("kernels", str(trace(V100)), "--grep", "(unclosed").returncode == 2
    result = run_cli("kernels", str(trace(V100)), "--phase", "warmup")
    assert result.returncode == 2 and "dataload" in result.stderr and "backward" in result.stderr
    assert run_cli("kernels", str(trace(V100)), "--sort", "speed").returncode == 2


def test_phases_lens(trace):
    doc = cli_json("phases", str(trace(V100)))
    phases = {p["phase"]: p for p in doc["phases"]}
    assert list(phases)[:5] == ["dataload", "to_device", "forward", "backward", "optimizer"]
    assert sum(p["wall_pct"] for p in phases.values()) == pytest.approx(100.0)
    assert phases["backward"]["gpu_ms"] > phases["forward"]["gpu_ms"] > 0
    assert doc["phases_inferred"] is True


def test_ops_rank_by_self_time_without_double_counting(trace):
    doc = cli_json("ops", str(trace(A100)), "--phase", "forward", "--top", "1000")
    rows = doc["ops"]
    assert rows and all("forward" in r["phases"] for r in rows)
    assert sum(r["self_pct"] for r in rows) == pytest.approx(100.0)
    selfs = [r["self_ms_per_step"] for r in rows]
    assert selfs == sorted(selfs, reverse=True)
    assert all(r["total_ms_per_step"] >= r["self_ms_per_step"] - 1e-9 for r in rows)


def test_output_is_identical_when_sidecars_are_rebuilt(profile_dir, tmp_path):
    alone = tmp_path / "copied"
    alone.mkdir()
    shutil.copy(profile_dir / "profile.json", alone / "profile.json")
    for lens in (["kernels", "--top", "15"], ["ops", "--top", "15"], ["phases"], ["summary"]):
        original = cli_json(lens[0], str(profile_dir / "profile.json"), *lens[1:])
        rebuilt = cli_json(lens[0], str(alone / "profile.json"), *lens[1:])
        original.pop("profile"), rebuilt.pop("profile")
        assert original == rebuilt, lens
    assert sorted(p.name for p in alone.iterdir()) == ["profile.json"]  # rebuilt into the cache, not beside


def test_corrupt_sidecar_is_rebuilt_from_profile_json(profile_dir, tmp_path):
    copy = tmp_path / "train"
    shutil.copytree(profile_dir, copy)
    (copy / "kernels.parquet").write_bytes(b"not parquet")
    before = cli_json("kernels", str(profile_dir), "--top", "5")["kernels"]
    after = cli_json("kernels", str(copy), "--top", "5")["kernels"]
    assert before == after


def test_newer_schema_is_refused_clearly(profile_dir, tmp_path):
    doc = json.loads((profile_dir / "profile.json").read_text())
    doc["schema_version"] = 99
    (tmp_path / "profile.json").write_text(json.dumps(doc))
    result = run_cli("summary", str(tmp_path / "profile.json"))
    assert result.returncode == 1 and "upgrade" in result.stderr and "Traceback" not in result.stderr


def test_readers_never_import_torch_or_libreyolo(trace, profile_dir):
    probe = (
        "import sys\n"
        "from libreyolo_profile.cli import run_cli\n"
        "for args in (['summary', sys.argv[1]], ['kernels', sys.argv[1]], ['ops', sys.argv[1]],\n"
        "             ['phases', sys.argv[1]], ['get', sys.argv[2], 'step_ms']):\n"
        "    assert run_cli(args, prog='t') == 0\n"
        "heavy = [m for m in ('torch', 'libreyolo', 'torchvision') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(trace(V100)), str(profile_dir)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "HEAVY []" in result.stdout


def test_readers_of_an_analysed_profile_load_neither_pyarrow_nor_pandas(trace, profile_dir, tmp_path):
    """~0.4 s of a fresh process: what-if loaded both through the verdict's inputs, for a 0.55 s command."""
    probe = (
        "import sys\n"
        "from libreyolo_profile.cli import run_cli\n"
        "trace, profile, out = sys.argv[1:]\n"
        "for args in (['summary', trace], ['kernels', trace], ['ops', trace], ['phases', trace],\n"
        "             ['modules', trace], ['memory', trace], ['roofline', trace],\n"
        "             ['what-if', trace, '--remove-category', 'gemm'], ['compare', profile, trace],\n"
        "             ['what-if', profile, '--remove-launches', '1', '--json'], ['report', trace, '--out', out],\n"
        "             ['query', 'SELECT count(*) FROM kernels', profile]):\n"
        "    assert run_cli(args, prog='t') == 0, args\n"
        "print('LOADED', [m for m in ('pyarrow', 'pandas') if m in sys.modules])\n"
    )
    # the report's timeline is a section of the analysis (store/sections.py), kept once a report computed it
    assert run_cli("report", str(trace(V100)), "--out", str(tmp_path / "first.html")).returncode == 0
    result = subprocess.run(
        [sys.executable, "-c", probe, str(trace(V100)), str(profile_dir), str(tmp_path / "r.html")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "LOADED []" in result.stdout, result.stdout


def test_get_loads_neither_duckdb_nor_pyarrow_nor_rich(profile_dir):
    probe = (
        "import sys\nfrom libreyolo_profile.launcher import profile_main\n"
        "sys.argv = ['libreyolo-profile', 'get', sys.argv[1], 'step_ms']\n"
        "try:\n    profile_main()\nexcept SystemExit:\n    pass\n"
        "print('LOADED', [m for m in ('duckdb', 'pyarrow', 'rich', 'torch') if m in sys.modules])\n"
    )
    result = subprocess.run([sys.executable, "-c", probe, str(profile_dir)], capture_output=True, text=True)
    assert "LOADED []" in result.stdout, result.stdout + result.stderr
