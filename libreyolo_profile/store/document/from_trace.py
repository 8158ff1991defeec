"""A foreign PyTorch profiler trace, from any machine, as a profile document of ours."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.store.document.assemble import build_document
from libreyolo_profile.store.ingest.analyse import analyse_trace


def profile_from_trace(path: Path) -> dict:
    analysis = analyse_trace(path)
    return build_document([analysis], [None], source={"type": "trace", "path": str(Path(path).resolve())})
