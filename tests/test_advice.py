"""Advice from evidence (sql/advice.sql, issue 24 item 7): each rule of the catalogue on a synthetic trace
built to trigger it, through the real CLI. The verdict's next_step must name what triggered it, with its
figures (derived by hand in the comments), and the saving the blame gives it; nothing generic where a
specific cause is there. All times µs; each trace is one 100 µs step unless said otherwise."""

from __future__ import annotations

import pytest

from tests.conftest import cli_json
from tests.synthetic_traces import (
    A100,
    GEMM_FP32_SIMT,
    GEMM_TENSORCORE,
    annotation,
    kernel,
    memcpy,
    op,
    runtime,
    shaped_op,
    write_trace,
)

F, S, L = "float", "Scalar", "ScalarList"

NCCL = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
STEP = [annotation("ProfilerStep#1", 0, 100)]


def launched(kernel_name: str, at_us, dur_us, correlation: int = 1) -> list[dict]:
    return [
        op("aten::mm", 0, 10),
        runtime("cudaLaunchKernel", 2, 2, correlation),
        kernel(kernel_name, at_us, dur_us, correlation),
    ]


CASES = {
    # CPU inference: conv [0,40), batch_norm [40,60) around native_batch_norm [41,59) (18 µs self), relu [60,95)
    "batchnorm_not_folded": (
        STEP
        + [
            op("aten::conv2d", 0, 40),
            op("aten::batch_norm", 40, 20),
            op("aten::native_batch_norm", 41, 18),
            op("aten::relu", 60, 35),
        ],
        [
            "fold BatchNorm",
            "1 aten BatchNorm ops per call (aten::native_batch_norm), 0.02 ms per call",
            "projected saving at most 0.02 ms per profiled call (18.0% of it: the BatchNorm ops' own CPU time, which "
            "folding removes)",
        ],
    ),
    # CPU: one convolution on the slow path [1,49) (48 µs), one through oneDNN [51,89) (38 µs), shapes recorded.
    # oneDNN: 3→4 channels, 3×3, padding 1 on 8×8 → 64 positions × |w| 108 × 2 = 13,824 FLOP in 38 µs
    # (0.36 GFLOP/s); the slow one: a batch of 2, 3→2 channels, 2 × 6,912 FLOP, which take 38 µs at that rate →
    # saves 48 − 38 = 10 µs. A batch of 2 is one PyTorch sends to oneDNN itself (the cases below: batch 1)
    "slow_convolution": (
        STEP
        + [
            op("aten::conv2d", 0, 50),
            shaped_op(
                "aten::_slow_conv2d_forward",
                1,
                48,
                [[2, 3, 8, 8], [2, 3, 3, 3], [], [2], [], []],
                [F, F, L, F, L, L],
                ["", "", "[3, 3]", "", "[1, 1]", "[1, 1]"],
            ),
            op("aten::conv2d", 50, 40),
            shaped_op(
                "aten::mkldnn_convolution",
                51,
                38,
                [[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], []],
                [F, F, F, L, L, L, S],
                ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"],
            ),
        ],
        [
            "miss oneDNN",
            "1 convolutions per call on the native path that PyTorch's own rule sends to oneDNN "
            "(aten::_slow_conv2d_forward, 0.05 ms per call self time) beside 1 of aten::mkldnn_convolution",
            "projected saving at most 0.01 ms per profiled call (10.0% of it: their 0.05 ms per call less the 0.04 ms "
            "their FLOPs take at the 0.36 GFLOP/s this profile's own oneDNN convolutions ran at)",
        ],
    ),
    # an FP32 SIMT GEMM [4,100) on an Ampere device: 96% busy, all of its GEMM time off the Tensor Cores. It held
    # the device 96 µs; at the A100's FP32 19.5 ÷ TF32 156 TFLOP/s it would take 12 µs → saves 84 µs
    "fp32_convolutions_on_tensor_cores": (
        STEP + [op("aten::mm", 0, 4), runtime("cudaLaunchKernel", 1, 2, 1), kernel(GEMM_FP32_SIMT, 4, 96, 1)],
        [
            "AMP",
            "0.10 ms per call (100.0% of GEMM/conv kernel time) in GEMM/conv kernels off the Tensor Cores, most in "
            f"{GEMM_FP32_SIMT}",
            "projected saving at most 0.08 ms per profiled call (84.0% of it: the 0.10 ms per call they held the "
            "device "
            "× (1 − A100 40GB FP32 19.5 ÷ TF32 156.0 TFLOP/s dense peaks, sql/device_peaks.sql), if they stay "
            "compute-bound)",
        ],
    ),
    # a device-to-pageable copy: cudaMemcpyAsync blocks [40,80) while the device copy runs [78,80) → 38 µs
    "blocking_copies": (
        STEP
        + launched(GEMM_TENSORCORE, 10, 30)
        + [
            op("aten::copy_", 40, 40),
            runtime("cudaMemcpyAsync", 40, 40, 2),
            memcpy("Memcpy DtoH (Device -> Pageable)", 78, 2, 2, copy_bytes=4096),
        ],
        [
            "pin_memory=True",
            "1 blocking copies per call (DtoH Device -> Pageable: 1 per call, 4096 bytes per call, pinned: no); "
            "the host blocked 0.04 ms per call in them with the device idle",
            "projected saving at most 0.04 ms",
        ],
    ),
    # the single-process DataLoader [40,90): 50 µs of waiting for data
    "single_process_dataloader": (
        STEP
        + launched(GEMM_TENSORCORE, 10, 30)
        + [
            annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 40, 50),
            op("aten::stack", 50, 10),
        ],
        [
            "raise num_workers",
            "the step waits 0.05 ms per call (50.0% of it) in "
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
        ],
    ),
    # .item() [40,75): _local_scalar_dense → cudaStreamSynchronize [45,75) with the device idle: 30 µs
    "per_step_sync": (
        STEP
        + launched(GEMM_TENSORCORE, 10, 30)
        + [op("aten::item", 40, 35), op("aten::_local_scalar_dense", 41, 34), runtime("cudaStreamSynchronize", 45, 30)],
        [
            "remove .item()",
            "2 calls of aten::_local_scalar_dense, aten::item per call while the host blocked 0.03 ms "
            "per call in synchronizing calls",
            "projected saving at most 0.03 ms",
        ],
    ),
    # five ops of 15 µs, each launching a 5 µs kernel that runs right after: launch-bound
    "tiny_launch_bound_kernels": (
        STEP
        + [
            e
            for i in range(5)
            for e in (
                op("aten::add", 20 * i, 15),
                runtime("cudaLaunchKernel", 20 * i + 5, 5, i + 1),
                kernel(GEMM_TENSORCORE.replace("gemm", "add"), 20 * i + 12, 5, i + 1),
            )
        ],
        ["CUDA graph", "5 kernels per call of 5.0 µs mean"],
    ),
    # an NCCL all-reduce [10,95) with nothing beside it: 85 µs of exposed communication
    "exposed_ddp_communication": (
        STEP + launched(NCCL, 10, 85),
        ["bucket_cap_mb", "1 all-reduce kernels per call (0.09 ms per call), 0.09 ms per call of it with no compute"],
    ),
}


# a synchronous copy with no pinned state in its name and no bytes recorded: cudaMemcpy [40,90) waits while its
# device copy runs [80,90) → the host blocked 40 µs with the device idle; named as recorded, bytes unrecorded
SYNCHRONOUS_COPY = (
    STEP
    + launched(GEMM_TENSORCORE, 10, 30)
    + [op("aten::copy_", 40, 50), runtime("cudaMemcpy", 40, 50, 2), memcpy("Memcpy HtoD (Host -> Device)", 80, 10, 2)],
    [
        "pin_memory=True",
        "1 blocking copies per call (HtoD Host -> Device: 1 per call, unrecorded bytes per call, pinned: not "
        "recorded); the host blocked 0.04 ms per call in them with the device idle",
    ],
)


def test_a_synchronous_copy_is_a_blocking_copy_not_a_scalar_read(tmp_path):
    events, expected = SYNCHRONOUS_COPY
    verdict = cli_json("summary", str(write_trace(tmp_path / "copy.json", events, [A100])))["verdict"]
    assert verdict["evidence"].get("advice_rule") == "blocking_copies", verdict
    for text in expected:
        assert text in verdict["next_step"], (text, verdict["next_step"])
    # the reason's holder names the copy: its direction, memory and pinned state
    assert "cudaMemcpy HtoD Host -> Device (pinned: not recorded, unrecorded bytes)" in verdict["reason"], verdict


@pytest.mark.parametrize("rule", sorted(CASES))
def test_each_rule_fires_on_its_evidence_and_names_it(rule, tmp_path):
    events, expected = CASES[rule]
    doc = cli_json("summary", str(write_trace(tmp_path / f"{rule}.json", events, [A100])))
    verdict = doc["verdict"]
    assert verdict["evidence"].get("advice_rule") == rule, verdict
    for text in expected:
        assert text in verdict["next_step"], (text, verdict["next_step"])


def test_no_advice_rule_without_its_evidence(tmp_path):
    """A GEMM that is 96% of the step on Tensor Cores fires no rule: the bound's own advice then names the
    blamed cause that triggered it, never a rule without evidence."""
    events = STEP + [op("aten::mm", 0, 4), runtime("cudaLaunchKernel", 1, 2, 1), kernel(GEMM_TENSORCORE, 4, 96, 1)]
    verdict = cli_json("summary", str(write_trace(tmp_path / "t.json", events, [A100])))["verdict"]
    assert verdict["bound"] == "gpu-compute" and "advice_rule" not in verdict["evidence"]
    assert "because gemm_conv 96.0% of the profiled call (0.10 ms)" in verdict["next_step"]


def slow_by_choice(batch: int, channels: int, side: int, kernel: int, stride: int = 1) -> list[dict]:
    """A CPU step whose one convolution took the native path, wrapped as PyTorch 2 records it (thnn_conv2d →
    _slow_conv2d_forward), beside a oneDNN one."""
    dims = [[batch, channels, side, side], [2, channels, kernel, kernel], [], [2], [], []]
    concrete = ["", "", f"[{kernel}, {kernel}]", "", f"[{stride}, {stride}]", "[0, 0]"]
    return STEP + [
        op("aten::conv2d", 0, 50),
        shaped_op("aten::thnn_conv2d", 1, 48, dims, [F, F, L, F, L, L], concrete),
        shaped_op("aten::_slow_conv2d_forward", 2, 46, dims, [F, F, L, F, L, L], concrete),
        op("aten::mkldnn_convolution", 51, 38),
    ]


@pytest.mark.parametrize(
    "batch, channels, side, kernel, stride, chosen",
    [
        (1, 3, 8, 3, 1, True),  # batch 1, 192 elements, 3×3: PyTorch's own choice ("native is faster")
        (1, 20, 32, 3, 1, True),  # 20,480 elements: still at the limit
        (1, 21, 32, 3, 1, False),  # 21,504 elements: oneDNN's
        (1, 3, 8, 5, 1, False),  # a 5×5 kernel: oneDNN's at any size
        (4, 3, 8, 1, 1, True),  # an unstrided 1×1 under batch 16: native when single-threaded
        (4, 3, 8, 1, 2, False),  # strided: oneDNN's
    ],
)
def test_slow_convolutions_pytorch_chose_get_no_advice(batch, channels, side, kernel, stride, chosen, tmp_path):
    """PyTorch routes some convolutions to its native kernel on purpose (use_mkldnn in ConvUtils.h): those
    are no miss and fire no rule; any other one does, counted once though a wrapper holds it."""
    events = slow_by_choice(batch, channels, side, kernel, stride)
    verdict = cli_json("summary", str(write_trace(tmp_path / "conv.json", events, [A100])))["verdict"]
    if chosen:
        assert verdict["evidence"].get("advice_rule") != "slow_convolution", verdict
        assert "oneDNN" not in verdict["next_step"]
    else:
        assert verdict["evidence"].get("advice_rule") == "slow_convolution", verdict
        assert "1 convolutions per call on the native path" in verdict["next_step"], verdict["next_step"]


def test_batchnorm_on_a_gpu_saves_the_time_its_kernels_held_the_device(tmp_path):
    """GPU inference: aten::cudnn_batch_norm [0,10) launches cuDNN's inference BatchNorm kernel, which runs
    [10,98) with nothing beside it: the device is 88% busy in memory-bound work (gpu-memory), and folding
    BatchNorm into the convolutions would remove those 88 µs."""
    bn_kernel = "void cudnn::bn_fw_inf_1C11_kernel_NCHW<float, float, true, 1>(float, float, cudnnTensorStruct)"
    events = STEP + [
        op("aten::cudnn_batch_norm", 0, 10),
        runtime("cudaLaunchKernel", 2, 2, 1),
        kernel(bn_kernel, 10, 88, 1),
    ]
    verdict = cli_json("summary", str(write_trace(tmp_path / "bn.json", events, [A100])))["verdict"]
    assert verdict["evidence"].get("advice_rule") == "batchnorm_not_folded", verdict
    assert "1 aten BatchNorm ops per call (aten::cudnn_batch_norm)" in verdict["next_step"]
    assert (
        "projected saving at most 0.09 ms per profiled call (88.0% of it: the time its BatchNorm kernels held the "
        "device with no GEMM/conv beside them, which folding removes)" in verdict["next_step"]
    ), verdict["next_step"]


# issue 49: a GPU run whose device activity was not recorded. One 100 µs step: aten::conv2d [0,90) over
# aten::cudnn_convolution [5,85), which launched a kernel (cudaLaunchKernel [10,14)) the trace does not hold.
GPU_UNRECORDED = STEP + [
    op("aten::conv2d", 0, 90),
    op("aten::cudnn_convolution", 5, 80),
    runtime("cudaLaunchKernel", 10, 4, 1),
]


@pytest.mark.parametrize(
    "events, evidence",
    [
        (GPU_UNRECORDED, "1 device runtime calls (cudaLaunchKernel)"),
        # activities=[CPU] only: no runtime call either, the cuDNN op is what shows the device at work
        ([e for e in GPU_UNRECORDED if e.get("cat") != "cuda_runtime"], "1 ops only an accelerator runs"),
    ],
    ids=["runtime calls", "ops only"],
)
def test_a_gpu_run_without_device_events_is_no_cpu_profile(events, evidence, tmp_path):
    doc = cli_json("summary", str(write_trace(tmp_path / "unrecorded.json", events, [A100])))
    marks, verdict = doc["marks"], doc["verdict"]
    assert "cpu_profile" not in marks and "no_device_events" in marks, marks
    assert evidence in marks["no_device_events"] and "NVIDIA A100-SXM4-40GB" in marks["no_device_events"]
    # a host-side verdict whose next step is to record the device, never "use … a GPU"
    assert verdict["bound"] in ("cpu-compute", "cpu-overhead"), verdict
    assert verdict["evidence"].get("advice_rule") == "no_device_events", verdict
    assert "profile again with the device activity recorded" in verdict["next_step"]
    assert "a GPU" not in verdict["next_step"], verdict["next_step"]


def test_device_properties_alone_leave_a_cpu_profile(tmp_path):
    """Kineto writes deviceProperties on any CUDA build: a CPU run on a GPU machine is still a CPU profile."""
    events = STEP + [op("aten::conv2d", 0, 90), op("aten::mkldnn_convolution", 5, 80)]
    marks = cli_json("summary", str(write_trace(tmp_path / "cpu.json", events, [A100])))["marks"]
    assert "cpu_profile" in marks and "no_device_events" not in marks, marks
