"""The SQL modules of sql/: each file declares what it needs in its header, and one loader runs them in
dependency order (the model is Perfetto's `INCLUDE PERFETTO MODULE`).

A module's header is its leading block of `--` comment lines. Two kinds of line in it are read:

    -- requires: ingest.sql, runtime_calls.sql
    -- inputs: metric_inputs, trace_info

`requires` names the modules whose tables, views or macros this one reads: the loader runs them first
(once per connection: a module it already ran there, as a requirement or by name, is not run again).
`inputs` names what the caller creates before running the module (a registered Arrow table, a one-row
parameter table, a profile's parquet tables): the loader checks nothing about them, they are stated for
the reader, and they are how a module reads an object another module can make without running that
module (the built-in import fills kernel_time itself, then runs sql/kernel_shares.sql).

check_modules (all_modules, which tests/test_sql_modules.py runs over the tree) refuses a module that
reads an object another module creates (`CREATE [OR REPLACE] [TEMP] TABLE|VIEW|MACRO`) without naming
that module in `requires` or the object in `inputs`, one that reads an object its required module drops
again, a cycle of requires and a required module that does not exist: SqlModuleError, with the module
and the name. A command's loader parses only the modules it runs and refuses the last two itself.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache, cached_property

from libreyolo_profile.sqlfiles import sql_directory, sql_text


class SqlModuleError(Exception):
    """The sql/ tree breaks its own rules (a bug in the package, never bad user input)."""


_CREATES = re.compile(
    r"\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(TABLE|VIEW|MACRO|FUNCTION)\s+"
    r"(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_]\w*)\b(?!\.)",
    re.I,
)
_DROPS = re.compile(r"\bDROP\s+(?:TABLE|VIEW|MACRO)\s+(?:IF\s+EXISTS\s+)?([A-Za-z_]\w*)\b", re.I)
_NAME = re.compile(r"[A-Za-z_]\w*")
# a name used as a table (not a column after a dot, not a $parameter, not an alias after AS) or as a call
_REFERENCE = re.compile(r"(?<![\w.$])(?<!\bAS )([A-Za-z_]\w*)\b(\s*\()?", re.I)
_HEADER_LIST = re.compile(r"^--\s*(requires|inputs):(.*)$", re.I)


@dataclass(frozen=True)
class SqlModule:
    """A module: its text and header. What it creates and drops is read from its code on first ask (only the
    cross-check asks: a command runs the modules in the order their headers give, and reading every created
    name out of the ~30 modules a first read runs was a few ms of every fresh process)."""

    name: str  # the file name under sql/, e.g. "ingest.sql"
    text: str
    requires: tuple[str, ...]  # modules run before this one
    inputs: tuple[str, ...]  # objects the caller creates first

    @cached_property
    def _code(self) -> str:
        return strip_comments_and_strings(self.text)

    @cached_property
    def _created(self) -> tuple[tuple[str, str], ...]:
        return tuple((kind.upper(), obj.lower()) for kind, obj in _CREATES.findall(self._code))

    @cached_property
    def tables(self) -> frozenset[str]:
        """Tables and views it creates (lower case)."""
        return frozenset(obj for kind, obj in self._created if kind in ("TABLE", "VIEW"))

    @cached_property
    def macros(self) -> frozenset[str]:
        """Macros it creates (lower case)."""
        return frozenset(obj for kind, obj in self._created if kind in ("MACRO", "FUNCTION"))

    @cached_property
    def dropped(self) -> frozenset[str]:
        """Objects it creates and drops again before it ends."""
        return frozenset(obj.lower() for obj in _DROPS.findall(self._code))


def module_names() -> list[str]:
    """Every module of the package's sql/ directory, by name."""
    return sorted(p.name for p in sql_directory().iterdir() if p.name.endswith(".sql"))


def parse_module(name: str, text: str) -> SqlModule:
    requires, inputs = _header_lists(text)
    return SqlModule(name=name, text=text, requires=tuple(requires), inputs=tuple(inputs))


def _header_lists(text: str) -> tuple[list[str], list[str]]:
    found: dict[str, list[str]] = {"requires": [], "inputs": []}
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        match = _HEADER_LIST.match(line)
        if match:
            # an item is its first name; words after it (a "(why)" note) are for the reader
            for item in re.sub(r"\([^)]*\)", "", match.group(2)).split(","):
                first = re.match(r"\s*([\w.]+)", item)
                if first:
                    found[match.group(1).lower()].append(first.group(1))
    return found["requires"], found["inputs"]


def strip_comments_and_strings(text: str) -> str:
    """The SQL with `--` comments and '…' string literals blanked, so names in them are not read as uses."""
    return re.sub(r"--[^\n]*|'(?:[^']|'')*'", " ", text)


def references(module: SqlModule) -> tuple[set[str], set[str]]:
    """(names used as tables, names used as calls) in the module's code, lower case."""
    tables, calls = set(), set()
    for name, paren in _REFERENCE.findall(strip_comments_and_strings(module.text)):
        (calls if paren else tables).add(name.lower())
    return tables, calls


@cache
def module(name: str) -> SqlModule:
    try:
        text = sql_text(name)
    except FileNotFoundError:
        raise SqlModuleError(f"no SQL module sql/{name}") from None
    return parse_module(name, text)


def check_modules(modules: dict[str, SqlModule]) -> None:
    """Refuse a required module that does not exist, a cycle, and an undeclared dependency."""
    for mod in modules.values():
        for needed in mod.requires:
            if needed not in modules:
                raise SqlModuleError(f"sql/{mod.name} requires {needed}, which is not a module of sql/")
    for mod in modules.values():
        dependency_order(mod.name, modules)
    table_owners = {obj: mod.name for mod in modules.values() for obj in sorted(mod.tables)}
    macro_owners = {obj: mod.name for mod in modules.values() for obj in sorted(mod.macros)}
    for mod in modules.values():
        _check_declared(mod, modules, table_owners, macro_owners)


def _check_declared(
    mod: SqlModule, modules: dict[str, SqlModule], table_owners: dict[str, str], macro_owners: dict[str, str]
) -> None:
    """Every object of another module that `mod` reads is declared: made by a module it requires, or an input."""
    tables, calls = references(mod)
    declared = {i.lower() for i in mod.inputs} | mod.tables | mod.macros
    for needed in mod.requires:
        declared |= (modules[needed].tables | modules[needed].macros) - modules[needed].dropped
    undeclared = sorted(
        {(t, table_owners[t]) for t in tables if t in table_owners and t not in declared}
        | {(c, macro_owners[c]) for c in calls if c in macro_owners and c not in declared}
    )
    for name, owner in undeclared:
        if name in modules[owner].dropped and owner in mod.requires:
            raise SqlModuleError(f"sql/{mod.name} uses {name}, which sql/{owner} drops before it ends")
        raise SqlModuleError(
            f"sql/{mod.name} uses {name}, which sql/{owner} creates, but does not declare it: "
            f"add `-- requires: {owner}` (or `-- inputs: {name}` where the caller creates it) "
            "to its header"
        )


def dependency_order(name: str, modules: dict[str, SqlModule]) -> list[str]:
    """The modules `name` needs, each after what it needs, ending with `name`; a cycle is refused."""
    order: list[str] = []
    visiting: list[str] = []

    def visit(current: str) -> None:
        if current in order:
            return
        if current in visiting:
            cycle = visiting[visiting.index(current) :] + [current]
            raise SqlModuleError("SQL modules require each other in a cycle: " + " → ".join(cycle))
        if current not in modules:
            raise SqlModuleError(f"sql/{visiting[-1]} requires {current}, which is not a module of sql/")
        visiting.append(current)
        for needed in modules[current].requires:
            visit(needed)
        visiting.pop()
        order.append(current)

    visit(name)
    return order


@cache
def all_modules() -> dict[str, SqlModule]:
    """The package's modules, parsed and checked against each other (tests/test_sql_modules.py holds the
    package to its rules; a command reads only what it runs: `_on_demand`)."""
    modules = {name: module(name) for name in module_names()}
    check_modules(modules)
    return modules


class _OnDemand(Mapping):
    """The package's modules, each parsed when a command first runs it: a reader runs a handful of the
    ~60, and parsing and cross-checking all of them was ~35 ms of every fresh process's start. The rules
    between modules are the package's, checked by its tests; a missing or cyclic requirement is still
    refused here, by dependency_order."""

    def __getitem__(self, name: str) -> SqlModule:
        try:
            return module(name)
        except SqlModuleError:
            raise KeyError(name) from None

    def __contains__(self, name: object) -> bool:
        return name in _shipped_names()

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(_shipped_names()))

    def __len__(self) -> int:
        return len(_shipped_names())


@cache
def _shipped_names() -> frozenset[str]:
    return frozenset(module_names())


_on_demand = _OnDemand()


# per connection, the modules the loader ran on it (a DuckDB connection's temp objects are its own)
_RAN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def load_requirements(con, name: str) -> None:
    """Run, in dependency order, every module `name` requires that the loader has not run on `con` yet."""
    modules = _on_demand
    if name not in modules:
        raise SqlModuleError(f"no SQL module sql/{name}")
    ran = _RAN.setdefault(con, set())
    for needed in dependency_order(name, modules)[:-1]:
        if needed not in ran:
            con.execute(modules[needed].text)
            ran.add(needed)


def run_module(con, name: str, params: dict | None = None):
    """Run module `name` on `con` after whatever it requires; the cursor holds its last statement's rows."""
    load_requirements(con, name)
    text = module(name).text
    cursor = con.execute(text) if params is None else con.execute(text, params)
    _RAN[con].add(name)
    return cursor


def module_relation(con, name: str, params: dict | None = None):
    """Module `name` (one SELECT) as a lazy DuckDB relation, after whatever it requires: what the Python API
    hands out (Profile.kernels, .ops …), so a caller can still filter it, join it or fetch it as Arrow."""
    load_requirements(con, name)
    text = module(name).text
    return con.sql(text) if params is None else con.sql(text, params=params)
