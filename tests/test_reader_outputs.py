"""Every reader's `--json` output on the 8 shared traces and on a measured CPU profile equals the one
recorded before the SQL renovation (issue 23: "no behaviour change otherwise"). A change meant to
change an output regenerates the recording (tests/reader_outputs.py says how) and names it."""

from __future__ import annotations

import pytest
from conftest import run_cli
from reader_outputs import SHARED_TRACES, differences, normalised, outputs_of, read_fixture, targets


@pytest.mark.parametrize("name", [*SHARED_TRACES, "measured_cpu_infer"])
def test_reader_outputs_equal_the_recording(name, traces_dir):
    target, baseline, places = targets(traces_dir)[name]
    now = normalised(outputs_of(target, run_cli, baseline), places)
    found = differences(read_fixture(name), now)
    assert not found, f"{len(found)} differences, the first: " + "; ".join(found[:8])
