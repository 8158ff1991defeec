"""Local worker processes for bulk import (`import --jobs N`), where a dead worker fails only its own input.

concurrent.futures' pool breaks whole when one worker dies (BrokenProcessPool: every input lost, none
reported). Here each worker runs one input at a time over its own pipe, so a death is charged to exactly
the input it held: that input is tried once more in a fresh worker (bulk imports publish idempotently,
see bulk.py, so a retry never publishes twice), then reported failed, and the other inputs go on.

Workers never outlive the command: when it ends, fails, is interrupted (Ctrl-C) or terminated (SIGTERM,
raised by stopping.py) they are sent SIGTERM, then SIGKILL after a grace; and each asks the kernel for
SIGTERM the moment its parent dies (Linux PR_SET_PDEATHSIG; elsewhere a thread watches the parent), so
no orphan keeps the caller's output pipe open.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from multiprocessing.connection import wait
from typing import Callable

ATTEMPTS = 2  # a killed worker's input is tried once more
GRACE_S = 5.0  # how long a stopped worker may take to clean up before SIGKILL
_PR_SET_PDEATHSIG = 1


def run_pool(work: Callable, tasks: list[tuple], jobs: int, died: Callable[[tuple, str], dict]) -> list[dict]:
    """work(*task) for every task in `jobs` spawned processes; a task whose worker died twice gets
    died(task, how) instead. Results in the order of `tasks`."""
    context = multiprocessing.get_context("spawn")  # a fresh interpreter, never a fork of our threads
    results: list[dict | None] = [None] * len(tasks)
    deaths = [0] * len(tasks)
    waiting = deque(range(len(tasks)))
    busy: dict = {}  # worker -> index of the task it holds
    idle: list = []
    try:
        while waiting or busy:
            while waiting and (idle or len(busy) + len(idle) < jobs):
                worker = idle.pop() if idle else _Worker(context)
                if not worker.process.is_alive():  # died after its last result: not charged to anyone
                    worker.stop()
                    continue
                index = waiting.popleft()
                busy[worker] = index
                try:
                    worker.conn.send((work, tasks[index]))
                except OSError:
                    pass  # it died just now: _ready sees its end, and the task is charged with it
            for worker in _ready(busy):
                index = busy.pop(worker)
                outcome = worker.receive()
                if outcome is not None:
                    results[index] = outcome
                    idle.append(worker)
                    continue
                deaths[index] += 1
                worker.stop()
                if deaths[index] < ATTEMPTS:
                    waiting.appendleft(index)
                else:
                    results[index] = died(tasks[index], worker.how_it_died())
        return results  # type: ignore[return-value]
    finally:
        _stop_all([*busy, *idle])


def _ready(busy: dict) -> list:
    """Workers whose pipe has a result or whose process ended (waits a second at most)."""
    by_handle = {}
    for worker in busy:
        by_handle[worker.conn] = worker
        by_handle[worker.process.sentinel] = worker
    ready = wait(list(by_handle), timeout=1.0)
    return list(dict.fromkeys(by_handle[h] for h in ready))


def _stop_all(workers: list) -> None:
    for worker in workers:
        worker.ask_to_stop()
    deadline = time.monotonic() + GRACE_S
    for worker in workers:
        worker.process.join(max(0.0, deadline - time.monotonic()))
    for worker in workers:
        worker.stop()


class _Worker:
    def __init__(self, context):
        parent, child = context.Pipe()
        self.conn = parent
        self.process = context.Process(target=_serve, args=(child, os.getpid()), daemon=True)
        self.process.start()
        child.close()

    def receive(self):
        """The result it sent, or None when it died instead."""
        try:
            if self.conn.poll():
                return self.conn.recv()
        except (EOFError, OSError):
            pass
        return None

    def ask_to_stop(self) -> None:
        if self.process.is_alive():
            self.process.terminate()  # SIGTERM: it cleans up what it was writing, then exits

    def stop(self) -> None:
        self.process.join(0.1)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(GRACE_S)
        self.conn.close()

    def how_it_died(self) -> str:
        self.process.join(1.0)
        code = self.process.exitcode
        if code is not None and code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"


def _serve(conn, parent_pid: int) -> None:
    """A worker: run each (work, task) it is sent and send back the result, until the pipe closes."""
    from libreyolo_profile.stopping import Terminated, sigterm_raises

    _die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which stops us
    with sigterm_raises():
        try:
            while True:
                try:
                    work, task = conn.recv()
                except (EOFError, OSError):
                    return
                conn.send(work(*task))
        except Terminated:
            return  # every `finally` of the import ran on the way here


def _die_with_parent(parent_pid: int) -> None:
    """SIGTERM to this process when the parent dies, however it dies (SIGKILL included)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM) == 0
    except (OSError, AttributeError):
        armed = False
    if os.getppid() != parent_pid:  # the parent died before the request was made
        os.kill(os.getpid(), signal.SIGTERM)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)
