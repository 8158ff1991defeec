"""The habit CONTRIBUTING.md names that a test can keep (issue 23): no Python module spells a blame cause or a
verdict — those are rows of the SQL vocabulary (sql/blame_causes.sql, sql/verdicts.sql) that Python reads
through libreyolo_profile/vocabulary.py. Sizes of modules and functions are a review hint, not a test (#51):
a cap cut rooms by line count instead of meaning."""

from __future__ import annotations

import ast
from pathlib import Path

from libreyolo_profile.store.schema import PHASES_BY_KIND, TABLES
from libreyolo_profile.vocabulary import causes, verdicts

PACKAGE = Path(__file__).resolve().parents[1] / "libreyolo_profile"


def sources() -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py"))}


def other_concepts() -> set[str]:
    """Names a cause or verdict shares with another concept, which Python may spell as that concept: the
    phases our annotations name (a phase and the blame cause that is its time: `dataload`, `preprocess`),
    table columns (`allocator`, `straggler`), and the environment's `python` version key."""
    phases = {p for kind in PHASES_BY_KIND.values() for p in kind}
    columns = {column[0] for table in TABLES.values() for column in table}
    return phases | columns | {"python"}


def test_no_python_module_spells_a_cause_or_a_verdict():
    words = (set(causes()) | set(verdicts())) - other_concepts()
    spelled = []
    for path, text in sources().items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in words:
                spelled.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value!r}")
    assert spelled == [], "read it from libreyolo_profile/vocabulary.py instead: " + ", ".join(spelled)


def test_the_check_sees_a_spelled_verdict(tmp_path):
    """The scan above finds a verdict written as a string literal (so its silence means something)."""
    planted = ast.parse("bound = 'host-launch'\nif cause == 'gemm_conv': pass\n")
    found = {n.value for n in ast.walk(planted) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert {"host-launch", "gemm_conv"} <= found & (set(causes()) | set(verdicts()))
