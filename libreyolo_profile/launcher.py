"""Console entry points.

`libreyolo` is declared by LibreYOLO too; ours is installed last and wins. It looks at argv
before importing anything heavy: `profile …` (also `detect profile …`) runs this package, every
other command goes to LibreYOLO's own CLI with argv untouched.
`libreyolo-profile` always runs the group directly.
"""

import sys


def _profile_args(argv: list[str]) -> list[str] | None:
    """The arguments after the `profile` word, or None when argv is not a profile command."""
    if argv[:1] == ["profile"]:
        return argv[1:]
    if argv[:2] == ["detect", "profile"]:
        return argv[2:]
    return None


def _fast_get(args: list[str], prog: str):
    """`get <trace> [field] [--json]` is the command scripts call in loops: answer it without
    importing Typer (its import alone costs ~0.1 s). Any other shape goes through the full CLI (None).
    Its exit code, or STOPPED for the launcher to report (cli_errors.py)."""
    if args[:1] != ["get"]:
        return None
    as_json = "--json" in args
    rest = [a for a in args[1:] if a != "--json"]
    if not 1 <= len(rest) <= 2 or any(a.startswith("-") or "=" in a for a in rest):
        return None
    from libreyolo_profile.cli_errors import STOPPED, stopped
    from libreyolo_profile.errors import ProfileError
    from libreyolo_profile.output.textsafe import write_error  # the same error line (and --json object) as cli.run_cli
    from libreyolo_profile.readers.get import print_field
    from libreyolo_profile.stopping import Terminated

    try:
        print_field(rest[0], rest[1] if len(rest) == 2 else None, as_json)
    except ProfileError as exc:
        return STOPPED if stopped(exc) else write_error(prog, exc.message, exc.exit_code, as_json)
    except BrokenPipeError:
        return 0
    except (KeyboardInterrupt, Terminated):
        return STOPPED
    except Exception as exc:  # never a traceback for users (same rule as cli.run_cli)
        return STOPPED if stopped(exc) else write_error(prog, f"{type(exc).__name__}: {exc}", 1, as_json)
    return 0


def _run(args: list[str], prog: str) -> int:
    """The command's exit code; a stop signal from here on, wherever it lands, exits 130/143 (cli_errors.py)."""
    from libreyolo_profile.cli_errors import run_stoppable

    return run_stoppable(lambda: _command(args, prog), prog, "--json" in args)


def _command(args: list[str], prog: str):
    from libreyolo_profile.pandas_probe import answer_for_this_command

    answer_for_this_command()
    if args[:1] and args[0] in MEASURING:
        from libreyolo_profile.collector import pause_for_startup

        pause_for_startup()  # until the first measured call (collector.py)
    fast = _fast_get(args, prog)
    if fast is not None:
        return fast
    from libreyolo_profile.cli import run_cli

    return run_cli(args, prog=prog)


# commands that load torch and a model: the interpreter's own teardown of them (module and thread-pool
# finalisation, garbage of the model and the profiler) takes 0.5-1 s after the work is done and written
MEASURING = ("run", "infer")


def _leave(code: int, args: list[str]) -> None:
    """Exit with `code`. After a measurement, skip the interpreter's teardown: every file is written and
    every workspace removed by then; the exit handlers (atexit) still run and the streams are flushed.
    A stop signal from the exit handlers on is let go (the last registered handler runs first)."""
    import atexit

    from libreyolo_profile.cli_errors import ignored_from_here

    atexit.unregister(ignored_from_here)
    atexit.register(ignored_from_here)
    if args[:1] and args[0] in MEASURING and "torch" in sys.modules:
        import os

        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing left to say
                pass
        os._exit(code)
    sys.exit(code)


def main() -> None:
    args = _profile_args(sys.argv[1:])
    if args is not None:
        _leave(_run(args, "libreyolo profile"), args)
    try:
        from libreyolo.cli import entrypoint
    except ImportError as exc:  # LibreYOLO missing or broken: say so in one line
        sys.stderr.write(
            f"libreyolo: LibreYOLO's own CLI could not be imported ({exc}); "
            "`libreyolo profile …` and `libreyolo-profile` still work\n"
        )
        sys.exit(1)
    sys.exit(entrypoint())


def profile_main() -> None:
    _leave(_run(sys.argv[1:], "libreyolo-profile"), sys.argv[1:])
