"""Where a writer may put a profile, and which directory is a profile of ours that --exist-ok may replace.

A profile's own contents never name a path: its directory is <project>/[<input name>/]<kind> with the
kind one of ours (store/schema.py KINDS, checked when the document is read), and `inside_project`
checks after resolving links that it stays under --project. `--exist-ok` replaces only a directory
whose profile.json is ours and whose files named like ours were written by us (`refuse_unless_ours`);
anything else there is refused (exit 2) before anything is written or deleted.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.store.schema import (
    GENERATION_KEY,
    KINDS,
    PROFILE_FILE,
    PROFILE_SCHEMA,
    REPEAT_FILE,
    REPEAT_SCHEMA,
    TABLES,
    TRACE_FILE,
)

REPORT_FILE = "report.html"
COMPARE_FILE = "report_vs.html"
# readers/report_page.py puts this in every page's <head>: it tells an earlier report of ours, which a
# new one may replace, from any other file
GENERATOR_MARKER = b'<meta name="generator" content="libreyolo-profile report">'
# pages written before the marker existed end with this footer
LEGACY_FOOTER = b"<footer>written by libreyolo-profile "
# the files of a profile directory of ours that replacing it removes (a writer regenerates them); any
# other file there (notes, report_vs.html) is carried over into the new profile
OWNED_FILES = (PROFILE_FILE, REPEAT_FILE, TRACE_FILE, REPORT_FILE, *(f"{t}.parquet" for t in TABLES))


def project_directory(project: Path | str) -> Path:
    """--project as a directory to write under: refused (exit 2) when empty (it would mean the current
    directory) or when something other than a directory (a file, /dev/null) has its name or a parent's."""
    if not str(project).strip():
        raise UsageError("--project is empty: name the directory the profiles go under (default runs/profile)")
    path = Path(project)
    for place in (path, *path.parents):
        if os.path.lexists(place):
            if not os.path.isdir(place):
                what = "" if place == path else f" ({place} is not a directory)"
                raise UsageError(f"--project {project}: not a directory{what}; name a directory to write under")
            break
    return path


def inside_project(project: Path | str, target: Path) -> Path:
    """`target`, refused (exit 2) unless it stays under `project` once both are resolved (links followed):
    a profile is never written outside --project, whatever a directory on the way links to."""
    root = Path(os.path.realpath(project))
    resolved = Path(os.path.realpath(target))
    if resolved != root and root not in resolved.parents:
        raise UsageError(
            f"{target} resolves to {resolved}, outside --project {project}: not written "
            "(a link on the way leads out of the project)"
        )
    return target


def is_report(path: Path) -> bool:
    """An HTML report written by `libreyolo profile report` (or beside a measured profile)."""
    try:
        with open(path, "rb") as handle:
            if GENERATOR_MARKER in handle.read(8192):
                return True
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - 4096))
            return LEGACY_FOOTER in handle.read()
    except OSError:
        return False


def _our_json(path: Path, schema: str) -> dict | None:
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("schema") == schema else None


def _parquet_generation(path: Path) -> str | None:
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_metadata(path).metadata or {}
    except Exception:  # not parquet at all, or damaged: not a sidecar we wrote
        return None
    value = metadata.get(GENERATION_KEY.encode())
    return value.decode("utf-8", "replace") if value is not None else None


def _foreign_file(path: Path, generation: str) -> str | None:
    """Why `path` (a name we write) is not a file we wrote for the profile of `generation`; None when it is."""
    if not stat.S_ISREG(os.lstat(path).st_mode):
        return f"{path.name} there is not a regular file"
    if path.suffix == ".parquet":
        found = _parquet_generation(path)
        return None if found == generation else f"{path.name} there was not written with its profile.json"
    if path.name == REPEAT_FILE:
        return None if _our_json(path, REPEAT_SCHEMA) is not None else f"{path.name} there is not ours"
    if path.name == REPORT_FILE:
        return None if is_report(path) else f"{path.name} there is not a report of ours"
    return None  # the trace copy: a trace is whatever the profiler wrote, ours once profile.json is


def why_not_ours(target: Path) -> str | None:
    """Why `target` is not a profile directory of ours (None: it is, or there is nothing there)."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(mode):
        return "is not a directory"
    profile = target / PROFILE_FILE
    if not profile.exists() or not stat.S_ISREG(os.lstat(profile).st_mode):
        return f"holds no {PROFILE_FILE} of ours"
    doc = _our_json(profile, PROFILE_SCHEMA)
    if doc is None or doc.get("kind") not in KINDS or not isinstance(doc.get("generation"), str):
        return f"holds a {PROFILE_FILE} not written by libreyolo profile"
    for name in OWNED_FILES[1:]:
        if os.path.lexists(target / name):
            why = _foreign_file(target / name, doc["generation"])
            if why:
                return f"is a profile of ours, but {why}"
    return None


def refuse_unless_ours(target: Path) -> None:
    """--exist-ok: exit 2 unless `target` is absent or a profile directory of ours; nothing is touched."""
    why = why_not_ours(Path(target))
    if why:
        raise UsageError(
            f"--exist-ok replaces only a profile written by libreyolo profile: {target} {why}; "
            "nothing was changed (move it away, or leave out --exist-ok to write the next free name)"
        )
