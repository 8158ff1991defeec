"""The roofline of a measured LibreYOLO profile on the CPU (#28): the forward FLOPs the roofline table
derives from the recorded shapes add up to the model's own FLOP count (torch.utils.flop_counter, in
profile.json), and the roof is the CPU peak infer measured, recorded with its method."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import REPO, run_measurement
from tests.roofline_reference import reference_units
from tests.test_roofline import _over_phases

pytestmark = pytest.mark.slow

COUNTED_FAMILIES = (
    "mm",
    "addmm",
    "bmm",
    "baddbmm",
    "linear",
    "matmul",
    "conv",
    "attention",
)  # what flop_counter counts


def _cli(cwd, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, LIBREYOLO_PROFILE_OFFLINE="1", PYTHONPATH=str(REPO), COLUMNS="200")
    return run_measurement(*args, cwd=cwd, env=env, timeout=900)


def test_forward_flops_equal_the_models_flop_count(tmp_path):
    r = _cli(
        tmp_path,
        "infer",
        "--device",
        "cpu",
        "--imgsz",
        "96",
        "--warmup",
        "1",
        "--runs",
        "2",
        "--no-report",
        "--project",
        str(tmp_path / "out"),
    )
    assert r.returncode == 0, r.stderr
    profile = tmp_path / "out" / "infer" / "profile.json"
    doc = json.loads(profile.read_text())
    r = _cli(tmp_path, "roofline", str(profile), "--top", "100000", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["roofline"]
    forward = [row for row in rows if row["phase"] == "forward" and row["model"] in COUNTED_FAMILIES]
    ours = sum(row["gflops"] * row["calls_per_step"] for row in forward) * 1e9 / doc["metrics"]["images_per_step"]
    assert doc["model"]["flops"] and ours == pytest.approx(doc["model"]["flops"], rel=0.05)

    peak = doc["environment"]["cpu_peak"]
    assert peak["fp32_tflops"] > 0 and peak["tb_per_s"] > 0 and peak["method"].startswith("measured:")
    convs = [row for row in rows if row["model"] == "conv"]
    assert convs and all(
        row["device_model"] == "CPU (measured)" and row["peak_source"] == peak["method"] for row in convs
    )
    assert all(row["pct_of_roofline"] > 0 for row in convs)
    assert doc["metrics"]["sol_step_ms"] > 0 and doc["metrics"]["gemm_conv_peak_pct"] > 0

    # a trace not in ../shared: our own, against the plain-Python reference over its raw events
    ours = _over_phases(rows)
    theirs = reference_units(tmp_path / "out" / "infer" / "profile_trace.json")
    assert theirs
    for key, ref in theirs.items():
        assert ours[key]["calls"] == ref["calls"], key
        assert ours[key]["gflops"] == pytest.approx(ref["gflops"], rel=0.01), key
        assert ours[key]["device_us"] == pytest.approx(ref["device_us"], rel=0.01), key

    # the cross-run views hold the table
    r = _cli(tmp_path, "query", "SELECT count(*) AS n FROM roofline", str(tmp_path / "out"), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [{"n": len(rows)}]
