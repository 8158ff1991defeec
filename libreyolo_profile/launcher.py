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


def main() -> None:
    args = _profile_args(sys.argv[1:])
    if args is not None:
        from libreyolo_profile.cli import run_cli

        sys.exit(run_cli(args, prog="libreyolo profile"))
    try:
        from libreyolo.cli import entrypoint
    except ImportError as exc:  # LibreYOLO missing or broken: say so in one line
        sys.stderr.write(f"libreyolo: LibreYOLO's own CLI could not be imported ({exc}); "
                         "`libreyolo profile …` and `libreyolo-profile` still work\n")
        sys.exit(1)
    sys.exit(entrypoint())


def profile_main() -> None:
    from libreyolo_profile.cli import run_cli

    sys.exit(run_cli(sys.argv[1:], prog="libreyolo-profile"))
