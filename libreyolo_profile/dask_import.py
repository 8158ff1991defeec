"""Bulk import on a Dask distributed cluster (`import --scheduler ADDRESS`, the `[dask]` extra).

Never a silent wait: a scheduler that does not answer is refused after 10 s, or LIBREYOLO_PROFILE_DASK_WAIT_S
seconds where that is shorter; one with no worker after LIBREYOLO_PROFILE_DASK_WAIT_S seconds (default 30; exit
2, one line each), and when every worker has left for that long the inputs not yet imported
fail with a line each (exit 1). A worker that dies mid-task has the task rerun by the scheduler (Dask's
distributed.scheduler.allowed-failures, 3 by default, then KilledWorker: that input's line); reruns publish
nothing twice (bulk.py). Ctrl-C or SIGTERM of the client sets a Dask Event the tasks check before they
write, and cancels every task, so nothing is written for this import after the command has stopped.
"""

from __future__ import annotations

import os
import time

from libreyolo_profile.errors import EXIT_UNANALYSABLE, UsageError

WAIT_ENV = "LIBREYOLO_PROFILE_DASK_WAIT_S"
_DEFAULT_WAIT_S = 30.0
# Reaching the scheduler: distributed retries a refused connection until this passes (a scheduler still
# starting), so a mistyped address costs the whole of it.
_CONNECT_S = 10.0


def worker_wait() -> float:
    text = os.environ.get(WAIT_ENV, "").strip()
    try:
        value = float(text) if text else _DEFAULT_WAIT_S
    except ValueError:
        value = float("nan")
    if not 0 < value < 86400:
        raise UsageError(f"{WAIT_ENV} takes seconds above 0, not {text!r}")
    return value


def run_dask(work, tasks: list[tuple], scheduler: str) -> list[dict]:
    """work(*task) for every task on the cluster; one result per task, in order."""
    try:
        from distributed import Client, Event
    except ImportError:
        raise UsageError("--scheduler needs Dask: pip install 'libreyolo-profile[dask]'") from None
    wait_s = worker_wait()
    try:
        client = Client(scheduler, timeout=min(_CONNECT_S, wait_s))
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    try:
        try:
            client.wait_for_workers(1, timeout=wait_s)
        except TimeoutError:
            raise UsageError(
                f"the Dask scheduler at {scheduler} has no worker (waited {wait_s:g} s; "
                f"start workers, or set {WAIT_ENV})"
            ) from None
        run = tasks[0][-1] if tasks else "none"
        stop = Event(f"libreyolo-profile-stop-{run}", client=client)
        keys = [f"libreyolo-profile-import-{run}-{i}" for i in range(len(tasks))]
        futures = client.map(_task, [work] * len(tasks), tasks, [stop.name] * len(tasks), key=keys, pure=False)
        try:
            return _gather(client, tasks, futures, wait_s)
        except BaseException:  # Ctrl-C, SIGTERM: nothing more is written for this import
            stop.set()
            client.cancel(futures, force=True)
            raise
    finally:
        client.close()


def _task(work, task: tuple, stop_name: str) -> dict:
    """On a worker: the import, which asks the client's stop Event before it writes."""
    from distributed import Event

    stop = Event(stop_name)
    return work(*task, stop=stop.is_set)


def _gather(client, tasks: list[tuple], futures: list, wait_s: float) -> list[dict]:
    from distributed import wait

    results: list[dict | None] = [None] * len(tasks)
    pending = {future: i for i, future in enumerate(futures)}
    alone_since = None  # when the cluster was last seen without a worker
    while pending:
        try:
            done = wait(list(pending), timeout=1.0, return_when="FIRST_COMPLETED").done
        except TimeoutError:  # nothing finished within the second: look at the workers, then wait again
            done = set()
        for future in done:
            i = pending.pop(future)
            try:
                results[i] = future.result()
            except Exception as exc:  # the worker died (KilledWorker), or the task could not reach it
                results[i] = _lost(tasks[i], f"lost on the Dask cluster: {type(exc).__name__}: {exc}")
        if client.nthreads():
            alone_since = None
        elif alone_since is None:
            alone_since = time.monotonic()
        elif time.monotonic() - alone_since > wait_s and pending:
            client.cancel(list(pending), force=True)
            for i in pending.values():
                results[i] = _lost(tasks[i], f"not imported: no Dask worker left for {wait_s:g} s")
            pending.clear()
    return results  # type: ignore[return-value]


def _lost(task: tuple, error: str) -> dict:
    return {"trace": task[0], "ok": False, "exit_code": EXIT_UNANALYSABLE, "error": error}
