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

_API = (
    "Comparison",
    "Metrics",
    "Profile",
    "ProfileError",
    "UnanalysableError",
    "UsageError",
    "Verdict",
    "compare",
    "connect",
    "export",
    "import_job",
    "open",
    "query",
    "what_if",
)
__all__ = ["__version__", *_API]

if TYPE_CHECKING:  # what type checkers and editors see; at run time __getattr__ imports on first use
    from libreyolo_profile.api import (
        Comparison,
        Metrics,
        Profile,
        ProfileError,
        UnanalysableError,
        UsageError,
        Verdict,
        compare,
        connect,
        export,
        import_job,
        open,
        query,
        what_if,
    )


def __getattr__(name: str):
    """`lp.open` and the other API names, imported from libreyolo_profile.api when first asked for."""
    if name in _API:
        from libreyolo_profile import api

        return getattr(api, name)
    raise AttributeError(f"module 'libreyolo_profile' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
