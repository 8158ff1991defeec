"""How the CLI tells an interrupt from a failure and words an unexpected exception in one line.

A Ctrl-C or SIGTERM may land anywhere: inside DuckDB, which turns the exception our handler raised into
its own `InterruptException` or a `RuntimeError("Query interrupted")`; inside a pyarrow stream; under a
handler of an inner block (an import's, a measurement's workspace). So the exit code does not come from
the exception's type or text but from which signal arrived, remembered twice: by our own handler, and
through Python's wakeup fd, which the interpreter's C handler writes each signal number to whatever
Python handler then runs."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

from libreyolo_profile.stopping import EXIT_TERMINATED, Terminated

EXIT_INTERRUPTED = 128 + signal.SIGINT
# what each stop signal is reported as: (the error line, the exit code)
STOP_SIGNALS = {signal.SIGINT: ("interrupted", EXIT_INTERRUPTED), signal.SIGTERM: ("terminated", EXIT_TERMINATED)}
# what Python starts with; a handler other than these (SIG_IGN from a background shell, a host's own) is left alone
DEFAULT_HANDLERS = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}


class _Stopped:
    def __repr__(self) -> str:
        return "STOPPED"


STOPPED = _Stopped()  # a command's result when a signal stopped it and it has not been reported yet


class _Held:
    """The signals that arrived while a command ran, and whether they still raise."""

    def __init__(self) -> None:
        self.arrived: list[int] = []
        self.raising = True
        self.wakeup_read: int | None = None

    def on_signal(self, signum, frame) -> None:
        self.arrived.append(signum)
        if not self.raising:  # the command is over: remembered for its exit code only
            return
        if _importing(frame):
            # raised inside a module's import, the exception can abort a C extension's initialisation (duckdb's)
            # or leave CPython's flag that exits by SIGINT whatever the exit code: sent again once it is done
            self.send_again(signum)
            return
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated()

    def send_again(self, signum: int) -> None:
        """The signal again in a moment, unless the command is over by then."""

        def send() -> None:
            if self.raising:
                os.kill(os.getpid(), signum)

        again = threading.Timer(0.02, send)
        again.daemon = True
        again.start()

    def unraisable(self, hook):
        """sys.unraisablehook: our exception raised where Python could only print it (a C callback, a
        finaliser) is not printed, and its signal is sent again to stop the command at the next place."""

        def swallow(unraisable) -> None:
            if not isinstance(unraisable.exc_value, (KeyboardInterrupt, Terminated)) or not self.arrived:
                return hook(unraisable)
            self.send_again(self.arrived[-1])

        return swallow

    def first(self) -> int | None:
        """The first stop signal that arrived, whichever handler took it."""
        if self.wakeup_read is not None:
            with contextlib.suppress(BlockingIOError, OSError):
                while chunk := os.read(self.wakeup_read, 512):
                    self.arrived.extend(chunk)
        return next((s for s in self.arrived if s in STOP_SIGNALS), None)


def _importing(frame) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


_current: list[_Held] = []  # the command being run; an inner run_stoppable (cli.run_cli in the launcher's) shares it


def _forget_wakeup_in_child() -> None:
    """A forked worker must not report its own signals (the parent's SIGTERM to it) into our pipe."""
    if _current:
        with contextlib.suppress(ValueError, OSError):
            signal.set_wakeup_fd(-1)


os.register_at_fork(after_in_child=_forget_wakeup_in_child)


@contextlib.contextmanager
def signals_held() -> Iterator[_Held]:
    """Within the block SIGINT raises KeyboardInterrupt and SIGTERM raises Terminated (where the process
    was not told to ignore them), and every one that arrives is remembered; both are as before after it."""
    if _current:  # already held by the command around this one
        yield _current[-1]
        return
    held = _Held()
    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    installed, wakeup_write, old_wakeup = [], None, None
    try:
        for signum, handler in previous.items():
            if handler is DEFAULT_HANDLERS[signum]:  # ignored (SIG_IGN) or someone else's: left alone
                signal.signal(signum, held.on_signal)
                installed.append(signum)
        held.wakeup_read, wakeup_write = os.pipe()
        for fd in (held.wakeup_read, wakeup_write):
            os.set_blocking(fd, False)
        old_wakeup = signal.set_wakeup_fd(wakeup_write, warn_on_full_buffer=False)
    except ValueError:  # not the main thread: the signals are the main thread's business
        pass
    _current.append(held)
    previous_hook, sys.unraisablehook = sys.unraisablehook, held.unraisable(sys.unraisablehook)
    try:
        yield held
    finally:
        _current.pop()
        held.raising = False
        sys.unraisablehook = previous_hook
        if old_wakeup is not None:
            with contextlib.suppress(ValueError):
                signal.set_wakeup_fd(old_wakeup)
        for signum in installed:
            signal.signal(signum, previous[signum])
        held.first()  # what the pipe still holds, before it is closed
        for fd in (held.wakeup_read, wakeup_write):
            if fd is not None:
                os.close(fd)
        held.wakeup_read = None


def ignored_from_here() -> None:
    """The stop signals ignored from here on (an exit handler: the interpreter's teardown, which can take a
    few hundred ms after a reader's DuckDB work): the exit code is decided and the output written, and a
    Ctrl-C there would print a traceback from inside another exit handler."""
    for signum, handler in DEFAULT_HANDLERS.items():
        if signal.getsignal(signum) is handler:
            signal.signal(signum, signal.SIG_IGN)


def run_stoppable(command: Callable[[], int | _Stopped], prog: str, as_json: bool) -> int:
    """Run one command (its exit code, or STOPPED) with the stop signals held. A signal that arrived while
    it ran decides the exit code, 130 or 143, also when the command finished or failed otherwise; the
    --json error object follows only where the command printed no document of its own."""
    printed = _documents_written()
    with signals_held() as held:
        try:
            code = command()
        except (KeyboardInterrupt, Terminated):  # one raised before the command could catch it, or a second
            code = STOPPED
        held.raising = False
        signum = held.first()
    if code is not STOPPED and (signum is None or code in (EXIT_INTERRUPTED, EXIT_TERMINATED)):
        return code  # no signal, or the command said what it stopped in
    from libreyolo_profile.output.textsafe import write_error  # on the way out only: this module loads first

    message, exit_code = STOP_SIGNALS[signum if signum is not None else signal.SIGINT]
    if code is not STOPPED:
        message = f"{message} after the command had finished (its exit code without the signal: {code})"
    # no error object after the command's own document: stdout stays one document
    as_json = as_json and code is STOPPED and _documents_written() == printed
    return write_error(prog, message, exit_code, as_json, prefix="")


def _documents_written() -> int:
    """How many --json documents this process printed (output/textsafe.py), without importing it first."""
    return getattr(sys.modules.get("libreyolo_profile.output.textsafe"), "documents_written", 0)


def stopped(exc: BaseException) -> bool:
    """Whether `exc` ends a command a signal stopped: a stop signal arrived while it ran (whatever the
    exception became on its way out), or Ctrl-C is in its chain."""
    return (bool(_current) and _current[-1].first() is not None) or interrupted(exc)


def interrupted(exc: BaseException) -> bool:
    """Ctrl-C, however it arrived: KeyboardInterrupt, or DuckDB's InterruptException (DuckDB turns
    SIGINT into its own exception), also when a reader wrapped it in a ProfileError."""
    duckdb = sys.modules.get("duckdb")  # not imported: no DuckDB work can have been interrupted
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, KeyboardInterrupt):
            return True
        if duckdb is not None and isinstance(exc, getattr(duckdb, "InterruptException", ())):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def first_paragraph(exc: BaseException) -> str:
    """An unexpected exception's message as one line: DuckDB's errors add a SQL excerpt and a caret
    line after a blank line, which is for a debugger, not for the error line."""
    lines = []
    for line in str(exc).splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)
