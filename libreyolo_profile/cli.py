"""The `libreyolo profile` command group: argument parsing only.

Each command hands its validated arguments to one module (a reader in `readers/`, a writer in
`measure/`) and imports it lazily, so a reader never pays for torch or libreyolo. The group is built here;
the arguments of `run`/`infer` live in cli_measure.py and of `query`/`db`/`import` in cli_crossrun.py, and are
registered below in the order --help lists them.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Optional

import click
import typer

import libreyolo_profile as lp  # the Python API: the readers' commands open their profile through it
from libreyolo_profile.cli_arguments import screen_arguments
from libreyolo_profile.cli_crossrun import db_cmd, import_cmd, query_cmd
from libreyolo_profile.cli_errors import EXIT_INTERRUPTED, STOPPED, run_stoppable
from libreyolo_profile.cli_errors import first_paragraph as _first_paragraph
from libreyolo_profile.cli_errors import stopped as _stopped
from libreyolo_profile.cli_help import JSON_HELP, TRACE_HELP, WHAT_IF_HELP
from libreyolo_profile.cli_measure import infer_cmd, run_cmd
from libreyolo_profile.errors import EXIT_UNANALYSABLE, EXIT_USAGE, ProfileError, UsageError
from libreyolo_profile.output.textsafe import write_error
from libreyolo_profile.stopping import EXIT_TERMINATED, Terminated

# typer >= 0.22 vendors click (typer._click): its usage errors (bad option value, unknown option,
# unreadable path) are not click.ClickException and must still exit 2
_TYPER_CLICK_ERROR = getattr(getattr(typer, "_click", None), "ClickException", click.ClickException)


def _flags_show_no_type(option_class) -> None:
    """typer's rich help prints a type beside every option, flags too (`--json <bool>`), which invites
    `--json true`, an error: a flag takes no value, so its help shows none."""
    display_type = getattr(option_class, "display_type_rich", None)  # typer >= 0.29; older ones print none
    if display_type is None:
        return

    def display_type_rich(self, ctx):
        return None if getattr(self, "is_flag", False) else display_type(self, ctx)

    option_class.display_type_rich = display_type_rich


def _types_in_words(param_class) -> None:
    """typer names a repeated argument's type the Python way (`<list[Path]>`); help shows `<path>` (the
    argument's `...` already says it repeats)."""
    display_type = getattr(param_class, "display_type_rich", None)
    if display_type is None:
        return

    def display_type_rich(self, ctx):
        shown = display_type(self, ctx)
        if isinstance(shown, str) and shown.startswith("<list[") and shown.endswith("]>"):
            return f"<{shown[len('<list[') : -len(']>')].lower()}>"
        return shown

    param_class.display_type_rich = display_type_rich


# typer has no setting for it: its rich help asks every option for a type to print
_flags_show_no_type(typer.core.TyperOption)
_types_in_words(typer.core.TyperArgument)
_types_in_words(typer.core.TyperOption)

app = typer.Typer(
    add_completion=False,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Measure where the time goes in LibreYOLO training and inference, and read it back.",
)


def _print_version(value: bool) -> None:
    if value:
        from libreyolo_profile import __version__

        typer.echo(f"libreyolo-profile {__version__}")
        raise typer.Exit(0)


@app.callback()
def _group(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_print_version, help="print the version and exit"
    ),
) -> None:
    # `libreyolo profile` alone lists the subcommands and exits 0 (not click's usage exit 2).
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


# ---------------------------------------------------------------------------------------------
# writers


app.command("run")(run_cmd)  # the measurement commands' arguments live in cli_measure.py
app.command("infer")(infer_cmd)


# ---------------------------------------------------------------------------------------------
# readers


@app.command("summary")
def summary_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    full: bool = typer.Option(False, "--full", help="every table and figure, not only the first screen"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """The top-level read: verdict, blame, headline figures (--full: every table)."""
    from libreyolo_profile.readers import summary

    summary.print_summary(lp.open(trace), as_json, full)


@app.command("get")
def get_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    field: Optional[str] = typer.Argument(None, help="metric name; omitted: list the metrics"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Print one metric and nothing else (for scripts)."""
    from libreyolo_profile.readers import get

    get.print_field(trace, field, as_json)


@app.command("phases")
def phases_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Per phase: GPU ms, wall ms, kernel count and op count per step."""
    from libreyolo_profile.readers import phases

    phases.print_phases(lp.open(trace), as_json)


@app.command("ranks")
def ranks_cmd(
    trace: Path = typer.Argument(..., help="a job profile (libreyolo profile import --job)"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """A job's ranks side by side: step, device busy, compute, exposed communication, collective wait,
    dataload, each rank's verdict, and the straggler the others wait for."""
    from libreyolo_profile.readers import ranks

    ranks.print_ranks(lp.open(trace), as_json)


@app.command("launches")
def launches_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    top: int = typer.Option(10, help="show the top N outliers by launch delay"),
    delay_cutoff_us: float = typer.Option(
        100.0, "--delay-cutoff-us", help="a launch-to-start delay above this stands out"
    ),
    call_cutoff_us: float = typer.Option(50.0, "--call-cutoff-us", help="a launch call above this stands out"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Kernel launches per stream: launch delay, launch call time, outliers, and how deep each stream's
    queue of launched, unfinished work ran (reads the trace's events)."""
    from libreyolo_profile.readers import launches

    launches.print_launches(
        lp.open(trace), top=top, delay_cutoff_us=delay_cutoff_us, call_cutoff_us=call_cutoff_us, as_json=as_json
    )


@app.command("kernels")
def kernels_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    top: int = typer.Option(20, help="show the top N"),
    category: Optional[str] = typer.Option(None, help="category substring, e.g. gemm, layout, norm, elementwise"),
    grep: Optional[str] = typer.Option(None, help="kernel-name regular expression"),
    tensorcore: bool = typer.Option(False, "--tensorcore", help="Tensor Core kernels only"),
    sort: str = typer.Option("time", help="time, count or name"),
    phase: Optional[str] = typer.Option(
        None, help="forward, backward, dataload, to_device, optimizer (infer: preprocess, forward, postprocess)"
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Individual GPU kernels: share of GPU time, ms and calls per step, category."""
    from libreyolo_profile.readers import kernels

    kernels.print_kernels(
        lp.open(trace),
        top=top,
        category=category,
        grep=grep,
        tensorcore=tensorcore,
        sort=sort,
        phase=phase,
        as_json=as_json,
    )


@app.command("ops")
def ops_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    top: int = typer.Option(20, help="show the top N by self CPU time"),
    phase: Optional[str] = typer.Option(None, help="restrict to one phase"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Framework ops ranked by self (exclusive) CPU time, total (inclusive) beside it."""
    from libreyolo_profile.readers import ops

    ops.print_ops(lp.open(trace), top=top, phase=phase, as_json=as_json)


@app.command("modules")
def modules_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    depth: Optional[int] = typer.Option(
        None, help="show modules down to this depth (0: the model, 1: backbone, neck, head …)"
    ),
    phase: Optional[str] = typer.Option(None, help="forward or backward"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Per module of the model (a tree): host and device time per step, self beside total."""
    from libreyolo_profile.readers import modules

    modules.print_modules(lp.open(trace), depth=depth, phase=phase, as_json=as_json)


@app.command("memory")
def memory_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    top: int = typer.Option(5, help="ops and modules shown per device"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Allocator memory per device: the peak, when, what ran and held it, churn, top ops, a sparkline."""
    from libreyolo_profile.readers import memory

    memory.print_memory(trace, top=top, as_json=as_json)


COMPARE_SIDE_HELP = TRACE_HELP + "; or a directory of several profiles of one setup, whose trials are pooled"


@app.command("compare")
def compare_cmd(
    before: Path = typer.Argument(..., help=COMPARE_SIDE_HELP),
    after: Path = typer.Argument(..., help=COMPARE_SIDE_HELP),
    fail_on: Optional[list[str]] = typer.Option(
        None,
        "--fail-on",
        metavar="RULE",
        help="gate rule, repeatable: METRIC:+N% / -N% / ±Npp / ±Nms / ±N, e.g. step_ms:+5%, "
        "throughput_img_s:-3%, latency_p99_ms:+2ms, gpu_util_pct:-5pp; pass when Δ ± 2·SE stays within "
        "the threshold, fail (exit 4) when the change passes it and is significant, else inconclusive",
    ),
    require_repeats: bool = typer.Option(
        False,
        "--require-repeats",
        help="a side with fewer than 2 trials holding a value is a usage error (exit 2), not an inconclusive gate",
    ),
    require_conclusive: bool = typer.Option(
        False, "--require-conclusive", help="an inconclusive rule exits 5 instead of 0"
    ),
    strict_noise: bool = typer.Option(False, "--strict-noise", help="a side marked noisy fails the gate (exit 4)"),
    as_markdown: bool = typer.Option(False, "--markdown", help="print a markdown table for a pull-request comment"),
    ops: bool = typer.Option(False, "--ops", help="also each op's change in self CPU ms and calls per step"),
    kernels: bool = typer.Option(False, "--kernels", help="also each kernel's change in device ms and calls per step"),
    top: int = typer.Option(10, "--top", help="--ops/--kernels rows shown, largest |Δ| first (--json has all)"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Before/after: the change in every headline metric, with significance when both sides repeat.

    Exit codes:
    0 compared, and no gate rule failed (an inconclusive rule, a single run among them, says so on stderr);
    4 the gate failed: a --fail-on change passed its threshold and is significant, a rule's trial values
    are not evidence (NaN, ±Infinity, not a number, impossible or absurd), or --strict-noise met a noisy side;
    5 --require-conclusive and a rule is inconclusive;
    2 a missing file, a bad rule or threshold, an unknown metric, --require-repeats with a single run;
    1 a profile could not be analysed.
    """
    from libreyolo_profile.readers import compare

    code = compare.print_comparison(
        before,
        after,
        as_json,
        fail_on=fail_on,
        as_markdown=as_markdown,
        strict_noise=strict_noise,
        require_repeats=require_repeats,
        require_conclusive=require_conclusive,
        items=tuple(what for what, asked in (("ops", ops), ("kernels", kernels)) if asked),
        top=top,
    )
    if code:
        raise typer.Exit(code)


@app.command("what-if", help=WHAT_IF_HELP)  # the projection's floor stated (cli_help.py)
def what_if_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    remove_category: Optional[str] = typer.Option(None, help="kernel category to remove, e.g. elementwise"),
    remove_launches: Optional[int] = typer.Option(None, help="number of launches per step to remove"),
    op_at_roofline: Optional[float] = typer.Option(
        None,
        "--op-at-roofline",
        metavar="PCT",
        help="project the step if every costed op ran at PCT% of its roofline (0 < PCT ≤ 100)",
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Estimate what removing work would buy, by the model the profile's verdict picks."""
    if op_at_roofline is not None:  # a projection of its own, not combined with the removal models
        from libreyolo_profile.readers import what_if_roofline

        if remove_category is not None or remove_launches is not None:
            raise UsageError(
                "--op-at-roofline is a projection of its own: leave out --remove-category/--remove-launches"
            )
        return what_if_roofline.print_op_at_roofline(trace, op_at_roofline, as_json)
    from libreyolo_profile.readers import what_if

    what_if.print_what_if(trace, remove_category=remove_category, remove_launches=remove_launches, as_json=as_json)


app.command("query")(query_cmd)  # the cross-run commands' arguments live in cli_crossrun.py
app.command("db")(db_cmd)
app.command("import")(import_cmd)


@app.command("report")
def report_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    out: Optional[Path] = typer.Option(
        None, help="HTML file to write (default: report.html beside the profile, or in the cwd for a trace)"
    ),
    vs: Optional[Path] = typer.Option(
        None,
        help="the baseline: TRACE is the profile judged against it "
        "(deltas read TRACE minus the baseline; a regression of TRACE shows red)",
    ),
    force: bool = typer.Option(False, "--force", help="replace an existing file that is not a report of ours"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Write one self-contained HTML report (no network needed to open it); with --vs, TRACE compared
    with the baseline it names."""
    from libreyolo_profile.readers import report

    report.write_report_file(trace, out=out, vs=vs, as_json=as_json, force=force)


@app.command("roofline")
def roofline_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    top: int = typer.Option(20, help="show the top N op shapes by device time"),
    op: Optional[str] = typer.Option(
        None, "--op", metavar="REGEX", help="only ops whose name matches this regular expression"
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Per op and shape: FLOPs and bytes per call, achieved TFLOP/s and TB/s, and % of the device's roofline."""
    from libreyolo_profile.readers import roofline

    roofline.print_roofline(trace, top=top, op=op, as_json=as_json)


# ---------------------------------------------------------------------------------------------
# entry

# typer >= 0.22 vendors click and raises its own Exit and Abort (typer.Exit), which are not click's
_CLICK_EXIT = (click.exceptions.Exit, typer.Exit)
_CLICK_ABORT = (click.exceptions.Abort, typer.Abort)


@functools.cache
def click_command() -> click.Command:
    """The click command tree Typer builds from `app`, built once per process: `app()` would build it
    again on every call, and the argument screen needs it too (~25 ms each on a reader's cold start)."""
    return typer.main.get_command(app)


def run_cli(args: list[str], prog: str) -> int:
    """Parse and run one command; every failure becomes one terminal-safe line on stderr and its exit
    code, and under --json also {"error": …, "exit_code": …} on stdout. A stop signal that arrived while
    it ran is its exit code (130, 143), wherever it landed (cli_errors.py)."""
    as_json = "--json" in args
    return run_stoppable(lambda: _run_command(args, prog, as_json), prog, as_json)


def _run_command(args: list[str], prog: str, as_json: bool):
    """The command's exit code, its failure reported; STOPPED (not reported) when a signal stopped it."""

    def fail(message: str, code: int, document: bool = True) -> int:
        return write_error(prog, message, code, as_json and document)  # no document after half a stream

    try:
        command = click_command()
        screen_arguments(command, args)
        code = command.main(args=args, prog_name=prog, standalone_mode=False)
        # non-standalone typer returns an Exit's code instead of raising, and turns Ctrl-C into Exit(130)
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            return STOPPED if code == EXIT_INTERRUPTED else code
        return 0
    except ProfileError as exc:
        if exc.exit_code not in (EXIT_INTERRUPTED, EXIT_TERMINATED) and _stopped(exc):
            return STOPPED
        return fail(exc.message, exc.exit_code, not getattr(exc, "output_started", False))
    except _CLICK_EXIT as exc:
        return exc.exit_code
    except (click.ClickException, _TYPER_CLICK_ERROR) as exc:
        return STOPPED if _stopped(exc) else fail(exc.format_message(), EXIT_USAGE)
    except (*_CLICK_ABORT, KeyboardInterrupt):
        return STOPPED
    except Terminated as exc:  # SIGTERM, or an import's own Terminated when no handler of ours saw it
        return STOPPED if _stopped(exc) else write_error(prog, "terminated", EXIT_TERMINATED, as_json, prefix="")
    except BrokenPipeError:
        return 0
    except Exception as exc:  # never a traceback for users; LIBREYOLO_PROFILE_DEBUG=1 shows it
        if _stopped(exc):
            return STOPPED
        if os.environ.get("LIBREYOLO_PROFILE_DEBUG"):
            raise
        from libreyolo_profile.store.disk.atomic import no_space, unusable_path  # ctypes: not on every start

        # a full disk or an unusable path met where no writer named its target: still one line, its code
        full = no_space(exc, getattr(exc, "filename", None), "output", 3 if args[:1] in (["run"], ["infer"]) else 1)
        known = full or unusable_path(exc)
        if known is not None:
            return fail(known.message, known.exit_code)
        return fail(
            f"{type(exc).__name__}: {_first_paragraph(exc)} (set LIBREYOLO_PROFILE_DEBUG=1 for the traceback)",
            EXIT_UNANALYSABLE,
        )
