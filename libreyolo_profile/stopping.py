"""SIGTERM as an exception, so that an import stopped by a supervisor (a CI timeout, `kill`, a container
shutdown) runs every `finally` on the way out: worker processes stopped, uploads and staging removed.

Terminated is a BaseException, so no `except Exception` on the way swallows it, and not a
KeyboardInterrupt, which the CLI reads as Ctrl-C (exit 130): cli.py prints "terminated" and exits 143.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(BaseException):
    """The process received SIGTERM."""


def _raise_terminated(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises Terminated in the main thread (elsewhere: left as it is)."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread (a Dask worker's task): the signal is its owner's business
        yield
        return
    main_pid = os.getpid()
    try:
        yield
    finally:
        if os.getpid() == main_pid:
            signal.signal(signal.SIGTERM, previous)
