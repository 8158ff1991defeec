"""Open whatever a reader is given as one profile document plus its sidecar directory.

Accepted (SPEC §3): profile.json, profile_repeat.json, profile_trace.json, a profile directory,
or any PyTorch profiler trace (.json/.json.gz) from any machine. `load_document` is the cheap
path (`get` needs nothing more); `sidecar_dir` finds or rebuilds the parquet tables.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from libreyolo_profile.errors import UnanalysableError, UsageError
from libreyolo_profile.store.cache import bytes_key, cache_root, trace_key
from libreyolo_profile.store.schema import (BUILTIN_SCHEMA, PROFILE_FILE, PROFILE_SCHEMA, REPEAT_FILE,
                                            REPEAT_SCHEMA, SCHEMA_VERSION, TABLES, TRACE_FILE)

_OUR_SCHEMAS = (PROFILE_SCHEMA, REPEAT_SCHEMA)


@dataclass
class Loaded:
    doc: dict
    home: Path | None  # directory holding the profile.json and its sidecars (None: none on disk)
    path: Path  # what the user named


def _check_readable(path: Path) -> None:
    if not os.path.exists(path):
        raise UsageError(f"no such file or directory: {path}")
    if not os.access(path, os.R_OK):
        raise UsageError(f"permission denied: {path}")


def _peek(path: Path, size: int = 4096) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except PermissionError:
        raise UsageError(f"permission denied: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory") from None


def _read_document(path: Path) -> dict:
    try:
        doc = json.loads(path.read_bytes())
    except PermissionError:
        raise UsageError(f"permission denied: {path}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UnanalysableError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise UnanalysableError(f"{path}: not a profile (a JSON {type(doc).__name__})")
    return doc


def _validate(doc: dict, path: Path) -> dict:
    version = doc.get("schema_version")
    if not isinstance(version, int):
        raise UnanalysableError(f"{path}: profile without a valid schema_version")
    if version > SCHEMA_VERSION:
        raise UnanalysableError(f"{path} was written with profile schema v{version}; this libreyolo-profile reads "
                                f"up to v{SCHEMA_VERSION}: upgrade libreyolo-profile to read it")
    missing = [k for k in ("kind", "metrics", "tables", "verdict") if k not in doc]
    if missing:
        raise UnanalysableError(f"{path}: profile is missing {', '.join(missing)}")
    return doc


def _profile_in_directory(directory: Path) -> Path:
    for name in (PROFILE_FILE, REPEAT_FILE):
        if (directory / name).is_file():
            return directory / name
    kinds = [directory / k / PROFILE_FILE for k in ("train", "infer") if (directory / k / PROFILE_FILE).is_file()]
    if len(kinds) == 1:
        return kinds[0]
    if kinds:
        raise UsageError(f"{directory} holds both a train and an infer profile: name one of "
                         + " or ".join(str(k.parent) for k in kinds))
    raise UsageError(f"no profile in {directory} (no {PROFILE_FILE}, {REPEAT_FILE}, train/ or infer/ inside)")


def load_document(path: Path) -> Loaded:
    path = Path(path)
    _check_readable(path)
    if path.is_dir():
        target = _profile_in_directory(path)
        return Loaded(_validate(_read_document(target), target), target.parent, path)
    head = _peek(path)
    if not head.strip():
        raise UnanalysableError(f"{path}: the file is empty")
    if head[:2] != b"\x1f\x8b":
        text = head.lstrip()
        schema = _schema_of(text)
        if schema in _OUR_SCHEMAS:
            return Loaded(_validate(_read_document(path), path), path.parent, path)
        if schema == BUILTIN_SCHEMA:
            from libreyolo_profile.store.builtin import load_builtin

            return load_builtin(path)
        if path.name == TRACE_FILE and (path.parent / PROFILE_FILE).is_file():
            # our own trace: its profile.json knows what the trace alone cannot (images, overhead)
            target = path.parent / PROFILE_FILE
            return Loaded(_validate(_read_document(target), target), path.parent, path)
    return _load_trace(path)


def _schema_of(head: bytes) -> str | None:
    if not head.startswith(b"{"):
        return None
    marker = b'"schema":'
    at = head.find(marker, 0, 200)
    if at < 0:
        marker = b'"schema": '
        at = head.find(marker, 0, 200)
    if at < 0:
        return None
    rest = head[at + len(marker):].lstrip()
    if not rest.startswith(b'"'):
        return None
    end = rest.find(b'"', 1)
    return rest[1:end].decode("utf-8", "replace") if end > 0 else None


def load_converted(path: Path, area: str, convert) -> Loaded:
    """A foreign input (a trace, a built-in profile) converted once into the cache by `convert`,
    keyed by the file's identity and content; later reads open the cached profile directory."""
    home = cache_root() / area / trace_key(path)
    if (home / PROFILE_FILE).is_file():
        try:
            return Loaded(_validate(_read_document(home / PROFILE_FILE), home), home, path)
        except UnanalysableError:
            pass  # a damaged cache entry is rebuilt below
    from libreyolo_profile.store.writer import write_directory

    doc = convert(path)
    write_directory(doc, home)
    return Loaded(doc, home, path)


def _load_trace(path: Path) -> Loaded:
    from libreyolo_profile.store.importer import profile_from_trace

    return load_converted(path, "traces", profile_from_trace)


def _sidecars_match(home: Path, doc: dict) -> bool:
    import duckdb

    try:
        for table in TABLES:
            file = home / f"{table}.parquet"
            if not file.is_file():
                return False
            rows = duckdb.execute(
                "SELECT (SELECT CAST(value AS VARCHAR) FROM parquet_kv_metadata($f) "
                "        WHERE CAST(key AS VARCHAR) = 'libreyolo_profile.generation'), "
                "       (SELECT count(*) FROM read_parquet($f))", {"f": str(file)}).fetchone()
            if rows[0] != doc.get("generation") or rows[1] != len(doc["tables"][table]["rows"]):
                return False
        return True
    except Exception:  # unreadable or corrupt parquet: rebuild from profile.json
        return False


def sidecar_dir(loaded: Loaded) -> Path:
    """The directory whose parquet files match the document: beside it, or rebuilt in the cache."""
    if loaded.home is not None and _sidecars_match(loaded.home, loaded.doc):
        return loaded.home
    encoded = json.dumps(loaded.doc["tables"], sort_keys=True, default=str).encode()
    home = cache_root() / "sidecars" / bytes_key(encoded + str(loaded.doc.get("generation")).encode())
    if _sidecars_match(home, loaded.doc):
        return home
    from libreyolo_profile.store.sidecars import write_sidecars

    home.mkdir(parents=True, exist_ok=True)
    write_sidecars(loaded.doc, home)
    return home
