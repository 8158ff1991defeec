"""Per-step blame (sql/blame.sql, the `blame` table, the blame_<cause>_pct metrics) through the real CLI.

- small synthetic traces, one per cause, each with its expected rows derived by hand in the comments;
- an independent plain-Python blame over the raw events (tests/blame_reference.py, no product code)
  compared per step per cause, to the nanosecond, on every shared trace; every step's causes add up
  to its wall time;
- the expert expectations for a100_cutlass_adam_rank0 and a100_alexnet_no_profilerstep.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import blame_reference
from tests.conftest import cli_json, require_traces
from tests.synthetic_traces import (
    ELEMENTWISE,
    GEMM_TENSORCORE,
    MEMCPY_HTOD,
    annotation,
    kernel,
    memcpy,
    op,
    python_frame,
    runtime,
    shaped_op,
    write_trace,
)

NCCL = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
FLASH = (
    "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t>>(Flash_fwd_params)"
)
MEMCPY_TO_PAGEABLE = "Memcpy DtoH (Device -> Pageable)"
SHARED_TRACES = [
    "a100_alexnet_no_profilerstep",
    "a100_cutlass_adam_rank0",
    "cpu_only_rank34",
    "h100_vit_image_classifier",
    "mi250_rocm_minitoy",
    "v100_resnet50_workers0",
    "v100_resnet50_workers4",
    "v100_resnet_ddp_ns_resolution",
]


def product_blame(path: Path, env: dict | None = None) -> dict[int, dict[str, int]]:
    rows = cli_json("query", "SELECT step, cause, ns FROM blame ORDER BY step, cause", str(path), env=env)
    found: dict[int, dict[str, int]] = {}
    for row in rows:
        found.setdefault(row["step"], {})[row["cause"]] = row["ns"]
    return found


def launched(kernel_name: str, at_us: int, dur_us: int, correlation: int = 1) -> list[dict]:
    """An aten op on [0, 10) µs whose cudaLaunchKernel at [2, 4) queues `kernel_name` at `at_us`."""
    return [
        op("aten::mm", 0, 10),
        runtime("cudaLaunchKernel", 2, 2, correlation),
        kernel(kernel_name, at_us, dur_us, correlation),
    ]


def other_thread(event: dict) -> dict:
    return {**event, "tid": 2}


STEP = [annotation("ProfilerStep#1", 0, 100)]
# µs per cause, per step; step 1 is [0, 100) µs unless the case says otherwise
CASES = {
    # [0,10) host in an op that launches: launching; [10,40) GEMM; [40,100) nothing recorded
    "gemm_conv": (
        STEP + launched(GEMM_TENSORCORE, 10, 30),
        {1: {"launching": 10, "gemm_conv": 30, "unexplained_idle": 60}},
    ),
    "memory_bound": (
        STEP + launched(ELEMENTWISE, 10, 30),
        {1: {"launching": 10, "memory_bound": 30, "unexplained_idle": 60}},
    ),
    "attention": (STEP + launched(FLASH, 10, 30), {1: {"launching": 10, "attention": 30, "unexplained_idle": 60}}),
    "communication": (
        STEP + launched(NCCL, 10, 30),
        {1: {"launching": 10, "communication": 30, "unexplained_idle": 60}},
    ),
    # the async copy's call inside aten::copy_ launches; the device copies on [10,40)
    "memcpy_memset": (
        STEP + [op("aten::copy_", 0, 10), runtime("cudaMemcpyAsync", 2, 2, 1), memcpy(MEMCPY_HTOD, 10, 30, 1)],
        {1: {"launching": 10, "memcpy_memset": 30, "unexplained_idle": 60}},
    ),
    # a collective on another stream overlapping a GEMM costs only where it runs alone: GEMM [10,40),
    # nccl [20,60) → communication [40,60)
    "overlap_compute_hides_collective": (
        STEP
        + launched(GEMM_TENSORCORE, 10, 30)
        + [runtime("cudaLaunchKernel", 5, 1, 2), kernel(NCCL, 20, 40, 2, stream=9)],
        {1: {"launching": 10, "gemm_conv": 30, "communication": 20, "unexplained_idle": 40}},
    ),
    # cudaStreamSynchronize on [30,70): [30,40) the GEMM still runs (the sync costs nothing there),
    # [40,70) the device idles while the host blocks
    "sync_bubble": (
        STEP + launched(GEMM_TENSORCORE, 10, 30) + [runtime("cudaStreamSynchronize", 30, 40)],
        {1: {"launching": 10, "gemm_conv": 30, "sync_bubble": 30, "unexplained_idle": 30}},
    ),
    # cudaMemcpyAsync to pageable memory blocks the host [40,80); its device copy runs [78,80)
    "sync_bubble_pageable_copy": (
        STEP
        + launched(GEMM_TENSORCORE, 10, 30)
        + [runtime("cudaMemcpyAsync", 40, 40, 2), memcpy(MEMCPY_TO_PAGEABLE, 78, 2, 2)],
        {1: {"launching": 10, "gemm_conv": 30, "sync_bubble": 38, "memcpy_memset": 2, "unexplained_idle": 20}},
    ),
    # step 1 [0,2000): the kernel's first launch takes 1200 µs (lazy module loading), the GEMM runs
    # [1200,1300); step 2 [2000,4000): the same kernel's second launch is as long, but only launching
    "module_loading": (
        [
            annotation("ProfilerStep#1", 0, 2000),
            runtime("cudaLaunchKernel", 0, 1200, 1),
            kernel(GEMM_TENSORCORE, 1200, 100, 1),
            annotation("ProfilerStep#2", 2000, 2000),
            runtime("cudaLaunchKernel", 2000, 1200, 2),
            kernel(GEMM_TENSORCORE, 3200, 100, 2),
        ],
        {
            1: {"module_loading": 1200, "gemm_conv": 100, "unexplained_idle": 700},
            2: {"launching": 1200, "gemm_conv": 100, "unexplained_idle": 700},
        },
    ),
    # cudaMalloc [40,60) and cudaFree [60,65) while the device idles
    "allocator": (
        STEP + launched(GEMM_TENSORCORE, 10, 30) + [runtime("cudaMalloc", 40, 20), runtime("cudaFree", 60, 5)],
        {1: {"launching": 10, "gemm_conv": 30, "allocator": 25, "unexplained_idle": 35}},
    ),
    # the DataLoader's next() on [40,90), with a CPU op inside it: all waiting for data
    "dataload": (
        STEP
        + launched(GEMM_TENSORCORE, 10, 30)
        + [
            annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 40, 50),
            op("aten::stack", 50, 10),
        ],
        {1: {"launching": 10, "gemm_conv": 30, "dataload": 50, "unexplained_idle": 10}},
    ),
    # an op that launches nothing [40,70): cpu_work; an explicit ## preprocess ## range [70,80): preprocess
    "cpu_work": (
        STEP + launched(GEMM_TENSORCORE, 10, 30) + [op("aten::empty", 40, 30), annotation("## preprocess ##", 70, 10)],
        {1: {"launching": 10, "gemm_conv": 30, "cpu_work": 30, "preprocess": 10, "unexplained_idle": 20}},
    ),
    # issue 24 (b): a recorded Python frame [40,90) while the device idles is the model's Python, not
    # unexplained; inside it an op that launches nothing [50,60) is cpu_work (ops win over the frame)
    "python_frame": (
        STEP
        + launched(GEMM_TENSORCORE, 10, 30)
        + [python_frame("transformers/image_transforms.py(390): normalize", 40, 50), op("aten::sub", 50, 10)],
        {1: {"launching": 10, "gemm_conv": 30, "cpu_work": 10, "python": 40, "unexplained_idle": 10}},
    ),
    # a recorded host range (a module's forward) [40,80) with nothing inside it: host time of that range
    "python_range": (
        STEP + launched(GEMM_TENSORCORE, 10, 30) + [annotation("module forward: head (Detect)", 40, 40)],
        {1: {"launching": 10, "gemm_conv": 30, "python": 40, "unexplained_idle": 20}},
    ),
    # inference: a Python frame [0,30) before the call's first launch (cudaLaunchKernel at 32) is preprocessing;
    # aten::mm [30,35) holds the launch; [35,40) and [70,100) nothing; the GEMM runs [40,70)
    "preprocess_before_first_kernel": (
        STEP
        + [
            python_frame("preprocess.py(12): letterbox", 0, 30),
            op("aten::mm", 30, 5),
            runtime("cudaLaunchKernel", 32, 2, 1),
            kernel(GEMM_TENSORCORE, 40, 30, 1),
        ],
        {1: {"preprocess": 30, "launching": 5, "gemm_conv": 30, "unexplained_idle": 35}},
    ),
    # issue 24 (d): a copy from pageable memory to the device blocks the host too [40,80), device copy [76,80)
    "sync_bubble_pageable_to_device": (
        STEP
        + launched(GEMM_TENSORCORE, 10, 30)
        + [
            runtime("cudaMemcpyAsync", 40, 40, 2),
            memcpy("Memcpy HtoD (Pageable -> Device)", 76, 4, 2, copy_bytes=4096),
        ],
        {1: {"launching": 10, "gemm_conv": 30, "sync_bubble": 36, "memcpy_memset": 4, "unexplained_idle": 20}},
    ),
    # issue 24 (d): a copy whose name says nothing of pageable memory, but whose cudaMemcpyAsync [40,80) returned
    # only after its device copy [60,75) finished: the host waited for it, a stall like any blocking copy
    # (not launching): [40,60) and [75,80) sync_bubble = 25, the copy itself [60,75) memcpy_memset
    "sync_bubble_copy_call_waited": (
        STEP
        + launched(GEMM_TENSORCORE, 10, 30)
        + [
            runtime("cudaMemcpyAsync", 40, 40, 2),
            memcpy("Memcpy HtoD (Host -> Device)", 60, 15, 2, copy_bytes=8192),
        ],
        {1: {"launching": 10, "gemm_conv": 30, "sync_bubble": 25, "memcpy_memset": 15, "unexplained_idle": 20}},
    ),
    # a pinned async copy [40,44) whose device copy runs later [50,60): the call returned at once, so it is a
    # launch, not a stall: launching 10 + 4, memcpy_memset 10
    "pinned_copy_is_a_launch": (
        STEP
        + launched(GEMM_TENSORCORE, 10, 30)
        + [
            runtime("cudaMemcpyAsync", 40, 4, 2),
            memcpy("Memcpy HtoD (Pinned -> Device)", 50, 10, 2, copy_bytes=8192),
        ],
        {1: {"launching": 14, "gemm_conv": 30, "memcpy_memset": 10, "unexplained_idle": 46}},
    ),
    # cudaStreamCreateWithFlags [40,90) while the device idles: start-up, not launching
    "startup": (
        STEP + launched(GEMM_TENSORCORE, 10, 30) + [runtime("cudaStreamCreateWithFlags", 40, 50)],
        {1: {"launching": 10, "gemm_conv": 30, "startup": 50, "unexplained_idle": 10}},
    ),
    # step 1 [0,100) launches a GEMM running [10,150): its wall stops at step 2's start; step 2 [100,200)
    # launches one at [150,230). The device is busy 220 µs of the host's 200 µs span: it did not keep up, so
    # the 30 µs after the host's end are the device's lag, the last step's own time (issue 24: only a device
    # that kept up has a drain reported beside the steps instead): its wall runs to 230, all GEMM
    "device_tail_and_next_step": (
        [annotation("ProfilerStep#1", 0, 100), annotation("ProfilerStep#2", 100, 100)]
        + launched(GEMM_TENSORCORE, 10, 140)
        + [op("aten::mm", 100, 10), runtime("cudaLaunchKernel", 102, 2, 2), kernel(GEMM_TENSORCORE, 150, 80, 2)],
        {1: {"launching": 10, "gemm_conv": 90}, 2: {"gemm_conv": 130}},
    ),
    # the same steps with short GEMMs [10,40) and [180,230): busy 80 of the host's 200 µs, the device kept up,
    # so the last step ends with its host at 200 and the 30 µs after it are the drain, beside the steps
    "drain_after_the_last_step": (
        [annotation("ProfilerStep#1", 0, 100), annotation("ProfilerStep#2", 100, 100)]
        + launched(GEMM_TENSORCORE, 10, 30)
        + [op("aten::mm", 100, 10), runtime("cudaLaunchKernel", 102, 2, 2), kernel(GEMM_TENSORCORE, 180, 50, 2)],
        {
            1: {"launching": 10, "gemm_conv": 30, "unexplained_idle": 60},
            2: {"launching": 10, "unexplained_idle": 70, "gemm_conv": 20},
        },
    ),
    # the step is annotated on thread 1, the work runs on thread 2: blamed the same
    "work_on_another_thread": (
        STEP + [other_thread(e) for e in launched(GEMM_TENSORCORE, 10, 30)[:2]] + [kernel(GEMM_TENSORCORE, 10, 30, 1)],
        {1: {"launching": 10, "gemm_conv": 30, "unexplained_idle": 60}},
    ),
    # a poll of the device's progress, cudaEventQuery [40,60), waits on the device like a sync
    "sync_bubble_poll": (
        STEP + launched(GEMM_TENSORCORE, 10, 30) + [runtime("cudaEventQuery", 40, 20)],
        {1: {"launching": 10, "gemm_conv": 30, "sync_bubble": 20, "unexplained_idle": 40}},
    ),
    # CPU profile, ops on tiny inputs: add [0,10) on two 4-element tensors executes but is all dispatch; mul
    # [10,20) on a 4-element tensor and a scalar spends 7 µs in copy_ [12,19), which executes, but inside a
    # dispatch-sized op it is dispatch too: framework 20; add [20,50) on two 1024×1024 tensors: other ops 30
    "cpu_dispatch": (
        STEP
        + [
            shaped_op("aten::add", 0, 10, [[4], [4], []], ["float", "float", "Scalar"]),
            shaped_op("aten::mul", 10, 10, [[4], []], ["float", "Scalar"]),
            op("aten::copy_", 12, 7),
            shaped_op("aten::add", 20, 30, [[1024, 1024], [1024, 1024], []], ["float", "float", "Scalar"]),
        ],
        {1: {"framework_overhead": 20, "cpu_other_ops": 30, "unexplained_idle": 50}},
    ),
    # CPU profile: conv [0,40) and linear [50,80) execute (linear: 4 µs of children, 26 self); add
    # [40,50); relu [80,90) spends 1 µs in itself around clamp_min [80,89): framework 1, other ops 9;
    # gloo:all_reduce on thread 2 [91,96); nothing on [90,91) and [96,100)
    "cpu_profile": (
        STEP
        + [
            op("aten::conv2d", 0, 40),
            op("aten::add", 40, 10),
            op("aten::linear", 50, 30),
            op("aten::empty", 50, 2),
            op("aten::t", 52, 2),
            op("aten::relu", 80, 10),
            op("aten::clamp_min", 80, 9),
            other_thread(annotation("gloo:all_reduce", 91, 5)),
        ],
        {
            1: {
                "cpu_gemm_conv": 70,
                "cpu_other_ops": 19,
                "framework_overhead": 1,
                "cpu_communication": 5,
                "unexplained_idle": 5,
            }
        },
    ),
}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """A case's trace, written once for the module, and the reader cache its analysis is kept in: the tests
    that read one case analyse it once (~0.7 CPU-s each)."""
    root = tmp_path_factory.mktemp("blame-cases")
    env = {"XDG_CACHE_HOME": str(root / "cache")}

    def written(case: str) -> tuple[Path, dict]:
        path = root / f"{case}.json"
        if not path.exists():
            write_trace(path, CASES[case][0])
        return path, env

    return written


@pytest.mark.parametrize("case", sorted(CASES))
def test_synthetic_cause(case, synthetic):
    expected_us = CASES[case][1]
    path, env = synthetic(case)
    expected_ns = {step: {cause: us * 1000 for cause, us in causes.items()} for step, causes in expected_us.items()}
    assert product_blame(path, env) == expected_ns
    # the reference follows the same rules: it must agree on the hand-derived rows too
    assert {step: b["causes"] for step, b in blame_reference.blame(path).items()} == expected_ns


def test_blame_table_columns_and_metric(synthetic):
    """share_pct and step_ms follow from ns; `get` answers a cause's share of the steps' wall time."""
    path, env = synthetic("sync_bubble")
    rows = cli_json("query", "SELECT cause, ns, ms, share_pct, step_ms, side FROM blame", str(path), env=env)
    by_cause = {row["cause"]: row for row in rows}
    assert by_cause["sync_bubble"]["share_pct"] == pytest.approx(30.0)  # 30 of 100 µs
    assert by_cause["sync_bubble"]["ms"] == pytest.approx(0.03)
    assert by_cause["gemm_conv"]["side"] == "device" and by_cause["sync_bubble"]["side"] == "host"
    assert [row["step_ms"] for row in rows] == [pytest.approx(0.1)] * len(rows)
    assert cli_json("get", str(path), "blame_sync_bubble_pct", "--json", env=env)["value"] == pytest.approx(30.0)


@pytest.fixture(scope="module")
def shared_traces() -> Path:
    return require_traces()


@pytest.mark.parametrize("name", SHARED_TRACES)
def test_matches_independent_reference(name, shared_traces):
    path = shared_traces / f"{name}.json.gz"
    reference = blame_reference.blame(path)
    assert product_blame(path) == {step: b["causes"] for step, b in reference.items() if b["causes"]}
    rows = cli_json(
        "query", "SELECT step, sum(ns) AS ns, any_value(step_ms) AS step_ms FROM blame GROUP BY step", str(path)
    )
    assert rows, "every shared trace has at least one step"
    for row in rows:
        assert row["ns"] == reference[row["step"]]["wall_ns"]  # the causes add up to the step, exactly
        assert abs(row["ns"] - row["step_ms"] * 1e6) <= 1


def test_cutlass_sync_bubble_is_largest(shared_traces):
    """a100_cutlass_adam_rank0: each ~216 ms step holds one cudaMemcpyAsync of ~147 ms whose device side is
    a 2 µs 'Memcpy DtoH (Device -> Pageable)' (checked in the raw events): the host is blocked in a copy
    to pageable memory, and the device idles for most of it, so sync_bubble must be the largest cause."""
    blamed = product_blame(shared_traces / "a100_cutlass_adam_rank0.json.gz")
    assert len(blamed) == 5
    for step, causes in blamed.items():
        assert max(causes, key=causes.get) == "sync_bubble", (step, causes)
        assert causes["sync_bubble"] > 0.35 * sum(causes.values())


def test_alexnet_cold_start_is_allocator_and_module_loading(shared_traces):
    """a100_alexnet_no_profilerstep: a cold start. One cudaLaunchKernel takes ~3 s (the kernel's first
    launch: lazy module loading), cudaFree ~6.5 s and cudaMalloc ~1.9 s in all, while the device idles."""
    blamed = product_blame(shared_traces / "a100_alexnet_no_profilerstep.json.gz")
    causes = blamed[1]
    total = sum(causes.values())
    assert causes["module_loading"] >= 2.5e9
    assert causes["allocator"] >= 8.0e9  # ~6.5 s of cudaFree + ~1.9 s of cudaMalloc
    assert causes["allocator"] + causes["module_loading"] > 0.8 * total
    assert sorted(causes, key=causes.get, reverse=True)[:2] == ["allocator", "module_loading"]


def _holders_statement() -> str:
    """sql/blame.sql's blame_holders statement alone: it reads only blame_intervals and blame_pieces."""
    import duckdb

    text = (Path(__file__).resolve().parents[1] / "sql" / "blame.sql").read_text(encoding="utf-8")
    statements = duckdb.connect().extract_statements(text)
    (holders,) = [s.query for s in statements if "TEMP TABLE blame_holders" in s.query]
    return holders


def test_holders_match_a_plain_python_reference():
    # Random host intervals of three causes (nested, overlapping, duplicated, shared names) and, per cause,
    # disjoint won pieces inside the time its intervals cover. The reference walks every nanosecond of every
    # piece and gives it to the covering interval of that cause with the least (duration, name).
    import bisect
    import random

    import duckdb
    import pyarrow as pa

    rng = random.Random(11)
    intervals = []  # (s, e, name, cause)
    for cause in ("python", "launching", "cpu_work"):
        for _ in range(300):
            s = rng.randint(0, 3000)
            e = s + rng.choice((1, 2, 5, 20, 80, 400))
            intervals.append((s, e, f"{cause[:2]}{rng.randint(0, 30)}", cause))
            if rng.random() < 0.1:
                intervals.append(intervals[-1])
    pieces = []  # (step, s, e, cause)
    for cause in ("python", "launching", "cpu_work"):
        covered = {t for s, e, _, c in intervals if c == cause for t in range(s, e)}
        t = 0
        for point in sorted(covered):
            if point >= t and rng.random() < 0.05:
                end = point + 1
                while end in covered and end - point < 60 and rng.random() < 0.97:
                    end += 1
                pieces.append((1 + point // 1000, point, end, cause))
                t = end + rng.randint(0, 3)
    # each cause's intervals by start: the ones covering t started at most the longest duration before it
    by_cause = {c: sorted((i_s, ie, name) for i_s, ie, name, ic in intervals if ic == c) for _, _, _, c in pieces}
    starts = {c: [i_s for i_s, _, _ in group] for c, group in by_cause.items()}
    longest = max(ie - i_s for i_s, ie, _, _ in intervals)
    expected: dict[tuple[str, str], int] = {}
    for _, s, e, cause in pieces:
        group, group_starts = by_cause[cause], starts[cause]
        for t in range(s, e):
            near = group[bisect.bisect_left(group_starts, t - longest) : bisect.bisect_right(group_starts, t)]
            covering = [(ie - i_s, name) for i_s, ie, name in near if i_s <= t < ie]
            name = min(covering)[1]
            expected[(cause, name)] = expected.get((cause, name), 0) + 1

    con = duckdb.connect()
    columns = ("s", "e", "name", "cause")
    con.register("i", pa.table({c: [row[n] for row in intervals] for n, c in enumerate(columns)}))
    con.register("p", pa.table({c: [row[n] for row in pieces] for n, c in enumerate(("step", "s", "e", "cause"))}))
    con.execute("CREATE TEMP TABLE blame_intervals AS SELECT s, e, name, cause, 15 AS priority FROM i")
    con.execute("CREATE TEMP TABLE blame_pieces AS SELECT step, s, e, cause, 'host' AS side FROM p")
    con.execute(_holders_statement())
    got = {(cause, name): ns for cause, name, ns in con.execute("SELECT cause, name, ns FROM blame_holders").fetchall()}
    assert len(pieces) > 50 and got == expected


def test_host_floor_by_hand(tmp_path):
    # Thread 1: aten::mm [0,10) launching a GEMM [10,40) with cudaLaunchKernel [2,4); cudaStreamSynchronize
    # [40,70) waits on the device; aten::add [70,80) launching an elementwise kernel [80,85) with [72,74).
    # Thread 2: a Python frame [75,90). Thread 1 works [0,10) and [70,80) (the sync is a wait), thread 2
    # [75,90): the union is [0,10) + [70,90) = 30 µs. Without the GEMMs their launch [2,4) goes too: 28 µs;
    # without the elementwise kernels, [72,74): 28 µs; a category with no launch here keeps 30.
    from libreyolo_profile.sqlmodules import run_module
    from libreyolo_profile.store.decode.parse import parse_trace
    from libreyolo_profile.store.ingest.analyse import register_roofline_inputs
    from libreyolo_profile.store.ingest.timeline import ingest

    events = STEP + [
        op("aten::mm", 0, 10),
        runtime("cudaLaunchKernel", 2, 2, 1),
        kernel(GEMM_TENSORCORE, 10, 30, 1),
        runtime("cudaStreamSynchronize", 40, 30),
        op("aten::add", 70, 10),
        runtime("cudaLaunchKernel", 72, 2, 2),
        kernel(ELEMENTWISE, 80, 5, 2),
        python_frame("train.py(12): augment", 75, 15, tid=2),
    ]
    parsed = parse_trace(write_trace(tmp_path / "floor.json", events))
    con = ingest(parsed, None)
    con.execute("CREATE OR REPLACE TEMP TABLE trace_info AS SELECT NULL::BIGINT AS rank")
    register_roofline_inputs(con, parsed.devices, None)
    run_module(con, "blame.sql")
    floors = dict(con.execute("SELECT category, ms_per_step * 1000 FROM blame_host_floor").fetchall())
    assert floors == pytest.approx({None: 30, "gemm": 28, "elementwise": 28})
