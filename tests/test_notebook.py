"""docs/notebooks/quickstart.ipynb runs top to bottom in a real Jupyter kernel (nbclient), so the
notebook a new user opens first cannot rot (issue 31). It measures two tiny CPU profiles with the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ON_CI, REPO, require_traces

NOTEBOOK = REPO / "docs" / "notebooks" / "quickstart.ipynb"


def _need(module: str):
    try:
        return __import__(module)
    except ImportError:
        if ON_CI:
            pytest.fail(f"CI=true but {module} is missing: install the [notebook] extra")
        pytest.skip(f"{module} is not installed (the [notebook] extra)")


@pytest.mark.slow
def test_quickstart_notebook_executes(tmp_path):
    require_traces()
    for module in ("pandas", "polars", "ipykernel"):
        _need(module)
    nbformat = _need("nbformat")
    nbclient = _need("nbclient")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    client.execute()  # a failing cell raises CellExecutionError with its traceback
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("libreyolo-profile" in h and "next:" in h for h in html), "no profile HTML shown"
    assert any("compare ·" in h for h in html), "no comparison shown"
    assert "torch imported: False" in "".join(o.get("text", "") for o in outputs)
    assert not list(Path(NOTEBOOK.parent).glob("*.json")), "the notebook wrote into docs/notebooks"
    # what a cell shows is text for people: no spinner, bar or colour escape codes from a progress display
    escaped = [json.dumps(o)[:300] for o in outputs if "\\u001b" in json.dumps(o)]  # ESC, as JSON writes it
    assert escaped == [], "escape codes in the notebook's outputs"
    shown = "".join(json.dumps(o.get("data", {})) + o.get("text", "") for o in outputs)
    for column in ("non_compute_ms", "idle_share_pct", "other kernels", "mean_queued", "delay_p95_us", "overlap_pct"):
        assert column in shown, f"no {column} shown: a daily analysis lost its cell"
    assert "gate: INCONCLUSIVE" in shown or "gate: pass" in shown


def test_no_progress_bar_in_a_jupyter_kernel(monkeypatch, capsys):
    """A big trace read in a Jupyter kernel draws no bar, even where the kernel's stderr claims to be a
    terminal (a frontend may set it so): a cell would show the redraws as escape codes."""
    import sys
    import types

    from libreyolo_profile.output import progress

    class Tty:
        def isatty(self):
            return True

        def write(self, text):
            raise AssertionError(f"wrote {text!r}")

        def flush(self):
            pass

    monkeypatch.setattr(sys, "stderr", Tty())
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    assert progress.draws_on_terminal(sys.stderr)  # a terminal, outside a kernel
    monkeypatch.setenv("TTY_COMPATIBLE", "0")
    assert not progress.draws_on_terminal(sys.stderr)
    monkeypatch.delenv("TTY_COMPATIBLE")
    shell = types.SimpleNamespace(kernel=object())
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    assert progress.in_jupyter_kernel() and not progress.draws_on_terminal(sys.stderr)
    bar = progress.TraceReadingProgress(Path("big.json"), progress.BAR_FROM_BYTES)
    bar(progress.BAR_FROM_BYTES // 2)
    bar.done(1000)
    assert bar.bar is None
    shell.kernel = None  # IPython in a terminal: no kernel
    assert not progress.in_jupyter_kernel()
