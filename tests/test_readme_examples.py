"""Every command of the README block that reads ../shared/traces runs as written (issue #25): exit 0
and something on stdout, through the real CLI from the repository root, where `../shared` resolves."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.conftest import require_traces, run_cli

REPO = Path(__file__).resolve().parents[1]


def shared_trace_commands() -> list[str]:
    """The README's `libreyolo profile …` lines inside a ```bash block that name ../shared/traces."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [
        line.strip()
        for block in blocks
        if "../shared/traces" in block
        for line in block.splitlines()
        if line.strip().startswith("libreyolo profile ")
    ]


def test_the_readme_has_such_a_block():
    commands = shared_trace_commands()
    assert len(commands) >= 5 and any(" kernels " in c and "--tensorcore" in c for c in commands)


@pytest.mark.parametrize("command", shared_trace_commands())
def test_readme_command_runs_as_written(command):
    require_traces()
    args = shlex.split(command.split("#", 1)[0])[2:]  # after `libreyolo profile`
    result = run_cli(*args, cwd=REPO, env={"COLUMNS": "100"})
    assert result.returncode == 0, (command, result.stderr)
    assert result.stdout.strip(), (command, "printed nothing", result.stderr)
    assert "no kernel" not in result.stderr, (command, result.stderr)
