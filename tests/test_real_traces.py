"""The readers on the real GPU/CPU traces in ../shared/traces, checked against an independent
reference: the expected numbers below are computed by `reference()` straight from the trace
JSON with plain Python (json + gzip, no product code), following SPEC §4 word by word."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict

import pytest
from conftest import cli_json, run_cli

LAUNCH_CALLS = {
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "cudaGraphLaunch",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
}


def _is_tensorcore(name: str) -> bool:
    # Hand-checked for these two traces: the A100 one's only Tensor Core kernels are cutlass
    # "tensorop" s1688 GEMMs; the V100 ResNet-50 runs in FP32 (sgemm/scudnn/winograd), none.
    return "tensorop" in name or "s1688" in name or "h884" in name


def reference(path) -> dict:
    events = json.load(gzip.open(path))["traceEvents"]
    steps = sorted(
        (e["ts"], e["ts"] + e["dur"])
        for e in events
        if e.get("ph") == "X"
        and e.get("name", "").startswith("ProfilerStep#")
        and e.get("cat") in ("user_annotation", "Operator")
    )
    in_step = lambda t: any(s <= t < e for s, e in steps)  # noqa: E731
    launch_ts = {}
    launches = 0
    for e in events:
        if e.get("cat") in ("cuda_runtime", "Runtime") and e.get("ph") == "X":
            corr = e.get("args", {}).get("correlation")
            if corr is not None:
                launch_ts.setdefault(corr, e["ts"])
            if e["name"] in LAUNCH_CALLS and in_step(e["ts"]):
                launches += 1
    device_work = [
        e
        for e in events
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset")
    ]
    start = steps[0][0]
    end = max(
        [steps[-1][1]]
        + [e["ts"] + e["dur"] for e in device_work if in_step(launch_ts.get(e["args"].get("correlation"), -1))]
    )
    kernels = [e for e in device_work if e["cat"] in ("kernel", "Kernel") and e["args"].get("device", 0) == 0]
    clipped = sorted(
        (max(e["ts"], start), min(e["ts"] + e["dur"], end), e["name"])
        for e in kernels
        if e["ts"] < end and e["ts"] + e["dur"] > start
    )
    busy, reach = 0.0, None
    for s, e, _ in clipped:
        if reach is None or s > reach:
            busy += e - s
            reach = e
        elif e > reach:
            busy += e - reach
            reach = e
    total = sum(e - s for s, e, _ in clipped)
    tensorcore = sum(e - s for s, e, n in clipped if _is_tensorcore(n))
    per_name = defaultdict(float)
    for e in kernels:
        if in_step(launch_ts.get(e["args"].get("correlation"), -1)):
            per_name[e["name"]] += e["dur"]
    return {
        "gpu_util_pct": 100 * busy / (end - start),
        "tensorcore_pct": 100 * tensorcore / total,
        "launches_per_step": launches / len(steps),
        "top_kernel": max(per_name, key=per_name.get),
        "steps": len(steps),
    }


@pytest.mark.parametrize("name", ["a100_cutlass_adam_rank0", "v100_resnet50_workers0", "v100_resnet50_workers4"])
def test_headline_gpu_figures_match_an_independent_reference(trace, name):
    expected = reference(trace(name))
    summary = cli_json("summary", str(trace(name)))
    m = summary["metrics"]
    assert summary["window"]["steps"] == expected["steps"]
    assert m["gpu_util_pct"] == pytest.approx(expected["gpu_util_pct"], abs=0.01)
    assert m["tensorcore_pct"] == pytest.approx(expected["tensorcore_pct"], abs=0.01)
    assert m["launches_per_step"] == pytest.approx(expected["launches_per_step"])
    assert summary["top_kernels"][0]["name"] == expected["top_kernel"]


def test_known_values_of_the_a100_trace(trace):
    """Pinned from the reference above (run once, by hand): 32.16% busy, 29.65% Tensor Core."""
    m = cli_json("summary", str(trace("a100_cutlass_adam_rank0")))["metrics"]
    assert round(m["gpu_util_pct"], 1) == 32.2
    assert round(m["tensorcore_pct"], 1) == 29.6
    assert m["launches_per_step"] == 1320


def test_dataload_phase_tells_the_v100_pair_apart(trace):
    slow = cli_json("get", str(trace("v100_resnet50_workers0")), "dataload_pct")["value"]
    fast = cli_json("get", str(trace("v100_resnet50_workers4")), "dataload_pct")["value"]
    assert slow > 30 and fast < 5
    assert cli_json("summary", str(trace("v100_resnet50_workers0")))["verdict"]["bound"] == "dataloader"
    assert cli_json("summary", str(trace("v100_resnet50_workers4")))["verdict"]["bound"] != "dataloader"


def test_nanosecond_timestamps_keep_their_fractions(trace):
    """The DDP trace's ts carry ns fractions on a ~1.7e15 µs clock: float64 would round them away."""
    kernels = cli_json("kernels", str(trace("v100_resnet_ddp_ns_resolution")), "--top", "200")["kernels"]
    assert any(abs(k["mean_us"] * 1000 - round(k["mean_us"] * 1000)) < 1e-6 and k["mean_us"] % 1 for k in kernels)


def test_cpu_only_trace_gets_honest_cpu_answers(trace):
    doc = cli_json("summary", str(trace("cpu_only_rank34")))
    assert doc["profile"]["device_type"] == "cpu"
    assert doc["metrics"]["gpu_util_pct"] is None and "CPU profile" in doc["null_reasons"]["gpu_util_pct"]
    assert not doc["verdict"]["bound"].startswith(("gpu", "host-launch"))
    result = run_cli("kernels", str(trace("cpu_only_rank34")))
    assert result.returncode == 0 and "CPU profile" in result.stderr and "ops" in result.stderr


def test_trace_without_profiler_steps_says_how_its_window_was_found(trace):
    doc = cli_json("summary", str(trace("a100_alexnet_no_profilerstep")))
    assert "window_fallback" in doc["marks"]
    assert "device active span" in doc["window"]["source"]


def test_rocm_trace_counts_hip_launches_and_mfma_kernels(trace):
    doc = cli_json("summary", str(trace("mi250_rocm_minitoy")))
    assert doc["metrics"]["launches_per_step"] > 0
    mfma = [k for k in doc["top_kernels"] if k["name"].startswith("Cijk_")]
    assert mfma and all(k["tensorcore"] for k in mfma)


def test_several_devices_keep_the_busiest_as_headline(trace):
    doc = cli_json("summary", str(trace("mi250_rocm_minitoy")))
    busiest = doc["devices"][0]
    assert doc["metrics"]["gpu_util_pct"] == pytest.approx(busiest["gpu_util_pct"])
