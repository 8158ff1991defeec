"""Foreign input into our profile form: a PyTorch profiler trace from any machine, or a profile.json
written by LibreYOLO's built-in profiler. `libreyolo profile import` writes it as a profile directory
of ours, <project>/<kind>/ (or the next free <kind>2, <kind>3, … where that is taken: an import never
replaces a profile unless --exist-ok), so old measurements join the same readers and cross-run queries."""

from __future__ import annotations

import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path


def imported_document(path: Path) -> dict:
    """Our document for whatever `path` is: a trace (analysed), a built-in profile (converted), or one
    of our own profiles (taken as it is). The loader decides, so import accepts what readers accept."""
    from libreyolo_profile.store.disk.loader import load_document

    loaded = load_document(Path(path))
    doc = dict(loaded.doc)
    doc["generation"] = uuid.uuid4().hex  # a new profile write: its sidecars are written with it
    doc["source"] = {**(doc.get("source") or {}),
                     "imported": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                     "imported_from": str(Path(path).resolve())}
    return doc


def import_profile(trace: Path, project: Path, as_json: bool, exist_ok: bool = False) -> None:
    """`libreyolo profile import`: write the profile directory, then say where it went."""
    from libreyolo_profile.output.json_out import emit_json
    from libreyolo_profile.output.terminal import stderr_note
    from libreyolo_profile.store.schema import PROFILE_FILE
    from libreyolo_profile.store.disk.writer import write_directory

    doc = imported_document(trace)
    wanted = Path(project) / doc["kind"]
    replaced = exist_ok and (wanted / PROFILE_FILE).is_file()
    target = write_directory(doc, wanted, exist_ok=exist_ok)
    if target != wanted:
        stderr_note(f"note: {wanted} is taken and was kept; this profile went to {target} "
                    f"(--exist-ok replaces it instead)")
    result = {"profile": str(target / PROFILE_FILE), "directory": str(target), "kind": doc["kind"],
              "device_type": doc.get("device_type"), "source": doc["source"], "replaced": replaced,
              "verdict": {"bound": doc["verdict"]["bound"], "reason": doc["verdict"]["reason"]},
              "marks": doc.get("marks", {}),
              "rows": {name: len(table["rows"]) for name, table in doc["tables"].items()}}
    if as_json:
        emit_json(result)
        return
    from libreyolo_profile.output.textsafe import safe_line

    # paths and trace-derived text: safe_line keeps escape sequences in them inert on a terminal
    say = lambda text: sys.stdout.write(safe_line(text) + "\n")  # noqa: E731
    say(f"imported {trace} → {target / PROFILE_FILE}{' (replaced the profile there)' if replaced else ''}")
    say(f"{doc['kind']} profile · {doc.get('device_type')} · source {doc['source'].get('type')} · "
        + ", ".join(f"{n} {c} rows" for n, c in result["rows"].items()))
    say(f"verdict: {doc['verdict']['bound']} — {doc['verdict']['reason']}")
    for name, text in result["marks"].items():
        say(f"mark {name}: {text}")
