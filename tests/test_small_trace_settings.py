"""A small trace's analysis runs on one thread and, smaller still, without two optimizers
(store/ingest/timeline.py _small_trace_settings: the fixed cost per statement is most of its CPU, see
docs/design/performance.md). Those settings change how DuckDB computes, never what: the same traces analysed
with DuckDB's defaults give the same document, value for value; a float to 1e-12 of itself, since a sum's
order, and so its last bits, already differs run to run where two threads share a parallel aggregate."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest
from conftest import require_traces, trace_files

from libreyolo_profile.store.ingest import timeline
from libreyolo_profile.store.ingest.analyse import analyse_trace


def _setting(con, name: str) -> str:
    return str(con.execute(f"SELECT current_setting('{name}')").fetchone()[0])


@pytest.mark.parametrize(
    ("events", "threads", "plain"),
    [
        (None, None, False),
        (timeline.ONE_THREAD_EVENTS, None, False),
        (timeline.PLAIN_PLAN_EVENTS, "1", False),
        (timeline.PLAIN_PLAN_EVENTS - 1, "1", True),
    ],
)
def test_the_connection_gets_the_settings_its_size_calls_for(events, threads, plain):
    default = timeline.open_connection()
    con = timeline.open_connection(events)
    try:
        assert _setting(con, "threads") == (threads or _setting(default, "threads"))
        disabled = _setting(con, "disabled_optimizers").lower()
        assert ("join_order" in disabled and "statistics_propagation" in disabled) == plain
    finally:
        con.close()
        default.close()


def _same(a, b, where: str = "") -> None:
    if isinstance(a, pa.Table) or isinstance(b, pa.Table):
        assert isinstance(a, pa.Table) and isinstance(b, pa.Table) and a.equals(b), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            _same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300), where
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _smallest_traces(count: int) -> list:
    require_traces()
    return sorted(trace_files(), key=lambda p: p.stat().st_size)[:count]


@pytest.mark.parametrize("index", range(2))
def test_a_small_trace_reads_the_same_with_the_defaults(index, monkeypatch, private_cache):
    trace = _smallest_traces(2)[index]
    settings = []
    real = timeline._small_trace_settings
    monkeypatch.setattr(timeline, "_small_trace_settings", lambda events: settings.append(real(events)) or real(events))
    small = analyse_trace(trace)
    assert settings and "SET threads = 1" in settings[-1]  # the settings did apply
    monkeypatch.setattr(timeline, "_small_trace_settings", lambda events: [])
    defaults = analyse_trace(trace)
    _same(small, defaults)
