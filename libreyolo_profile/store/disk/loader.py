"""Open whatever a reader is given as one profile document plus its sidecar directory.

Accepted (SPEC §3): profile.json, profile_repeat.json, profile_trace.json, a profile directory,
or any PyTorch profiler trace (.json/.json.gz) from any machine. `load_document` is the cheap
path (`get` needs nothing more); `sidecar_dir` finds or rebuilds the parquet tables.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from libreyolo_profile.errors import UnanalysableError, UsageError
from libreyolo_profile.store.disk.cache import bytes_key, trace_key
from libreyolo_profile.store.schema import (
    BUILTIN_SCHEMA,
    GENERATION_KEY,
    KINDS,
    PROFILE_FILE,
    PROFILE_SCHEMA,
    REPEAT_FILE,
    REPEAT_SCHEMA,
    SCHEMA_VERSION,
    TABLES,
    TRACE_FILE,
    parquet_columns,
)
from libreyolo_profile.store.workdir import cache_root

_OUR_SCHEMAS = (PROFILE_SCHEMA, REPEAT_SCHEMA)
_BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark (some editors write one): skipped, json.loads skips it too


class Loaded:
    """One profile document, where its sidecars live and what the user named. A plain class, not a
    dataclass: importing dataclasses (inspect, ast, dis) would cost `get` a third of its cold start."""

    __slots__ = ("_head", "doc", "home", "path")

    def __init__(self, doc: dict, home: Path | None, path: Path, head=None):
        self.doc = doc
        self.home = home  # directory holding the profile.json and its sidecars (None: none on disk)
        self.path = path  # what the user named
        self._head = head  # the typed head, once decoded (store/document/head.py)

    @property
    def head(self):
        """The document's head as typed msgspec Structs (store/document/head.py's ProfileHead), decoded once:
        at load where the head was checked, else on first use (a cached `get` reads `doc` and stays without
        msgspec). Read by attribute: `loaded.head.settings.batch`, `loaded.head.verdict.bound`."""
        if self._head is None:  # a cache entry, checked when it was written: `doc` is left as it is
            from libreyolo_profile.store.document.head import BadHead, check_head

            try:
                self._head = check_head(dict(self.doc))
            except BadHead as exc:
                raise UnanalysableError(f"{self.path}: not a valid profile: {exc}") from None
        return self._head

    def __repr__(self) -> str:
        return f"Loaded(home={self.home!r}, path={self.path!r}, kind={self.doc.get('kind')!r})"


def _check_readable(path: Path) -> None:
    """Exists, is readable, and is a directory or a regular file: a FIFO would block the first read
    forever and a device or socket never ends, so they are refused before anything opens them."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"no such file or directory: {path}") from None
    except PermissionError:
        raise UsageError(f"permission denied: {path}") from None
    except OSError as exc:  # a symlink loop, a name too long
        raise UsageError(f"cannot open {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        raise UsageError(f"{path} is {_special_file_kind(info.st_mode)}, not a regular file")
    if not os.access(path, os.R_OK):
        raise UsageError(f"permission denied: {path}")


def _special_file_kind(mode: int) -> str:
    from libreyolo_profile.store.decode.source import special_file_kind  # not at import: `get` stays light

    return special_file_kind(mode)


def _peek(path: Path, size: int = 4096) -> bytes:
    """The first bytes of a regular file. Opened non-blocking and checked again once open, so a FIFO
    swapped in after `_check_readable` cannot block us either."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except PermissionError:
        raise UsageError(f"permission denied: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory") from None
    except FileNotFoundError:
        raise UsageError(f"no such file or directory: {path}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UsageError(f"{path} is {_special_file_kind(mode)}, not a regular file")
        return os.read(fd, size)
    finally:
        os.close(fd)


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


def _validate(doc: dict, path: Path, ours: bool = False) -> dict:
    """The document, checked for what every reader reads; `ours`: a cache entry we converted and checked
    when we wrote it, whose head is not checked again (a cached `get` stays without msgspec)."""
    version = doc.get("schema_version")
    if not isinstance(version, int):
        raise UnanalysableError(f"{path}: profile without a valid schema_version")
    if version > SCHEMA_VERSION:
        raise UnanalysableError(
            f"{path} was written with profile schema v{version}; this libreyolo-profile reads "
            f"up to v{SCHEMA_VERSION}: upgrade libreyolo-profile to read it"
        )
    missing = [k for k in ("kind", "metrics", "tables", "verdict") if k not in doc]
    if missing:
        raise UnanalysableError(f"{path}: profile is missing {', '.join(missing)}")
    if doc["kind"] not in KINDS:  # it names the profile's directory on import: never anything but ours
        shown = json.dumps(doc["kind"], ensure_ascii=True)
        raise UnanalysableError(f"{path}: not a valid profile: kind {shown[:60]} is not one of {', '.join(KINDS)}")
    return doc if ours else checked_head(doc, path)


def _checked(doc: dict, path: Path, home: Path | None, named: Path) -> Loaded:
    """The Loaded of a document read from disk, its head decoded once, where it is checked."""
    doc = _validate(doc, path, ours=True)
    return Loaded(doc, home, named, checked_head(doc, path, typed=True))


def checked_head(doc: dict, path, typed: bool = False):
    """`doc`, once its head and embedded tables have the shape every reader reads (store/document/head.py);
    otherwise one line naming the field, exit 1. `typed`: the decoded head (a ProfileHead) instead."""
    from libreyolo_profile.store.document.head import BadHead, check_head, tables_problem

    try:
        head = check_head(doc)
    except BadHead as exc:
        raise UnanalysableError(f"{path}: not a valid profile: {exc}") from None
    problem = tables_problem(doc)
    if problem is not None:
        raise UnanalysableError(f"{path}: not a valid profile: {problem}")
    return head if typed else doc


def _profile_in_directory(directory: Path) -> Path:
    for name in (PROFILE_FILE, REPEAT_FILE):
        if (directory / name).is_file():
            return directory / name
    kinds = [directory / k / PROFILE_FILE for k in ("train", "infer") if (directory / k / PROFILE_FILE).is_file()]
    if len(kinds) == 1:
        return kinds[0]
    if kinds:
        raise UsageError(
            f"{directory} holds both a train and an infer profile: name one of "
            + " or ".join(str(k.parent) for k in kinds)
        )
    n = sum(p.name.endswith((".json", ".json.gz")) for p in directory.iterdir())  # a job's rank traces?
    job = f"; {n} traces, if one job's ranks: `libreyolo profile import --job {directory}` or lp.import_job" * (n > 1)
    raise UsageError(f"no profile in {directory} (no {PROFILE_FILE}, {REPEAT_FILE}, train/ or infer/ inside){job}")


def load_document(path: Path) -> Loaded:
    path = Path(path)
    _check_readable(path)
    if path.is_dir():
        target = _profile_in_directory(path)
        return _repeat_damage_warning(_checked(_read_document(target), target, target.parent, path))
    head = _peek(path).removeprefix(_BOM)
    if not head.strip():
        raise UnanalysableError(f"{path}: the file is empty")
    if head[:2] != b"\x1f\x8b":
        text = head.lstrip()
        schema = _schema_of(text)
        if schema in _OUR_SCHEMAS:
            return _repeat_damage_warning(_checked(_read_document(path), path, path.parent, path))
        if schema == BUILTIN_SCHEMA:
            from libreyolo_profile.store.document.builtin import builtin_document

            # converted once into the cache, like a foreign trace
            return load_converted(path, "builtin", builtin_document)
        if path.name == TRACE_FILE and (path.parent / PROFILE_FILE).is_file():
            # our own trace: its profile.json knows what the trace alone cannot (images, overhead)
            target = path.parent / PROFILE_FILE
            return _repeat_damage_warning(_checked(_read_document(target), target, path.parent, path))
    return _load_trace(path)


def _repeat_damage_warning(loaded: Loaded) -> Loaded:
    """Say again what reading the trace had to repair or recover: the first read said it while
    parsing; every later read of the profile (cached or imported) says it from its mark."""
    from libreyolo_profile.store.document.marks import DAMAGE_MARK  # plain constants: cheap on a cached read

    marks = loaded.doc.get("marks")
    note = marks.get(DAMAGE_MARK) if isinstance(marks, dict) else None
    if note:
        from libreyolo_profile.output.textsafe import safe_text

        print(safe_text(f"warning: {loaded.path}: {note}"), file=sys.stderr)
    return loaded


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
    rest = head[at + len(marker) :].lstrip()
    if not rest.startswith(b'"'):
        return None
    end = rest.find(b'"', 1)
    return rest[1:end].decode("utf-8", "replace") if end > 0 else None


def _cached_document(home: Path) -> dict | None:
    """The valid profile.json of a cache entry; None when absent, damaged or not a real directory."""
    from libreyolo_profile.store.disk.cache import is_entry

    if not is_entry(home) or not (home / PROFILE_FILE).is_file():
        return None
    try:
        return _validate(_read_document(home / PROFILE_FILE), home, ours=True)
    except (UnanalysableError, UsageError):
        return None  # a damaged entry is rebuilt


def load_converted(path: Path, area: str, convert) -> Loaded:
    """A foreign input (a trace, a built-in profile) converted once into the cache by `convert`,
    keyed by the file's identity and content; later reads open the cached profile directory.

    The entry is built in a private work directory and renamed into place whole; of concurrent
    readers converting the same input, the first to publish wins and the others read its entry
    (each conversion has its own generation, so an entry's sidecars match only its own document)."""
    from libreyolo_profile.store.disk.cache import publish_entry
    from libreyolo_profile.store.workdir import scratch, writing

    key = trace_key(path)
    home = cache_root() / area / key
    cached = _cached_document(home)
    if cached is not None:
        return Loaded(cached, home, path)
    doc = convert(path)
    head = checked_head(doc, path, typed=True)

    def publish(root: Path) -> Loaded:
        from libreyolo_profile.store.disk.writer import write_directory

        home = root / area / key
        with scratch(area) as work:
            staged = work / "entry"
            write_directory(doc, staged)
            if publish_entry(staged, home, lambda entry: _cached_document(entry) is not None, retired=work):
                return Loaded(doc, home, path, head)
        theirs = _cached_document(home)
        # theirs vanishing again cannot happen to a good entry; without one, sidecars are rebuilt from doc
        return Loaded(theirs, home, path) if theirs is not None else Loaded(doc, None, path, head)

    return writing(publish)


def _load_trace(path: Path) -> Loaded:
    parsed_now, kept = [], {}

    def convert(trace: Path) -> dict:
        # imported only on a cache miss: a cached trace is read without the decoder, ingest, pyarrow or DuckDB
        from libreyolo_profile.store.disk.kept_sections import ASKED
        from libreyolo_profile.store.document.from_trace import profile_with_sections

        parsed_now.append(trace)  # the parser says the damage itself
        doc, sections = profile_with_sections(trace, ASKED.get())
        kept.update(sections)
        return doc

    loaded = load_converted(path, "traces", convert)
    if not parsed_now:
        _repeat_damage_warning(loaded)
    if kept:  # the sections the reader reading the trace first asked for: kept now, not parsed again for it
        from libreyolo_profile.store.disk.kept_sections import keep_section

        for name, files in kept.items():
            keep_section(loaded.doc, name, loaded.head.rank, files)
    return loaded


def _sidecars_match(home: Path, loaded: Loaded, con=None) -> bool:
    return _sidecar_mismatch(home, loaded, con) is None


def _sidecar_mismatch(home: Path, loaded: Loaded, con=None) -> str | None:
    """Why the parquet files in `home` are not the tables of `loaded` (None: they are): one missing, corrupt,
    written for another generation or row count, or with columns other than the table's (schema.py). `con`:
    a DuckDB connection to ask on (default: DuckDB's own). The generation is the head's; the row counts are
    the embedded tables' (`doc["tables"]`, which the head leaves out)."""
    generation, tables = loaded.head.generation, loaded.doc["tables"]
    files = {table: home / f"{table}.parquet" for table in TABLES}
    try:  # every file's footer in three statements: one pair of statements per file was half a reader's work
        facts = _parquet_facts(list(files.values()), con) if all(f.is_file() for f in files.values()) else {}
    except Exception:  # one unreadable: the file-by-file pass below says which comes first
        facts = {}
    for table, file in files.items():
        if not file.is_file():
            return "missing"
        try:
            found_generation, rows, columns = facts.get(str(file)) or _parquet_facts([file], con)[str(file)]
        except Exception:  # unreadable or corrupt parquet: rebuild from profile.json
            return "corrupt"
        if found_generation != generation:
            return "stale"
        if columns != parquet_columns(table):  # written for this profile.json, but not by us
            return f"{file} holds other columns than the {table} table"
        expected = len(tables.get(table, {"rows": []})["rows"])
        if rows != expected:
            return f"{file} holds {rows} rows, its profile.json {expected}"
    return None


def _parquet_facts(files: list[Path], con=None) -> dict[str, tuple[str | None, int, list[tuple[str, str]]]]:
    """{file: (our generation key's value or None, rows, [(column, parquet physical type)])}, from the
    footers alone; raises on a file that is not parquet."""
    if con is None:
        import duckdb as con

    names = [str(file) for file in files]
    rows = dict(con.execute("SELECT file_name, num_rows FROM parquet_file_metadata($f)", {"f": names}).fetchall())
    generations = dict(
        con.execute(
            "SELECT file_name, CAST(value AS VARCHAR) FROM parquet_kv_metadata($f) WHERE CAST(key AS VARCHAR) = $key",
            {"f": names, "key": GENERATION_KEY},
        ).fetchall()
    )
    columns: dict[str, list[tuple[str, str]]] = {name: [] for name in names}
    for name, column, physical in con.execute(
        "SELECT file_name, name, type FROM parquet_schema($f) WHERE column_id > 0 ORDER BY file_name, column_id",
        {"f": names},
    ).fetchall():
        columns[name].append((column, physical))
    return {name: (generations.get(name), rows[name], columns[name]) for name in names}


def sidecar_dir(loaded: Loaded, con=None) -> Path:
    """The directory whose parquet files match the document: beside it, or rebuilt in the cache."""
    from libreyolo_profile.store.disk.cache import is_entry, publish_entry
    from libreyolo_profile.store.workdir import scratch, writing

    if loaded.home is not None:
        mismatch = _sidecar_mismatch(loaded.home, loaded, con)
        if mismatch is None:
            return loaded.home
        if mismatch not in ("missing", "corrupt", "stale"):  # the generation matched: say why it is not used
            from libreyolo_profile.output.textsafe import safe_line

            print(
                safe_line(f"libreyolo profile: {mismatch}: not used; rebuilt from {PROFILE_FILE} in the cache"),
                file=sys.stderr,
            )
    encoded = json.dumps(loaded.doc["tables"], sort_keys=True, default=str).encode()
    key = bytes_key(encoded + loaded.head.generation.encode())
    home = cache_root() / "sidecars" / key
    if is_entry(home) and _sidecars_match(home, loaded, con):
        return home  # a read-only cache still answers what it holds

    def rebuild(root: Path) -> Path:
        """Written whole in a private work directory, then renamed into place (see cache.publish_entry)."""
        from libreyolo_profile.store.disk.sidecars import write_sidecars

        home = root / "sidecars" / key
        with scratch("sidecars") as work:
            staged = work / "entry"
            staged.mkdir()
            try:
                write_sidecars(loaded.doc, staged)
            except (TypeError, ValueError, OverflowError, NotImplementedError) as exc:  # pyarrow's errors too
                message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise UnanalysableError(f"{loaded.path}: its tables cannot be written as parquet: {message}") from None
            publish_entry(staged, home, lambda entry: _sidecars_match(entry, loaded), retired=work)
        return home

    return writing(rebuild)
