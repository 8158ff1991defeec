"""Progress while a big trace is read: a bar on stderr when stderr is a terminal, a start and an end
line for very big traces otherwise, nothing for small ones. The decoder only calls it back with how
far it has read; rich is imported only when a bar is shown."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from libreyolo_profile.output.textsafe import safe_line

BAR_FROM_BYTES = 32 << 20  # below this a trace reads in about a second: no bar
LINES_FROM_BYTES = 256 << 20  # without a terminal, only traces this big say they are being read


class TraceReadingProgress:
    """Made with the trace's path and size; called with the byte position reached; `done` at the end
    with the number of events read (None when reading failed)."""

    def __init__(self, path: Path, size: int):
        self.bar = None
        self.line = False
        self.started = time.perf_counter()
        self.path = path
        if size >= BAR_FROM_BYTES and sys.stderr.isatty():
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
