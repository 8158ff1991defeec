"""Every reader's `--json` output on each trace the recording holds (those at the top of the traces folder
when it was made) and on a measured CPU profile equals the one recorded before the SQL renovation (issue 23:
"no behaviour change otherwise"). A change meant to change an output regenerates the recording
(tests/reader_outputs.py says how) and names it."""

from __future__ import annotations

import pytest
from conftest import run_cli
from reader_outputs import differences, normalised, outputs_of, read_fixture, recorded_names, targets


@pytest.mark.parametrize("name", recorded_names())
def test_reader_outputs_equal_the_recording(name, traces_dir):
    target, baseline, places = targets(traces_dir, [name])[name]
    if not target.exists():
        pytest.fail(f"the recording holds {name}, missing from {traces_dir}")
    now = normalised(outputs_of(target, run_cli, baseline), places)
    found = differences(read_fixture(name), now)
    assert not found, f"{len(found)} differences, the first: " + "; ".join(found[:8])
