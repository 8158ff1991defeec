"""Every table agrees with the headline (issue 24 item 4): on every shared trace the device time of each
table that holds device time (kernels, phases, steps, and the readers on them) is the kernel time inside
the window that tests/blame_reference.py computes from the raw events, per device, and the headline's;
the roofline's rows hold every execution in the window (its op rows and the work no op launched) and its
shares add up to 100%; the modules' roots hold the kernel time launched inside the model;
the category table's share of kernel time is the gemm/memory-bound/communication metric of the same name;
every share names its whole; the blame sums to its steps."""

from __future__ import annotations

import pytest

from tests.blame_reference import blame, window_kernel_ns
from tests.conftest import TRACES, cli_json, require_traces

SHARED = [
    "a100_alexnet_no_profilerstep",
    "a100_cutlass_adam_rank0",
    "cpu_only_rank34",
    "h100_vit_image_classifier",
    "mi250_rocm_minitoy",
    "v100_resnet50_workers0",
    "v100_resnet50_workers4",
    "v100_resnet_ddp_ns_resolution",
]
# every rank of the 8-rank DLRM job too (small traces: one step each)
RANKS = sorted(
    f"multirank/dlrm_8x_v100/{p.name.removesuffix('.json.gz')}"
    for p in (TRACES / "multirank" / "dlrm_8x_v100").glob("worker*.json.gz")
)
SHARE_OF = {
    "gemm_pct": ("gemm",),
    "communication_pct": ("communication",),
    "memory_bound_pct": ("elementwise", "layout", "norm", "reduce", "embedding"),
}
# every table's kernel time, in one query: the kernels table per device, the phases and steps tables in all
TOTALS = (
    "SELECT 'kernels' AS tbl, device, sum(total_ms) AS ms FROM kernels WHERE activity = 'kernel' GROUP BY device "
    "UNION ALL SELECT 'phases', NULL, sum(gpu_ms) FROM phases "
    "UNION ALL SELECT 'steps', NULL, sum(kernel_ms + outside_kernel_ms) FROM steps "
    "UNION ALL SELECT 'phases_outside', NULL, sum(gpu_ms) FILTER (WHERE launched_outside_steps) FROM phases "
    "UNION ALL SELECT 'kernels_outside', NULL, sum(total_ms) FILTER (WHERE launched_outside_steps) FROM kernels "
    "WHERE activity = 'kernel' "
    "UNION ALL SELECT 'blame_whole', NULL, count(*) FILTER (WHERE whole IS DISTINCT FROM 'step_ms') FROM blame "
    # the roofline holds every execution (kernels, memcpys, memsets): its op rows and the work no op launched
    "UNION ALL SELECT 'roofline', NULL, sum(device_ms_per_step) * (SELECT count(*) FROM steps) FROM roofline "
    "UNION ALL SELECT 'roofline_share', NULL, sum(time_share_pct) FROM roofline "
    # the modules' roots: the kernel time launched inside the model
    "UNION ALL SELECT 'modules', NULL, sum(device_ms) FROM modules WHERE depth = 0"
)
# a few ns per execution of rounding between the reference's Decimal µs and the product's ns is not a miss
NS_PER_EXECUTION = 1e-6


@pytest.mark.parametrize("name", SHARED + RANKS)
def test_every_table_sums_to_the_headline(name):
    path = require_traces() / f"{name}.json.gz"
    reference_ms = {int(dev): ns / 1e6 for dev, ns in window_kernel_ns(path).items()}
    doc = cli_json("summary", str(path))
    rows = cli_json("query", TOTALS, str(path))
    totals = {(r["tbl"], r["device"]): r["ms"] for r in rows}
    kernels = sum(d["kernels"] for d in doc["devices"])
    tolerance = NS_PER_EXECUTION * max(kernels, 1)
    reference_total = sum(reference_ms.values())

    assert {d["device"]: d["kernel_ms"] for d in doc["devices"]} == pytest.approx(reference_ms, abs=tolerance)
    for device, ms in reference_ms.items():
        assert totals[("kernels", device)] == pytest.approx(ms, abs=tolerance)
    if reference_ms:
        assert totals[("phases", None)] == pytest.approx(reference_total, abs=tolerance)
        assert totals[("steps", None)] == pytest.approx(reference_total, abs=tolerance)
        # the work launched outside the steps is the same in the phases table as in the kernels table
        assert (totals[("phases_outside", None)] or 0) == pytest.approx(totals[("kernels_outside", None)] or 0)
        # the phases reader (JSON), per step, adds up to the same kernel time per step
        steps = doc["window"]["steps"]
        assert sum(p["gpu_ms"] or 0 for p in doc["phases"]) * steps == pytest.approx(reference_total, abs=tolerance)
    assert totals[("blame_whole", None)] == 0  # every blame row names its whole
    executions_ms = sum(window_kernel_ns(path, kinds=("kernel", "copy")).values()) / 1e6
    if executions_ms:
        assert totals[("roofline", None)] == pytest.approx(executions_ms, abs=tolerance)
        assert totals[("roofline_share", None)] == pytest.approx(100.0, abs=1e-6)
    if totals[("modules", None)] is not None:  # a trace with module ranges (h100_vit_image_classifier)
        assert totals[("modules", None)] == pytest.approx(reference_total, abs=tolerance)

    if len(doc["devices"]) == 1:
        shares = {c["category"]: c["kernel_share_pct"] or 0 for c in doc["categories"]}
        for metric, categories in SHARE_OF.items():
            assert sum(shares.get(c, 0) for c in categories) == pytest.approx(doc["metrics"][metric] or 0, abs=1e-6)
    for device in doc["devices"]:
        assert device["busy_ms"] <= device["kernel_ms"] + 1e-9  # the union never exceeds the sum

    # the blame: each step's causes add up to its step_ms, which is the reference's step wall time
    reference = blame(path)
    assert len(doc["blame"]["steps"]) == len(reference)
    for step in doc["blame"]["steps"]:
        assert sum(step["causes"].values()) == pytest.approx(step["step_ms"], abs=1e-6)
        assert step["step_ms"] == pytest.approx(reference[step["step"]]["wall_ns"] / 1e6, abs=1e-6)
    assert doc["blame"]["whole"]
