"""The thread `query` runs the user's SQL in (readers/query.py): the main thread waits for it in short steps,
so Ctrl-C and the --timeout deadline are both kept whatever DuckDB is doing, and either interrupts DuckDB."""

from __future__ import annotations

import math
import threading
import time

from libreyolo_profile.readers.query_output import StreamStopped
from libreyolo_profile.stopping import Terminated

QUERY_THREAD = "libreyolo-query"  # the worker thread that runs the user's SQL
STOP_GRACE_S = 5.0  # how long an interrupted query may take to stop before the command exits anyway


class QueryWorker:
    """Runs DuckDB work on `con` in a thread of its own while the main thread waits in short steps, so Ctrl-C
    reaches Python whatever DuckDB is doing (a statement run in the main thread sees it only where DuckDB
    checks for signals) and a deadline can be kept; either stops DuckDB with con.interrupt()."""

    def __init__(self, con, work, output_started=lambda: False):
        # output_started: whether stdout holds part of the result, asked when the deadline passes
        self.con, self.work, self.outcome, self.output_started = con, work, {}, output_started
        # The end is told by an Event, not Thread.join/is_alive: on Python 3.11 a join interrupted by Ctrl-C
        # can leave is_alive() False while the thread still runs (seen here: the process then aborted at exit).
        self.done = threading.Event()
        # Ctrl-C can land inside thread.start(), before the thread runs: a thread that begins after stop()
        # does no work, so a connection no thread has begun on is safe to close.
        self.lock, self.began, self.stopping = threading.Lock(), False, False
        self.thread = threading.Thread(target=self._target, name=QUERY_THREAD, daemon=True)

    def _target(self) -> None:
        with self.lock:
            self.began = not self.stopping
        if not self.began:
            return
        try:
            self.outcome["value"] = self.work()
        except BaseException as exc:  # handed to the main thread, which raises it
            self.outcome["error"] = exc
        finally:
            self.done.set()

    def run(self, timeout: float):
        deadline = time.monotonic() + timeout if timeout > 0 else math.inf
        try:
            self.thread.start()
            while not self.done.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    self.stop()
                    printed = self.output_started()
                    raise StreamStopped(
                        f"query exceeded --timeout {timeout:g} s (it covers printing the rows"
                        f"{': the output above is cut off' if printed else ''}; give it more, "
                        f"or --timeout 0 for no limit)",
                        printed,
                    )
                self.done.wait(min(left, 0.1))  # short waits: Ctrl-C is handled between them
        except (KeyboardInterrupt, Terminated):  # Ctrl-C or SIGTERM (cli_errors.py): DuckDB stops first
            self.stop()
            raise  # cli.run_cli prints "interrupted" or "terminated" and exits 130 or 143
        if "error" in self.outcome:
            raise self.outcome["error"]
        return self.outcome["value"]

    def stop(self) -> None:
        """Interrupt until the work ends (an interrupt that lands between two statements is lost, so it is
        repeated), for a few seconds at most: a thread blocked outside DuckDB is left to the process exit."""
        with self.lock:
            self.stopping = True
        give_up = time.monotonic() + STOP_GRACE_S
        while self.busy and time.monotonic() < give_up:
            self.con.interrupt()
            self.done.wait(0.05)

    @property
    def busy(self) -> bool:
        """Whether the thread is (or may still be) working on the connection."""
        with self.lock:
            return self.began and not self.done.is_set()
