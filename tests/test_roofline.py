"""The roofline (#28): per op call FLOPs and bytes from the recorded shapes, device time from the work it
launched, the roof from sql/device_peaks.sql. Figures are checked against hand-derived values on a tiny
synthetic trace (one op per formula), against tests/roofline_reference.py (plain Python over the raw
events) on the shared H100 and A100 traces, and, on a LibreYOLO infer profile, against the model's own
FLOP count (torch.utils.flop_counter)."""

from __future__ import annotations

import json

import duckdb
import pytest

from libreyolo_profile.sqlfiles import sql_text
from libreyolo_profile.store.decode.events import ROOFLINE_SHAPED_OPS
from tests import synthetic_traces as st
from tests.conftest import TRACES, run_cli
from tests.roofline_reference import ELEMENTWISE, reference_elementwise, reference_units

F, H, S, L = "float", "c10::Half", "Scalar", "ScalarList"
A100_FP32_TFLOPS, A100_40GB_TB_S = 19.5, 1.555

# (op, Input Dims, Input type, Concrete Inputs, kernel µs, hand-derived GFLOP, hand-derived MB)
CASES = [
    # 2·M·K·N; A, B read and C written, 4 bytes each; two overlapping kernels: device time is their union (12 µs)
    ("aten::mm", [[64, 128], [128, 256]], [F, F], ["", ""], None, 2 * 64 * 128 * 256, (8192 + 32768 + 16384) * 4),
    # stride 2, padding 1 on 32×32 → 16×16 outputs; 2·N·|w|·positions
    (
        "aten::convolution",
        [[2, 3, 32, 32], [8, 3, 3, 3], [8], [], [], [], [], [], []],
        [F, F, F, L, L, L, S, L, S],
        ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"],
        10,
        2 * 2 * 216 * 256,
        (6144 + 216 + 8) * 4 + 2 * 8 * 256 * 4,
    ),
    # output_mask [grad input, grad weight, no grad bias]: two forward convolutions' FLOPs
    (
        "aten::convolution_backward",
        [[2, 8, 16, 16], [2, 3, 32, 32], [8, 3, 3, 3], [], [], [], [], [], [], [], []],
        [F, F, F, L, L, L, L, S, L, S, L],
        ["", "", "", "[8]", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"],
        10,
        2 * 2 * 2 * 216 * 256,
        (4096 + 6144 + 216) * 4 + (6144 + 216) * 4,
    ),
    # causal attention: half of 2·BH·L·S·(E + Ev)
    (
        "aten::scaled_dot_product_attention",
        [[1, 2, 16, 8]] * 3 + [[], [], [], [], []],
        [F, F, F, "", S, S, "", S],
        ["", "", "", "", "0.", "True", "", "False"],
        10,
        2 * 2 * 16 * 16 * 16 // 2,
        (3 * 256 + 256) * 4,
    ),
    # SiLU: 4 FLOPs per element, read and written once
    ("aten::silu", [[4, 100]], [F], [""], 10, 1600, 3200),
    # broadcast [4, 1, 5] + [3, 1] → [4, 3, 5]
    ("aten::add", [[4, 1, 5], [3, 1], []], [F, F, S], ["", "", "1"], 10, 60, (20 + 3) * 4 + 60 * 4),
    # batch norm in inference: scale and shift, 2 per element; running stats and affine params read
    (
        "aten::batch_norm",
        [[2, 4, 8, 8], [4], [4], [4], [4], [], [], [], []],
        [F, F, F, F, F, S, S, S, S],
        ["", "", "", "", "", "False", "0.1", "1e-05", "True"],
        10,
        1024,
        (512 + 16) * 4 + 512 * 4,
    ),
    # YOLO's SPPF pool: k 5, stride 1, padding 2 keeps 10×10; 25 compares per output
    (
        "aten::max_pool2d",
        [[1, 2, 10, 10], [], [], [], [], []],
        [F, L, L, L, L, S],
        ["", "[5, 5]", "[1, 1]", "[2, 2]", "[1, 1]", "False"],
        10,
        200 * 25,
        200 * 4 * 2,
    ),
    # nearest ×2: bytes only
    ("aten::upsample_nearest2d", [[1, 2, 4, 4], [], []], [F, "", L], ["", "", "[2., 2.]"], 10, 0, 32 * 4 + 128 * 4),
    # float16 → float32 copy: src read at 2 bytes, self written at 4
    ("aten::copy_", [[10, 10], [10, 10], []], [F, H, S], ["", "", "False"], 10, 0, 100 * 2 + 100 * 4),
    # sum over dim 1 of [4, 6]: 24 adds, 4 outputs
    ("aten::sum", [[4, 6], [], [], []], [F, L, S, ""], ["", "[1]", "False", ""], 10, 24, 24 * 4 + 4 * 4),
    # a Python scalar (recorded as a 0-dim double) is no tensor: it moves nothing and the result stays float32
    # (the weights read and written once: 18.9 MB, not 28.3); 20 µs keeps it under the A100's 12.1 µs roof
    ("aten::mul_", [[512, 512, 3, 3], []], [F, "double"], ["", ""], 20, 2359296, 2359296 * 4 * 2),
    # mul.out(self, other, *, out): the out= tensor is written once, never read
    ("aten::mul", [[4, 100], [], [4, 100]], [F, "double", F], ["", "", ""], 10, 400, 400 * 4 * 2),
    # a reduction of zero elements over every dimension: nothing read or computed, one float32 written
    ("aten::amax", [[0], [], []], [F, L, S], ["", "[]", "False"], 10, 0, 4),
    # over dim 1 of [0, 6]: no element in or out
    ("aten::mean", [[0, 6], [], [], []], [F, L, S, ""], ["", "[1]", "False", ""], 10, 0, 0),
]


def _synthetic_trace(path):
    events, t, corr = [], 100, 1
    for name, dims, types, concrete, kernel_us, _, _ in CASES:
        events.append(st.shaped_op(name, t, 50, dims, types, concrete))
        spans = [(t + 2, 10), (t + 7, 7)] if kernel_us is None else [(t + 2, kernel_us)]
        for k, (start, dur) in enumerate(spans):
            events.append(st.runtime("cudaLaunchKernel", t + 1 + k, 1, corr))
            events.append(st.kernel(st.GEMM_FP32_SIMT, start, dur, corr))
            corr += 1
        t += 100
    # linear → addmm: the outermost modeled op is the unit, its addmm is part of it
    events += [
        st.shaped_op("aten::linear", t, 50, [[8, 16], [32, 16], [32]], [F, F, F], ["", "", ""]),
        st.shaped_op(
            "aten::addmm", t + 1, 40, [[32], [8, 16], [16, 32], [], []], [F, F, F, S, S], ["", "", "", "1", "1"]
        ),
        st.runtime("cudaLaunchKernel", t + 2, 1, corr),
        st.kernel(st.GEMM_FP32_SIMT, t + 3, 10, corr),
    ]
    corr, t = corr + 1, t + 100
    # an op without a model keeps its device time and share, with NULL FLOPs
    events += [
        st.op("aten::nonzero", t, 50),
        st.runtime("cudaLaunchKernel", t + 1, 1, corr),
        st.kernel(st.ELEMENTWISE, t + 2, 5, corr),
    ]
    events.insert(0, st.annotation("ProfilerStep#1", 0, t + 100))
    return st.write_trace(path, events, devices=[st.A100])


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """The synthetic trace and the environment of a reader cache of the module's own: the tests that read it
    share its one analysis."""
    work = tmp_path_factory.mktemp("roofline")
    return _synthetic_trace(work / "synthetic.json"), {"XDG_CACHE_HOME": str(work / "cache")}


@pytest.fixture(scope="module")
def synthetic_rows(synthetic):
    trace, env = synthetic
    out = run_cli("roofline", str(trace), "--top", "100", "--json", env=env)
    assert out.returncode == 0, out.stderr
    return {r["op"]: r for r in json.loads(out.stdout)["roofline"]}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_each_formula_matches_the_hand_derived_figures(synthetic_rows, case):
    name, _, _, _, kernel_us, flops, nbytes = case
    row = synthetic_rows[name]
    assert row["no_model_reason"] is None
    assert row["gflops"] == pytest.approx(flops / 1e9, rel=1e-9)
    assert row["mb_moved"] == pytest.approx(nbytes / 1e6, rel=1e-9)
    device_us = 12 if kernel_us is None else kernel_us
    assert row["device_us"] == pytest.approx(device_us)
    roof_us = max(flops / (A100_FP32_TFLOPS * 1e12), nbytes / (A100_40GB_TB_S * 1e12)) * 1e6
    assert row["roofline_us"] == pytest.approx(roof_us, rel=1e-9)
    assert row["pct_of_roofline"] == pytest.approx(100 * roof_us / device_us, rel=1e-9)
    assert row["bound"] == ("compute" if flops / A100_FP32_TFLOPS > nbytes / A100_40GB_TB_S else "memory")
    assert row["device_model"] == "A100 40GB" and "A100" in row["peak_source"]


def test_outermost_op_is_the_unit_and_unmodeled_ops_keep_their_share(synthetic_rows):
    assert "aten::addmm" not in synthetic_rows
    assert synthetic_rows["aten::linear"]["gflops"] == pytest.approx(2 * 8 * 16 * 32 / 1e9)
    unmodeled = synthetic_rows["aten::nonzero"]
    assert unmodeled["gflops"] is None and unmodeled["pct_of_roofline"] is None
    assert unmodeled["no_model_reason"] == "no cost model for this op"
    # the whole is every execution's time summed, as the kernels table counts it: aten::mm's two overlapping
    # kernels count 10 + 7 µs there (its device_us, what its rates are of, is their union, 12 µs)
    total_us = 10 + 7 + sum(c[4] for c in CASES if c[4] is not None) + 10 + 5
    assert synthetic_rows["aten::mm"]["device_ms_per_step"] == pytest.approx(17 / 1e3)
    assert unmodeled["time_share_pct"] == pytest.approx(100 * 5 / total_us)
    assert sum(r["time_share_pct"] for r in synthetic_rows.values()) == pytest.approx(100)


def test_bad_regex_is_a_usage_error(synthetic):
    trace, env = synthetic
    out = run_cli("roofline", str(trace), "--op", "(", env=env)
    assert out.returncode == 2 and "not a regular expression" in out.stderr


def test_decoder_keeps_shapes_of_exactly_the_modeled_ops():
    con = duckdb.connect()
    con.execute(sql_text("roofline_models.sql"))
    assert {r[0] for r in con.execute("SELECT op FROM roofline_models").fetchall()} == set(ROOFLINE_SHAPED_OPS)


def _over_phases(rows: list[dict]) -> dict:
    """Our rows per (op, shapes), phases pooled: calls added, device time call-weighted."""
    pooled: dict = {}
    for r in rows:
        if r["input_dims"] is None:
            continue
        p = pooled.setdefault((r["op"], r["input_dims"]), {**r, "calls": 0, "device_sum": 0.0})
        p["calls"] += r["calls"]
        p["device_sum"] += r["device_us"] * r["calls"]
    for p in pooled.values():
        p["device_us"] = p["device_sum"] / p["calls"]
    return pooled


@pytest.mark.parametrize("name", ["h100_vit_image_classifier.json.gz", "a100_cutlass_adam_rank0.json.gz"])
def test_real_traces_agree_with_the_plain_python_reference(traces_dir, name):
    trace = traces_dir / name
    out = run_cli("roofline", str(trace), "--top", "100000", "--json")
    assert out.returncode == 0, out.stderr
    ours = _over_phases(json.loads(out.stdout)["roofline"])
    theirs = reference_units(trace)
    assert theirs, "the reference found no GEMM, convolution or attention call"
    for key, ref in theirs.items():
        row = ours[key]
        assert row["calls"] == ref["calls"], key
        assert row["gflops"] == pytest.approx(ref["gflops"], rel=0.01), key
        assert row["device_us"] == pytest.approx(ref["device_us"], rel=0.01), key
        if ref["mb_moved"] is not None:
            assert row["mb_moved"] == pytest.approx(ref["mb_moved"], rel=0.01), key


def test_a_foreign_cpu_trace_has_figures_but_no_roof(tmp_path):
    """Shapes give FLOPs and bytes on any trace; the CPU's peak is only known where infer/run measured it."""
    events, t = [], 100
    for name, dims, types, concrete, *_ in CASES:
        events.append(st.shaped_op(name, t, 50, dims, types, concrete))
        t += 100
    events.insert(0, st.annotation("ProfilerStep#1", 0, t + 100))
    trace = st.write_trace(tmp_path / "cpu.json", events)
    out = run_cli("roofline", str(trace), "--top", "100", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    mm = next(r for r in doc["roofline"] if r["op"] == "aten::mm")
    assert mm["gflops"] == pytest.approx(2 * 64 * 128 * 256 / 1e9) and mm["device_us"] == pytest.approx(50)
    assert mm["peak_tflops"] is None and mm["pct_of_roofline"] is None
    assert "CPU trace from elsewhere" in mm["no_model_reason"]
    assert doc["metrics"]["sol_step_ms"] is None
    assert "CPU trace from elsewhere" in doc["null_reasons"]["sol_step_ms"]
    # a CPU's rates in GFLOP/s: the mm's 2·64·128·256 FLOP in 50 µs is 83.9 GFLOP/s, not 0.0839 TFLOP/s
    text = run_cli("roofline", str(trace), "--top", "100", env={"COLUMNS": "200"}).stdout
    assert "GFLOP/s" in text and "TFLOP/s" not in text
    assert "83.9" in next(line for line in text.splitlines() if "aten::mm" in line)


def test_summary_report_and_what_if_read_the_roofline(synthetic, tmp_path):
    trace, env = synthetic
    rows = {
        r["op"]: r
        for r in json.loads(run_cli("roofline", str(trace), "--top", "100", "--json", env=env).stdout)["roofline"]
    }
    summary = json.loads(run_cli("summary", str(trace), "--json", env=env).stdout)
    above = summary["above_roof"]
    assert len(above) == 3 and above[0]["above_roof_ms_per_step"] >= above[-1]["above_roof_ms_per_step"]
    assert above[0]["above_roof_ms_per_step"] == pytest.approx(
        max(
            (r["device_us"] - r["roofline_us"]) * r["calls_per_step"] / 1e3
            for r in rows.values()
            if r["roofline_us"] is not None
        )
    )
    assert summary["metrics"]["sol_step_ms"] == pytest.approx(
        sum(r["roofline_us"] * r["calls_per_step"] for r in rows.values() if r["roofline_us"] is not None) / 1e3
    )

    out = run_cli("report", str(trace), "--out", str(tmp_path / "r.html"), env=env)
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "r.html").read_text()
    chart = page[page.index('data-chart="roofline"') :]
    chart = chart[: chart.index("</svg>")]
    costed = [r for r in rows.values() if (r["gflops"] or 0) > 0]
    assert chart.count("<circle") == len(costed) and "fp32 roof: 19.5 TFLOP/s" in chart

    w = json.loads(run_cli("what-if", str(trace), "--op-at-roofline", "50", "--json", env=env).stdout)
    uncapped = sum(
        max(r["device_us"] - 2 * r["roofline_us"], 0) * r["calls_per_step"] / 1e3
        for r in rows.values()
        if r["roofline_us"] is not None
    )
    assert w["uncapped_saved_ms"] == pytest.approx(uncapped)
    assert w["saved_ms"] == pytest.approx(min(uncapped, w["inputs"]["device_bound_ms"]))
    assert w["projected"]["step_ms"] == pytest.approx(w["baseline"]["step_ms"] - w["saved_ms"])
    assert run_cli("what-if", str(trace), "--op-at-roofline", "0", env=env).returncode == 2


def test_what_the_trace_does_not_record_is_null_with_the_reason(tmp_path):
    """A 2021 trace records no Concrete Inputs (no stride, no padding); a tensor list has no element type;
    a bfloat16 GEMM on a V100 has no compute roof. None of them gets a made-up figure."""
    v100 = {"id": 0, "name": "Tesla V100-SXM2-32GB", "totalGlobalMem": 34_089_730_048}
    calls = [
        st.shaped_op(
            "aten::convolution",
            100,
            50,
            [[2, 3, 32, 32], [8, 3, 3, 3], [], [], [], [], [], [], []],
            [F, F, "", L, L, L, S, L, S],
        ),
        st.shaped_op("aten::cat", 200, 50, [[[4, 1, 8], [4, 3, 8]], []], ["TensorList", S], ["", "1"]),
        st.shaped_op("aten::mm", 300, 50, [[64, 128], [128, 256]], ["c10::BFloat16"] * 2, ["", ""]),
    ]
    events = [st.annotation("ProfilerStep#1", 0, 500)]
    for corr, call in enumerate(calls, 1):
        t = call["ts"].value - st.T0_US
        events += [call, st.runtime("cudaLaunchKernel", t + 1, 1, corr), st.kernel(st.ELEMENTWISE, t + 2, 10, corr)]
    out = run_cli("roofline", str(st.write_trace(tmp_path / "t.json", events, devices=[v100])), "--json")
    rows = {r["op"]: r for r in json.loads(out.stdout)["roofline"]}
    assert (
        rows["aten::convolution"]["gflops"] is None
        and "Concrete Inputs" in rows["aten::convolution"]["no_model_reason"]
    )
    assert rows["aten::cat"]["mb_moved"] is None and "tensor list" in rows["aten::cat"]["no_model_reason"]
    mm = rows["aten::mm"]
    assert mm["gflops"] == pytest.approx(2 * 64 * 128 * 256 / 1e9) and mm["device_model"] == "V100 SXM2"
    assert mm["roofline_us"] is None and mm["pct_of_roofline"] is None and "bf16 roof" in mm["no_model_reason"]
    assert all(r["device_us"] == pytest.approx(10) for r in rows.values())


def test_an_unknown_device_is_named_safely_and_has_no_roof(tmp_path):
    name = "Evil GPU \x1b[2J\x1b]52;c;aGk=\x07"
    events = [
        st.annotation("ProfilerStep#1", 0, 200),
        st.shaped_op("aten::mm", 100, 50, [[64, 128], [128, 256]], [F, F], ["", ""]),
        st.runtime("cudaLaunchKernel", 101, 1, 1),
        st.kernel(st.GEMM_FP32_SIMT, 102, 10, 1),
    ]
    trace = st.write_trace(tmp_path / "t.json", events, devices=[{"id": 0, "name": name, "totalGlobalMem": 2**34}])
    out = run_cli("roofline", str(trace), env={"COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout and "\\x1b" in out.stdout and "is not in sql/device_peaks.sql" in out.stdout
    row = json.loads(run_cli("roofline", str(trace), "--json").stdout)["roofline"][0]
    assert row["gflops"] == pytest.approx(2 * 64 * 128 * 256 / 1e9) and row["peak_tflops"] is None
    assert row["pct_of_roofline"] is None and name in row["no_model_reason"]


def test_device_work_no_costed_op_launched_keeps_its_time(tmp_path):
    """Hand-derived rows: an op holding a modeled call launches a kernel of its own (a compiled graph's Triton
    kernel beside its aten::mm), a runtime call outside every op launches one inside the step, and one
    launched before the step runs inside the window. Each has a row, and the rows hold all 44 µs."""
    t0, corr = 1000, 1
    events = [st.annotation("ProfilerStep#1", t0, 1000)]
    events += [
        st.op("CompiledFunction", t0 + 100, 100),
        st.shaped_op("aten::mm", t0 + 110, 30, [[64, 128], [128, 256]], [F, F], ["", ""]),
        st.runtime("cudaLaunchKernel", t0 + 115, 1, corr),
        st.kernel(st.GEMM_FP32_SIMT, t0 + 120, 10, corr),
        st.runtime("cudaLaunchKernel", t0 + 150, 1, corr + 1),  # the compiled graph's own kernel
        st.kernel(st.ELEMENTWISE, t0 + 155, 20, corr + 1),
        st.runtime("cudaLaunchKernel", t0 + 300, 1, corr + 2),  # no op holds this launch
        st.kernel(st.ELEMENTWISE, t0 + 305, 8, corr + 2),
        st.runtime("cudaLaunchKernel", t0 - 100, 1, corr + 3),  # launched before the step, runs inside it
        st.kernel(st.ELEMENTWISE, t0 + 5, 6, corr + 3),
    ]
    trace = st.write_trace(tmp_path / "unlaunched.json", events, devices=[st.A100])
    out = run_cli("roofline", str(trace), "--top", "100", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["roofline"]
    by_op = {(r["op"], r["launched_outside_steps"]): r for r in rows}
    assert len(rows) == 4
    assert by_op[("aten::mm", None)]["device_ms_per_step"] == pytest.approx(10 / 1e3)
    own = by_op[("CompiledFunction", None)]
    assert own["device_ms_per_step"] == pytest.approx(20 / 1e3) and own["calls"] == 1
    assert own["gflops"] is None and "launched itself" in own["no_model_reason"]
    assert by_op[(None, False)]["device_ms_per_step"] == pytest.approx(8 / 1e3)
    assert by_op[(None, True)]["device_ms_per_step"] == pytest.approx(6 / 1e3)
    assert sum(r["time_share_pct"] for r in rows) == pytest.approx(100)
    assert by_op[("CompiledFunction", None)]["time_share_pct"] == pytest.approx(100 * 20 / 44)
    text = run_cli("roofline", str(trace), env={"COLUMNS": "200"})
    assert "(no op: launched outside the steps)" in text.stdout, text.stdout


ALL_TRACES = sorted(p for p in TRACES.rglob("*") if p.name.endswith((".json", ".json.gz")) and p.is_file())


@pytest.mark.parametrize("path", ALL_TRACES, ids=[str(p.relative_to(TRACES)) for p in ALL_TRACES])
def test_no_row_above_its_roof_without_a_cause_and_elementwise_bytes_are_pytorchs(trace, path):
    """On every trace under the shared folder: the elementwise rows move the bytes PyTorch's own broadcasting,
    type promotion and out= schemas give (tests/roofline_reference.py re-runs each call on meta tensors), and
    no row stands above its roof, by our figures or by the reference's bytes, unless it names the cause."""
    out = run_cli("roofline", str(trace(str(path.relative_to(TRACES)))), "--top", "1000000", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["roofline"]
    # the reference parses the whole trace: only where our rows cost an elementwise call it could compare
    costs_elementwise = any(r["op"] in ELEMENTWISE and r["mb_moved"] is not None for r in rows)
    reference = reference_elementwise(path) if costs_elementwise else {}
    compared, bare = 0, []
    for r in rows:
        values = reference.get((r["op"], json.dumps(json.loads(r["input_dims"] or "null")), r["dtype"]))
        if values and r["mb_moved"] is not None:
            # one value: every call moves it; several (the calls' other arguments differ in type): our row is
            # their call-weighted mean over its phase, so between the least and the most
            low, high = min(values), max(values)
            assert low * (1 - 1e-9) - 1e-12 <= r["mb_moved"] <= high * (1 + 1e-9) + 1e-12, (r["op"], r["input_dims"])
            compared += 1
        ref_pct = None
        if values and r["peak_tb_per_s"] and r["device_us"]:
            ref_pct = 100 * min(values) / (r["peak_tb_per_s"] * 1e6) / r["device_us"]  # MB ÷ (TB/s) = µs × 1e6
        above = (r["pct_of_roofline"] or 0) > 100 or (ref_pct or 0) > 100
        if above and not r["no_model_reason"]:
            bare.append((r["op"], r["input_dims"], r["pct_of_roofline"], ref_pct))
    assert not bare, f"{len(bare)} rows above their roof without a cause: {bare[:5]}"
    costed = {(r["op"], json.dumps(json.loads(r["input_dims"])), r["dtype"]) for r in rows if r["mb_moved"] is not None}
    assert compared >= len(costed & set(reference))  # every elementwise shape both sides cost was compared


def test_a_roof_beaten_is_never_a_share_over_100_shown_as_fact(tmp_path):
    """A GEMM far faster than the A100's fp32 roof (2·1024³ FLOP in 1 µs: 110× the roof) and no cause the profile
    can name: its row has no roofline figures and says why, and gemm_conv_peak_pct is null with the reason. On a
    CPU with a measured roof a call beat, the row keeps its figures and names the roof as the cause."""
    events = [
        st.annotation("ProfilerStep#1", 0, 200),
        st.shaped_op("aten::mm", 100, 50, [[1024, 1024], [1024, 1024]], [F, F], ["", ""]),
        st.runtime("cudaLaunchKernel", 101, 1, 1),
        st.kernel(st.GEMM_FP32_SIMT, 102, 1, 1),
    ]
    trace = st.write_trace(tmp_path / "fast.json", events, devices=[st.A100])
    doc = json.loads(run_cli("roofline", str(trace), "--json").stdout)
    (row,) = doc["roofline"]
    assert row["gflops"] == pytest.approx(2 * 1024**3 / 1e9) and row["device_us"] == pytest.approx(1)
    assert row["roofline_us"] is None and row["pct_of_roofline"] is None
    assert "below its roofline time and no cause is known" in row["no_model_reason"]
    assert doc["metrics"]["gemm_conv_peak_pct"] is None
    assert "faster than it" in doc["null_reasons"]["gemm_conv_peak_pct"]

    from libreyolo_profile.store.ingest.analyse import analyse_trace

    cpu = st.write_trace(tmp_path / "cpu.json", [e for e in events if e["name"] in ("ProfilerStep#1", "aten::mm")])
    roof = {"fp32_tflops": 0.001, "tb_per_s": 0.001, "method": "measured: a probe on a busy machine"}
    table = analyse_trace(cpu, cpu_peak=roof)["tables"]["roofline"]
    (cpu_row,) = [dict(zip(table["columns"], r, strict=True)) for r in table["rows"]]
    assert cpu_row["pct_of_roofline"] > 100 and "faster than the measured CPU roof" in cpu_row["no_model_reason"]


def test_report_chart_shows_a_cpu_roof_in_gflops():
    """issue 50: a CPU's roof read "fp32 0.0 TFLOP/s" in the report; its rates are drawn in GFLOP/s and GB/s."""
    from libreyolo_profile.readers.report_charts import roofline_chart

    row = {
        "gflops": 2.0,
        "intensity": 10.0,
        "tflops_per_s": 0.05,
        "device_ms_per_step": 3.0,
        "roof_class": "fp32",
        "peak_tflops": 0.1,
        "peak_tb_per_s": 0.02,
        "op": "aten::conv2d",
        "input_dims": "[[1, 3, 8, 8]]",
        "pct_of_roofline": 50.0,
        "bound": "compute",
    }
    on_cpu, on_gpu = roofline_chart([row], on_cpu=True), roofline_chart([row])
    assert "fp32 100.0 GFLOP/s" in on_cpu and "20.000 GB/s" in on_cpu and "TFLOP/s" not in on_cpu
    assert "fp32 0.1 TFLOP/s" in on_gpu and "GFLOP/s" not in on_gpu
