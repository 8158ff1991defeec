"""Where in the model (issue 16): module ranges during `infer` and `run`, the `modules` table, the
`modules` reader, summary's tree and the report's icicle.

Every figure of the table is recomputed from the raw trace events by tests/modules_reference.py
(plain Python, no product code or SQL) and must agree to the nanosecond (1e-6 ms). The forward's
self times must add up to the model's own time exactly, and the model's time must be the `forward`
phase's host wall time within 5% (that phase also holds torch.no_grad/autocast entry and the
hooks' install for the call: tens of µs against a forward of tens of ms).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli, run_measurement
from tests.modules_reference import reference, step_count

REPO = Path(__file__).resolve().parents[1]
FIXTURE_YAML = REPO / "fixtures" / "synth3.yaml"
# the model's forward time vs the forward phase's wall time: the phase also holds torch.no_grad and the hooks'
# entry, and on a shared 2-core machine a preemption between the phase's start and the model's first hook
# lands outside every module: a few ms of a ~40 ms LibreYOLO9 call at 64 px, and of a ~12 ms YOLOX one (7-8 %
# of its forward phase alone, 14 % once under the whole suite)
FORWARD_TOLERANCE = 0.15
EXACT_MS = 1e-6  # one nanosecond, in ms


def modules_json(path: Path, *args: str) -> dict:
    result = run_cli("modules", str(path), *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def assert_matches_reference(trace: Path, rows: list[dict]) -> dict:
    """Every row of `modules --json` against the plain-Python reference over `trace`'s raw events."""
    expected = reference(trace)
    steps = step_count(trace)
    got = {(r["phase"], r["path"]): r for r in rows}
    assert set(got) == set(expected)
    for key, ref in expected.items():
        row = got[key]
        assert row["module_type"] == ref["type"] and row["depth"] == ref["depth"], key
        assert row["calls_per_step"] == pytest.approx(ref["calls"] / steps, abs=1e-12), key
        for column, ref_column in (
            ("total_ms_per_step", "total_ns"),
            ("self_ms_per_step", "self_ns"),
            ("device_ms_per_step", "device_ns"),
            ("device_self_ms_per_step", "device_self_ns"),
        ):
            if ref[ref_column] is None:
                assert row[column] is None, (key, column)
            else:
                assert row[column] == pytest.approx(ref[ref_column] / 1e6 / steps, abs=EXACT_MS), (key, column)
    return got


def assert_self_times_tile_the_model(rows: list[dict], phase: str) -> float:
    part = [r for r in rows if r["phase"] == phase]
    (model,) = [r for r in part if r["depth"] == 0]
    assert sum(r["self_ms_per_step"] for r in part) == pytest.approx(model["total_ms_per_step"], abs=1e-6)
    return model["total_ms_per_step"]


def phase_wall_ms(profile_dir: Path, phase: str) -> float:
    import duckdb

    steps = json.loads((profile_dir / "profile.json").read_text())["metrics"]["steps"]
    total = (
        duckdb.connect()
        .execute(
            "SELECT sum(wall_ms) FROM read_parquet($file) WHERE phase = $phase",
            {"file": str(profile_dir / "phases.parquet"), "phase": phase},
        )
        .fetchone()[0]
    )
    return total / steps


# ---------------------------------------------------------------------------------------------
# the ranges themselves, on a small torch model (no LibreYOLO)


def _tiny_model():
    import torch

    class Branches(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())
            self.left = torch.nn.Conv2d(4, 4, 1)
            self.right = torch.nn.Sequential(torch.nn.Conv2d(4, 4, 1), torch.nn.SiLU())

        def forward(self, x):
            y = self.stem(x)
            return self.left(y) + self.right(y)

    return Branches()


def test_ranges_only_in_annotated_calls_and_hooks_removed(tmp_path):
    import torch
    from torch.profiler import ProfilerActivity, profile

    from libreyolo_profile.measure.modules import ModuleRanges, module_targets

    model = _tiny_model()
    assert [p for p, _, _ in module_targets(model, 1)] == [
        "Branches",
        "Branches.stem",
        "Branches.left",
        "Branches.right",
    ]
    ranges = ModuleRanges(model, 2)
    x = torch.rand(1, 3, 8, 8)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with ranges.recording(False):  # an unprofiled call: no hook at all
            assert all(not m._forward_pre_hooks and not m._forward_hooks for m in model.modules())
            model(x).sum().backward()
        with ranges.recording(True):
            assert len(model.stem._forward_pre_hooks) == 1
            out = model(x)
        out.sum().backward()
    assert all(not m._forward_pre_hooks and not m._forward_hooks for m in model.modules())
    trace = tmp_path / "tiny.json"
    prof.export_chrome_trace(str(trace))
    names = [e["name"] for e in json.loads(trace.read_text())["traceEvents"] if e.get("name", "").startswith("module ")]
    # one annotated call: each of the 8 modules (depth ≤ 2) once forward and once backward
    for direction in ("forward", "backward"):
        assert sorted(n for n in names if n.startswith(f"module {direction}: ")) == sorted(
            f"module {direction}: {p} ({t})" for p, _, t in module_targets(model, 2)
        )
    rows = modules_json(trace)["modules"]
    assert_matches_reference(trace, rows)
    assert_self_times_tile_the_model(rows, "forward")
    assert_self_times_tile_the_model(rows, "backward")


def test_depth_zero_records_nothing():
    import torch

    from libreyolo_profile.measure.modules import ModuleRanges

    model = _tiny_model()
    with ModuleRanges(model, 0).recording(True):
        assert all(not m._forward_pre_hooks for m in model.modules())
        model(torch.rand(1, 3, 8, 8))


def test_torchscript_model_gets_no_ranges_and_still_runs():
    import warnings

    import torch

    from libreyolo_profile.measure.modules import ModuleRanges

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.jit.script's deprecation notice
        scripted = torch.jit.script(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU()))
    ranges = ModuleRanges(scripted, 2)
    assert ranges.targets == []
    with ranges.recording(True):
        assert scripted(torch.rand(1, 2)).shape == (1, 2)


def test_a_forward_that_raises_still_closes_its_ranges():
    import torch

    from libreyolo_profile.measure.modules import ModuleRanges

    model = _tiny_model()
    ranges = ModuleRanges(model, 2)
    with pytest.raises(RuntimeError):
        with ranges.recording(True):
            model(torch.rand(1, 5, 8, 8))  # wrong channel count: the stem's conv raises
    assert all(not m._forward_pre_hooks and not m._forward_hooks for m in model.modules())


# ---------------------------------------------------------------------------------------------
# a hand-made GPU trace: every expected figure derived by hand below (no GPU here)


def test_hand_derived_gpu_trace(tmp_path):
    """Ranges recorded as the profiler's fast path writes them (cpu_op), kernels tied to their
    launches by correlation id. Times in µs from the start of the trace.

    step 0–100. forward: M 10–90, its blocks a 20–40 and b 50–80. backward: M 91–99, b 92–97, a 94–98
    (a and b overlap 94–97, as interleaved branches do). Launches: 5 (k 2 µs, before M), 25 (k 10 µs,
    in a), 45 (k 6 µs, in M only), 60 (k 4 µs, in b), 95 (k 3 µs, in backward M, b and a).
    forward: M total 80, self 80 − 20 − 30 = 30, device 10 + 6 + 4 = 20, device self 6;
             a total 20 = self, device 10 = self; b total 30 = self, device 4 = self.
    backward, each instant to the open range that started last: 91–92 M, 92–94 b, 94–98 a, 98–99 M,
             so self M 2, b 2, a 4 (sum 8 = M's total); the kernel launched at 95 belongs to M, b and a
             (device 3 each) and to a alone as self.
    """
    from tests.synthetic_traces import A100, ELEMENTWISE, GEMM_TENSORCORE, annotation, kernel, op, runtime, write_trace

    fast = op  # measure/modules.py's ranges go through the profiler's fast path: cat cpu_op
    events = [
        annotation("ProfilerStep#1", 0, 100),
        fast("module forward: M (Model)", 10, 80),
        fast("module forward: M.a (A)", 20, 20),
        fast("module forward: M.b (B)", 50, 30),
        op("aten::conv2d", 21, 15),
        fast("module backward: M (Model)", 91, 8),
        fast("module backward: M.b (B)", 92, 5),
        fast("module backward: M.a (A)", 94, 4),
    ]
    for corr, (launch, start, dur) in enumerate([(5, 6, 2), (25, 26, 10), (45, 46, 6), (60, 61, 4), (95, 96, 3)], 1):
        events += [
            runtime("cudaLaunchKernel", launch, 1, corr),
            kernel(GEMM_TENSORCORE if corr == 2 else ELEMENTWISE, start, dur, corr),
        ]
    trace = write_trace(tmp_path / "hand.json", events, devices=[A100])
    rows = {(r["phase"], r["path"]): r for r in modules_json(trace)["modules"]}
    expected = {  # (total, self, device, device self, share of M's time %) per step, ms
        ("forward", "M"): (0.080, 0.030, 0.020, 0.006, 100.0),
        ("forward", "M.a"): (0.020, 0.020, 0.010, 0.010, 25.0),
        ("forward", "M.b"): (0.030, 0.030, 0.004, 0.004, 37.5),
        ("backward", "M"): (0.008, 0.002, 0.003, 0.0, 100.0),
        ("backward", "M.b"): (0.005, 0.002, 0.003, 0.0, 62.5),
        ("backward", "M.a"): (0.004, 0.004, 0.003, 0.003, 50.0),
    }
    assert set(rows) == set(expected)
    for key, (total, own, device, device_own, share) in expected.items():
        r = rows[key]
        got = (
            r["total_ms_per_step"],
            r["self_ms_per_step"],
            r["device_ms_per_step"],
            r["device_self_ms_per_step"],
            r["share_pct"],
        )
        assert got == pytest.approx((total, own, device, device_own, share), abs=1e-9), key
    assert rows[("forward", "M.a")]["module_type"] == "A" and rows[("forward", "M.a")]["depth"] == 1
    assert_matches_reference(trace, list(rows.values()))
    # the ranges are annotations, never ops
    assert [o["name"] for o in json.loads(run_cli("ops", str(trace), "--json").stdout)["ops"]] == ["aten::conv2d"]


def test_backward_ranges_move_to_lanes_that_nest_and_read_back_as_their_thread(tmp_path):
    """A backward range opens in one autograd node's hook and ends in another's: it crosses the engine's own
    ranges, and interleaved branches cross each other (here M.a 94–98 over M.b 92–97, both inside an
    evaluate_function range 93–96 they straddle). measure/modules.py moves them onto lanes beside their thread,
    each lane nesting (M and M.b on the first, M.a on a second), and the analysis reads them as before."""
    from libreyolo_profile.measure.modules import lane_tid, separate_backward_ranges
    from libreyolo_profile.store.decode.trace_check import check_trace
    from tests.synthetic_traces import A100, ELEMENTWISE, HOST_TID, annotation, kernel, op, runtime, write_trace

    events = [
        annotation("ProfilerStep#1", 0, 100),
        op("module forward: M (Model)", 10, 80),
        op("module forward: M.a (A)", 20, 20),
        op("aten::conv2d", 21, 15),
        op("autograd::engine::evaluate_function: ConvolutionBackward0", 93, 3),
        op("module backward: M (Model)", 91, 8),
        op("module backward: M.b (B)", 92, 5),
        op("module backward: M.a (A)", 94, 4),
        runtime("cudaLaunchKernel", 95, 0.5, 1),
        kernel(ELEMENTWISE, 96, 3, 1),
    ]
    before = write_trace(tmp_path / "crossing.json", events, devices=[A100])
    after = tmp_path / "lanes.json"
    after.write_bytes(before.read_bytes())
    assert check_trace(before).partial_overlap_count > 0
    assert separate_backward_ranges(after) == 3
    assert check_trace(after).ok, check_trace(after).as_dict()
    moved = {e["name"]: e["tid"] for e in json.loads(after.read_text())["traceEvents"] if e.get("ph") == "X"}
    assert moved["module backward: M (Model)"] == moved["module backward: M.b (B)"] == lane_tid(HOST_TID, 0)
    assert moved["module backward: M.a (A)"] == lane_tid(HOST_TID, 1)
    assert moved["module forward: M (Model)"] == HOST_TID  # the forward nests where it ran
    rows_before, rows_after = modules_json(before)["modules"], modules_json(after)["modules"]
    assert rows_after == rows_before and {r["phase"] for r in rows_after} == {"forward", "backward"}
    assert_matches_reference(after, rows_after)
    assert separate_backward_ranges(after) == 0  # nothing left to move: the file stays as it is


# ---------------------------------------------------------------------------------------------
# foreign traces


def test_zero_length_module_events_nest_where_they_happen(tmp_path):
    """A foreign trace's nn.Module events nest by how they lie on their thread; a zero-length one (a
    module whose forward takes less than the clock's resolution: Identity, Flatten) sits inside what
    is open at its instant, as a leaf, like a zero-length op (sql/intervals.sql interval_tree). Times
    in µs from the start of the trace.

    step 0–100. Net_0 10–90 ⊃ Identity_0 at 20 (0 µs), Conv2d_0 30–60, ReLU_0 60–70 ⊃ Flatten_0 at 60
    (0 µs: it starts where Conv2d_0 ends and ReLU_0 starts, so it is inside ReLU_0, the interval open at 60).
    Self: Net_0 80 − Conv2d_0 30 − ReLU_0 10 = 40; the zero-length ones own no time.
    Before the shared macro, sql/modules.sql ordered a zero-length event's end before its start, so
    Identity_0 came out at depth 0 as a second root and Conv2d_0 under it (`Identity_0.Conv2d_0`)."""
    from tests.synthetic_traces import annotation, python_function, write_trace

    events = [
        annotation("ProfilerStep#1", 0, 100),
        python_function("nn.Module: Net_0", 10, 80),
        python_function("nn.Module: Identity_0", 20, 0),
        python_function("nn.Module: Conv2d_0", 30, 30),
        python_function("nn.Module: ReLU_0", 60, 10),
        python_function("nn.Module: Flatten_0", 60, 0),
    ]
    trace = write_trace(tmp_path / "zero_length.json", events)
    rows = {r["path"]: r for r in modules_json(trace)["modules"]}
    expected = {  # path: (depth, type, total ms, self ms) per step
        "Net_0": (0, "Net", 0.080, 0.040),
        "Net_0.Identity_0": (1, "Identity", 0.0, 0.0),
        "Net_0.Conv2d_0": (1, "Conv2d", 0.030, 0.030),
        "Net_0.ReLU_0": (1, "ReLU", 0.010, 0.010),
        "Net_0.ReLU_0.Flatten_0": (2, "Flatten", 0.0, 0.0),
    }
    assert set(rows) == set(expected)
    for path, (depth, module_type, total, own) in expected.items():
        r = rows[path]
        assert (r["depth"], r["module_type"], r["phase"]) == (depth, module_type, "forward"), path
        assert (r["total_ms_per_step"], r["self_ms_per_step"]) == pytest.approx((total, own), abs=1e-9), path
    assert_matches_reference(trace, list(rows.values()))
    assert_self_times_tile_the_model(list(rows.values()), "forward")


def test_foreign_trace_with_nn_module_events(trace):
    """TraceLens' H100 ViT trace (with_stack): its nn.Module python_function events fill the table."""
    path = trace("h100_vit_image_classifier")
    out = modules_json(path)
    assert out["note"] is None and {r["source"] for r in out["modules"]} == {"python_function"}
    got = assert_matches_reference(path, out["modules"])
    assert got[("forward", "ViTModel_0")]["share_pct"] == pytest.approx(100.0)
    assert got[("forward", "ViTModel_0.ViTEncoder_0")]["device_ms_per_step"] > 0
    assert_self_times_tile_the_model(out["modules"], "forward")
    shallow = modules_json(path, "--depth", "1")["modules"]
    assert {r["path"] for r in shallow} == {p for (_, p), r in got.items() if r["depth"] <= 1}


@pytest.mark.parametrize("name", ["cpu_only_rank34", "a100_alexnet_no_profilerstep"])
def test_trace_without_module_information_says_so_and_exits_0(trace, name):
    result = run_cli("modules", str(trace(name)))
    assert result.returncode == 0, result.stderr
    assert "no module information" in " ".join(result.stdout.split())
    out = modules_json(trace(name))
    assert out["modules"] == [] and "no module information" in out["note"]


@pytest.mark.parametrize(
    "args, needle", [(["--depth", "-1"], "--depth -1"), (["--phase", "sideways"], "--phase sideways")]
)
def test_reader_usage_errors_exit_2(trace, args, needle):
    result = run_cli("modules", str(trace("cpu_only_rank34")), *args)
    assert result.returncode == 2 and needle in result.stderr


def test_module_depth_is_checked_before_measuring(tmp_path):
    result = run_cli("infer", "--device", "cpu", "--module-depth", "-1", "--project", str(tmp_path))
    assert result.returncode == 2 and "--module-depth -1: must be ≥ 0" in result.stderr
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# LibreYOLO9-t on the CPU, end to end


def _measure(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, LIBREYOLO_PROFILE_OFFLINE="1", HOME=str(tmp_path / "home"), COLUMNS="200")
    (tmp_path / "home").mkdir(exist_ok=True)
    return run_measurement(
        *args, "--device", "cpu", "--no-report", "--project", str(tmp_path / "out"), cwd=tmp_path, env=env
    )


@pytest.mark.slow
def test_infer_records_the_module_tree(tmp_path):
    result = _measure(tmp_path, "infer", "--imgsz", "64", "--runs", "3", "--warmup", "1")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out" / "infer"
    doc = json.loads((out / "profile.json").read_text())
    assert doc["settings"]["module_depth"] == 2
    rows = modules_json(out)["modules"]
    assert_matches_reference(out / "profile_trace.json", rows)
    assert {r["phase"] for r in rows} == {"forward"}  # no gradient in inference: no backward ranges
    assert {r["path"] for r in rows if r["depth"] == 1} == {
        "LibreYOLO9Model.backbone",
        "LibreYOLO9Model.neck",
        "LibreYOLO9Model.head",
    }
    assert max(r["depth"] for r in rows) == 2 and all(r["calls_per_step"] == 1 for r in rows)
    model_ms = assert_self_times_tile_the_model(rows, "forward")
    forward_ms = phase_wall_ms(out, "forward")
    assert (1 - FORWARD_TOLERANCE) * forward_ms <= model_ms <= forward_ms
    backward = run_cli("modules", str(out), "--phase", "backward")
    assert backward.returncode == 0 and "no module rows match" in backward.stdout
    summary = json.loads(run_cli("summary", str(out), "--json").stdout)
    assert [r["path"] for r in summary["modules"]][:2] == ["LibreYOLO9Model", "LibreYOLO9Model.backbone"]
    report = run_cli("report", str(out), "--out", str(tmp_path / "r.html"))
    assert report.returncode == 0 and 'data-chart="modules-forward"' in (tmp_path / "r.html").read_text()


@pytest.mark.slow
def test_run_records_forward_and_backward(tmp_path):
    result = _measure(
        tmp_path,
        "run",
        str(FIXTURE_YAML),
        "--batch",
        "2",
        "--imgsz",
        "64",
        "--steps",
        "2",
        "--warmup",
        "1",
        "--workers",
        "0",
        "--module-depth",
        "1",
        # the 2 steps profiled (the module ranges are the profiled trace's), without their unprofiled replay:
        # the headline it times is not read here, and its snapshot, restore and steps were ~1 of ~12 CPU-s
        "--no-overhead",
    )
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out" / "train"
    rows = modules_json(out)["modules"]
    assert_matches_reference(out / "profile_trace.json", rows)
    assert max(r["depth"] for r in rows) == 1
    parts = {"LibreYOLO9Model.backbone", "LibreYOLO9Model.neck", "LibreYOLO9Model.head"}
    for phase in ("forward", "backward"):
        assert parts <= {r["path"] for r in rows if r["phase"] == phase}, phase
        assert_self_times_tile_the_model(rows, phase)
    model_ms = next(r["total_ms_per_step"] for r in rows if r["phase"] == "forward" and r["depth"] == 0)
    forward_ms = phase_wall_ms(out, "forward")
    assert (1 - FORWARD_TOLERANCE) * forward_ms <= model_ms <= forward_ms


@pytest.mark.slow
def test_module_depth_zero_leaves_the_trace_without_ranges(tmp_path):
    result = _measure(
        tmp_path, "infer", "--imgsz", "64", "--runs", "2", "--warmup", "0", "--module-depth", "0", "--no-overhead"
    )
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out" / "infer"
    names = {e.get("name", "") for e in json.loads((out / "profile_trace.json").read_text())["traceEvents"]}
    assert not any(n.startswith("module ") for n in names)
    assert "no module information" in " ".join(run_cli("modules", str(out)).stdout.split())


@pytest.mark.slow
def test_another_family_gets_its_own_module_tree(tmp_path):
    """YOLOX (issue #14's families go through the same call): its own tree, not LibreYOLO9's, figures equal to
    the raw trace's, self times tiling the model's time, and the model inside the forward phase."""
    result = _measure(tmp_path, "infer", "--weights", "LibreYOLOXn.pt", "--imgsz", "64", "--runs", "3", "--warmup", "1")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out" / "infer"
    assert json.loads((out / "profile.json").read_text())["model"]["family"] == "LibreYOLOX"
    rows = modules_json(out)["modules"]
    assert_matches_reference(out / "profile_trace.json", rows)
    (root,) = [r["path"] for r in rows if r["depth"] == 0]
    assert not root.startswith("LibreYOLO9") and {r["depth"] for r in rows} == {0, 1, 2}
    model_ms = assert_self_times_tile_the_model(rows, "forward")
    forward_ms = phase_wall_ms(out, "forward")
    assert (1 - FORWARD_TOLERANCE) * forward_ms <= model_ms <= forward_ms
