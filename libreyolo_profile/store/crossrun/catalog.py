"""The catalogue of profiles under some roots, as DuckDB views (SPEC §9).

A profile is a directory holding profile.json (ours, or one written by LibreYOLO's built-in
profiler, which is converted on the fly). Each profile's parquet sidecars are read in place with
DuckDB (read_parquet over the list of files, filename = true) and joined to one `profiles` row per
profile; sql/cross_run_views.sql defines the views. Sidecars that are missing or were written for
another profile.json are rebuilt into the cache (loader.sidecar_dir), never beside the input.
Used by `query` and `db` (readers/query.py).
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from libreyolo_profile.errors import ProfileError, UsageError
from libreyolo_profile.metric_catalog import METRICS
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.store.schema import (BUILTIN_SCHEMA, PROFILE_FILE, PROFILE_SCHEMA, REPEAT_SCHEMA,
                                            SCHEMA_VERSION, TABLES)

_VERIFIED_VERSION = 1  # bump when index_row changes what a cached row holds
GENERATION_KEY = "libreyolo_profile.generation"  # parquet key-value metadata written by store/disk/sidecars.py
DEFAULT_ROOT = Path("runs/profile")

# The identity every row of kernels/ops/phases/steps carries (sql/cross_run_views.sql lists the same).
IDENTITY_COLUMNS: list[tuple[str, str, str, str]] = [
    ("profile_id", "INTEGER", "", "key of the profile within this query or database (join to `profiles`)"),
    ("profile", "VARCHAR", "", "the profile directory, as found under the roots"),
    ("kind", "VARCHAR", "", "train (`run`) or infer (`infer`)"),
    ("created", "TIMESTAMPTZ", "UTC", "when the profile was written"),
    ("device_type", "VARCHAR", "", "gpu or cpu"),
    ("device_name", "VARCHAR", "", "name of the profiled device (GPU model, or CPU)"),
    ("model_family", "VARCHAR", "", "model family, e.g. LibreYOLO9 (NULL for a foreign trace)"),
    ("model_size", "VARCHAR", "", "model size variant, e.g. t"),
    ("batch", "BIGINT", "count", "images per step or call (the --batch setting)"),
    ("imgsz", "BIGINT", "px", "input image size (the --imgsz setting)"),
]

# The `profiles` view: identity, provenance and key settings, then one column per metric in METRICS.
PROFILE_COLUMNS: list[tuple[str, str, str, str]] = IDENTITY_COLUMNS + [
    ("profile_json", "VARCHAR", "", "the profile file that was read"),
    ("sidecar_dir", "VARCHAR", "", "directory of the parquet files read: the profile directory, or a cache "
                                   "directory when they were missing, stale or converted"),
    ("generation", "VARCHAR", "", "unique id of this profile write (stable across queries; sidecars carry it)"),
    ("schema_version", "INTEGER", "", "profile.json layout version"),
    ("tables_version", "INTEGER", "", "sidecar table layout version"),
    ("kind_inferred", "BOOLEAN", "", "true when the kind was inferred from a foreign trace"),
    ("producer", "VARCHAR", "", "program and version that wrote the profile"),
    ("source_type", "VARCHAR", "", "measured (run/infer), trace (a foreign trace) or libreyolo-builtin (converted)"),
    ("source_path", "VARCHAR", "", "the trace or built-in profile it came from (NULL when measured)"),
    ("device", "VARCHAR", "", "the --device setting as given (0, cuda:1, cpu)"),
    ("half", "BOOLEAN", "", "the --half setting (infer)"),
    ("amp", "BOOLEAN", "", "the --amp setting (train)"),
    ("workers", "BIGINT", "count", "the --workers setting (train)"),
    ("warmup", "BIGINT", "count", "warmup steps or calls before the window"),
    ("repeat", "BIGINT", "count", "trials measured (--repeat)"),
    ("model_weights", "VARCHAR", "", "weights file or name"),
    ("weights_source", "VARCHAR", "", "where the weights came from (random-init is marked)"),
    ("parameter_count", "BIGINT", "count", "model parameters"),
    ("torch_version", "VARCHAR", "", "torch version of the measurement"),
    ("libreyolo_version", "VARCHAR", "", "libreyolo version of the measurement"),
    ("command", "VARCHAR", "", "the exact command that measured it (NULL for a foreign input)"),
    ("next_step", "VARCHAR", "", "the verdict's suggested next step"),
    ("marks", "VARCHAR[]", "", "names of the profile's marks (cpu_profile, tiny_window, thrashing …)"),
]


def metric_columns() -> list[tuple[str, str, str, str]]:
    def sql_type(name: str) -> str:
        return "BOOLEAN" if name == "thrashing" else "VARCHAR" if name in ("bound", "bound_reason") else "DOUBLE"

    return [(name, sql_type(name), unit, meaning) for name, (unit, _, _, meaning) in METRICS.items()]


def profiles_columns() -> list[tuple[str, str, str, str]]:
    """Every column of the `profiles` view, in order: (name, type, unit, meaning)."""
    return PROFILE_COLUMNS + metric_columns()


# ---------------------------------------------------------------------------------------------
# finding the profiles


@dataclass
class Found:
    display: str  # the profile directory as found under the roots
    json_path: Path  # the file read
    doc: dict | None  # the document without its tables (None when its row came from the cache)
    sidecars: Path | None = None  # directory whose parquet files belong to doc
    row: dict | None = None  # its `profiles` columns that come from the document (index_row)


def _note(text: str) -> None:
    sys.stderr.write(safe_line(f"libreyolo profile: {text}") + "\n")


_SPECIAL_FILES = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"))


def _special(mode: int) -> str | None:
    """What a file that is neither a regular file nor a directory is ("a FIFO" …); None for those two."""
    return next((name for test, name in _SPECIAL_FILES if test(mode)), None)


def _refuse_special(path: Path, mode: int) -> None:
    """Opening a FIFO (or a device) blocks until someone writes to it: refuse it by its mode, unopened."""
    kind = _special(mode)
    if kind is not None:
        raise UsageError(f"{path} is {kind}, not a regular file: not read (reading it could block forever)")


def _profile_file(directory: str) -> Path | None:
    """The profile.json in `directory` if it is a regular file (or a link to one); a FIFO, socket or device
    named profile.json is refused without being opened. A dangling link is kept: reading it is skipped
    with a note."""
    path = Path(directory) / PROFILE_FILE
    try:
        mode = os.stat(path).st_mode  # follows a link: its target is what would be opened
    except OSError:
        return path
    _refuse_special(path, mode)
    return path if stat.S_ISREG(mode) else None


def discover(roots: list[Path]) -> list[tuple[str, Path]]:
    """(display path, profile file) of every profile under the roots, hidden directories skipped.
    Only regular files are ever opened: a root or profile.json that is a FIFO, socket or device exits 2."""
    found: list[tuple[str, Path]] = []
    seen: set[str] = set()
    for root in roots:
        root = Path(root)
        try:
            mode = os.stat(root).st_mode
        except FileNotFoundError:
            raise UsageError(f"no such file or directory: {root}") from None
        except OSError as exc:
            raise UsageError(f"cannot read {root}: {exc.strerror}") from None
        _refuse_special(root, mode)
        if stat.S_ISREG(mode):
            candidates = [(str(root), root)]
        else:
            candidates = []
            for directory, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                if PROFILE_FILE in filenames:
                    path = _profile_file(directory)
                    if path is not None:
                        candidates.append((directory, path))
        for display, path in candidates:
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                found.append((display, path))
    return found


def read_regular(path: Path) -> bytes:
    """The bytes of a regular file. Opened without blocking and checked once open, so a file swapped for a
    FIFO after discovery is refused instead of waited on."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        kind = _special(os.fstat(fd).st_mode)
        if kind is not None:
            raise OSError(f"{path} is {kind}, not a regular file")
        with os.fdopen(fd, "rb") as handle:
            fd = -1  # the file object closes it now
            return handle.read()
    finally:
        if fd >= 0:
            os.close(fd)


def _head_decoder():
    """A msgspec decoder for profile.json that skips the embedded tables (most of the bytes)."""
    from typing import Any

    import msgspec

    fields = ["schema", "schema_version", "tables_version", "generation", "kind", "kind_inferred", "device_type",
              "created", "producer", "source", "command", "settings", "environment", "model", "window",
              "devices", "metrics", "verdict", "marks", "repeat", "trials"]
    head = msgspec.defstruct("ProfileHead", [(f, Any, None) for f in fields])
    return msgspec.json.Decoder(head), fields


def _read_heads(found: list[tuple[str, Path]]) -> list[Found]:
    import msgspec

    decoder, fields = _head_decoder()
    out = []
    for display, path in found:
        try:
            head = decoder.decode(read_regular(path))
        except (OSError, msgspec.DecodeError) as exc:
            _note(f"skipped {path}: {exc}")
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
        _note(f"skipped {item.json_path}: {exc.message}")
        return None
    doc = {k: v for k, v in loaded.doc.items() if k != "tables"}
    found = Found(item.display, item.json_path, doc, directory)
    found.row = index_row(found)
    return found


def _generations(con, files: list[str]) -> dict[str, str]:
    """The generation recorded in each parquet file's footer, read in one pass."""
    import duckdb

    if not files:
        return {}
    try:
        return dict(con.execute("SELECT file_name, decode(value) FROM parquet_kv_metadata($files) "
                                "WHERE decode(key) = $key", {"files": files, "key": GENERATION_KEY}).fetchall())
    except duckdb.Error:
        if len(files) == 1:
            return {}  # unreadable: its profile's sidecars are rebuilt
        out = {}
        for file in files:  # one bad file fails the batch: find it, keep the rest
            out.update(_generations(con, [file]))
        return out


def _signature(path: Path) -> list[int] | None:
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
        from libreyolo_profile.store.disk.cache import bytes_key, cache_root

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
    def signatures(json_path: Path) -> list | None:
        signatures = [_signature(json_path)] + [_signature(json_path.parent / f"{t}.parquet") for t in TABLES]
        return None if None in signatures else signatures

    def row(self, json_path: Path, signatures: list | None) -> dict | None:
        entry = self.entries.get(str(json_path))
        return entry[1] if signatures is not None and entry and entry[0] == signatures else None

    def remember(self, json_path: Path, signatures: list, row: dict) -> None:
        self.fresh[str(json_path)] = [signatures, row]

    def save(self) -> None:
        if self.fresh == self.entries:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # a fresh name opened exclusively: a planted symlink or a concurrent query is never written through
            fd, staged = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump({"version": _VERIFIED_VERSION, "profiles": self.fresh}, handle)
                os.replace(staged, self.path)
            except BaseException:
                os.unlink(staged)
                raise
        except OSError:
            pass  # a read-only cache only costs the next query a re-check


def _ours(item: Found) -> bool:
    schema, version = item.doc.get("schema"), item.doc.get("schema_version")
    if schema in (PROFILE_SCHEMA, REPEAT_SCHEMA) and isinstance(version, int) and version <= SCHEMA_VERSION:
        return True
    if schema in (PROFILE_SCHEMA, REPEAT_SCHEMA):
        _note(f"skipped {item.json_path}: written with profile schema v{version}; this libreyolo-profile reads "
              f"up to v{SCHEMA_VERSION}")
    elif schema != BUILTIN_SCHEMA:
        _note(f"skipped {item.json_path}: not a profile (schema {schema!r})")
    return False


def collect(roots: list[Path]) -> list[Found]:
    """Every readable profile under the roots, with the directory of sidecars that match it and its row."""
    import duckdb

    verified = _Verified(roots)
    result, unread = [], []
    named_files, signatures = [], {}
    for display, path in discover(roots):
        if path.name != PROFILE_FILE:  # a file named as a root: anything a reader accepts (trace, repeat file …)
            named_files.append(Found(display, path, None))
            continue
        signatures[path] = _Verified.signatures(path)  # before reading: a later rewrite is a new signature
        row = verified.row(path, signatures[path])
        if row is not None:
            verified.remember(path, signatures[path], row)
            result.append(Found(display, path, None, path.parent, row))
        else:
            unread.append((display, path))
    heads = _read_heads(unread)
    ours = [item for item in heads if _ours(item)]
    others = [item for item in heads if item.doc.get("schema") == BUILTIN_SCHEMA]
    checkable = [item for item in ours if signatures[item.json_path] is not None]
    con = duckdb.connect(":memory:")
    try:
        generations = _generations(con, [str(i.json_path.parent / f"{t}.parquet") for i in checkable for t in TABLES])
    finally:
        con.close()
    for item in ours:
        directory = item.json_path.parent
        generation = item.doc.get("generation")
        if generation and signatures[item.json_path] is not None and all(
                generations.get(str(directory / f"{t}.parquet")) == generation for t in TABLES):
            item.sidecars, item.row = directory, index_row(item)
            verified.remember(item.json_path, signatures[item.json_path], item.row)
            result.append(item)
        else:
            loaded = _full_load(item)  # sidecars missing or written for another profile.json
            if loaded is not None:
                result.append(loaded)
    for item in others + named_files:
        loaded = _full_load(item)
        if loaded is not None:
            result.append(loaded)
    verified.save()
    return sorted(result, key=lambda f: (f.display, str(f.json_path)))


def require_profiles(found: list[Found], roots: list[Path]) -> None:
    if not found:
        raise UsageError(f"no profile under {', '.join(str(r) for r in roots)} "
                         f"(a profile directory holds {PROFILE_FILE}; make one with `libreyolo profile infer` "
                         f"or `libreyolo profile import`)")


# ---------------------------------------------------------------------------------------------
# the views


def _int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _bool(value):
    return value if isinstance(value, bool) else None


def _text(value):
    return None if value is None else str(value)


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def index_row(item: Found) -> dict:
    """The `profiles` columns that come from the profile document (its tables are not needed)."""
    doc = item.doc
    settings = doc.get("settings") or {}
    env = doc.get("environment") or {}
    model = doc.get("model") or {}
    source = doc.get("source") or {}
    metrics = doc.get("metrics") or {}
    devices = doc.get("devices") or []
    verdict = doc.get("verdict") or {}
    command = doc.get("command")
    device_name = env.get("device_name") or (devices[0].get("name") if devices and isinstance(devices[0], dict) else None)
    if device_name is None and doc.get("device_type") == "cpu":
        device_name = env.get("cpu") or "CPU"
    row = {
        "kind": doc.get("kind"),
        "created": doc.get("created"),
        "device_type": doc.get("device_type"),
        "device_name": _text(device_name),
        "model_family": _text(model.get("family")),
        "model_size": _text(model.get("size")),
        "batch": _int(settings.get("batch")),
        "imgsz": _int(settings.get("imgsz")),
        "generation": _text(doc.get("generation")),
        "schema_version": _int(doc.get("schema_version")),
        "tables_version": _int(doc.get("tables_version")),
        "kind_inferred": _bool(doc.get("kind_inferred")),
        "producer": _text(doc.get("producer")),
        "source_type": _text(source.get("type")),
        "source_path": _text(source.get("path")),
        "device": _text(settings.get("device")),
        "half": _bool(settings.get("half")),
        "amp": _bool(settings.get("amp")),
        "workers": _int(settings.get("workers")),
        "warmup": _int(settings.get("warmup")),
        "repeat": _int(settings.get("repeat")) or len(doc.get("trials") or []) or None,
        "model_weights": _text(model.get("weights")),
        "weights_source": _text(model.get("weights_source")),
        "parameter_count": _int(model.get("parameter_count")),
        "torch_version": _text(env.get("torch")),
        "libreyolo_version": _text(env.get("libreyolo")),
        "command": shlex.join(str(c) for c in command) if isinstance(command, list) else _text(command),
        "next_step": _text(verdict.get("next_step")),
        "marks": sorted((doc.get("marks") or {}).keys()),
    }
    for name, sql_type, _, _ in metric_columns():
        value = metrics.get(name)
        row[name] = (_bool(value) if sql_type == "BOOLEAN" else _text(value) if sql_type == "VARCHAR"
                     else _number(value))
    return row


def register(con, found: list[Found]) -> list[str]:
    """Create profile_index, sidecar_files, <table>_files and the views on `con`; returns the parquet files."""
    from libreyolo_profile.sqlfiles import sql_text

    columns = profiles_columns()
    rows = [{"profile_id": i + 1, "profile": item.display, "profile_json": str(item.json_path),
             "sidecar_dir": str(item.sidecars), **item.row} for i, item in enumerate(found)]
    # Column names and types are this module's constants, never user input; the values are bound.
    select = ", ".join(f"unnest(${name}::{sql_type}[]) AS {name}" for name, sql_type, _, _ in columns)
    con.execute(f"CREATE OR REPLACE TEMP TABLE profile_index AS SELECT {select}",
                {name: [row[name] for row in rows] for name, _, _, _ in columns})
    files = {t: [str(item.sidecars / f"{t}.parquet") for item in found] for t in TABLES}
    con.execute("CREATE OR REPLACE TEMP TABLE sidecar_files AS "
                "SELECT unnest($ids::INTEGER[]) AS profile_id, unnest($tables::VARCHAR[]) AS table_name, "
                "unnest($files::VARCHAR[]) AS file",
                {"ids": [i + 1 for t in TABLES for i in range(len(found))],
                 "tables": [t for t in TABLES for _ in found],
                 "files": [f for t in TABLES for f in files[t]]})
    # Files of one tables_version share one schema; only a mix needs DuckDB to union them by column name
    # (which reads every file's footer up front, ~0.4 s per 1,000 files).
    mixed = len({item.row.get("tables_version") for item in found}) > 1
    for table, table_files in files.items():
        con.read_parquet(table_files, filename=True, union_by_name=mixed).to_view(f"{table}_files")
    con.execute(sql_text("cross_run_views.sql"))
    return [f for t in TABLES for f in files[t]]


def open_cross_run(roots: list[Path], database: str = ":memory:"):
    """(connection with the views, the profiles found)."""
    import duckdb

    found = collect(roots)
    require_profiles(found, roots)
    con = duckdb.connect(database)
    files = register(con, found)
    return con, found, files


