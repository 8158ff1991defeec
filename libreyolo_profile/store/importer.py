"""Foreign input into our profile form: a PyTorch profiler trace from any machine."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.store.analyse import analyse_trace
from libreyolo_profile.store.document import build_document


def profile_from_trace(path: Path) -> dict:
    analysis = analyse_trace(path)
    return build_document([analysis], [None], source={"type": "trace", "path": str(Path(path).resolve())})
