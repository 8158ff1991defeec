"""The autograd profiler before Kineto (torch <= 1.7, and torch.autograd.profiler_legacy still): its
`export_chrome_trace` writes a JSON list with no categories, ops under the process "CPU functions" and each
op's device time, measured by CUDA events around it, under "CUDA functions" with the device as tid. Such a
trace was refused as holding "no host ops, annotations or device work"."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import run_cli_in_process


def _read(*args: str, cache) -> dict:
    result = run_cli_in_process(*args, "--json", env={"XDG_CACHE_HOME": str(cache)})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_real_legacy_cpu_trace_is_read_as_ops(tmp_path):
    """torch's own legacy profiler on a small model, exported by torch: its ops are read, the verdict is the
    CPU's, and the call's wall is the span of what the profiler recorded."""
    torch = pytest.importorskip("torch")
    from torch.autograd import profiler_legacy

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU()).eval()
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        model(x)
        with profiler_legacy.profile() as prof:
            model(x)
    path = tmp_path / "legacy.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())
    assert isinstance(events, list) and not any(e.get("cat") for e in events if e.get("ph") == "X")
    summary = _read("summary", str(path), cache=tmp_path / "cache")
    assert summary["profile"]["device_type"] == "cpu" and summary["verdict"]["bound"] != "unknown", summary["verdict"]
    first = min(e["ts"] for e in events)
    last = max(e["ts"] + e["dur"] for e in events)
    assert summary["metrics"]["step_ms"] == pytest.approx((last - first) / 1e3, abs=1e-6)
    ops = {row["name"] for row in _read("ops", str(path), "--top", "1000", cache=tmp_path / "cache")["ops"]}
    assert {"aten::conv2d", "aten::relu"} <= ops, ops
    # a foreign CPU trace of a conv model has no measured CPU roof: the verdict names the null figure, and the
    # first screen says why (it printed the verdict's "gemm_conv_peak_pct is null" and no reason)
    screen = run_cli_in_process("summary", str(path), env={"XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "100"})
    said = f"{summary['verdict']['reason']} {summary['verdict']['next_step']}"
    named = [m for m, v in summary["metrics"].items() if v is None and re.search(rf"\b{m}\b", said)]
    assert named, said
    assert all(f"— {m}: " in " ".join(screen.stdout.split()) for m in named), screen.stdout


def _legacy_gpu_trace(calls: int) -> tuple[list[dict], float]:
    """What torch <= 1.7 writes with use_cuda=True, field for field: per call a convolution whose op, the op
    it calls and the one that calls cuDNN each have a CUDA-event range nested in the caller's, then a relu.
    Returns the events and the device time (the innermost ranges), µs."""
    events, flow, t, device_us = [], 0, 0.0, 0.0

    def op(name, start, dur, device_start, device_dur):
        nonlocal flow
        events.extend(
            [
                {"name": name, "ph": "X", "ts": start, "dur": dur, "tid": 1, "pid": "CPU functions", "args": {}},
                {"name": name, "ph": "s", "ts": start, "tid": 1, "pid": "CPU functions", "id": flow,
                 "cat": "cpu_to_cuda", "args": {}},
                {"name": name, "ph": "f", "ts": device_start, "tid": 0, "pid": "CUDA functions", "id": flow,
                 "cat": "cpu_to_cuda", "args": {}},
                {"name": name, "ph": "X", "ts": device_start, "dur": device_dur, "tid": 0,
                 "pid": "CUDA functions", "args": {}},
            ]
        )  # fmt: skip
        flow += 1

    for _ in range(calls):
        op("aten::conv2d", t, 100, t + 110, 190)
        op("aten::convolution", t + 2, 96, t + 112, 186)
        op("aten::cudnn_convolution", t + 5, 90, t + 115, 180)
        op("aten::relu", t + 100, 20, t + 300, 40)
        device_us += 180 + 40
        t += 400
    return events, device_us


def test_legacy_device_ranges_count_each_op_once(tmp_path):
    """The device lanes are read as device work, each op's time once: a range that holds another (the caller's
    CUDA events around its callees') is left out, and the trace_damaged mark says how many."""
    calls = 4
    events, device_us = _legacy_gpu_trace(calls)
    path = tmp_path / "legacy_gpu.json"
    path.write_text("[" + ", ".join(json.dumps(e) for e in events) + "]")
    summary = _read("summary", str(path), cache=tmp_path / "cache")
    assert summary["profile"]["device_type"] == "gpu"
    assert [d["kernel_ms"] for d in summary["devices"]] == [pytest.approx(device_us / 1e3, abs=1e-6)]
    assert (
        f"{2 * calls} events: read as the autograd profiler's device time per op" in summary["marks"]["trace_damaged"]
    )
    kernels = _read("kernels", str(path), "--top", "100", cache=tmp_path / "cache")["kernels"]
    assert {k["name"] for k in kernels} == {"aten::cudnn_convolution", "aten::relu"}
