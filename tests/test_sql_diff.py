"""Diff tests for the metric SQL (sql/ingest.sql, metrics.sql, kernels.sql, phases.sql), in the style
of Perfetto's: a tiny synthetic Kineto trace of a handful of events, run through the real CLI, and
every expected value derived by hand in a comment beside it (SPEC §4 for the definitions).

All times below are µs from the start of the trace (tests/synthetic_traces.py puts them on
Kineto's absolute clock). Expectations never come from product code or SQL.
"""

from __future__ import annotations

import pytest

from tests.conftest import cli_json
from tests.synthetic_traces import (
    A100,
    ELEMENTWISE,
    FILL,
    GEMM_FP32_SIMT,
    GEMM_TENSORCORE,
    MEMCPY_HTOD,
    MULTI_TENSOR_APPLY,
    annotation,
    kernel,
    memcpy,
    op,
    runtime,
    write_trace,
)

GPU_ONLY_METRICS = (
    "gpu_util_pct",
    "gpu_busy_ms",
    "tensorcore_pct",
    "memcpy_ms",
    "sync_ms",
    "sync_pct",
    "launch_api_us",
    "kernel_gap_us",
    "kernels_per_step",
)


def approx(value):
    return pytest.approx(value, rel=1e-9, abs=1e-12)


def metrics(path) -> dict:
    """Every metric `get --json` prints, name → value."""
    return {name: entry["value"] for name, entry in cli_json("get", str(path)).items()}


def rows_by(rows: list[dict], key: str) -> dict:
    return {row[key]: row for row in rows}


# ------------------------------------------------------------------------------------------------
# 1. a two-step GPU training trace


def training_step(start: int, correlation: int) -> list[dict]:
    """One 1000 µs training step on one stream (offsets from `start`):

    host phases     to_device 0..100 | forward 100..400 | backward 400..700 | optimizer 700..1000
    to_device       cudaMemcpyAsync 10..20            → Memcpy HtoD 55..95 (40)
    forward         cudaLaunchKernel 110..120         → xmma tensorop gemm 130..330 (200)
                    cudaLaunchKernel 150..160         → elementwise 332..380 (48), queued: 2 µs gap
    backward        cudaLaunchKernel 410..420         → xmma tensorop gemm 420..570 (150)
                    cudaLaunchKernel 430..440         → elementwise 573..600 (27), queued: 3 µs gap
    optimizer       cudaStreamSynchronize 705..715 (10)
                    cudaLaunchKernel 900..910         → multi_tensor_apply 950..1050 (100): runs past the step's end
    """
    s, c = start, correlation
    return [
        annotation(f"ProfilerStep#{c // 100}", s, 1000),
        annotation("## to_device ##", s, 100),
        annotation("## forward ##", s + 100, 300),
        annotation("## backward ##", s + 400, 300),
        annotation("## optimizer ##", s + 700, 300),
        runtime("cudaMemcpyAsync", s + 10, 10, c),
        memcpy(MEMCPY_HTOD, s + 55, 40, c),
        runtime("cudaLaunchKernel", s + 110, 10, c + 1),
        kernel(GEMM_TENSORCORE, s + 130, 200, c + 1),
        runtime("cudaLaunchKernel", s + 150, 10, c + 2),
        kernel(ELEMENTWISE, s + 332, 48, c + 2),
        runtime("cudaLaunchKernel", s + 410, 10, c + 3),
        kernel(GEMM_TENSORCORE, s + 420, 150, c + 3),
        runtime("cudaLaunchKernel", s + 430, 10, c + 4),
        kernel(ELEMENTWISE, s + 573, 27, c + 4),
        runtime("cudaStreamSynchronize", s + 705, 10),
        runtime("cudaLaunchKernel", s + 900, 10, c + 5),
        kernel(MULTI_TENSOR_APPLY, s + 950, 100, c + 5),
    ]


@pytest.fixture
def training_trace(tmp_path):
    # ProfilerStep#1 at 0..1000, ProfilerStep#2 at 1000..2000
    return write_trace(tmp_path / "train.json", training_step(0, 100) + training_step(1000, 200), [A100])


def test_training_metrics(training_trace):
    m = metrics(training_trace)
    assert m["steps"] == 2
    # window: step 1 starts at 0; step 2's host ends at 2000 but its multi_tensor_apply ends at
    # 1000 + 1050 = 2050 → 2050 µs. step_ms (train, several steps) is the stopwatch around the steps:
    # 0 → the host's end of step 2 at 2000 µs, ÷ 2 steps = 1.0 ms; the 50 µs the device ran on after
    # the host finished is the drain, beside it (issue 24: the drain is not folded into the last step)
    assert m["window_ms"] == approx(2.05)
    assert m["step_ms"] == approx(1.0)
    assert m["drain_ms"] == approx(0.05)
    # busy (kernels only, memcpy excluded) per step: 200 + 48 + 150 + 27 + 100 = 525 µs;
    # ×2 steps = 1050 µs of 2050 µs → 51.2195…%
    assert m["gpu_busy_ms"] == approx(0.525)
    assert m["gpu_util_pct"] == approx(100 * 1050 / 2050)
    # Tensor Core: the xmma tensorop gemms 200 + 150 = 350 of 525 µs kernel time → 66.67%
    assert m["tensorcore_pct"] == approx(100 * 350 / 525)
    # launches per step: 5 cudaLaunchKernel + 1 cudaMemcpyAsync (an async memcpy is a launch);
    # cudaStreamSynchronize is not
    assert m["launches_per_step"] == approx(6)
    assert m["kernels_per_step"] == approx(5)
    # sync: one 10 µs cudaStreamSynchronize per step → 0.010 ms; ÷ step_ms 1.0 → 1%
    assert m["sync_ms"] == approx(0.010)
    assert m["sync_pct"] == approx(100 * 0.010 / 1.0)
    # memcpy: one 40 µs HtoD copy per step
    assert m["memcpy_ms"] == approx(0.040)
    # kernel gaps on stream 7 when the next kernel was already queued: elementwise launched at 150
    # while the gemm ran to 330, started 332 → 2 µs; backward elementwise launched 430 < 570,
    # started 573 → 3 µs; the two gemms and the optimizer kernel were launched after the device went
    # idle (410 > 380, 900 > 600, 1110 > 1050) → not gaps. Per trace [2, 3, 2, 3] → median 2.5 µs
    assert m["kernel_gap_us"] == approx(2.5)
    # launch API: every cudaLaunchKernel takes 10 µs
    assert m["launch_api_us"] == approx(10)
    # per launch: (host step 1000 µs − sync 10 µs) ÷ 6 launches = 165 µs
    assert m["per_launch_host_us"] == approx(165)
    # host overhead: idle gaps whose first kernel the host launched only after the device went idle,
    # clipped to forward/backward/optimizer (the whole gap counts: had the host launched earlier the
    # kernel would have been queued). Step 1: 0..130 (launch 110) → compute part 100..130 = 30;
    # 380..420 (launch 410) → 40; 600..950 (launch 900) → 350. Step 2: 1050..1130 (launch 1110) →
    # compute part 1100..1130 = 30; 1380..1420 → 40; 1600..1950 → 350. (30+40+350)×2 ÷ 2 steps = 420 µs
    assert m["host_overhead_ms"] == approx(0.420)
    assert m["host_overhead_pct"] == approx(100 * 0.420 / 1.0)
    # phases: no dataload; to_device 100 µs per step ÷ step_ms 1.0 ms → 10%
    assert m["dataload_pct"] == approx(0)
    assert m["to_device_ms"] == approx(0.100)
    assert m["to_device_pct"] == approx(100 * 0.100 / 1.0)


def test_training_phases(training_trace):
    result = cli_json("phases", str(training_trace))
    assert result["profile"]["kind"] == "train"
    phases = result["phases"]
    # the train phases in display order, dataload listed though the trace has none
    assert [p["phase"] for p in phases] == ["dataload", "to_device", "forward", "backward", "optimizer"]
    by_phase = rows_by(phases, "phase")
    # per step: phase → (gpu ms from its kernels, host wall ms, kernels, launch calls)
    expected = {
        "dataload": (0, 0, 0, 0),
        "to_device": (0, 0.100, 0, 1),  # the memcpy is not a kernel; its cudaMemcpyAsync is a launch
        "forward": (0.200 + 0.048, 0.300, 2, 2),  # gemm 200 + elementwise 48 µs
        "backward": (0.150 + 0.027, 0.300, 2, 2),  # gemm 150 + elementwise 27 µs
        "optimizer": (0.100, 0.300, 1, 1),  # multi_tensor_apply 100 µs (counted whole, though it ends after the step)
    }
    for phase, (gpu_ms, wall_ms, kernels, launches) in expected.items():
        row = by_phase[phase]
        assert row["gpu_ms"] == approx(gpu_ms), phase
        assert row["wall_ms"] == approx(wall_ms), phase
        assert row["kernels"] == approx(kernels), phase
        assert row["launches"] == approx(launches), phase
        # wall shares of the 1000 µs host step: 100 → 10%, 300 → 30%
        assert row["wall_pct"] == approx(100 * wall_ms / 1.0), phase


def test_training_kernels(training_trace):
    rows = cli_json("kernels", str(training_trace))["kernels"]
    # device time per step, memcpy included: gemm 350 + multi_tensor_apply 100 + elementwise 75
    # + memcpy 40 = 565 µs. Rows by ms per step, descending.
    total = 0.565
    expected = [
        # name, category, tensorcore, activity, calls/step, ms/step, mean µs, phases
        (GEMM_TENSORCORE, "gemm", True, "kernel", 2, 0.350, 175.0, "backward,forward"),  # xmma → gemm, tensorop → TC
        (MULTI_TENSOR_APPLY, "optimizer", False, "kernel", 1, 0.100, 100.0, "optimizer"),
        (ELEMENTWISE, "elementwise", False, "kernel", 2, 0.075, 37.5, "backward,forward"),  # 48 + 27
        (MEMCPY_HTOD, "memcpy", False, "memcpy", 1, 0.040, 40.0, "to_device"),
    ]
    assert [row["name"] for row in rows] == [e[0] for e in expected]
    for row, (name, category, tensorcore, activity, calls, ms, mean_us, phases) in zip(rows, expected, strict=True):
        assert (row["category"], row["tensorcore"], row["activity"], row["phases"]) == (
            category,
            tensorcore,
            activity,
            phases,
        ), name
        assert row["calls_per_step"] == approx(calls), name
        assert row["ms_per_step"] == approx(ms), name
        assert row["mean_us"] == approx(mean_us), name
        assert row["share_pct"] == approx(100 * ms / total), name


# ------------------------------------------------------------------------------------------------
# 2. a CPU-only inference trace


def inference_call(step: int, start: int, preprocess_us: int) -> list[dict]:
    """One call: preprocess `preprocess_us`, forward 700, postprocess 100 (offsets from each stage):

    preprocess   aten::div 50..150 (100, leaf)
    forward      aten::conv2d 10..510 (500) ⊃ aten::convolution 20..500 (480)
                   ⊃ aten::mkldnn_convolution 30..490 (460) ⊃ aten::empty 35..40 (5, leaf)
                 aten::relu 520..580 (60) ⊃ aten::clamp_min 525..575 (50, leaf)
    postprocess  aten::sigmoid 10..40 (30, leaf)
    """
    f = start + preprocess_us
    p = f + 700
    dims = [[1, 3, 64, 64], [16, 3, 3, 3]]  # batch of 1 image
    return [
        annotation(f"ProfilerStep#{step}", start, preprocess_us + 800),
        annotation("## preprocess ##", start, preprocess_us),
        annotation("## forward ##", f, 700),
        annotation("## postprocess ##", p, 100),
        op("aten::div", start + 50, 100),
        op("aten::conv2d", f + 10, 500, dims),
        op("aten::convolution", f + 20, 480, dims),
        op("aten::mkldnn_convolution", f + 30, 460),
        op("aten::empty", f + 35, 5),
        op("aten::relu", f + 520, 60),
        op("aten::clamp_min", f + 525, 50),
        op("aten::sigmoid", p + 10, 30),
    ]


def cpu_inference_events() -> list[dict]:
    # call 1: 0..1000 (preprocess 200); call 2: 1000..2200 (preprocess 400)
    return inference_call(1, 0, 200) + inference_call(2, 1000, 400)


def test_percentiles_of_a_trace_with_enough_calls(tmp_path):
    """120 calls whose preprocess lasts 200 + 10·k µs (k = 0 … 119, shuffled): every call is
    800 µs + its preprocess. Percentiles by linear interpolation, as numpy's default computes them."""
    import random

    import numpy as np

    order = list(range(120))
    random.Random(7).shuffle(order)
    events, start, latencies = [], 0, []
    for step, k in enumerate(order, 1):
        events += inference_call(step, start, 200 + 10 * k)
        latencies.append(1000 + 10 * k)
        start += 1000 + 10 * k
    m = metrics(write_trace(tmp_path / "many.json", events))
    assert m["steps"] == 120
    for name, q in (("latency_p50_ms", 50), ("latency_p90_ms", 90), ("latency_p99_ms", 99)):
        assert m[name] == approx(float(np.percentile(latencies, q)) / 1000), name


@pytest.fixture
def cpu_trace(tmp_path):
    return write_trace(tmp_path / "cpu_infer.json", cpu_inference_events())


def test_cpu_inference_metrics(cpu_trace):
    m = metrics(cpu_trace)
    assert m["steps"] == 2
    # latency per call: 1000 and 1200 µs → mean 1.1 ms; linear-interpolated median 1000 + 0.5×200;
    # two calls give no p90 (needs 20) and no p99 (needs 100): null, not the slowest call in disguise
    assert m["step_ms"] == approx(1.1)
    assert m["latency_p50_ms"] == approx(1.100)
    assert m["latency_p90_ms"] is None and m["latency_p99_ms"] is None
    # stages: preprocess (200 + 400) ÷ 2 = 300 µs, forward 700, postprocess 100; shares of 1100
    assert m["preprocess_ms"] == approx(0.3)
    assert m["forward_ms"] == approx(0.7)
    assert m["postprocess_ms"] == approx(0.1)
    assert m["preprocess_pct"] == approx(100 * 300 / 1100)
    assert m["forward_pct"] == approx(100 * 700 / 1100)
    assert m["postprocess_pct"] == approx(100 * 100 / 1100)
    # images: the first conv2d's Input Dims start [[1, … → 1 per call; window 0..2200 µs
    # → 2 images ÷ 0.0022 s = 909.09 img/s, 1.1 ms per image
    assert m["images_per_step"] == 1
    assert m["window_ms"] == approx(2.2)
    assert m["throughput_img_s"] == approx(2 / 0.0022)
    assert m["ms_per_img"] == approx(1.1)
    # on CPU a launch is a dispatched leaf op: div, empty, clamp_min, sigmoid = 4 per call
    assert m["launches_per_step"] == approx(4)
    assert m["ops_per_step"] == approx(8)
    # host overhead (CPU): forward time 700 µs minus the self time of the ops that execute work in it:
    # mkldnn_convolution 460 − 5 = 455 (more than half its time is its own), empty 5, clamp_min 50
    # → 700 − 510 = 190 µs per call; conv2d (self 20 of 500), convolution (20 of 480) and relu
    # (10 of 60) only dispatch. Per launch: 190 ÷ 4 = 47.5 µs
    assert m["host_overhead_ms"] == approx(0.190)
    assert m["host_overhead_pct"] == approx(100 * 0.190 / 1.1)
    assert m["per_launch_host_us"] == approx(47.5)
    # executing self time over both calls: (455 + 5 + 50 + div 100 + sigmoid 30) × 2 = 1280 of 2200 µs
    assert m["leaf_busy_pct"] == approx(100 * 1280 / 2200)
    # no device: every GPU figure is null, and so are the training shares
    for name in GPU_ONLY_METRICS + ("dataload_pct", "to_device_pct"):
        assert m[name] is None, name


def test_cpu_inference_ops(cpu_trace):
    rows = cli_json("ops", str(cpu_trace))["ops"]
    # per call (µs): name → (self, total). Self = own duration − direct children's durations.
    expected = [
        ("aten::mkldnn_convolution", 455, 460),  # 460 − empty 5
        ("aten::div", 100, 100),
        ("aten::clamp_min", 50, 50),
        ("aten::sigmoid", 30, 30),
        ("aten::conv2d", 20, 500),  # 500 − convolution 480; before convolution: same self, larger total
        ("aten::convolution", 20, 480),  # 480 − mkldnn_convolution 460
        ("aten::relu", 10, 60),  # 60 − clamp_min 50
        ("aten::empty", 5, 5),
    ]
    all_self = sum(e[1] for e in expected)  # 690 µs
    assert [row["name"] for row in rows] == [e[0] for e in expected]
    for row, (name, self_us, total_us) in zip(rows, expected, strict=True):
        assert row["self_ms_per_step"] == approx(self_us / 1000), name
        assert row["total_ms_per_step"] == approx(total_us / 1000), name
        assert row["calls_per_step"] == approx(1), name
        assert row["self_pct"] == approx(100 * self_us / all_self), name


def test_cpu_inference_phases(cpu_trace):
    result = cli_json("phases", str(cpu_trace))
    assert result["profile"]["kind"] == "infer"
    assert result["profile"]["device_type"] == "cpu"
    # per call: preprocess 300 µs with div; forward 700 with 6 ops; postprocess 100 with sigmoid
    expected = [("preprocess", 0.3, 1), ("forward", 0.7, 6), ("postprocess", 0.1, 1)]
    assert [p["phase"] for p in result["phases"]] == [e[0] for e in expected]
    for row, (phase, wall_ms, ops) in zip(result["phases"], expected, strict=True):
        assert row["wall_ms"] == approx(wall_ms), phase
        assert row["wall_pct"] == approx(100 * wall_ms / 1.1), phase
        assert row["ops"] == approx(ops), phase
        # a CPU profile has no device columns: null, not 0
        assert row["gpu_ms"] is None and row["kernels"] is None, phase


def test_pretty_printed_trace_keeps_the_batch(tmp_path):
    """A trace written with whitespace inside its arrays (`python -m json.tool`, json.dump(indent=…))
    holds the same JSON values: the decoder keeps Input Dims as compact JSON text, so the batch the
    SQL reads from it is the same (this was a strict xfail: images_per_step came out null)."""
    # the same CPU trace as above, only pretty-printed: "Input Dims": [\n [\n 1, … — same JSON value
    path = write_trace(tmp_path / "cpu_infer_pretty.json", cpu_inference_events(), indent=1)
    m = metrics(path)
    # unchanged from test_cpu_inference_metrics: 1 image per call, 2 ÷ 0.0022 s
    assert m["step_ms"] == approx(1.1)
    assert m["images_per_step"] == 1
    assert m["throughput_img_s"] == approx(2 / 0.0022)


# ------------------------------------------------------------------------------------------------
# 3. no ProfilerStep, and device work queued before the capture began


@pytest.fixture
def stepless_trace(tmp_path):
    """No ProfilerStep on the host. A fill kernel runs 0..50 with no launch event (queued before
    the capture); cudaLaunchKernel 20..30 → tensorop gemm 60..160; cudaLaunchKernel 40..50 →
    FP32 sgemm 165.25..265 (99.75 µs: sub-µs times must survive)."""
    events = [
        kernel(FILL, 0, 50, correlation=99),
        runtime("cudaLaunchKernel", 20, 10, 1),
        kernel(GEMM_TENSORCORE, 60, 100, 1),
        runtime("cudaLaunchKernel", 40, 10, 2),
        kernel(GEMM_FP32_SIMT, "165.25", "99.75", 2),
    ]
    return write_trace(tmp_path / "stepless.json", events, [A100])


def test_stepless_window_is_the_device_span(stepless_trace):
    summary = cli_json("summary", str(stepless_trace))
    assert summary["window"]["source"] == "device active span (the trace has no ProfilerStep ranges)"
    m = metrics(stepless_trace)
    # window: first kernel start 0 → last kernel end 165.25 + 99.75 = 265 µs, one step
    assert m["steps"] == 1
    assert m["window_ms"] == approx(0.265)
    # busy: the pre-capture fill counts (50) + 100 + 99.75 = 249.75 µs of 265 → 94.245%
    # (without the fill it would be 199.75 / 265 = 75.4%)
    assert m["gpu_busy_ms"] == approx(0.24975)
    assert m["gpu_util_pct"] == approx(100 * 249.75 / 265)
    # Tensor Core: the tensorop gemm 100 of all kernel time 249.75 (fill included); sgemm is FP32 SIMT
    assert m["tensorcore_pct"] == approx(100 * 100 / 249.75)
    # the fill belongs to no step: 2 kernels and 2 launches in the step
    assert m["kernels_per_step"] == approx(2)
    assert m["launches_per_step"] == approx(2)
    # sgemm launched at 40, before the gemm ended at 160, started at 165.25 → 5.25 µs; the gemm's
    # predecessor, the fill, is in no step and does not make a gap
    assert m["kernel_gap_us"] == approx(5.25)
    # no host-caused idle: 50..60 and 160..165.25 precede kernels launched at 20 and 40, already queued
    assert m["host_overhead_ms"] == approx(0)
    # the device summary counts all 3 kernels in the window
    assert [(d["device"], d["kernels"]) for d in summary["devices"]] == [(0, 3)]
    assert summary["devices"][0]["busy_ms"] == approx(0.24975)


def test_stepless_kernels_count_precapture_work_marked(stepless_trace):
    """Issue 24 (e): the kernels table counts every execution inside the window, as the metrics do; the
    fill queued before the capture is there, marked launched_outside_steps (it was left out before, so the
    table disagreed with gpu_busy_ms and tensorcore_pct)."""
    rows = cli_json("kernels", str(stepless_trace))["kernels"]
    # device time per step: 100 + 99.75 + 50 = 249.75 µs, the same whole as tensorcore_pct's
    assert [(r["name"], r["category"], r["tensorcore"]) for r in rows] == [
        (GEMM_TENSORCORE, "gemm", True),
        (GEMM_FP32_SIMT, "gemm", False),
        (FILL, "elementwise", False),
    ]
    assert [r["ms_per_step"] for r in rows] == [approx(0.100), approx(0.09975), approx(0.050)]
    assert rows[0]["share_pct"] == approx(100 * 100 / 249.75)
    assert rows[2]["share_pct"] == approx(100 * 50 / 249.75)
    table = cli_json(
        "query", "SELECT name, launched_outside_steps, phase FROM kernels ORDER BY total_ms DESC", str(stepless_trace)
    )
    assert [(r["launched_outside_steps"], r["phase"]) for r in table] == [
        (False, "forward"),
        (False, "forward"),
        (True, None),
    ]


def test_precapture_kernel_is_clipped_to_the_first_step(tmp_path):
    # the fill runs 0..50 with no launch; ProfilerStep#7 is 20..220 on the host; cudaLaunchKernel
    # 30..40 → tensorop gemm 60..160
    events = [
        kernel(FILL, 0, 50, correlation=99),
        annotation("ProfilerStep#7", 20, 200),
        runtime("cudaLaunchKernel", 30, 10, 1),
        kernel(GEMM_TENSORCORE, 60, 100, 1),
    ]
    m = metrics(write_trace(tmp_path / "precapture.json", events, [A100]))
    # window 20..220 (host end 220 after the gemm's 160): 200 µs, one call
    assert m["window_ms"] == approx(0.2)
    assert m["step_ms"] == approx(0.2)
    # busy: the fill inside the window 20..50 = 30, gemm 100 → 130 of 200 = 65%
    assert m["gpu_util_pct"] == approx(65)
    # Tensor Core: gemm 100 of kernel time in the window 30 + 100 = 130
    assert m["tensorcore_pct"] == approx(100 * 100 / 130)
    assert m["kernels_per_step"] == approx(1)
    # host overhead: idle 50..60 precedes the gemm launched at 30 (already queued) → not counted;
    # the tail 160..220 after the gemm, nothing more launched, in the default forward phase → 60 µs
    assert m["host_overhead_ms"] == approx(0.060)


def test_idle_tail_of_the_last_step_is_host_overhead(tmp_path):
    """The device's idle time after its last kernel, while the host is still in a compute phase, is
    idle for want of work like any gap before a late launch (this was a strict xfail: host_idle only
    counted gaps that ended in a later kernel, so the tail was missing from host_overhead_ms)."""
    # one step 0..300, all forward; cudaLaunchKernel 10..20 → gemm 30..130; then the host works on
    # (an aten op 150..290) and launches nothing more before the step ends at 300
    events = [
        annotation("ProfilerStep#1", 0, 300),
        annotation("## forward ##", 0, 300),
        runtime("cudaLaunchKernel", 10, 10, 1),
        kernel(GEMM_TENSORCORE, 30, 100, 1),
        op("aten::add", 150, 140),
    ]
    m = metrics(write_trace(tmp_path / "idle_tail.json", events, [A100]))
    # busy 100 of the 300 µs window
    assert m["gpu_util_pct"] == approx(100 * 100 / 300)
    # device idle in forward for want of work: 0..30 (the gemm was launched at 10, after the device
    # went idle at 0) = 30, and 130..300 after the gemm, nothing launched = 170 → 200 µs
    assert m["host_overhead_ms"] == approx(0.200)
    # ÷ step 0.3 ms → 66.67%
    assert m["host_overhead_pct"] == approx(100 * 0.200 / 0.300)
