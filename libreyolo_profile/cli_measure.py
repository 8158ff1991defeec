"""`libreyolo profile run` and `infer`, the measurement commands: their signatures, built from the options
declared once in measure/options.py (each field's default, flags and help), plus the two options that say
what the CLI does after measuring (cli.py registers them; measure/ does the work, imported lazily), and
what they show once the profile is published."""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing

import typer

import libreyolo_profile as lp  # the Python API: the published profile is opened through it
from libreyolo_profile.cli_help import EXIST_OK_HELP, JSON_HELP
from libreyolo_profile.measure.options import InferOptions, RunOptions, cli_of

REPORT_HELP = "write report.html beside profile.json"
# help texts several commands share (cli_help.py), for the fields that declare none of their own
SHARED_HELP = {"exist_ok": EXIST_OK_HELP}


def _after_measurement() -> dict[str, inspect.Parameter]:
    """The options that say what the CLI does once the profile is published, each placed in --help
    after the measuring option named here."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    return {
        "overhead": inspect.Parameter(
            "report", keyword, default=typer.Option(True, "--report/--no-report", help=REPORT_HELP), annotation=bool
        ),
        "exist_ok": inspect.Parameter(
            "as_json", keyword, default=typer.Option(False, "--json", help=JSON_HELP), annotation=bool
        ),
    }


def _parameters(options: type) -> list[inspect.Parameter]:
    """The command's parameters, in --help's order: every field of `options` as its `Cli` declares it,
    and the after-measurement options in their places."""
    hints = typing.get_type_hints(options)
    after = _after_measurement()
    params = []
    for f in dataclasses.fields(options):
        cli = cli_of(f)
        default = ... if f.default is dataclasses.MISSING else f.default
        help_text = cli.help if cli.help is not None else SHARED_HELP[f.name]
        if cli.argument:
            info = typer.Argument(default, help=help_text)
        else:
            info = typer.Option(default, *cli.flags, help=help_text, show_default=cli.show_default)
        params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=hints[f.name]))
        if f.name in after:
            params.append(after[f.name])
    return params


def _measuring_command(name: str, options: type, measure: typing.Callable, doc: str) -> typing.Callable:
    """A typer command whose signature is `options`' fields (+ --report, --json): it builds the options
    (the range checks), runs `measure(options, argv)` and shows the published profile."""

    def command(**values) -> None:
        report, as_json = values.pop("report"), values.pop("as_json")
        from libreyolo_profile.store.disk.kept_sections import ASKED

        asked = ASKED.set(("report_timeline",) if report else ())  # the report's timeline, in the analysis's pass
        try:
            measured = measure(options(**values), sys.argv)
        finally:
            ASKED.reset(asked)
        _show_measurement(measured, report=report, as_json=as_json)

    params = _parameters(options)
    command.__signature__ = inspect.Signature(params, return_annotation=None)
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__name__ = command.__qualname__ = f"{name}_cmd"
    command.__doc__ = doc
    return command


def _profile_run(options, argv):
    from libreyolo_profile.measure.train import profile_run

    return profile_run(options, argv=argv)


def _profile_infer(options, argv):
    from libreyolo_profile.measure.infer import profile_infer

    return profile_infer(options, argv=argv)


run_cmd = _measuring_command(
    "run", RunOptions, _profile_run, "Profile a short training and write <project>/train/profile.json."
)
infer_cmd = _measuring_command(
    "infer", InferOptions, _profile_infer, "Profile the inference path and write <project>/infer/profile.json."
)


def _show_measurement(measured, *, report: bool, as_json: bool) -> None:
    """After `run` or `infer` published a profile: report.html beside it (unless --no-report), the
    summary on stdout, and where both files are on stderr. The profile is opened once for both."""
    from libreyolo_profile.output.terminal import stderr_note
    from libreyolo_profile.readers.report import write_report
    from libreyolo_profile.readers.summary import print_summary

    profile = lp.open(measured.profile_json)
    written = []
    if report:
        try:
            written.append(write_report(measured.directory, profile))
        except Exception as exc:  # the measured profile is safe on disk; a report failure must not lose it
            from libreyolo_profile.measure.common import warn

            warn(
                f"the HTML report could not be written ({type(exc).__name__}: {exc}); "
                f"`libreyolo profile report {measured.directory}` retries it"
            )
    try:
        print_summary(profile, as_json)
    finally:  # last, so the paths stay in view under the summary
        stderr_note(f"profile: {measured.profile_json}")
        for path in written:
            stderr_note(f"report: {path}")
