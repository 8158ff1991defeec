"""Scalar lists (a convolution's stride, padding, dilation) recorded in the profiled window's first step only
(measure/profiler.py): sql/ingest.sql gives a later step's call the lists of the first step's call at the same
place, on hand-written two-step CPU traces; anything that does not match keeps what the trace recorded."""

from __future__ import annotations

import json

import pytest

from libreyolo_profile.store.decode.parse import parse_trace
from libreyolo_profile.store.ingest.timeline import ingest
from tests import synthetic_traces as st
from tests.conftest import run_cli

F, S, L = "float", "Scalar", "ScalarList"
TYPES = [F, F, F, L, L, L, S, L, S]
UNRECORDED = ["" if t == L else t for t in TYPES]  # what torch writes with the recording of lists off
X = [[2, 3, 32, 32], [8, 3, 3, 3], [8], [], [], [], [], [], []]
W = [[2, 8, 16, 16], [4, 8, 3, 3], [4], [], [], [], [], [], []]
X_OTHER = [[1, 3, 32, 32], [8, 3, 3, 3], [8], [], [], [], [], [], []]


def lists(stride: int, groups: str = "1") -> list:
    return ["", "", "", f"[{stride}, {stride}]", "[1, 1]", "[1, 1]", "False", "[0, 0]", groups]


def blank(groups: str = "1") -> list:
    return ["", "", "", "", "", "", "False", "", groups]


def conv(start_us: int, dims: list, types: list, concrete: list) -> dict:
    return st.shaped_op("aten::convolution", start_us, 50, dims, types, concrete)


def two_steps(path):
    """Step 1 records lists: A (X, stride 1), B (X, stride 2), C (W, stride 2). Step 2 records none: A2 and C2
    at A's and C's places; B2 at B's place but with groups 2 recorded (B has 1); D with dims no step-1 call has."""
    events = [
        st.annotation("ProfilerStep#1", 0, 1000),
        conv(100, X, TYPES, lists(1)),
        conv(200, X, TYPES, lists(2)),
        conv(300, W, TYPES, lists(2)),
        st.annotation("ProfilerStep#2", 1000, 1000),
        conv(1100, X, UNRECORDED, blank()),
        conv(1200, X, UNRECORDED, blank(groups="2")),
        conv(1300, W, UNRECORDED, blank()),
        conv(1400, X_OTHER, UNRECORDED, blank()),
    ]
    return st.write_trace(path, events)


def test_a_later_step_takes_the_lists_of_the_first_steps_call_at_its_place(tmp_path):
    con = ingest(parse_trace(two_steps(tmp_path / "t.json")), None)
    rows = con.execute(
        "SELECT step, CAST(input_types AS VARCHAR[]), CAST(concrete_inputs AS VARCHAR[]) FROM placed_ops "
        "WHERE name = 'aten::convolution' ORDER BY ts"
    ).fetchall()
    con.close()
    assert rows == [
        (1, TYPES, lists(1)),
        (1, TYPES, lists(2)),
        (1, TYPES, lists(2)),
        (2, TYPES, lists(1)),  # A2: A's stride 1, not B's 2, though both have its dims
        (2, UNRECORDED, blank(groups="2")),  # B2 recorded another value than B: kept as recorded
        (2, TYPES, lists(2)),  # C2
        (2, UNRECORDED, blank()),  # D: no call of step 1 has its dims
    ]


def test_the_roofline_costs_the_completed_calls(tmp_path):
    out = run_cli("roofline", str(two_steps(tmp_path / "t.json")), "--top", "100", "--json")
    assert out.returncode == 0, out.stderr
    rows = {tuple(json.loads(r["input_dims"])[0]): r for r in json.loads(out.stdout)["roofline"]}
    # C and C2: 16×16 input, stride 2, padding 1 → 8×8 outputs; 2·N·|w|·positions a call
    assert rows[(2, 8, 16, 16)]["calls"] == 2
    assert rows[(2, 8, 16, 16)]["gflops"] == pytest.approx(2 * 2 * (4 * 8 * 9) * 64 / 1e9)  # one call
    assert "Concrete Inputs" not in rows[(2, 8, 16, 16)]["no_model_reason"]  # a foreign CPU trace: no roof only
    assert "Concrete Inputs" in rows[(1, 3, 32, 32)]["no_model_reason"]  # D
