"""The analysis's DuckDB memory limit is sized from the memory this process may still take
(store/ingest/timeline.py memory_limit_bytes): a quarter of it, never below the old fixed 500 MB nor above
the ceiling, less where a cgroup leaves less room; docs/design/performance.md says the trade."""

from __future__ import annotations

import duckdb
import pytest

from libreyolo_profile.store.ingest import timeline

GiB = 1 << 30


@pytest.fixture
def memory(monkeypatch):
    """Set what /proc/meminfo and the cgroup say: memory(available_bytes, cgroup_room_bytes)."""
    monkeypatch.delenv(timeline.MEMORY_LIMIT_ENV, raising=False)

    def set_memory(available, room=None):
        monkeypatch.setattr(timeline, "_meminfo_available", lambda: available)
        monkeypatch.setattr(timeline, "_cgroup_room", lambda: room)

    return set_memory


def test_a_quarter_of_what_is_available_between_floor_and_ceiling(memory):
    memory(4 * GiB)
    assert timeline.memory_limit_bytes() == GiB  # 4 GiB available: a quarter
    memory(64 * GiB)
    assert timeline.memory_limit_bytes() == timeline.MEMORY_CEILING
    memory(1 * GiB)  # a quarter would be 256 MiB: never below the old fixed limit
    assert timeline.memory_limit_bytes() == timeline.MEMORY_FLOOR == 500 * 10**6


def test_a_cgroup_with_less_room_than_the_machine_wins(memory):
    memory(32 * GiB, room=3 * GiB)
    assert timeline.memory_limit_bytes() == 3 * GiB // 4
    memory(None, room=None)  # nothing to read (not Linux): the floor
    assert timeline.memory_limit_bytes() == timeline.MEMORY_FLOOR


def test_the_environment_overrides_the_sizing(memory, monkeypatch):
    memory(32 * GiB)
    monkeypatch.setenv(timeline.MEMORY_LIMIT_ENV, str(3 * 10**9))
    assert timeline.memory_limit_bytes() == 3 * 10**9
    monkeypatch.setenv(timeline.MEMORY_LIMIT_ENV, "lots")  # not a number of bytes: the sizing
    assert timeline.memory_limit_bytes() == timeline.MEMORY_CEILING


def test_this_machine_reads_a_figure_and_the_connection_gets_it():
    available = timeline.available_memory_bytes()
    assert available is None or available > 0
    con = timeline.open_connection()
    try:
        got = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    finally:
        con.close()
    reference = duckdb.connect(":memory:")
    reference.execute(f"SET memory_limit = '{timeline.memory_limit_bytes() >> 20}MiB'")
    assert got == reference.execute("SELECT current_setting('memory_limit')").fetchone()[0]
