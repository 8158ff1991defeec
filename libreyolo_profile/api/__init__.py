"""The Python API of libreyolo profile: profiles as DuckDB relations, on the same SQL as the CLI
(docs/PYTHON.md). Usually reached as ``import libreyolo_profile as lp``; ``lp.open`` and the rest are
imported from here on first use, so importing the package stays cold."""

from __future__ import annotations

from libreyolo_profile.api.comparison import Comparison
from libreyolo_profile.api.cross import compare, connect, query, what_if
from libreyolo_profile.api.files_out import export
from libreyolo_profile.api.jobs import import_job
from libreyolo_profile.api.metrics import Metrics, Verdict
from libreyolo_profile.api.profile import Profile, open
from libreyolo_profile.errors import ProfileError, UnanalysableError, UsageError

__all__ = [
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
]
