"""libreyolo profile: measure where the time goes in LibreYOLO training and inference, store it
as parquet-backed profiles, and read it back through DuckDB SQL.

From Python (docs/PYTHON.md)::

    import libreyolo_profile as lp
    p = lp.open("runs/profile/train")          # profile.json, a profile directory, or a Kineto trace
    p.metrics["step_ms"], p.verdict.bound
    p.kernels(category="gemm", top=5).df()

Importing this package is cheap on purpose: readers never pull in torch or libreyolo, and the API
below is imported on first use (PEP 562), so `import libreyolo_profile` loads nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:  # what type checkers and editors see; at run time __getattr__ imports on first use
    from libreyolo_profile.api import *  # noqa: F403  (the names: libreyolo_profile.api.__all__, declared once)


def _api():
    # import_module, not `from libreyolo_profile import api`: that asks this module for `api` first, which
    # would come back here
    import importlib

    return importlib.import_module("libreyolo_profile.api")


def __getattr__(name: str):
    """`lp.open` and the other API names (libreyolo_profile.api.__all__), imported from libreyolo_profile.api
    when first asked for; `__all__` too, so `from libreyolo_profile import *` sees them."""
    if name == "__all__":
        return ["__version__", *_api().__all__]
    if not name.startswith("_") and name != "api" and name in _api().__all__:
        return getattr(_api(), name)
    raise AttributeError(f"module 'libreyolo_profile' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_api().__all__))
