"""Imports point one way: down the layers, or sideways within a room (issue #11).

Every module's imports are read with `ast`, at module level and inside functions alike (a lazy
import is still a dependency), and checked against the layers, lowest first:
  errors, connections, sqlfiles, sqlmodules, vocabulary, metric_catalog, output/
  → store/ (schema < decode < ingest < document < disk < crossrun)
  → readers/, measure/, importer → api/ (the Python API) → cli → launcher
The package root re-exports the Python API on first use (PEP 562 __getattr__, issue 31): that edge,
root → api, sits above every layer and is left out of the circle check (every module may read the
root's __version__); test_the_root_imports_only_the_api_and_only_lazily keeps it to that.
The checker is tested on a tiny fake package with planted violations, so a pass means something.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "libreyolo_profile"

# the store's rooms, lowest first; a module directly under store/ (schema.py, workdir.py) is its ground floor
STORE_ROOMS = ("decode", "ingest", "document", "disk", "crossrun")
GROUND = (
    "errors",
    "connections",
    "pandas_probe",
    "collector",
    "sqlfiles",
    "sqlmodules",
    "vocabulary",
    "metric_catalog",
    "output",
)  # import nothing above themselves


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module an ImportFrom names (relative imports resolved against `module`)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(path: Path, module: str, known: set[str]) -> set[str]:
    """Every module `path` imports, anywhere in the file. `from pkg import name` counts as pkg.name
    when that is a module of ours, else as pkg."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, path.name == "__init__.py", node)
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """module -> the modules it imports (third-party ones kept by name, for the torch rule)."""
    files = {module_name(path, root): path for path in sorted(root.rglob("*.py"))}
    return {module: imports_of(path, module, set(files)) for module, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one of our modules (Tarjan's algorithm, iterative)."""
    ours = {m: sorted(t for t in targets if t in graph and t != m) for m, targets in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(ours):
        if start in index:
            continue
        work = [(start, iter(ours[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(ours[target])))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return groups


def _area(module: str) -> tuple[str, ...]:
    """('store', room) for a store module, (top,) for anything else of ours: 'readers', 'cli', …"""
    parts = module.split(".")[1:]
    if not parts:
        return ("",)
    if parts[0] == "store":
        return ("store", parts[1] if len(parts) >= 2 and parts[1] in STORE_ROOMS else "ground")
    return (parts[0],)


def _store_level(room: str) -> int:
    return 0 if room == "ground" else 1 + STORE_ROOMS.index(room)


def layer_violations(graph: dict[str, set[str]], package: str) -> list[str]:
    """Every import that points up the layers or where the rules forbid it, as readable lines."""
    problems = []
    for module, targets in sorted(graph.items()):
        here = _area(module)
        for target in sorted(targets):
            top = target.split(".")[0]
            if here[0] == "readers" and top in ("torch", "libreyolo"):
                problems.append(f"{module} imports {target}: readers never import torch or libreyolo")
            if here[0] == "api" and top in ("torch", "libreyolo"):
                problems.append(f"{module} imports {target}: the Python API never imports torch or libreyolo")
            if top != package or target == package:
                continue
            there = _area(target)
            if here[0] in ("readers", "api") and there[0] == "measure":
                problems.append(
                    f"{module} imports {target}: "
                    f"{'readers' if here[0] == 'readers' else 'the Python API'} never import measure/"
                )
            if here[0] not in ("api", "cli", "launcher", "") and there[0] == "api":
                problems.append(f"{module} imports {target}: the Python API sits above {here[0]}/")
            if here[0] in ("store", "measure") and there[0] in ("readers", "cli", "importer", "launcher"):
                problems.append(f"{module} imports {target}: {here[0]}/ imports nothing from {there[0]}")
            if here[0] in GROUND and there[0] not in GROUND + ("sql",):
                problems.append(f"{module} imports {target}: the ground floor imports nothing above it")
            if here[0] == "store" and there[0] == "store" and _store_level(there[1]) > _store_level(here[1]):
                problems.append(f"{module} imports {target}: store room {here[1]} sits below {there[1]}")
            if here[0] == "store" and there[0] == "measure":
                problems.append(f"{module} imports {target}: the store imports nothing from measure/")
    return problems


# ---------------------------------------------------------------------------------------------
# the real package


@pytest.fixture(scope="module")
def graph():
    return import_graph(PACKAGE)


def without_root_facade(graph: dict[str, set[str]], package: str = "libreyolo_profile") -> dict[str, set[str]]:
    """The graph less the root's lazy re-export of the Python API (the one edge above every layer)."""
    return {m: (t - {f"{package}.api"} if m == package else t) for m, t in graph.items()}


def test_no_import_circles(graph):
    assert cycles(without_root_facade(graph)) == []


def test_the_root_imports_only_the_api_and_only_lazily(graph):
    ours = {t for t in graph["libreyolo_profile"] if t.startswith("libreyolo_profile")}
    assert ours == {"libreyolo_profile.api"}
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    at_module_level = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert {n.module for n in at_module_level if isinstance(n, ast.ImportFrom)} <= {"__future__", "typing"}


def test_imports_point_down_the_layers(graph):
    assert layer_violations(graph, "libreyolo_profile") == []


def test_the_graph_sees_lazy_imports(graph):
    """Function-level imports count: cli imports every reader only inside its command functions."""
    assert "libreyolo_profile.readers.summary" in graph["libreyolo_profile.cli"]
    assert "libreyolo_profile.store.disk.loader" in graph["libreyolo_profile.readers.get"]


# ---------------------------------------------------------------------------------------------
# the checker itself, on a fake package with planted violations


def _fake_package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "fakepkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for directory in [root, *[p for p in root.rglob("*") if p.is_dir()]]:
        (directory / "__init__.py").touch()
    return root


def test_checker_finds_a_circle_through_a_lazy_import(tmp_path):
    root = _fake_package(
        tmp_path,
        {
            "a.py": "import fakepkg.b\n",
            "b.py": "def f():\n    from fakepkg import c\n",
            "c.py": "from . import a\n",
            "d.py": "import fakepkg.a\n",
        },
    )
    assert cycles(import_graph(root)) == [["fakepkg.a", "fakepkg.b", "fakepkg.c"]]


def test_checker_finds_each_kind_of_upward_import(tmp_path):
    root = _fake_package(
        tmp_path,
        {
            "errors.py": "",
            "output/terminal.py": "from fakepkg.store.schema import X\n",  # ground floor → store
            "store/schema.py": "X = 1\n",
            "store/decode/parse.py": "def f():\n    from fakepkg.store.disk import loader\n",  # decode → disk
            "store/disk/loader.py": "from fakepkg.store.decode import parse\nfrom fakepkg.readers import get\n",
            "readers/get.py": (
                "import torch\nfrom fakepkg.measure import infer\nfrom fakepkg.store.disk.loader import L\n"
            ),
            "measure/infer.py": "from ..readers.get import g\n",  # measure → readers, relative
            "cli.py": "from fakepkg.readers import get\n",  # allowed: cli is above readers
            "api/profile.py": "import torch\nfrom fakepkg.readers import get\n",  # readers allowed, torch not
            "readers/kernels.py": "def f():\n    from fakepkg.api import profile\n",  # readers → api
        },
    )
    problems = layer_violations(import_graph(root), "fakepkg")
    assert problems == [
        "fakepkg.api.profile imports torch: the Python API never imports torch or libreyolo",
        "fakepkg.measure.infer imports fakepkg.readers.get: measure/ imports nothing from readers",
        "fakepkg.output.terminal imports fakepkg.store.schema: the ground floor imports nothing above it",
        "fakepkg.readers.get imports fakepkg.measure.infer: readers never import measure/",
        "fakepkg.readers.get imports torch: readers never import torch or libreyolo",
        "fakepkg.readers.kernels imports fakepkg.api.profile: the Python API sits above readers/",
        "fakepkg.store.decode.parse imports fakepkg.store.disk.loader: store room decode sits below disk",
        "fakepkg.store.disk.loader imports fakepkg.readers.get: store/ imports nothing from readers",
    ]


def test_checker_passes_a_clean_tree(tmp_path):
    root = _fake_package(
        tmp_path,
        {
            "errors.py": "",
            "output/terminal.py": "from fakepkg import errors\n",
            "store/schema.py": "from fakepkg.errors import E\n",
            "store/disk/loader.py": "from fakepkg.store.schema import X\nfrom fakepkg.store.decode import parse\n",
            "store/decode/parse.py": "from fakepkg.store import schema\n",
            "readers/get.py": "from fakepkg.store.disk.loader import L\nimport json\n",
            "cli.py": "def f():\n    from fakepkg.readers import get\n",
        },
    )
    graph = import_graph(root)
    assert layer_violations(graph, "fakepkg") == [] and cycles(graph) == []


if __name__ == "__main__":
    found = import_graph(PACKAGE)
    print("\n".join(layer_violations(found, "libreyolo_profile") + [" ↔ ".join(c) for c in cycles(found)]) or "clean")
