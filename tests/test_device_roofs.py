"""The roof table (sql/device_peaks.sql, issue 49): every model is named by the device names its drivers
report, and by no other row; a device the table does not know gets no roof rather than a neighbour's
(GH200 is not an H200, GB200 not a B200, MI300A not an MI300X). Names are deviceProperties as Kineto
writes them: the name, the memory in MiB and the multiprocessor (NVIDIA SM, AMD CU) count. Where a name
below is in a shared trace, the comment says which; the others are what the vendors' drivers report
(nvidia-smi / torch.cuda.get_device_name, rocm-smi) for the part."""

from __future__ import annotations

import duckdb
import pytest

from libreyolo_profile.sqlfiles import sql_text

GIB = 1024  # MiB

# (device name, memory GiB, multiprocessors, the model it must get)
KNOWN = [
    ("Tesla V100S-PCIE-32GB", 31.7, 80, "V100S PCIe"),
    ("Tesla V100-SXM2-32GB", 31.7, 80, "V100 SXM2"),  # shared trace v100_resnet_ddp_ns_resolution
    ("Tesla V100-DGXS-32GB", 31.7, 80, "V100 SXM2"),  # shared trace v100_resnet50_workers0
    ("Tesla V100-PCIE-16GB", 15.8, 80, "V100 PCIe"),
    ("NVIDIA A100 80GB PCIe", 79.2, 108, "A100 PCIe 80GB"),
    ("NVIDIA A100-SXM4-80GB", 79.2, 108, "A100 SXM4 80GB"),  # shared trace a100_cutlass_adam_rank0
    ("NVIDIA A100-PG509-200", 39.4, 108, "A100 40GB"),  # shared trace a100_alexnet_no_profilerstep
    ("NVIDIA H100 NVL", 93.0, 132, "H100 NVL"),
    ("NVIDIA H100 PCIe", 79.2, 114, "H100 PCIe"),
    ("NVIDIA H100 80GB HBM3", 79.2, 132, "H100 SXM"),  # shared trace h100_vit_image_classifier
    ("NVIDIA H20", 95.0, 78, "H20"),
    ("NVIDIA H200 NVL", 139.8, 132, "H200 NVL"),
    ("NVIDIA H200", 139.8, 132, "H200 SXM"),
    ("NVIDIA GH200 480GB", 95.0, 132, "GH200 96GB"),
    ("NVIDIA GH200 144G HBM3e", 142.0, 132, "GH200 144GB"),
    ("NVIDIA B200", 178.4, 148, "B200"),  # shared trace corpus/b200__eager_trace
    ("NVIDIA GB200", 184.0, 152, "GB200"),
    ("NVIDIA B300 SXM6 AC", 268.0, 148, "B300"),
    ("NVIDIA L40S", 44.4, 142, "L40S"),
    ("NVIDIA L4", 22.0, 58, "L4"),
    ("AMD Instinct MI325X", 256.0, 304, "MI325X"),
    ("AMD Radeon Graphics", 256.0, 304, "MI325X"),  # ROCm without the marketing name: gfx942, 304 CUs, 256 GB
    ("AMD Instinct MI300X", 192.0, 304, "MI300X"),  # shared trace corpus/mi300__resnet_act_checkpoint
    ("AMD Instinct MI300X VF", 191.5, 304, "MI300X"),  # shared trace corpus/mi300__Qwen… (SR-IOV function)
    ("AMD Instinct MI355X", 288.0, 256, "MI355X"),
    ("AMD Instinct MI250X", 64.0, 110, "MI250X GCD"),
    ("AMD Radeon Graphics", 64.0, 110, "MI250X GCD"),
    ("AMD Instinct MI250", 64.0, 104, "MI250 GCD"),
    ("AMD Radeon Graphics", 64.0, 104, "MI250 GCD"),  # shared trace mi250_rocm_minitoy
]

# look-alikes the table does not know: each must get no roof at all, not its neighbour's
UNKNOWN = [
    ("NVIDIA H800", 79.2, 132),  # an H100 die with other interconnect and FP64 figures
    ("NVIDIA A800-SXM4-80GB", 79.2, 108),
    ("NVIDIA H20-3e", 139.8, 78),  # the H20's 141 GB successor: no published figures here
    ("NVIDIA GB300", 277.0, 152),
    ("NVIDIA L40", 44.4, 142),
    ("NVIDIA GeForce RTX 4090", 23.6, 128),
    ("NVIDIA GeForce RTX 2080 Ti", 10.8, 68),  # shared trace corpus/param_resnet_kineto
    ("AMD Instinct MI300A", 128.0, 228),
    ("AMD Instinct MI350X", 288.0, 256),  # same die as MI355X at another clock
    ("AMD Radeon Graphics", 288.0, 256),  # gfx950 without its name: MI350X or MI355X
    ("Intel(R) Data Center GPU Max 1550", 64.0, 512),
    ("", 80.0, 132),
]


@pytest.fixture(scope="module")
def con():
    connection = duckdb.connect()
    connection.execute(sql_text("device_peaks.sql"))
    yield connection
    connection.close()


def _model(con, name: str, gib: float, sms: int):
    return con.execute("SELECT device_model_of($n, $mb, $sms)", {"n": name, "mb": gib * GIB, "sms": sms}).fetchone()[0]


@pytest.mark.parametrize("name, gib, sms, model", KNOWN, ids=[f"{k[0]}-{k[3]}" for k in KNOWN])
def test_each_device_gets_its_own_roof(con, name, gib, sms, model):
    assert _model(con, name, gib, sms) == model


@pytest.mark.parametrize("name, gib, sms", UNKNOWN, ids=[u[0] or "nameless" for u in UNKNOWN])
def test_an_unknown_device_gets_no_roof(con, name, gib, sms):
    assert _model(con, name, gib, sms) is None


def test_every_row_is_proven_by_a_real_name(con):
    """A row no name above reaches is a roof nobody checked: each model of the table has its names here."""
    models = {m for (m,) in con.execute("SELECT DISTINCT model FROM device_models").fetchall()}
    assert models == {k[3] for k in KNOWN}


def test_every_model_has_one_bandwidth_and_sourced_peaks(con):
    """One bandwidth (and its source) and one cache per model, so a reader may join on the model alone."""
    rows = con.execute(
        "SELECT model, count(DISTINCT (tb_per_s, bandwidth_source)), bool_and(bandwidth_source <> ''), "
        "count(DISTINCT cache_mib) <= 1, "
        "bool_and((cache_mib IS NULL) = (cache_source IS NULL)) FROM device_models GROUP BY model"
    ).fetchall()
    assert all(
        bandwidths == 1 and sourced and one_cache and cache_sourced
        for _, bandwidths, sourced, one_cache, cache_sourced in rows
    ), rows
    peaks = con.execute(
        "SELECT m.model, count(p.model), bool_and(p.tflops > 0 AND p.source <> '') "
        "FROM (SELECT DISTINCT model FROM device_models) m LEFT JOIN device_peaks p USING (model) GROUP BY m.model"
    ).fetchall()
    assert all(count >= 3 and good for _, count, good in peaks), peaks


def test_gh200_is_not_an_h200(con):
    """The issue's case: GH200's HBM3 streams ~4 TB/s, the H200's HBM3e 4.8."""
    bandwidth = con.execute(
        "SELECT tb_per_s FROM device_models WHERE model = device_model_of('NVIDIA GH200 480GB', 95 * 1024, 132)"
    ).fetchone()[0]
    assert bandwidth == pytest.approx(4.0)
