"""Read the SQL files shipped in the package (they live in the repository's top-level sql/)."""

from functools import cache
from importlib.resources import files


@cache
def sql_text(name: str) -> str:
    return files("libreyolo_profile.sql").joinpath(name).read_text(encoding="utf-8")
