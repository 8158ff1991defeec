"""pyarrow's pandas probe, answered "no" once in a command.

The first Arrow array a process builds from Python objects makes pyarrow import pandas, only to ask whether
the input is a pandas object (any pa.array call does, typed or from numpy): a first `summary` of a small trace
took 1.28 CPU-s with this module and 1.65 without it, of the h100 example 1.60 against 1.87
(`python benchmarks/bench_hand_written.py pandas`, docs/design/performance.md). No command builds an array
from pandas, and the plain LibreYOLO script a command is measured against never imports it. So a command-line
process that has not imported pandas lets pyarrow's first probe find no pandas; pyarrow remembers the answer
for its probes and still imports pandas, for real, wherever a conversion needs it (its strict checks retry the
import). The Python API never asks for this: in a notebook, pyarrow keeps treating pandas objects as arrays.
"""

from __future__ import annotations

import sys

_wanted = False


def answer_for_this_command() -> None:
    """Called by the command-line entry: this process is a command, not someone's notebook."""
    global _wanted
    _wanted = "pandas" not in sys.modules


class _NoPandas:
    """A meta-path finder that refuses pandas (a None in sys.modules would not do: pyarrow's compiled import
    reads it as the module)."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"{name} is not needed by this command", name=name)
        return None


def before_building_arrays() -> None:
    """Answer the probe now, if this is a command and nothing has imported pandas yet."""
    global _wanted
    if not _wanted:
        return
    _wanted = False
    if "pandas" in sys.modules:
        return
    import pyarrow

    refuse = _NoPandas()
    sys.meta_path.insert(0, refuse)
    try:
        pyarrow.array([0])  # the probe: pyarrow tries `import pandas` once and remembers it failed
    finally:
        sys.meta_path.remove(refuse)
