"""A foreign PyTorch profiler trace, from any machine, as a profile document of ours."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.store.document.assemble import build_document
from libreyolo_profile.store.ingest.analyse import analyse_trace


def profile_from_trace(path: Path) -> dict:
    return profile_with_sections(path)[0]


def profile_with_sections(path: Path, sections: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """The document, and the files of the kept sections asked for (`sections`: a report's timeline, the
    launches), computed in the same pass over the trace: {name: {file: bytes}} (store/disk/kept_sections.py)."""
    analysis = analyse_trace(path, sections=sections)
    for name in sections:  # one that failed is its reader's to say, as when computed later: the document stays
        analysis["unavailable"].pop(name, None)  # the same whichever reader read the trace first
    doc = build_document([analysis], [None], source={"type": "trace", "path": str(Path(path).resolve())})
    return doc, analysis["kept"]
