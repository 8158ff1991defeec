"""Progress while a big trace is read: a bar on stderr when stderr is a terminal, a start and an end
line for very big traces otherwise, nothing for small ones. The decoder only calls it back with how
far it has read; rich is imported only when a bar is shown. In a Jupyter kernel there is never a bar: a
notebook cell shows a redrawn bar as escape codes, whatever its stream claims to be."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from libreyolo_profile.output.textsafe import safe_line

BAR_FROM_BYTES = 32 << 20  # below this a trace reads in about a second: no bar
LINES_FROM_BYTES = 256 << 20  # without a terminal, only traces this big say they are being read


def in_jupyter_kernel() -> bool:
    """Whether this process is a Jupyter (IPython) kernel: its streams go to notebook cells. Looked up in
    sys.modules only, so nothing is imported to find out."""
    if "ipykernel" not in sys.modules:
        return False
    get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    return getattr(shell, "kernel", None) is not None


def draws_on_terminal(stream) -> bool:
    """Whether a redrawn bar on `stream` reaches a terminal: never in a Jupyter kernel (a frontend may make
    its streams claim to be a tty), never where TTY_COMPATIBLE=0 says not, else the stream's isatty()."""
    if in_jupyter_kernel() or os.environ.get("TTY_COMPATIBLE") == "0":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class TraceReadingProgress:
    """Made with the trace's path and size; called with the byte position reached; `done` at the end
    with the number of events read (None when reading failed)."""

    def __init__(self, path: Path, size: int):
        self.bar = None
        self.line = False
        self.started = time.perf_counter()
        self.path = path
        if size >= BAR_FROM_BYTES and draws_on_terminal(sys.stderr):
            from rich.console import Console
            from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

            self.bar = Progress(
                "reading trace",
                BarColumn(),
                DownloadColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.task = self.bar.add_task("", total=size)
            self.bar.start()
        elif size >= LINES_FROM_BYTES:
            self.line = True
            print(safe_line(f"reading {path.name} ({size / 1e6:.0f} MB)…"), file=sys.stderr, flush=True)

    def __call__(self, position: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=position)

    def done(self, events_read: int | None) -> None:
        if self.bar is not None:
            self.bar.stop()
        if self.line and events_read is not None:
            print(
                f"read {events_read:,} events in {time.perf_counter() - self.started:.1f} s",
                file=sys.stderr,
                flush=True,
            )
