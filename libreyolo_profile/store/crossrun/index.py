"""The catalogue of profiles under some roots: each one's document head, the directory of parquet
sidecars that match it, and its `profiles` row (store/crossrun/columns.py).

A profile is a directory holding profile.json (ours, or one written by LibreYOLO's built-in
profiler, which is converted on the fly). Its sidecars are used in place when their footers carry the
generation of its profile.json and the columns of their table (footers.py); sidecars that are missing,
were written for another profile.json or hold other columns are rebuilt into the cache
(loader.sidecar_dir), never beside the input. Profiles already checked are remembered in a small
verified index in the cache, keyed by their files' identity (profile.json's, and its sidecars' beside
it or in the cache), so a later query reads neither their profile.json nor a parquet footer: a lone
profile.json or a built-in one is rebuilt once, not on every query.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from libreyolo_profile.errors import ProfileError, UsageError
from libreyolo_profile.store.crossrun.columns import profile_row, profiles_columns
from libreyolo_profile.store.crossrun.discover import discover, read_regular, skip_note
from libreyolo_profile.store.crossrun.footers import written_for
from libreyolo_profile.store.schema import (
    BUILTIN_SCHEMA,
    PROFILE_FILE,
    PROFILE_SCHEMA,
    REPEAT_SCHEMA,
    SCHEMA_VERSION,
    TABLES,
)

# what a cached row holds follows the `profiles` columns (a new metric or model field is a new column):
# a cache written for other columns is rebuilt, never read with the new columns missing
_VERIFIED_VERSION = "2:" + hashlib.sha256(repr(profiles_columns()).encode()).hexdigest()[:12]


@dataclass
class Found:
    display: str  # the profile directory as found under the roots
    json_path: Path  # the file read
    doc: dict | None  # the document without its tables (None when its row came from the cache)
    sidecars: Path | None = None  # directory whose parquet files belong to doc
    row: dict | None = None  # its `profiles` columns that come from the document (columns.profile_row)
    head: object = None  # the typed head (store/document/head.py), decoded once where it is checked (is_ours)


def head_decoder():
    """A msgspec decoder for profile.json that skips the embedded tables (most of the bytes): every field of
    the typed head (store/document/head.py), each as the file holds it, for is_ours to check; its field names."""
    from typing import Any

    import msgspec

    from libreyolo_profile.store.document.head import head_struct

    fields = [field.name for field in msgspec.structs.fields(head_struct())]
    head = msgspec.defstruct("RawHead", [(f, Any, None) for f in fields])
    return msgspec.json.Decoder(head), fields


def _read_heads(found: list[tuple[str, Path]]) -> list[Found]:
    import msgspec

    decoder, fields = head_decoder()
    out = []
    for display, path in found:
        try:
            head = decoder.decode(read_regular(path))
        except (OSError, msgspec.DecodeError) as exc:
            skip_note(f"skipped {path}: {exc}")
            continue
        doc = {f: getattr(head, f) for f in fields}
        out.append(Found(display, path, doc))
    return out


def _full_load(item: Found) -> Found | None:
    """The slow path: the loader reads (or converts) the whole file and finds or rebuilds its sidecars."""
    from libreyolo_profile.store.disk.loader import load_document, sidecar_dir

    try:
        loaded = load_document(item.json_path)
        directory = sidecar_dir(loaded)
    except ProfileError as exc:
        skip_note(f"skipped {item.json_path}: {exc.message}")
        return None
    doc = {k: v for k, v in loaded.doc.items() if k != "tables"}
    found = Found(item.display, item.json_path, doc, directory, head=loaded.head)
    found.row = profile_row(found.head)
    return found


def _signature(path) -> list[int] | None:
    """(mtime, size, inode) of a regular file; None when absent or not a regular file (a FIFO sidecar must
    not be opened to check its footer: its profile takes the slow path, which rebuilds it in the cache)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino] if stat.S_ISREG(st.st_mode) else None


class _Verified:
    """Profiles whose sidecars were already checked against their profile.json, with their `profiles` row,
    keyed by the five files' identity (mtime, size, inode): a later query reads neither their profile.json
    nor a parquet footer before running. One cache file per set of roots."""

    def __init__(self, roots: list[Path]):
        from libreyolo_profile.store.disk.cache import bytes_key
        from libreyolo_profile.store.workdir import cache_root

        key = bytes_key("\0".join(sorted(os.path.realpath(r) for r in roots)).encode())
        self.path = cache_root() / "cross_run" / f"{key}.json"
        try:
            import msgspec

            self.entries: dict = msgspec.json.decode(self.path.read_bytes())
            if not isinstance(self.entries, dict) or self.entries.get("version") != _VERIFIED_VERSION:
                self.entries = {}
        except Exception:  # absent or damaged: everything is checked again
            self.entries = {}
        self.entries = self.entries.get("profiles", {})
        self.fresh: dict = {}

    @staticmethod
    def signatures(json_path: Path, sidecars: str | None = None) -> list | None:
        """The identity of profile.json and of the parquet files in `sidecars` (default: beside it)."""
        directory = sidecars or os.path.dirname(json_path)  # plain strings: pathlib costs more than the stat, ×7,000
        signatures = [_signature(json_path)] + [_signature(os.path.join(directory, f"{t}.parquet")) for t in TABLES]
        return None if None in signatures else signatures

    def row(self, json_path: Path, signatures: list | None) -> dict | None:
        entry = self.entries.get(str(json_path))
        return entry[1] if signatures is not None and entry and len(entry) == 2 and entry[0] == signatures else None

    def rebuilt(self, json_path: Path) -> tuple[dict, Path] | None:
        """(row, sidecar directory) of a profile whose sidecars were rebuilt into the cache (a lone profile.json,
        a converted built-in one) by an earlier query, when neither its profile.json nor those files changed."""
        from libreyolo_profile.store.workdir import cache_root

        entry = self.entries.get(str(json_path))
        if not entry or len(entry) != 3 or not isinstance(entry[2], str):
            return None
        if os.path.commonpath([entry[2], str(cache_root())]) != str(cache_root()):
            return None  # only the cache's own entries are trusted without a check
        if self.signatures(json_path, entry[2]) != entry[0]:
            return None
        self.fresh[str(json_path)] = entry
        return entry[1], Path(entry[2])

    def remember(self, json_path: Path, signatures: list, row: dict, sidecars: Path | None = None) -> None:
        """Remember a checked profile: `sidecars` names the cache directory its tables were rebuilt in."""
        self.fresh[str(json_path)] = [signatures, row] if sidecars is None else [signatures, row, str(sidecars)]

    def save(self) -> None:
        if self.fresh == self.entries:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # a fresh name opened exclusively: a planted symlink or a concurrent query is never written through
            fd, staged = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            try:
                import msgspec

                # msgspec, not json.dump: over 1,000 profiles the stdlib encoder took a third of a first query
                with os.fdopen(fd, "wb") as handle:
                    handle.write(msgspec.json.encode({"version": _VERIFIED_VERSION, "profiles": self.fresh}))
                os.replace(staged, self.path)
            except BaseException:
                os.unlink(staged)
                raise
        except OSError:
            pass  # a read-only cache only costs the next query a re-check


def is_ours(item: Found) -> bool:
    """A profile of ours this version reads, with a head readers can read (store/document/head.py), kept as
    `item.head`; anything else is skipped with a note. `item.doc` is the raw head as decoded from the file,
    before it is known to be a profile of ours: its schema is read from it, nothing else."""
    schema, version = item.doc.get("schema"), item.doc.get("schema_version")
    if schema in (PROFILE_SCHEMA, REPEAT_SCHEMA) and isinstance(version, int) and version <= SCHEMA_VERSION:
        from libreyolo_profile.store.document.head import BadHead, check_head

        try:
            item.head = check_head(item.doc)
        except BadHead as exc:
            skip_note(f"skipped {item.json_path}: not a valid profile: {exc}")
            return False
        return True
    if schema in (PROFILE_SCHEMA, REPEAT_SCHEMA):
        skip_note(
            f"skipped {item.json_path}: written with profile schema v{version}; this libreyolo-profile reads "
            f"up to v{SCHEMA_VERSION}"
        )
    elif schema != BUILTIN_SCHEMA:
        skip_note(f"skipped {item.json_path}: not a profile (schema {schema!r})")
    return False


def collect(roots: list[Path]) -> list[Found]:
    """Every readable profile under the roots, with the directory of sidecars that match it and its row."""
    verified = _Verified(roots)
    result, unread = [], []
    named_files, signatures = [], {}
    for display, path in discover(roots):
        if path.name != PROFILE_FILE:  # a file named as a root: anything a reader accepts (trace, repeat file …)
            named_files.append(Found(display, path, None))
            continue
        signatures[path] = _Verified.signatures(path)  # before reading: a later rewrite is a new signature
        row = verified.row(path, signatures[path])
        rebuilt = verified.rebuilt(path) if row is None else None
        if row is not None:
            verified.remember(path, signatures[path], row)
            result.append(Found(display, path, None, path.parent, row))
        elif rebuilt is not None:
            result.append(Found(display, path, None, rebuilt[1], rebuilt[0]))
        else:
            unread.append((display, path, _signature(path)))
    before = {path: signature for _, path, signature in unread}
    heads = _read_heads([(display, path) for display, path, _ in unread])
    ours = [item for item in heads if is_ours(item)]
    others = [item for item in heads if item.doc.get("schema") == BUILTIN_SCHEMA]
    for item in ours:
        directory = os.path.dirname(item.json_path)
        generation = item.head.generation  # the head check holds it to a non-empty string
        if signatures[item.json_path] is not None and all(
            written_for(os.path.join(directory, f"{t}.parquet"), generation, t) for t in TABLES
        ):
            item.sidecars, item.row = item.json_path.parent, profile_row(item.head)
            verified.remember(item.json_path, signatures[item.json_path], item.row)
            result.append(item)
        else:
            loaded = _full_load(item)  # sidecars missing or written for another profile.json
            if loaded is not None:
                _remember_rebuilt(verified, loaded, before[item.json_path])
                result.append(loaded)
    for item in others:  # built-in profiles, converted into the cache
        loaded = _full_load(item)
        if loaded is not None:
            _remember_rebuilt(verified, loaded, before[item.json_path])
            result.append(loaded)
    for item in named_files:
        loaded = _full_load(item)
        if loaded is not None:
            result.append(loaded)
    verified.save()
    return sorted(result, key=lambda f: (f.display, str(f.json_path)))


def _remember_rebuilt(verified: _Verified, loaded: Found, json_signature: list | None) -> None:
    """Remember a profile read the slow way whose sidecars now live in the cache, keyed by its profile.json
    as it was before the read and by the cache files: the next query reads neither (2,000 lone profile.json
    files cost 18-20 s per query when each was read and checked again)."""
    from libreyolo_profile.store.workdir import cache_root

    directory = str(loaded.sidecars)
    if json_signature is None or loaded.sidecars is None or directory == os.path.dirname(loaded.json_path):
        return  # its own sidecars matched after all, or nothing stable to key on
    if os.path.commonpath([directory, str(cache_root())]) != str(cache_root()):
        return
    signatures = _Verified.signatures(loaded.json_path, directory)
    if signatures is not None and signatures[0] == json_signature:  # unchanged while it was read
        verified.remember(loaded.json_path, signatures, loaded.row, loaded.sidecars)


def require_profiles(found: list[Found], roots: list[Path]) -> None:
    if not found:
        raise UsageError(
            f"no profile under {', '.join(str(r) for r in roots)} "
            f"(a profile directory holds {PROFILE_FILE}; make one with `libreyolo profile infer` "
            f"or `libreyolo profile import`)"
        )
