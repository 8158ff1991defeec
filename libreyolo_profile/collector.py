"""Python's garbage collector in a measuring command (`run`, `infer`, a fresh-process trial).

Importing torch and LibreYOLO and building the model leave ~440,000 long-lived objects, and every full
collection scans them all again: ~190 ms each on this project's 2-core machine, nine of them in the
seed's `infer` (six during the imports, one in the model build, and the one before each timed block, which
only means to clear what the setup and the profiler left). None of that is the model's cost: with the
collector left to Python, the seed's `infer` (one torch thread) took 13.0 CPU-s against 11.3 with this
module, lower in each of 7 interleaved rounds (`python benchmarks/bench_hand_written.py gc`,
docs/design/performance.md).

So a measuring command starts with the collector off and, before its first measured call, freezes what
the start-up left (gc.freeze: out of every later scan; the gc module documents the same disable-early,
freeze-once-built sequence for a parent's heap before fork()) and turns the collector back on: the calls
run with a normal collector over what they allocate. A process the command line did
not start (the Python API, a test calling the measurement code) keeps its collector as it was.
"""

from __future__ import annotations

import gc

_paused_at_startup = False


def pause_for_startup() -> None:
    """The collector off until resume_before_measuring (the command line's entry, before its imports)."""
    global _paused_at_startup
    if gc.isenabled():
        gc.disable()
        _paused_at_startup = True


def resume_before_measuring() -> None:
    """Freeze what the start-up built and turn the collector on again, once: only where
    pause_for_startup turned it off."""
    global _paused_at_startup
    if _paused_at_startup:
        _paused_at_startup = False
        gc.freeze()
        gc.enable()
