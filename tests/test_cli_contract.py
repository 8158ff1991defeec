"""The contract the in-process runner of tests/conftest.py relies on: every reader subcommand gives
the same exit code, stdout and stderr when run in this process as in a fresh `python -m
libreyolo_profile`, on success, on --json and on a usage error. The rest of the suite runs readers
in-process because of this test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import IN_PROCESS_COMMANDS, require_traces, run_cli

# each reader call, with {mini}, {v100}, {v100w0} for shared traces and {dir} for a scratch folder
CALLS = {
    "summary": "summary {v100}",
    "summary --json": "summary {v100} --json",
    "get": "get {mini} step_ms",
    "get --json": "get {mini} --json",
    "phases": "phases {v100}",
    "kernels": "kernels {v100} --category gemm --top 3",
    "ops": "ops {v100} --top 3 --json",
    "modules": "modules {v100}",
    "memory": "memory {v100}",
    "compare": "compare {v100} {v100w0}",
    "what-if": "what-if {v100} --remove-category gemm",
    "query": "query|SELECT kind, count(*) AS n FROM kernels GROUP BY kind|{v100}",
    "db": "db {dir}/out.duckdb {mini} --json",
    "report": "report {mini} --out {dir}/out.html",
    "roofline": "roofline {v100} --top 3",
    "ranks": "ranks {mini}",
    "launches": "launches {v100} --top 3",
    "usage error": "kernels {v100} --sort nonsense",
    "missing file": "summary {dir}/absent.json",
}


def argv(name: str, workdir: Path) -> list[str]:
    traces = require_traces()
    template = CALLS[name]
    words = template.split("|") if "|" in template else template.split()
    names = {
        "mini": traces / "mi250_rocm_minitoy.json.gz",
        "v100": traces / "v100_resnet50_workers4.json.gz",
        "v100w0": traces / "v100_resnet50_workers0.json.gz",
        "dir": workdir,
    }
    return [word.format(**names) for word in words]


def test_every_in_process_command_is_held_to_the_contract():
    assert {template.split("|")[0].split()[0] for template in CALLS.values()} == IN_PROCESS_COMMANDS


# the readers find the shared traces analysed (tests/conftest.py); `summary` starts cold, so one case holds
# an analysis made in this process to the same answer as a fresh process reading it from the cache
@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=pytest.mark.cold_cache) if name == "summary" else name for name in CALLS]
)
def test_reader_answers_the_same_in_process_and_in_a_fresh_process(name, tmp_path):
    answers = []
    for mode, subprocess in (("in-process", False), ("fresh-process", True)):
        workdir = tmp_path / mode
        workdir.mkdir()
        result = run_cli(*argv(name, workdir), cwd=workdir, subprocess=subprocess)
        here = str(workdir)
        answers.append((result.returncode, result.stdout.replace(here, "<dir>"), result.stderr.replace(here, "<dir>")))
    assert answers[0] == answers[1]


def test_help_hooks_leave_a_typer_without_them_alone():
    """typer < 0.29 (which pyproject.toml allows) has no display_type_rich: importing the CLI raised
    AttributeError, a traceback on every command. The help hooks skip a class without it."""
    from libreyolo_profile import cli

    class OlderTyperParameter:  # a typer 0.28 TyperOption / TyperArgument, as far as the hooks look
        pass

    cli._flags_show_no_type(OlderTyperParameter)
    cli._types_in_words(OlderTyperParameter)
    assert not hasattr(OlderTyperParameter, "display_type_rich")
