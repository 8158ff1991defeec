"""The garbage collector in a measuring command (libreyolo_profile/collector.py): off from the command
line's entry of `run`/`infer` until the first measured call, then the start-up's objects frozen and the
collector on; readers and API callers keep theirs as it was. Each case runs in a fresh interpreter, since
the collector is the process's."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import REPO


def _after_entry(command: str, then: str) -> str:
    """What a fresh interpreter prints running `then` after the command line's entry took `command --help`."""
    entry = f"""
        import contextlib, gc, io
        from libreyolo_profile import launcher
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                launcher._run([{command!r}, "--help"], "libreyolo-profile")
            except SystemExit:
                pass
        """
    code = textwrap.dedent(entry) + textwrap.dedent(then)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_measuring_entry_pauses_the_collector_until_its_runner_is_made():
    out = _after_entry(
        "infer",
        """
        after_entry = gc.isenabled()
        from libreyolo_profile.measure.trials import TrialRunner
        TrialRunner("cpu")
        frozen = gc.get_freeze_count()
        print(after_entry, gc.isenabled(), frozen > 1000)
        TrialRunner("cpu")  # a second trial of the same process changes nothing
        print(gc.isenabled(), gc.get_freeze_count() == frozen)
        """,
    )
    assert out.splitlines() == ["False True True", "True True"]


def test_a_reader_and_an_api_caller_keep_their_collector():
    out = _after_entry(
        "summary",
        """
        reader = gc.isenabled()
        gc.disable()  # a caller's own choice, kept by the measurement code
        from libreyolo_profile.measure.trials import TrialRunner
        TrialRunner("cpu")
        print(reader, gc.isenabled(), gc.get_freeze_count())
        """,
    )
    assert out == "True False 0"
