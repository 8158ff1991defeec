"""`run`'s cost cuts keep the trace as it was (benchmarks/bench_run_cost.py measures the cost): the backward
module ranges moved to their lanes by a streamed rewrite give the same trace as the whole-file rewrite, the
trace-only profiler exports the same kinds of events, and a file not laid out as Kineto writes it is left to
the whole-file rewrite."""

from __future__ import annotations

import json
import shutil

import pytest

torch = pytest.importorskip("torch")


def _model():
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(4, 4, 3, padding=1)
            self.act = torch.nn.SiLU()

        def forward(self, x):
            return self.act(self.conv(x)) + x

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.blocks = torch.nn.Sequential(Block(), Block())
            self.head = torch.nn.Conv2d(4, 2, 1)

        def forward(self, x):
            return self.head(self.blocks(self.stem(x)))

    return Net()


def _kineto_trace(path, trace_only: bool):
    """Two annotated training steps of a small model with module ranges, as `run` profiles them."""
    from libreyolo_profile.measure import profiler
    from libreyolo_profile.measure.modules import ModuleRanges
    from libreyolo_profile.measure.train import trace_only_profiler

    torch.manual_seed(0)
    model = _model()
    ranges = ModuleRanges(model, 3)
    device = torch.device("cpu")
    prof = trace_only_profiler(device) if trace_only else profiler.make_profiler(device)
    with profiler.profiling(prof):
        for _ in range(2):
            with ranges.recording(True):
                loss = model(torch.rand(2, 3, 16, 16)).square().mean()
            loss.backward()
    with profiler.kineto_quiet():
        prof.export_chrome_trace(str(path))
    return path


def _events(path) -> list[str]:
    return sorted(json.dumps(e, sort_keys=True) for e in json.loads(path.read_text())["traceEvents"])


@pytest.mark.parametrize("trace_only", [False, True])
def test_streamed_lanes_equal_the_whole_file_rewrite(tmp_path, trace_only):
    from libreyolo_profile.measure.modules import BACKWARD_PREFIX, LANE_TID_BASE, separate_backward_ranges
    from libreyolo_profile.measure.profiler import streamed_backward_ranges

    raw = _kineto_trace(tmp_path / "raw.json", trace_only)
    streamed, whole = tmp_path / "streamed.json", tmp_path / "whole.json"
    shutil.copyfile(raw, streamed)
    shutil.copyfile(raw, whole)
    moved = streamed_backward_ranges(streamed)
    assert moved is not None and moved > 0
    assert moved == separate_backward_ranges(whole)
    assert _events(streamed) == _events(whole)
    backward = [
        e for e in json.loads(streamed.read_text())["traceEvents"] if e.get("name", "").startswith(BACKWARD_PREFIX)
    ]
    assert backward and all(e["tid"] >= LANE_TID_BASE for e in backward)
    assert _events(streamed) != _events(raw)
    # every range is on a lane: the whole-file rewrite finds nothing left to move
    before = streamed.read_bytes()
    assert separate_backward_ranges(streamed) == 0
    assert streamed.read_bytes() == before


def test_trace_only_profiler_exports_what_the_profiler_exports(tmp_path):
    """The same event names and phases with and without torch's trace_only (it drops Python-side objects,
    not trace events); shapes still recorded (the roofline reads them)."""
    plain = json.loads(_kineto_trace(tmp_path / "plain.json", False).read_text())["traceEvents"]
    lean = json.loads(_kineto_trace(tmp_path / "lean.json", True).read_text())["traceEvents"]

    def kinds(events):
        return sorted({(e.get("ph"), e.get("name")) for e in events if e.get("ph") == "X"})

    assert kinds(plain) == kinds(lean)
    assert any("Input Dims" in (e.get("args") or {}) for e in lean if e.get("name") == "aten::convolution")


def test_a_file_not_laid_out_as_kineto_writes_it_is_left_to_the_whole_file_rewrite(tmp_path):
    from libreyolo_profile.measure.modules import separate_backward_ranges
    from libreyolo_profile.measure.profiler import streamed_backward_ranges

    raw = _kineto_trace(tmp_path / "raw.json", True)
    one_line = tmp_path / "one_line.json"
    one_line.write_text(json.dumps(json.loads(raw.read_text())))
    before = one_line.read_bytes()
    assert streamed_backward_ranges(one_line) is None
    assert one_line.read_bytes() == before
    assert separate_backward_ranges(one_line) > 0  # what export_trace then runs


def test_release_heap_runs_anywhere():
    from libreyolo_profile.measure.common import release_heap

    release_heap()
