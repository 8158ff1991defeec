"""The `libreyolo profile` command group: argument parsing only.

Each command hands its validated arguments to one module (a reader in `readers/`, a writer in
`measure/`) and imports it lazily, so a reader never pays for torch or libreyolo.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Optional

import click
import typer

from libreyolo_profile.errors import EXIT_UNANALYSABLE, EXIT_USAGE, ProfileError

# typer >= 0.22 vendors click (typer._click): its usage errors (bad option value, unknown option,
# unreadable path) are not click.ClickException and must still exit 2
_TYPER_CLICK_ERROR = getattr(getattr(typer, "_click", None), "ClickException", click.ClickException)

app = typer.Typer(
    add_completion=False,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Measure where the time goes in LibreYOLO training and inference, and read it back.",
)

TRACE_HELP = "profile.json, profile_repeat.json, profile_trace.json, a profile directory, or any PyTorch profiler trace (.json/.json.gz)"
JSON_HELP = "print one JSON document on stdout and nothing else"


@app.callback()
def _group(ctx: typer.Context) -> None:
    # `libreyolo profile` alone lists the subcommands and exits 0 (not click's usage exit 2).
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


# ---------------------------------------------------------------------------------------------
# writers


@app.command("run")
def run_cmd(
    data: str = typer.Argument(..., help="dataset YAML or name, e.g. coco128"),
    weights: str = typer.Option("LibreYOLO9t.pt", help="model weights file or name"),
    size: str = typer.Option("t", help="model size variant"),
    batch: int = typer.Option(16, help="micro-batch; -1 picks it to fill about 70% of device memory"),
    imgsz: int = typer.Option(640, help="training image size"),
    workers: int = typer.Option(8, help="dataloader workers"),
    amp: bool = typer.Option(True, "--amp/--no-amp", help="use the model family's AMP path (CUDA only)"),
    steps: int = typer.Option(20, help="steps measured"),
    warmup: int = typer.Option(5, help="warmup steps before measuring"),
    repeat: int = typer.Option(1, help="repeat N times for mean and standard deviation"),
    device: str = typer.Option("0", help="device: 0, cuda:N or cpu"),
    project: Path = typer.Option(Path("runs/profile"), help="output directory root"),
    overhead: bool = typer.Option(True, "--overhead/--no-overhead", help="time an unprofiled pass to record profiler_overhead_pct"),
    report: bool = typer.Option(True, "--report/--no-report", help="write report.html beside profile.json"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Profile a short training and write <project>/train/profile.json."""
    from libreyolo_profile.measure.train import profile_run

    profile_run(dict(locals()), argv=sys.argv)


@app.command("infer")
def infer_cmd(
    source: Optional[str] = typer.Argument(None, help="image or directory; omitted: LibreYOLO's bundled sample image"),
    weights: str = typer.Option("LibreYOLO9t.pt", help="model weights file or name"),
    size: str = typer.Option("t", help="model size variant"),
    batch: int = typer.Option(1, help="images per forward pass"),
    imgsz: int = typer.Option(640, help="input image size"),
    half: bool = typer.Option(False, "--half/--no-half", help="forward pass under autocast (CUDA only)"),
    amp_dtype: str = typer.Option("float16", help="CUDA autocast dtype: float16 or bfloat16"),
    warmup: int = typer.Option(20, help="warmup iterations before measuring"),
    runs: int = typer.Option(100, help="measured iterations"),
    repeat: int = typer.Option(1, help="repeat N times for mean and standard deviation"),
    conf: float = typer.Option(0.25, help="confidence threshold (changes NMS work)"),
    iou: float = typer.Option(0.45, help="NMS IoU threshold"),
    max_det: int = typer.Option(300, help="maximum detections per image (changes NMS work)"),
    device: str = typer.Option("0", help="device: 0, cuda:N or cpu"),
    trace: bool = typer.Option(True, "--trace/--no-trace", help="keep the Chrome trace as profile_trace.json"),
    project: Path = typer.Option(Path("runs/profile"), help="output directory root"),
    overhead: bool = typer.Option(True, "--overhead/--no-overhead", help="time the same calls without the profiler to record profiler_overhead_pct"),
    report: bool = typer.Option(True, "--report/--no-report", help="write report.html beside profile.json"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Profile the inference path and write <project>/infer/profile.json."""
    from libreyolo_profile.measure.infer import profile_infer

    profile_infer(dict(locals()), argv=sys.argv)


# ---------------------------------------------------------------------------------------------
# readers


@app.command("summary")
def summary_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """The top-level read: step time, utilization, verdict, composition, top kernels."""
    from libreyolo_profile.readers import summary

    summary.main(trace, as_json)


@app.command("get")
def get_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    field: Optional[str] = typer.Argument(None, help="metric name; omitted: list the metrics"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Print one metric and nothing else (for scripts)."""
    from libreyolo_profile.readers import get

    get.main(trace, field, as_json)


@app.command("phases")
def phases_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Per phase: GPU ms, wall ms, kernel count and op count per step."""
    from libreyolo_profile.readers import phases

    phases.main(trace, as_json)


@app.command("kernels")
def kernels_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    top: int = typer.Option(20, help="show the top N"),
    category: Optional[str] = typer.Option(None, help="category substring, e.g. gemm, layout, norm, elementwise"),
    grep: Optional[str] = typer.Option(None, help="kernel-name regular expression"),
    tensorcore: bool = typer.Option(False, "--tensorcore", help="Tensor Core kernels only"),
    sort: str = typer.Option("time", help="time, count or name"),
    phase: Optional[str] = typer.Option(None, help="forward, backward, dataload, to_device, optimizer (infer: preprocess, forward, postprocess)"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Individual GPU kernels: share of GPU time, ms and calls per step, category."""
    from libreyolo_profile.readers import kernels

    kernels.main(trace, top=top, category=category, grep=grep, tensorcore=tensorcore, sort=sort, phase=phase, as_json=as_json)


@app.command("ops")
def ops_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    top: int = typer.Option(20, help="show the top N by self CPU time"),
    phase: Optional[str] = typer.Option(None, help="restrict to one phase"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Framework ops ranked by self (exclusive) CPU time, total (inclusive) beside it."""
    from libreyolo_profile.readers import ops

    ops.main(trace, top=top, phase=phase, as_json=as_json)


@app.command("compare")
def compare_cmd(
    before: Path = typer.Argument(..., help=TRACE_HELP),
    after: Path = typer.Argument(..., help=TRACE_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Before/after: the change in every headline metric, with significance when both sides repeat."""
    from libreyolo_profile.readers import compare

    compare.main(before, after, as_json)


@app.command("what-if")
def what_if_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    remove_category: Optional[str] = typer.Option(None, help="kernel category to remove, e.g. elementwise"),
    remove_launches: Optional[int] = typer.Option(None, help="number of launches per step to remove"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Estimate what removing work would buy, by the model the profile's verdict picks."""
    from libreyolo_profile.readers import what_if

    what_if.main(trace, remove_category=remove_category, remove_launches=remove_launches, as_json=as_json)


@app.command("query")
def query_cmd(
    sql: str = typer.Argument(..., help="SQL over the views profiles, kernels, ops, phases, steps"),
    roots: Optional[list[Path]] = typer.Argument(None, help="directories searched for profiles (default runs/profile)"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Run read-only SQL over every profile under the roots."""
    from libreyolo_profile.readers import query

    query.main(sql, roots or [Path("runs/profile")], as_json)


@app.command("db")
def db_cmd(
    out: Path = typer.Argument(..., help="DuckDB database file to write (re-running refreshes it)"),
    roots: Optional[list[Path]] = typer.Argument(None, help="directories searched for profiles (default runs/profile)"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Materialize every profile under the roots into a .duckdb file for a DuckDB shell."""
    from libreyolo_profile.readers import query

    query.db_main(out, roots or [Path("runs/profile")], as_json)


@app.command("import")
def import_cmd(
    trace: Path = typer.Argument(..., help="a PyTorch profiler trace, or a profile.json from LibreYOLO's built-in profiler"),
    project: Path = typer.Option(Path("runs/profile"), help="output directory root"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Turn a foreign trace or LibreYOLO built-in profile into a profile directory of ours."""
    from libreyolo_profile.store import importer

    importer.main(trace, project, as_json)


@app.command("report")
def report_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    out: Optional[Path] = typer.Option(None, help="HTML file to write (default: report.html beside the profile, or in the cwd for a trace)"),
    vs: Optional[Path] = typer.Option(None, help="a second profile to compare against"),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Write one self-contained HTML report (no network needed to open it)."""
    from libreyolo_profile.readers import report

    report.main(trace, out=out, vs=vs, as_json=as_json)


# ---------------------------------------------------------------------------------------------
# entry

_KEY_VALUE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)=(.*)$")


def _reject_key_value(args: list[str]) -> None:
    """SPEC §1: `key=value` is an unparsable argument (exit 2); show the `--key value` spelling."""
    command = click.Group.get_command(typer.main.get_command(app), None, args[0]) if args else None
    takes_value = set()
    if command is not None:
        for param in command.params:
            if isinstance(param, click.Option) and not param.is_flag:
                takes_value.update(o for o in param.opts)
    expecting_value = False
    for token in args[1:]:
        if expecting_value:
            expecting_value = False
            continue
        if token in takes_value:
            expecting_value = True
            continue
        match = _KEY_VALUE.match(token)
        if match and not token.startswith("-"):
            key, value = match.group(1).replace("_", "-"), match.group(2)
            raise ProfileError(
                f"unparsable argument '{token}': this group takes POSIX flags, not key=value; "
                f"write --{key} {value}", EXIT_USAGE)


def run_cli(args: list[str], prog: str) -> int:
    """Parse and run one command; every failure becomes one line on stderr and its exit code."""
    try:
        _reject_key_value(args)
        code = app(args=args, prog_name=prog, standalone_mode=False)
        # non-standalone typer returns an Exit's code instead of raising, and turns Ctrl-C into Exit(130)
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            if code == 130:
                sys.stderr.write(f"{prog}: interrupted\n")
            return code
        return 0
    except ProfileError as exc:
        sys.stderr.write(f"{prog}: error: {exc.message}\n")
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (click.ClickException, _TYPER_CLICK_ERROR) as exc:
        sys.stderr.write(f"{prog}: error: {exc.format_message()}\n")
        return EXIT_USAGE
    except click.exceptions.Abort:
        sys.stderr.write(f"{prog}: interrupted\n")
        return 130
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # never a traceback for users; LIBREYOLO_PROFILE_DEBUG=1 shows it
        if os.environ.get("LIBREYOLO_PROFILE_DEBUG"):
            raise
        sys.stderr.write(f"{prog}: error: {type(exc).__name__}: {exc} "
                         f"(set LIBREYOLO_PROFILE_DEBUG=1 for the traceback)\n")
        return EXIT_UNANALYSABLE
