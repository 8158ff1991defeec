"""Shared test fixtures: the real traces in ../shared/traces, a private cache, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO.parent / "shared" / "traces"
ON_CI = os.environ.get("CI", "").lower() == "true"


def require_traces() -> Path:
    """The shared traces folder: skipped where absent, a failure under CI=true (SPEC §10)."""
    if not TRACES.is_dir():
        if ON_CI:
            pytest.fail(f"CI=true but the shared traces are missing at {TRACES}")
        pytest.skip(f"shared traces not found at {TRACES}")
    return TRACES


@pytest.fixture
def traces_dir() -> Path:
    return require_traces()


@pytest.fixture
def trace(traces_dir):
    def named(name: str) -> Path:
        path = traces_dir / (name if name.endswith(".gz") or name.endswith(".json") else f"{name}.json.gz")
        if not path.is_file():
            pytest.fail(f"missing shared trace {path}")
        return path
    return named


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own reader cache, so nothing leaks between tests or into ~/.cache."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """The real CLI in a fresh process: `python -m libreyolo_profile …`."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "libreyolo_profile", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def cli_json(*args: str, **kwargs) -> dict:
    result = run_cli(*args, "--json", **kwargs)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
