"""Foreign input into our profile form: a PyTorch profiler trace from any machine, or a profile.json
written by LibreYOLO's built-in profiler. `libreyolo profile import` writes it as a profile directory
of ours, <project>/<kind>/, so old measurements join the same readers and cross-run queries."""

from __future__ import annotations

import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

from libreyolo_profile.store.analyse import analyse_trace
from libreyolo_profile.store.document import build_document


def profile_from_trace(path: Path) -> dict:
    analysis = analyse_trace(path)
    return build_document([analysis], [None], source={"type": "trace", "path": str(Path(path).resolve())})


def imported_document(path: Path) -> dict:
    """Our document for whatever `path` is: a trace (analysed), a built-in profile (converted), or one
    of our own profiles (taken as it is). The loader decides, so import accepts what readers accept."""
    from libreyolo_profile.store.loader import load_document

    loaded = load_document(Path(path))
    doc = dict(loaded.doc)
    doc["generation"] = uuid.uuid4().hex  # a new profile write: its sidecars are written with it
    doc["source"] = {**(doc.get("source") or {}),
                     "imported": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                     "imported_from": str(Path(path).resolve())}
    return doc


def main(trace: Path, project: Path, as_json: bool) -> None:
    from libreyolo_profile.readers.common import emit_json
    from libreyolo_profile.store.schema import PROFILE_FILE
    from libreyolo_profile.store.writer import write_directory

    doc = imported_document(trace)
    target = Path(project) / doc["kind"]
    replaced = (target / PROFILE_FILE).is_file()
    write_directory(doc, target)
    result = {"profile": str(target / PROFILE_FILE), "kind": doc["kind"], "device_type": doc.get("device_type"),
              "source": doc["source"], "replaced": replaced,
              "verdict": {"bound": doc["verdict"]["bound"], "reason": doc["verdict"]["reason"]},
              "marks": doc.get("marks", {}),
              "rows": {name: len(table["rows"]) for name, table in doc["tables"].items()}}
    if as_json:
        emit_json(result)
        return
    out = sys.stdout
    out.write(f"imported {trace} → {target / PROFILE_FILE}{' (replaced the profile there)' if replaced else ''}\n")
    out.write(f"{doc['kind']} profile · {doc.get('device_type')} · source {doc['source'].get('type')} · "
              + ", ".join(f"{n} {c} rows" for n, c in result["rows"].items()) + "\n")
    out.write(f"verdict: {doc['verdict']['bound']} — {doc['verdict']['reason']}\n")
    for name, text in result["marks"].items():
        out.write(f"mark {name}: {text}\n")
