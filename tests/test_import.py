"""`libreyolo profile import` and the built-in profile reader: LibreYOLO's own profile.json files
(the samples in ../shared/libreyolo_builtin_profiles, and one its analyzer makes from a real GPU trace)
and foreign traces become profile directories of ours; what the built-in profiler measured is kept,
its known false figures are not, and every reader accepts its profile.json directly."""

from __future__ import annotations

import gzip
import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ON_CI, REPO, cli_json, run_cli

BUILTIN = REPO.parent / "shared" / "libreyolo_builtin_profiles"
SAMPLES = ["infer_profile.json", "run_profile.json", "run_profile_repeat.json"]


def builtin_sample(name: str) -> Path:
    path = BUILTIN / name
    if not path.is_file():
        if ON_CI:
            pytest.fail(f"CI=true but the built-in profile samples are missing at {BUILTIN}")
        pytest.skip(f"built-in profile samples not found at {BUILTIN}")
    return path


def _ours(project: Path, kind: str) -> dict:
    return json.loads((project / kind / "profile.json").read_text())


@pytest.mark.parametrize("name", SAMPLES)
def test_import_builtin_sample_keeps_what_is_real(name, tmp_path):
    from libreyolo_profile.store.document.verdict import decide

    path = builtin_sample(name)
    raw = json.loads(path.read_text())
    result = cli_json("import", str(path), "--project", str(tmp_path))
    kind = "infer" if raw.get("mode") == "inference" else "train"
    assert result["kind"] == kind and result["profile"] == str(tmp_path / kind / "profile.json")
    assert sorted(p.name for p in (tmp_path / kind).iterdir()) == sorted(
        [
            "profile.json",
            "kernels.parquet",
            "ops.parquet",
            "phases.parquet",
            "steps.parquet",
            "blame.parquet",
            "modules.parquet",
            "roofline.parquet",
            "memory.parquet",
            "collectives.parquet",
            "ranks.parquet",
        ]
    )
    doc = _ours(tmp_path, kind)
    m = doc["metrics"]
    assert doc["source"]["type"] == "libreyolo-builtin" and doc["device_type"] == "cpu"
    # what it measured is kept
    assert m["step_ms"] == raw["step_ms"]
    assert m["steps"] == raw["window"]["real_steps"] and m["window_ms"] == raw["window"]["wall_ms"]
    assert m["ops_per_step"] == raw["metrics"]["ops_per_step"]
    if kind == "infer":
        assert m["throughput_img_s"] == raw["img_per_s"]
        assert m["latency_p50_ms"] == raw["latency"]["p50_ms"]
        # its p90 and p99 come from raw["latency"]["n"] = 10 calls (its p99 is its slowest call): null, why said
        assert raw["latency"]["n"] < 20 and m["latency_p90_ms"] is None and m["latency_p99_ms"] is None
        assert "needs at least 100 calls" in doc["null_reasons"]["latency_p99_ms"]
        assert str(raw["latency"]["p99_ms"]) in doc["null_reasons"]["latency_p99_ms"]
        for stage in ("preprocess", "forward", "postprocess"):
            assert m[f"{stage}_ms"] == raw["stages_ms"][stage]
            assert m[f"{stage}_pct"] == pytest.approx(100 * raw["stages_ms"][stage] / raw["latency"]["mean_ms"])
    else:
        assert m["dataload_ms"] == raw["dataload_ms"]
        assert m["dataload_pct"] == pytest.approx(100 * raw["dataload_frac"])
    # its false CPU figures are not: null with a reason, never its whole-step host overhead or 0 launches
    for name_ in ("host_overhead_ms", "host_overhead_pct", "launches_per_step", "gpu_util_pct", "tensorcore_pct"):
        assert m[name_] is None, name_
    assert "whole step" in doc["null_reasons"]["host_overhead_ms"]
    assert raw["host_overhead_ms_per_step"] > 0.9 * raw["step_ms"]  # the flaw the sample carries
    # the verdict is ours, recomputed from the imported metrics, not its "host / launch"/"compute"
    assert doc["verdict"]["bound"] == decide(m, kind, False, None)["bound"] == "unknown"
    assert doc["verdict"]["bound"] != raw["bound"]
    assert {"imported_builtin", "ops_total_only", "cpu_profile"} <= set(doc["marks"])
    # its window: 2 training steps are tiny; 6 inference calls over 879 ms are not (store/document/window.py)
    assert ("tiny_window" in doc["marks"]) is (kind == "train")
    # ops: its inclusive per-phase times as total time, self time null
    ops = doc["tables"]["ops"]
    col = {c: i for i, c in enumerate(ops["columns"])}
    assert ops["rows"] and all(r[col["self_ms"]] is None and r[col["self_ms_per_step"]] is None for r in ops["rows"])
    phase_totals = {(r[col["phase"]], r[col["name"]]): r[col["total_ms_per_step"]] for r in ops["rows"]}
    for phase, entries in raw["ops_by_phase"].items():
        for op in entries:
            assert phase_totals[(phase, op["op"])] == op["ms_per_step"]
    by_name, raw_by_name = {}, {}
    for r in ops["rows"]:
        by_name[r[col["name"]]] = by_name.get(r[col["name"]], 0.0) + r[col["total_ms_per_step"]]
    for op in raw["ops"]:
        raw_by_name[op["op"]] = raw_by_name.get(op["op"], 0.0) + op["ms_per_step"]
    for name_, ms in raw_by_name.items():  # per-phase rows plus the unphased rest add up to its total per op
        assert by_name[name_] == pytest.approx(ms, rel=0.02, abs=2e-3)
    phases = doc["tables"]["phases"]
    assert [r[2] for r in phases["rows"]] == [p["phase"] for p in raw["phases"]]
    assert doc["tables"]["steps"]["rows"] == [] and doc["tables"]["kernels"]["rows"] == []


def test_repeat_sample_carries_the_trials_with_the_sample_std(tmp_path):
    path = builtin_sample("run_profile_repeat.json")
    raw = json.loads(path.read_text())
    cli_json("import", str(path), "--project", str(tmp_path))
    doc = _ours(tmp_path, "train")
    stat = doc["repeat"]["throughput_img_s"]
    assert stat["values"] == raw["img_per_s_trials"] and stat["n"] == 2
    assert stat["std"] == pytest.approx(statistics.stdev(raw["img_per_s_trials"]))
    assert stat["std"] != raw["img_per_s_std"]  # it stores the population std (n, not n − 1)
    assert doc["metrics"]["throughput_img_s"] == pytest.approx(statistics.fmean(raw["img_per_s_trials"]))
    assert run_cli("get", str(tmp_path / "train"), "throughput_img_s_n").stdout.strip() == "2"


def test_readers_accept_the_builtin_profile_json_directly(tmp_path):
    infer, train = builtin_sample("infer_profile.json"), builtin_sample("run_profile.json")
    raw = json.loads(infer.read_text())
    summary = cli_json("summary", str(infer))
    assert summary["profile"]["kind"] == "infer" and summary["metrics"]["step_ms"] == raw["step_ms"]
    assert summary["verdict"]["bound"] == "unknown" and "imported_builtin" in summary["marks"]
    assert [p["phase"] for p in summary["phases"]] == ["preprocess", "forward", "postprocess"]
    result = run_cli("get", str(infer), "latency_p99_ms")  # from 10 calls: null, and the reason on stderr
    assert result.returncode == 0 and result.stdout.strip() == "null" and "100 calls" in result.stderr
    result = run_cli("get", str(infer), "host_overhead_ms")
    assert result.returncode == 0 and result.stdout.strip() == "null" and "whole step" in result.stderr
    ops = cli_json("ops", str(train), "--top", "3")["ops"]
    top = max(json.loads(train.read_text())["ops"], key=lambda o: o["ms_per_step"])
    assert ops[0]["name"] == top["op"] and ops[0]["self_ms_per_step"] is None
    assert ops[0]["total_ms_per_step"] == pytest.approx(top["ms_per_step"], rel=0.02)
    phases = cli_json("phases", str(train))["phases"]
    raw_train = json.loads(train.read_text())
    for got, want in zip(phases, raw_train["phases"], strict=False):
        assert got["phase"] == want["phase"] and got["wall_ms"] == pytest.approx(want["wall_ms_per_step"])
    kernels = run_cli("kernels", str(train), "--json")
    assert kernels.returncode == 0 and json.loads(kernels.stdout)["kernels"] == []


def test_import_a_trace_and_our_own_profile(trace, tmp_path):
    from libreyolo_profile.store.document.from_trace import profile_from_trace

    path = trace("h100_vit_image_classifier")
    result = cli_json("import", str(path), "--project", str(tmp_path / "p"))
    doc = _ours(tmp_path / "p", "infer")
    direct = profile_from_trace(path)
    assert (
        result["kind"] == "infer"
        and doc["source"]["type"] == "trace"
        and doc["source"]["imported_from"] == str(path.resolve())
    )
    assert doc["tables"] == json.loads(json.dumps(direct["tables"]))
    assert doc["metrics"]["step_ms"] == pytest.approx(direct["metrics"]["step_ms"])
    # one of our profile directories imports as it is, into another project
    again = cli_json("import", str(tmp_path / "p" / "infer"), "--project", str(tmp_path / "q"))
    assert again["replaced"] is False and _ours(tmp_path / "q", "infer")["tables"] == doc["tables"]
    # a second import keeps the first and goes beside it; --exist-ok replaces it in place
    again = cli_json("import", str(tmp_path / "p" / "infer"), "--project", str(tmp_path / "q"))
    assert again["replaced"] is False and again["profile"] == str(tmp_path / "q" / "infer2" / "profile.json")
    again = cli_json("import", str(tmp_path / "p" / "infer"), "--project", str(tmp_path / "q"), "--exist-ok")
    assert again["replaced"] is True and again["profile"] == str(tmp_path / "q" / "infer" / "profile.json")


def test_import_errors(tmp_path):
    result = run_cli("import", str(tmp_path / "absent.json"), "--project", str(tmp_path))
    assert result.returncode == 2 and "no such file" in result.stderr
    junk = tmp_path / "junk.json"
    junk.write_text('{"schema": "libreyolo.profile.analysis/v1", "config": {}}')
    result = run_cli("import", str(junk), "--project", str(tmp_path / "p"))
    assert result.returncode == 1 and "no measured steps" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "p").exists()


@pytest.fixture(scope="module")
def gpu_builtin(tmp_path_factory):
    """A built-in profile of a real GPU run: LibreYOLO's own analyzer (libreyolo.training.profiler.analyze_trace)
    run over a real A100 trace, as its `profile run` does after training."""
    from conftest import require_traces

    source = require_traces() / "a100_cutlass_adam_rank0.json.gz"
    work = tmp_path_factory.mktemp("gpu-builtin")
    plain = work / "profile_trace.json"
    plain.write_bytes(gzip.decompress(source.read_bytes()))
    out = work / "profile.json"
    code = (
        "import json, sys; from libreyolo.training.profiler import analyze_trace; "
        "a = analyze_trace(sys.argv[1]); a['config'] = {'device': 'cuda:0'}; "
        "open(sys.argv[2], 'w').write(json.dumps(a))"
    )
    subprocess.run([sys.executable, "-c", code, str(plain), str(out)], check=True, timeout=300)
    plain.unlink()
    return out


def test_import_a_gpu_builtin_profile(gpu_builtin, tmp_path):
    raw = json.loads(gpu_builtin.read_text())
    assert raw["schema"] == "libreyolo.profile.analysis/v1" and raw["kernels"]
    cli_json("import", str(gpu_builtin), "--project", str(tmp_path))
    doc = _ours(tmp_path, "train")
    m = doc["metrics"]
    assert doc["device_type"] == "gpu" and "builtin_gpu_definitions" in doc["marks"]
    assert m["gpu_util_pct"] == pytest.approx(100 * raw["gpu_util_raw"])
    assert m["kernels_per_step"] == raw["kernels_per_step"] and m["tensorcore_pct"] == raw["tensorcore_pct"]
    assert m["host_overhead_ms"] is None and m["sync_ms"] is None  # its definitions are not ours
    kernels = doc["tables"]["kernels"]
    col = {c: i for i, c in enumerate(kernels["columns"])}
    total = {}
    for r in kernels["rows"]:
        total[r[col["name"]]] = total.get(r[col["name"]], 0.0) + r[col["ms_per_step"]]
    raw_total = {}  # it cuts kernel names at 90 characters, so two kernels can share one
    for k in raw["kernels"]:
        raw_total[k["raw_name"]] = raw_total.get(k["raw_name"], 0.0) + k["ms_per_step"]
    assert total.keys() == raw_total.keys()
    for name, ms in raw_total.items():
        assert total[name] == pytest.approx(ms, rel=0.02, abs=2e-3)
    # categories from our rule table: the same as our own ingest gives these kernels on this trace
    ours = json.loads(
        run_cli(
            "kernels",
            str(REPO.parent / "shared" / "traces" / "a100_cutlass_adam_rank0.json.gz"),
            "--top",
            "1000",
            "--json",
        ).stdout
    )["kernels"]
    ours_category = {k["name"]: k["category"] for k in ours}
    imported_category = {r[col["name"]]: r[col["category"]] for r in kernels["rows"]}
    shared = set(ours_category) & set(imported_category)  # names it kept whole (it cuts them at 90 characters)
    assert "builtin_names_cut" in doc["marks"]
    assert len(shared) >= 5 and all(ours_category[n] == imported_category[n] for n in shared)
    # the verdict is decided by our rules on what it measured
    from libreyolo_profile.store.document.verdict import decide

    assert doc["verdict"]["bound"] == decide(m, "train", True, None)["bound"]
    summary = cli_json("summary", str(gpu_builtin))
    assert summary["metrics"]["gpu_util_pct"] == pytest.approx(m["gpu_util_pct"]) and summary["top_kernels"]
