"""Read the SQL files shipped in the package (they live in the repository's top-level sql/)."""

import importlib.util
from functools import cache
from pathlib import Path


@cache
def sql_directory() -> Path:
    """Where the package's SQL files really are. An install maps `libreyolo_profile.sql` onto the
    repository's top-level sql/ (an editable one leaves it there), so ask the import system rather than
    guess; `python -m libreyolo_profile` run inside a checkout imports the checkout's package, which has
    no `sql` subpackage, and then the checkout's own sql/ beside it is the SQL."""
    spec = importlib.util.find_spec("libreyolo_profile.sql")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parent.parent / "sql"


@cache
def sql_text(name: str) -> str:
    return (sql_directory() / name).read_text(encoding="utf-8")
