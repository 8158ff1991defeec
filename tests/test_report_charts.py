"""The report's charts read right at their edges: an axis over a tiny range has the digits to tell its ticks
apart, the roofline's roofs are named without writing over each other, and a module icicle never labels side by
side boxes with shares that add up past their whole (backward ranges overlap under autograd)."""

from __future__ import annotations

import re

import pytest

from libreyolo_profile.readers.report_charts import (
    LABEL_GAP,
    histogram,
    icicle,
    roofline_chart,
    spread_labels,
    step_bars,
    tick_labels,
)


def tick_texts(svg: str) -> list[str]:
    return re.findall(r'class="tick">([^<]*)</text>', svg)


@pytest.mark.parametrize("top", [0.004, 0.05, 0.3, 2.4, 12.0, 250.0, 4321.0])
def test_tick_labels_are_all_different(top):
    ticks, labels = tick_labels(top)
    assert ticks[-1] >= top and len(set(labels)) == len(labels), labels
    assert [float(label.replace(",", "")) for label in labels] == pytest.approx(ticks)


def test_a_step_chart_of_tiny_steps_labels_its_axis_apart():
    steps = [{"step": i, "host_ms": 0.03 + 0.001 * i, "kernel_ms": 0.0, "phases": {"forward": 0.03}} for i in (1, 2)]
    labels = [t for t in tick_texts(step_bars(steps, ["forward"], False)) if t not in ("1", "2")]
    assert len(labels) >= 3 and len(set(labels)) == len(labels), labels  # it read 0.0, 0.0, 0.0, 0.0
    assert labels[0] == "0.00"


def test_a_narrow_latency_histogram_labels_its_axis_apart():
    svg = histogram([7.41, 7.42, 7.43, 7.45], [("p50", 7.42)])
    below = re.findall(r'y="\d+" text-anchor="middle" class="tick">([^<]*)</text>', svg)
    assert len(below) >= 3 and len(set(below)) == len(below), below


def test_roof_names_are_spread_apart_and_equal_roofs_named_once():
    point = {"op": "aten::mm", "input_dims": "[[8, 8]]", "gflops": 1.0, "intensity": 4.0, "tflops_per_s": 2.0,
             "pct_of_roofline": 10.0, "device_ms_per_step": 1.0, "peak_tb_per_s": 2.0, "bound": "memory"}  # fmt: skip
    rows = [
        {**point, "roof_class": "fp32", "peak_tflops": 19.5},
        {**point, "roof_class": "fp64", "peak_tflops": 17.0},  # a few pixels below fp32 on the log scale
        {**point, "roof_class": "fp16", "peak_tflops": 312.0},
        {**point, "roof_class": "bf16", "peak_tflops": 312.0},  # the same roof as fp16
    ]
    svg = roofline_chart(rows)
    labels = re.findall(r'y="([0-9.]+)" text-anchor="end" class="tick roof-label"[^>]*>([^<]*)</text>', svg)
    names = [name for _, name in labels]
    assert len(labels) == 3 and any(n.startswith("bf16, fp16 312") for n in names), names
    ys = sorted(float(y) for y, _ in labels)
    assert all(b - a >= LABEL_GAP - 1e-6 for a, b in zip(ys, ys[1:], strict=False)), ys


def test_spread_labels_moves_only_what_collides_and_stays_inside():
    assert spread_labels([10.0, 50.0, 90.0], 13, 0, 100) == [10.0, 50.0, 90.0]
    assert spread_labels([40.0, 41.0, 42.0], 13, 0, 100) == [40.0, 53.0, 66.0]
    assert spread_labels([95.0, 96.0, 97.0], 13, 0, 100) == [74.0, 87.0, 100.0]


def module_rows(phase: str, parts: list[tuple[str, float]], whole: float) -> list[dict]:
    rows = [{"path": "Model", "name": "Model", "module_type": "Model", "depth": 0, "phase": phase,
             "total_ms_per_step": whole, "self_ms_per_step": 0.0, "share_pct": 100.0}]  # fmt: skip
    rows += [
        {"path": f"Model.{name}", "name": name, "module_type": "Block", "depth": 1, "phase": phase,
         "total_ms_per_step": ms, "self_ms_per_step": ms, "share_pct": 100.0 * ms / whole}
        for name, ms in parts
    ]  # fmt: skip
    return rows


def test_overlapping_backward_parts_are_named_by_time_not_by_shares_past_100():
    # backward under autograd: the parts' ranges overlap, 120 + 83 ms of a 100 ms pass (203 %)
    svg = icicle(module_rows("backward", [("backbone", 120.0), ("head", 83.0)], 100.0), "backward", 900)
    boxes = re.findall(r'class="inbar">([^<]*)</text>', svg)
    assert "Model 100%" in boxes
    assert "backbone 120.00 ms" in boxes and "head 83.00 ms" in boxes
    assert not any(b.startswith(("backbone", "head")) and b.endswith("%") for b in boxes), boxes
    assert "which add up to 203 % of the model" in svg
    # forward, the parts within their whole: shares, as before
    svg = icicle(module_rows("forward", [("backbone", 60.0), ("head", 30.0)], 100.0), "forward", 900)
    assert {"backbone 60%", "head 30%"} <= set(re.findall(r'class="inbar">([^<]*)</text>', svg))
