"""What click cannot say about our arguments, checked before it parses them (SPEC §1).

A positional `key=value` is refused with the `--key value` spelling (unless it names an existing file),
an option's value may hold `=`, and an integer beyond 64 bits is a usage error rather than a DuckDB
overflow deep in a reader. A URL where a command needs a local path (`infer --project s3://…`) is a
usage error too, and so is an empty --project or --out. `group` is the click group the CLI built
(typer's, or click's own)."""

from __future__ import annotations

import os
import re

from libreyolo_profile.errors import EXIT_USAGE, ProfileError

_KEY_VALUE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)=(.*)$")
# every integer option ends up in DuckDB (LIMIT $top) or in arithmetic on 64-bit columns
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _value_options(group, args: list[str]) -> dict[str, object]:
    """The options of the subcommand args[0] names that take a value (`--grep` yes, `--json` no),
    by spelling. Works for click's parameters and for typer's vendored ones alike."""
    if not args:
        return {}
    try:
        command = group.get_command(None, args[0])
    except Exception:  # an unknown subcommand: click reports it
        return {}
    options = {}
    for param in getattr(command, "params", []):
        if getattr(param, "param_type_name", None) == "option" and not getattr(param, "is_flag", False):
            options.update((spelling, param) for spelling in param.opts)
    return options


def _split_arguments(args: list[str], options: dict) -> tuple[list[str], list[tuple[str, object, str]]]:
    """(positional tokens, (option, parameter, value) triples), the way click will read args[1:]:
    an option's value is the next token or what follows `=`, and everything after `--` is positional."""
    positionals, values = [], []
    tokens = iter(args[1:])
    for token in tokens:
        if token == "--":
            positionals.extend(tokens)
            break
        if token in options:
            value = next(tokens, None)
            if value is not None:
                values.append((token, options[token], value))
        elif token.startswith("-"):
            spelling, has_value, value = token.partition("=")
            if has_value and spelling in options:
                values.append((spelling, options[spelling], value))
        else:
            positionals.append(token)
    return positionals, values


def screen_arguments(group, args: list[str]) -> None:
    """SPEC §1: `key=value` is an unparsable argument (exit 2); show the `--key value` spelling.

    Only a positional is refused, and only when it names no existing file (`lr=0.1.json.gz` is a
    trace); an option's value may hold `=` (`--grep a=b`, `--grep=a=b`)."""
    options = _value_options(group, args)
    positionals, values = _split_arguments(args, options)
    for token in positionals:
        match = _KEY_VALUE.match(token)
        if match and not os.path.lexists(token):
            key, value = match.group(1).replace("_", "-"), match.group(2)
            raise ProfileError(
                f"unparsable argument '{token}': this group takes POSIX flags, not key=value; write --{key} {value}",
                EXIT_USAGE,
            )
    _reject_huge_integers(values)
    _refuse_empty_paths(values)
    _refuse_urls(args[0] if args else "", positionals, values)


# the options naming where a command writes: empty, a path would be the current directory
_OUTPUT_PATHS = ("--project", "--out")


def _refuse_empty_paths(values: list[tuple[str, object, str]]) -> None:
    for spelling, _, value in values:
        if spelling in _OUTPUT_PATHS and not value.strip():
            raise ProfileError(
                f"{spelling} is empty: name where to write (it would be the current directory)", EXIT_USAGE
            )


def _is_integer_option(param) -> bool:
    descriptor = getattr(param, "type_descriptor", None)  # typer's vendored click
    if descriptor is not None:
        return getattr(descriptor, "annotation", None) is int
    return getattr(getattr(param, "type", None), "name", None) == "integer"  # click's IntParamType


def _reject_huge_integers(values: list[tuple[str, object, str]]) -> None:
    """An integer beyond 64 bits is an unparsable argument (exit 2), not a DuckDB overflow (exit 1)."""
    for spelling, param, value in values:
        if not _is_integer_option(param):
            continue
        try:
            number = int(value)
        except ValueError:  # not an integer at all (or too many digits to read): click says so
            continue
        if not _INT64_MIN <= number <= _INT64_MAX:
            shown = value if len(value) <= 24 else value[:20] + "…"
            raise ProfileError(
                f"invalid value for {spelling}: {shown} is out of range (integers from {_INT64_MIN} to {_INT64_MAX})",
                EXIT_USAGE,
            )


# `s3://bucket/key`, as typed (checked before click makes it a Path, which would keep `s3:/bucket/key`)
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://(.*)$", re.DOTALL)


# the paths these commands write (and `db`'s roots, which it reads from a local disk only)
_LOCAL_ONLY = {("run", "--project"), ("infer", "--project"), ("report", "--out")}


def _refuse_urls(command: str, positionals: list[str], values: list[tuple[str, object, str]]) -> None:
    for spelling, _, value in values:
        if (command, spelling) in _LOCAL_ONLY:
            refuse_url(value, spelling)
    if command == "db":
        for token in positionals:
            refuse_url(token, "db")


def refuse_url(value, what: str) -> None:
    """Exit 2 when a path that a command writes (or `db` reads) is a URL: only `query` roots and
    `import --project` reach object storage; elsewhere `s3://b/k` would be a local directory `./s3:/b/k`."""
    match = _URL.match(str(value))
    if match:
        shown = f"{match.group(1)}://{match.group(2)}"
        raise ProfileError(
            f"{what} {shown[:200]}: a local path is needed here; object storage "
            f"({match.group(1)}://) is supported by `query` roots and `import --project`",
            EXIT_USAGE,
        )
