"""The process's scratch database (libreyolo_profile/connections.py): one database, a connection per use
that sees nothing of another's, and none carried across a fork."""

from __future__ import annotations

import os

import duckdb
import pyarrow as pa
import pytest

from libreyolo_profile import connections
from libreyolo_profile.connections import scratch_connection


def test_each_use_sees_only_its_own_objects():
    first, second = scratch_connection(), scratch_connection()
    try:
        first.execute("CREATE TEMP TABLE mine AS SELECT 1 AS x")
        first.register("registered", pa.table({"y": [2]}))
        assert first.execute("SELECT x FROM mine").fetchall() == [(1,)]
        for name in ("mine", "registered"):
            with pytest.raises(duckdb.CatalogException):
                second.execute(f"SELECT * FROM {name}")
        second.execute("CREATE TEMP TABLE mine AS SELECT 3 AS x")  # the same name, its own table
        assert first.execute("SELECT x FROM mine").fetchall() == [(1,)]
    finally:
        first.close()
        second.close()


def test_uses_share_one_database_and_closing_one_leaves_it_open():
    first = scratch_connection()
    database = connections._scratch
    first.close()
    second = scratch_connection()
    try:
        assert connections._scratch is database
        assert second.execute("SELECT 42").fetchall() == [(42,)]
    finally:
        second.close()


def test_a_forked_child_opens_a_database_of_its_own():
    scratch_connection().close()
    parent_database = connections._scratch
    read, write = os.pipe()
    pid = os.fork()  # the parent closes its scratch database first (os.register_at_fork)
    if pid == 0:
        try:
            con = scratch_connection()
            ok = con.execute("SELECT 7").fetchall() == [(7,)] and connections._scratch[0] == os.getpid()
            os.write(write, b"ok" if ok else b"no")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 2)
    os.close(read)
    os.waitpid(pid, 0)
    assert answer == b"ok"
    assert connections._scratch is not parent_database  # closed before the fork, opened again on use
    con = scratch_connection()
    try:
        assert con.execute("SELECT 1").fetchall() == [(1,)]
    finally:
        con.close()
