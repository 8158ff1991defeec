"""Every command of the README block that reads ../shared/traces runs as written (issue #25): exit 0
and something on stdout, through the real CLI from the repository root, where `../shared` resolves.
The README stays a page read in a minute (#51): at most 120 lines, the test command .ci/run runs, and
every relative link of it and of docs/design/ leads to a file."""

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


def test_the_readme_is_short_and_states_the_ci_test_command():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    ci_run = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    ci_command = next(line.strip() for line in ci_run if line.startswith("python -m pytest"))
    assert len(text.splitlines()) <= 120, "README.md: move the detail into docs/design/"
    assert ci_command in text, f"README.md must state the test command .ci/run runs: {ci_command}"
    # `-n auto` needs pytest-xdist, so the install that reuses a torch must bring it too
    assert "-n auto" not in ci_command or "pytest-xdist" in text


@pytest.mark.parametrize(
    "page", ["README.md", *sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs" / "design").glob("*.md"))]
)
def test_relative_links_lead_to_files(page):
    path = REPO / page
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8"))
    missing = [t for t in targets if "://" not in t and not (path.parent / t).exists()]
    assert missing == [], f"{page} links to missing files: {missing}"
