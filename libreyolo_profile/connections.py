"""What every DuckDB connection of ours needs before its first query, and the process's scratch
database for small internal work."""

from __future__ import annotations

import os
import threading


def without_progress_bar(con):
    """`con` with DuckDB's progress bar off: past its 2 s wait a query draws the bar on stdout, pipe or not,
    and stdout is --json's, the tables' and the Python API's caller's. In a Jupyter kernel without
    ipywidgets DuckDB refuses to touch the setting, and draws no bar there."""
    import duckdb

    try:
        con.execute("SET enable_progress_bar = false")
    except duckdb.InvalidInputException:
        pass
    return con


# Starting a DuckDB database costs ~27 ms (DuckDB 2.0, this machine), a connection to a running one ~0.1 ms,
# and a command's small internal work (the vocabulary's tables, a verdict, a trial's headline, a built-in
# profile's kernel categories) opened up to eight. Each use gets a connection of its own, so its temporary
# objects and registered tables are its own. Work that sets database-wide options (the trace analysis's
# memory limit and spill directory, the readers' and `query`'s limits) keeps a database of its own.
_SCRATCH_LOCK = threading.Lock()
_scratch: tuple[int, object] | None = None  # (the pid that opened it, its first connection)


def scratch_connection():
    """A new connection to this process's scratch database; close it when done."""
    global _scratch
    import duckdb

    with _SCRATCH_LOCK:
        if _scratch is None or _scratch[0] != os.getpid():
            _scratch = (os.getpid(), without_progress_bar(duckdb.connect(":memory:")))
        return _scratch[1].cursor()


def _close_scratch_before_fork() -> None:
    """DuckDB's threads do not survive a fork: the parent closes its scratch database first (the next use
    opens another), so no child holds one, or finalizes one, that has no threads."""
    global _scratch
    if _scratch is not None and _scratch[0] == os.getpid() and _SCRATCH_LOCK.acquire(blocking=False):
        try:
            _scratch[1].close()
            _scratch = None
        finally:
            _SCRATCH_LOCK.release()


os.register_at_fork(before=_close_scratch_before_fork)
