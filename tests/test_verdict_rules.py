"""SPEC §5's ordered verdict rules (sql/verdict_rules.sql) on hand-made metrics: the two that overrule any
blame, and the threshold rules of a profile without a blame (a built-in import). Each expected sentence
is written out by hand from the rule's words and the metrics given."""

from __future__ import annotations

import pytest

from libreyolo_profile.store.document.verdict import decide

BLAME = {"blame_launching_pct": 60.0, "blame_gemm_conv_pct": 40.0, "blame_step_ms": 10.0}


def test_unusable_durations_overrule_the_blame():
    v = decide({"step_ms": 5.0, **BLAME}, "train", True, None, "every duration is 0")
    assert (v["bound"], v["reason"], v["evidence"]) == ("unknown", "every duration is 0", {"step_ms": 5.0})
    assert v["next_step"].startswith("profile again: the trace's durations were lost")


def test_thrashing_overrules_the_blame():
    v = decide({"step_ms": 5.0, "peak_vram_mb": 900.0, **BLAME}, "train", True, "3 allocator retries")
    assert v["bound"] == "memory-pressure"
    assert v["reason"] == "device memory thrashed in the window: 3 allocator retries"
    assert v["evidence"] == {"peak_vram_mb": 900.0}


@pytest.mark.parametrize(
    "kind, on_gpu, metrics, bound, reason",
    [
        (
            "train",
            True,
            {"step_ms": 10.0, "dataload_pct": 25.0, "dataload_ms": 2.5},
            "dataloader",
            "waiting for data takes 25.0% of each step (2.50 of 10.00 ms; threshold 20%)",
        ),
        (  # a dataload share on an inference call is not a dataloader verdict
            "infer",
            False,
            {"step_ms": 10.0, "dataload_pct": 25.0, "leaf_busy_pct": 90.0},
            "cpu-compute",
            "leaf ops execute 90.0% of each step on the CPU (threshold 80%): the arithmetic itself is the cost",
        ),
        (
            "train",
            True,
            {"step_ms": 10.0, "to_device_pct": 15.0},
            "transfer",
            "copying batches to the device takes 15.0% of each step (n/a ms; threshold 15%)",
        ),
        (
            "infer",
            True,
            {"step_ms": 8.0, "sync_pct": 30.0, "sync_ms": 2.4},
            "sync",
            "the host is blocked in synchronizing calls for 30.0% of each step (2.40 ms; threshold 25%)",
        ),
        (
            "train",
            True,
            {"step_ms": 8.0, "communication_pct": 31.25},
            "communication",
            "collectives take 31.2% of kernel time (communication_pct; memcpy/memset excluded; threshold 30%)",
        ),
        (  # both stages dominate: preprocess is tested first
            "infer",
            True,
            {"step_ms": 20.0, "preprocess_pct": 45.0, "preprocess_ms": 9.0, "postprocess_pct": 50.0},
            "preprocess",
            "preprocess takes 45.0% of each call's latency (9.00 of 20.00 ms; threshold 40%)",
        ),
        (
            "infer",
            True,
            {"step_ms": 20.0, "preprocess_pct": 10.0, "postprocess_pct": 50.0, "postprocess_ms": 10.0},
            "postprocess",
            "postprocess takes 50.0% of each call's latency (10.00 of 20.00 ms; threshold 40%)",
        ),
        (
            "train",
            True,
            {"step_ms": 20.0, "gpu_util_pct": 90.0, "gemm_pct": 60.0, "tensorcore_pct": 12.5},
            "gpu-compute",
            "the GPU is busy 90.0% of the window and GEMM/conv kernels take 60.0% of kernel time "
            "(gemm_pct; on Tensor Cores 12.5% of kernel time)",
        ),
        (
            "train",
            True,
            {"step_ms": 20.0, "gpu_util_pct": 80.0, "gemm_pct": 20.0, "memory_bound_pct": 70.0},
            "gpu-memory",
            "the GPU is busy 80.0% of the window but elementwise/layout/norm kernels take 70.0% of kernel "
            "time (memory_bound_pct; GEMM only 20.0%)",
        ),
        (  # a missing utilization counts as 0 and reads as such
            "train",
            True,
            {"step_ms": 20.0, "host_overhead_ms": 12.0, "launches_per_step": 943, "per_launch_host_us": 12.75},
            "host-launch",
            "the GPU is busy only 0.0% of the window (threshold 80%): it waited 12.00 ms per step for the host, "
            "which issued 943 launches at 12.8 µs each and was blocked in sync only n/a% of the step",
        ),
        (
            "train",
            False,
            {
                "step_ms": 20.0,
                "leaf_busy_pct": 50.0,
                "host_overhead_ms": 10.0,
                "host_overhead_pct": 50.0,
                "launches_per_step": 120,
            },
            "cpu-overhead",
            "leaf ops execute only 50.0% of each step on the CPU; 10.00 ms per step (50.0%) is framework and "
            "Python time around 120 dispatched ops",
        ),
        (
            "train",
            False,
            {"step_ms": 20.0},
            "unknown",
            "the trace records no framework ops inside its steps, so neither CPU compute nor overhead can be "
            "told apart",
        ),
    ],
)
def test_threshold_rules_without_a_blame(kind, on_gpu, metrics, bound, reason):
    v = decide(metrics, kind, on_gpu, None)
    assert (v["bound"], v["reason"]) == (bound, reason)
    assert "method" not in v  # only the blame's verdict carries its method
    assert set(v["evidence"]) <= {*metrics, "step_ms", "gpu_util_pct", "sync_pct", "tensorcore_pct", "to_device_ms"}


def test_a_builtin_cpu_profile_without_leaf_time_says_what_its_profiler_lacks():
    v = decide({"step_ms": 20.0}, "train", False, None, source="builtin")
    assert v["bound"] == "unknown"
    assert v["reason"].startswith("LibreYOLO's built-in profiler records no leaf-op time on the CPU")
    assert v["next_step"] == "measure again with `libreyolo profile run` or `libreyolo profile infer`"


def test_a_threshold_verdict_gives_its_verdicts_one_advice():
    """One advice per verdict (sql/verdicts.sql), whether a threshold rule or the blame decides it."""
    by_rule = decide({"step_ms": 10.0, "dataload_pct": 25.0}, "train", True, None)
    by_blame = decide({"step_ms": 10.0, "blame_dataload_pct": 70.0, "blame_gemm_conv_pct": 30.0}, "train", True, None)
    assert by_rule["bound"] == by_blame["bound"] == "dataloader"
    assert by_blame["next_step"].startswith(by_rule["next_step"] + " — because ")
