"""`libreyolo profile modules`: host and device time per module of the model, as a tree
(sql/module_tree.sql over the modules table, which sql/modules.sql builds)."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile import sqlmodules
from libreyolo_profile.errors import UsageError
from libreyolo_profile.metric_catalog import is_cpu_profile
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import stdout_console, table
from libreyolo_profile.readers.common import OpenProfile, opened, profile_identity, records, run_sql

MODULE_PHASES = ("forward", "backward")
NO_MODULES = (
    "this profile holds no module information: record it with `libreyolo profile run|infer "
    "--module-depth N` (N ≥ 1), or a foreign trace with torch.profiler(with_stack=True) or "
    "with_modules=True"
)


def module_rows(con, depth: int | None = None, phase: str | None = None) -> list[dict]:
    """The rows of sql/module_tree.sql as dicts in tree order (summary and report read them too)."""
    return tree_order(records(*run_sql(con, "module_tree.sql", {"depth": depth, "phase": phase})))


def tree_order(rows: list[dict]) -> list[dict]:
    """Each phase's rows depth-first: a module, then its children in the order they first ran (in
    the backward pass ranges interleave, so the first-start order alone is not a tree)."""
    ordered = []
    for phase in dict.fromkeys(r["phase"] for r in rows):
        part = [r for r in rows if r["phase"] == phase]
        paths = {r["path"] for r in part}
        children: dict = {}
        for r in part:  # rows arrive by first start, so each list of children is in running order
            parent = r["path"].rpartition(".")[0] if "." in r["path"] else None
            children.setdefault(parent if parent in paths else None, []).append(r)
        stack = list(reversed(children.get(None, [])))
        while stack:
            row = stack.pop()
            ordered.append(row)
            stack.extend(reversed(children.get(row["path"], [])))
    return ordered


def tree_label(row: dict) -> str:
    """The module's name indented by its depth: the tree in a plain table."""
    return "  " * int(row["depth"]) + (row["name"] or row["path"])


def check_module_filters(depth: int | None, phase: str | None) -> None:
    """A negative depth or a phase modules do not have is a usage error (exit 2)."""
    if depth is not None and depth < 0:
        raise UsageError(f"--depth {depth}: must be ≥ 0")
    if phase is not None and phase not in MODULE_PHASES:
        raise UsageError(f"--phase {phase}: expected forward or backward")


def module_relation(profile: OpenProfile, depth: int | None = None, phase: str | None = None):
    """The rows `modules` shows, in the same tree order, as a DuckDB relation: module_rows (the one
    definition the CLI and the Python API, Profile.modules, share) decides the rows and their order."""
    check_module_filters(depth, phase)
    ordered = module_rows(profile.con, depth, phase)
    tree = sqlmodules.module_relation(profile.con, "module_tree.sql", {"depth": depth, "phase": phase})
    # each row's place in tree_order, joined on (phase, path), which name one module of one pass (its own
    # parameter names: a join refuses two relations binding the same one)
    place = profile.con.sql(
        "SELECT unnest($order_phase) AS phase, unnest($order_path) AS path, "
        "unnest(range(len($order_path))) AS position",
        params={"order_phase": [r["phase"] for r in ordered], "order_path": [r["path"] for r in ordered]},
    )
    return tree.join(place, "phase, path").order("position").project(*(f'"{c}"' for c in tree.columns))


def print_modules(trace: Path | OpenProfile, *, depth: int | None, phase: str | None, as_json: bool) -> None:
    check_module_filters(depth, phase)
    profile = opened(trace)
    rows = module_rows(profile.con, depth, phase)
    recorded = profile.con.execute("SELECT count(*) FROM modules").fetchone()[0] > 0
    note = (
        None
        if rows
        else (
            NO_MODULES
            if not recorded
            else f"no module rows match (phase {phase or 'any'}, depth ≤ {depth if depth is not None else 'any'})"
        )
    )
    if as_json:
        emit_json(
            {
                "profile": profile_identity(profile.loaded),
                "filters": {"depth": depth, "phase": phase},
                "modules": rows,
                "note": note,
            }
        )
        return
    if note:
        stdout_console().print(note)
        return
    on_cpu = is_cpu_profile(profile.doc)
    shown = [
        ("module", "left", None),
        ("type", "left", "module_type"),
        ("calls", "right", "calls_per_step"),
        ("total ms", "right", "total_ms_per_step"),
        ("self ms", "right", "self_ms_per_step"),
        ("% of model", "right", "share_pct"),
    ]
    if not on_cpu:
        shown += [("device ms", "right", "device_ms_per_step"), ("device self ms", "right", "device_self_ms_per_step")]
    for which in MODULE_PHASES:
        part = [r for r in rows if r["phase"] == which]
        if part:
            stdout_console().print(
                table(
                    f"Modules, {which} pass, per measured step",
                    [(header, justify) for header, justify, _ in shown],
                    [[tree_label(r) if key is None else r[key] for _, _, key in shown] for r in part],
                )
            )
    stdout_console().print(
        "[dim]self: time in no module range that started later (in the forward pass: not "
        "in a recorded child module, shown or not); docs/SCHEMA.md, the modules table[/]",
        highlight=False,
    )


SUMMARY_DEPTH = 2  # the summary's tree: the model, its parts and their blocks …
SUMMARY_CHILDREN = 3  # … the largest few blocks of each part


def top_modules(con) -> list[dict]:
    """The summary's module tree: each phase's model and parts, and each part's largest blocks by
    total time (in tree order); empty where the profile holds no module information."""
    rows = module_rows(con, SUMMARY_DEPTH)
    kept = []
    for phase in dict.fromkeys(r["phase"] for r in rows):
        part = [r for r in rows if r["phase"] == phase]
        largest = {}
        for r in part:
            parent = r["path"].rpartition(".")[0]
            largest.setdefault(parent, []).append(r)
        shown = {
            id(r)
            for siblings in largest.values()
            for r in sorted(siblings, key=lambda r: -(r["total_ms_per_step"] or 0))[:SUMMARY_CHILDREN]
        }
        kept += [r for r in part if r["depth"] < SUMMARY_DEPTH or id(r) in shown]
    return kept


def print_module_tree(console, rows: list[dict], on_cpu: bool, provenance: str = "", unit: str = "step") -> None:
    """The summary's module tree, one table per phase (nothing when there are no rows); `provenance`
    says which calls it was read from (readers/provenance.py), `unit` what one measured step is (an
    inference profile's is a call)."""
    for which in MODULE_PHASES:
        part = [r for r in rows if r["phase"] == which]
        if not part:
            continue
        columns = [("module", "left"), (f"ms/{unit}", "right"), ("self ms", "right"), ("% of model", "right")]
        if not on_cpu:
            columns.append(("device ms", "right"))
        console.print(
            table(
                f"Modules, {which} pass (largest {SUMMARY_CHILDREN} blocks per part)"
                + (f" · {provenance}" if provenance else ""),
                columns,
                [
                    [tree_label(r), r["total_ms_per_step"], r["self_ms_per_step"], r["share_pct"]]
                    + ([] if on_cpu else [r["device_ms_per_step"]])
                    for r in part
                ],
            )
        )
        console.print(f"[dim]{inclusive_note(part, unit)}[/]", highlight=False)


def inclusive_note(part: list[dict], unit: str = "step") -> str:
    """What the module table's shares add up to: inclusive times, and where the model's parts overlap
    (backward ranges interleave under autograd), by how much."""
    parts = [r for r in part if r["depth"] == 1]
    total = sum(r["share_pct"] or 0.0 for r in parts)
    note = f"ms/{unit} and % of model are inclusive (a block's children are inside it); self ms is in no child"
    if total > 100.5:
        note += f"; the parts' ranges overlap, so their shares add up to {total:.0f}%, not 100%"
    return note
