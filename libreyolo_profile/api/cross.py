"""The Python API beyond one profile: SQL over every profile under some roots (`lp.query`, `lp.connect`),
before/after comparisons (`lp.compare`) and what-if estimates (`lp.what_if`). Each calls the function the
matching CLI command calls, so both print and return one result."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Union

from libreyolo_profile.readers.common import OpenProfile
from libreyolo_profile.store.schema import TABLES

if TYPE_CHECKING:
    from libreyolo_profile.api.comparison import Comparison

Roots = Union[str, Path, "list[str | Path]"]


def _root_list(roots) -> list:
    from libreyolo_profile.store.crossrun.views import DEFAULT_ROOT

    if roots is None:
        return [DEFAULT_ROOT]
    return [roots] if isinstance(roots, (str, Path)) else list(roots) or [DEFAULT_ROOT]


def connect(roots: Roots | None = None, tables: list[str] | None = None):
    """A DuckDB connection with `query`'s views (profiles, kernels, ops, phases, steps, blame, modules)
    over every profile under `roots` (directories or s3:// URLs; default runs/profile), loaded into
    memory and then locked as `query` locks its own: it opens no file and changes no setting, so it
    reads those profiles and nothing else. `tables` narrows what is loaded (all by default)."""
    from libreyolo_profile.readers.query import lock_down
    from libreyolo_profile.store.crossrun.views import open_cross_run

    wanted = list(TABLES) if tables is None else [t for t in TABLES if t in tables]
    con, _found, files = open_cross_run(_root_list(roots), tables=wanted)
    lock_down(con, files, wanted)
    return con


def query(roots: Roots, sql: str):
    """One read-only SELECT over every profile under `roots`, as `libreyolo profile query SQL ROOTS…`
    runs it, returned as a DuckDB relation (.df(), .pl(), .arrow(), .fetchall()). Only the tables the
    SQL names are loaded, as in the CLI. Unlike the CLI there is no --timeout: a relation runs when it
    is read, and Ctrl-C (KeyboardInterrupt) stops it."""
    from libreyolo_profile.api.readonly import read_only_relation
    from libreyolo_profile.readers.query import tables_named

    return read_only_relation(connect(roots, tables_named(sql)), sql)


def _side(source):
    if isinstance(source, OpenProfile):
        return source.loaded
    return Path(source)


def compare(
    before,
    after,
    fail_on: list[str] | None = None,
    *,
    strict_noise: bool = False,
    require_repeats: bool = False,
    require_conclusive: bool = False,
    ops: bool = False,
    kernels: bool = False,
) -> "Comparison":
    """Before/after, as `libreyolo profile compare BEFORE AFTER` prints it with --json: each side a path
    (a profile, a trace, or a directory of several profiles of one setup) or an opened Profile.
    `fail_on` takes the CLI's --fail-on rules (e.g. ["step_ms:+5%"]); the result's `failed` and
    `exit_code` then say how the CLI would exit: 4 when the gate failed, 5 when a rule was inconclusive
    under `require_conclusive`, else 0. Each rule's outcome (pass, fail, inconclusive, invalid) is under
    `gate`, and `status` says it in a word. `ops` / `kernels` add the per-op / per-kernel diff of
    `compare --ops/--kernels` (the result's `ops` and `kernels` relations)."""
    from libreyolo_profile.api.comparison import Comparison
    from libreyolo_profile.readers import gate_rules
    from libreyolo_profile.readers.compare import compare_document

    rules = gate_rules.parse_rules(fail_on)
    return Comparison(
        compare_document(
            _side(before),
            _side(after),
            rules,
            strict_noise=strict_noise,
            require_repeats=require_repeats,
            require_conclusive=require_conclusive,
            items=tuple(what for what, wanted in (("ops", ops), ("kernels", kernels)) if wanted),
        )
    )


def what_if(profile, *, remove_category: str | None = None, remove_launches: int | None = None) -> dict:
    """What removing work would buy, by the model the profile's verdict picks: the document
    `libreyolo profile what-if --json` prints. `profile` is a path or an opened Profile."""
    from libreyolo_profile.readers.what_if import what_if_document

    path = profile.loaded.path if isinstance(profile, OpenProfile) else Path(profile)
    return what_if_document(path, remove_category, remove_launches)
