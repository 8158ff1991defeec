"""Write docs/commands/: one page per `libreyolo profile` subcommand, its `--help` as plain text, and an
index with the group's own help. The pages are generated, never edited: after any change to the CLI run

    python docs/commands/generate.py

tests/test_docs_commands.py regenerates them in memory and fails when a page on disk differs.
The help is click's plain formatter at a fixed width, so a page does not depend on the terminal, the
colours or rich's box drawing of the help users see. Only the CLI is imported: never torch.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

PAGES = Path(__file__).resolve().parent
REPO = PAGES.parents[1]
GROUP = "libreyolo profile"
WIDTH = 100
INDEX = "README.md"
REGENERATE = "python docs/commands/generate.py"
NOTE = f"<!-- generated from the CLI by docs/commands/generate.py: do not edit, run `{REGENERATE}` -->"


def plain_help(command, ctx) -> str:
    """The command's help without rich: a shallow copy with typer's markup mode off takes click's plain
    formatter, and the CLI's own command objects stay as they are."""
    plain = copy.copy(command)
    plain.rich_markup_mode = None
    return plain.get_help(ctx).rstrip()


def page(title: str, help_text: str, extra: str = "") -> str:
    return f"# `{title}`\n\n{NOTE}\n\n```text\n{help_text}\n```\n{extra}"


def pages() -> dict[str, str]:
    """File name under docs/commands/ → its text, from the CLI as it is now."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))  # run as a script from anywhere
    import typer

    from libreyolo_profile.cli import app

    group = typer.main.get_command(app)
    ctx = group.make_context(GROUP, [], resilient_parsing=True, terminal_width=WIDTH, max_content_width=WIDTH)
    out = {}
    for name, command in group.commands.items():
        sub = command.make_context(name, [], parent=ctx, resilient_parsing=True)
        out[f"{name}.md"] = page(f"{GROUP} {name}", plain_help(command, sub))
    links = "".join(f"- [`{name}`]({name}.md)\n" for name in group.commands)
    out[INDEX] = page(GROUP, plain_help(group, ctx), f"\nOne page per subcommand:\n\n{links}")
    return out


def stale(written: dict[str, str]) -> list[str]:
    """Pages on disk that the CLI no longer has (a removed or renamed subcommand)."""
    return sorted(p.name for p in PAGES.glob("*.md") if p.name not in written)


def main() -> None:
    written = pages()
    for name in stale(written):
        (PAGES / name).unlink()
        print(f"removed docs/commands/{name}")
    for name, text in written.items():
        path = PAGES / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote docs/commands/{name}")


if __name__ == "__main__":
    main()
