"""A command never imports pandas for pyarrow's probe (libreyolo_profile/pandas_probe.py), and the Python API
leaves pyarrow's pandas integration as it finds it. Each side runs in an interpreter of its own: the probe's
answer lasts a process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import require_module

from tests.synthetic_traces import A100, annotation, kernel, op, runtime, write_trace


@pytest.fixture(autouse=True)
def _pandas_installed():
    """The [notebook] extra: without pandas there is nothing to avoid, but CI installs it."""
    require_module("pandas", "notebook")


AFTER_A_COMMAND = """
import json, sys
from libreyolo_profile import launcher
code = launcher._run(["summary", sys.argv[1], "--json"], "libreyolo profile")
imported_by_the_command = "pandas" in sys.modules
import pyarrow as pa
frame = pa.table({"a": [1, 2]}).to_pandas()  # a conversion that needs pandas still gets it
print(json.dumps({"code": code, "pandas": imported_by_the_command, "frame": type(frame).__name__}), file=sys.stderr)
"""

AFTER_THE_API = """
import json, sys
import libreyolo_profile as lp
step_ms = lp.open(sys.argv[1]).metrics["step_ms"]
import pandas as pd, pyarrow as pa
categories = pa.array(pd.Categorical(["x", "y", "x"]))  # array-like only through pyarrow's pandas integration
print(json.dumps({"step_ms": step_ms, "type": str(categories.type)}))
"""


def _trace(tmp_path):
    events = [annotation("ProfilerStep#1", 0, 1000), annotation("ProfilerStep#2", 1000, 1000)]
    for step in range(2):
        start = step * 1000
        events += [op("aten::mm", start + 10, 300), runtime("cudaLaunchKernel", start + 20, 10, correlation=step + 1)]
        events.append(kernel("void gemm_kernel(float)", start + 40, 500, correlation=step + 1))
    return write_trace(tmp_path / "trace.json", events, [A100])


def _python(code: str, *args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )


def test_a_command_does_not_import_pandas_and_conversions_still_work(tmp_path):
    done = _python(AFTER_A_COMMAND, str(_trace(tmp_path)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stderr.strip().splitlines()[-1])
    assert result == {"code": 0, "pandas": False, "frame": "DataFrame"}
    assert json.loads(done.stdout)["metrics"]["step_ms"] == pytest.approx(1.0)


def test_the_api_leaves_pyarrows_pandas_integration_alone(tmp_path):
    done = _python(AFTER_THE_API, str(_trace(tmp_path)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["step_ms"] == pytest.approx(1.0)
    assert result["type"].startswith("dictionary<")
