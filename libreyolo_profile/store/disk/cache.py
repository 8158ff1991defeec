"""Where readers put what they derive (rebuilt sidecars, ingested foreign traces): never beside
the input, always under $XDG_CACHE_HOME/libreyolo-profile (default ~/.cache/libreyolo-profile).

Writing into the cache never harms anything and never collides:
- all work (ingest spill files, DuckDB spills, entries being built) happens in private directories
  under <cache>/work/ made by mkdtemp, named after the process (`<pid>-<purpose>-<host>-<random>`),
  removed at exit; what a killed process leaves there is swept by the next one;
- an entry is built whole in such a directory and renamed into place, never replacing a good one,
  so a concurrent reader sees nothing or a complete entry (`publish_entry`);
- a cache that cannot be written (a read-only directory, a path through a regular file, another
  user's directory) degrades to one private temporary directory, removed at exit, with one note.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import hashlib
import os
import re
import shutil
import socket
import sys
import tempfile
import time
from functools import cache
from pathlib import Path
from typing import Callable, Iterator

_SAMPLE = 1 << 16


@cache
def analysis_version() -> str:
    """What a cached analysis depends on: this package's version and the text of every SQL file and
    of the store and analysis code, so an edited metric or rule invalidates old cache entries."""
    import libreyolo_profile.sql
    import libreyolo_profile.store
    from libreyolo_profile import __version__

    digest = hashlib.sha256(__version__.encode())
    for package, pattern in ((libreyolo_profile.sql, "*.sql"), (libreyolo_profile.store, "*.py")):
        top = Path(package.__file__).parent
        for entry in sorted(top.rglob(pattern)):  # every room of the store, not only its top floor
            digest.update(str(entry.relative_to(top)).encode() + entry.read_bytes())
    return digest.hexdigest()[:12]


def configured_root() -> Path:
    """The cache the user asked for: $XDG_CACHE_HOME/libreyolo-profile, default ~/.cache/libreyolo-profile."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "libreyolo-profile"


# configured root -> the private temporary directory used instead, once that root failed a write
_REPLACED: dict[Path, Path] = {}


def cache_root() -> Path:
    """The cache in use: the configured one, or this process's temporary stand-in once writing to
    the configured one failed. Reading needs no write access, so a read-only cache still answers hits."""
    configured = configured_root()
    if configured in _REPLACED:
        return _REPLACED[configured]
    _sweep_once(configured / WORK)  # every run that touches the cache clears what killed ones left
    return configured


def trace_key(path: Path) -> str:
    """The file's identity (path, size, mtime, inode) and a content sample: a changed file is a new key."""
    st = os.stat(path)
    digest = hashlib.sha256()
    digest.update(f"{analysis_version()}|{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}".encode())
    with open(path, "rb") as handle:
        digest.update(handle.read(_SAMPLE))
        if st.st_size > 2 * _SAMPLE:
            handle.seek(-_SAMPLE, os.SEEK_END)
            digest.update(handle.read(_SAMPLE))
    return digest.hexdigest()[:32]


def bytes_key(data: bytes) -> str:
    return hashlib.sha256(analysis_version().encode() + data).hexdigest()[:32]


# ------------------------------------------------------------------------------------------------
# a cache that cannot be written: one private temporary directory instead

_STANDIN_PREFIX = "libreyolo-profile-cache-"


def fall_back(reason: BaseException | str) -> Path:
    """Stop writing to the configured cache for the rest of this process: work in a private temporary
    directory (removed at exit) instead, and say so once on stderr. Returns the stand-in root."""
    from libreyolo_profile.errors import UnanalysableError

    configured = configured_root()
    if configured in _REPLACED:
        return _REPLACED[configured]
    why = reason if isinstance(reason, str) else (getattr(reason, "strerror", None) or str(reason))
    temporary = Path(tempfile.gettempdir())
    _sweep(temporary, _STANDIN_PREFIX)
    try:
        standin = Path(tempfile.mkdtemp(prefix=_leftover_name("standin", _STANDIN_PREFIX)))
    except OSError as exc:
        raise UnanalysableError(f"cache {configured} not writable ({why}), nor the temporary directory "
                                f"{temporary} ({exc.strerror or exc}): set XDG_CACHE_HOME to a writable "
                                "directory") from None
    _remove_at_exit(standin)
    _REPLACED[configured] = standin
    sys.stderr.write(f"note: cache {configured} not writable: working in a temporary directory ({why}; "
                     "set XDG_CACHE_HOME to a writable directory to keep what readers derive)\n")
    return standin


def writing(action: Callable[[Path], object]):
    """`action(cache_root())`, once more in the temporary stand-in if the cache cannot be written."""
    root = cache_root()
    try:
        return action(root)
    except OSError as exc:
        if root != configured_root():
            raise  # the stand-in failed too: nothing left to fall back to
        return action(fall_back(exc))


# ------------------------------------------------------------------------------------------------
# private work directories, and what killed processes left of theirs

WORK = "work"
# a leftover older than this is swept even if its pid is alive again (pids are reused) or it
# comes from another host sharing the cache; no ingest runs this long
_STALE_SECONDS = 6 * 3600
_LEFTOVER = re.compile(r"^(?P<pid>\d+)-(?P<purpose>[a-z0-9_]+)-(?P<host>[0-9a-f]{8})-")
_created_here: dict[Path, int] = {}  # directory -> the pid that made it
_swept: set[Path] = set()  # work directories already swept by this process


@cache
def host_tag() -> str:
    """This host, as named in work directories: a leftover from another host sharing the cache is
    swept by age only, its pid meaning nothing here."""
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _leftover_name(purpose: str, prefix: str = "") -> str:
    """A mkdtemp prefix that tells a later sweep whose directory this is: `<pid>-<purpose>-<host>-`."""
    return f"{prefix}{os.getpid()}-{re.sub(r'[^a-z0-9_]', '_', purpose.lower())}-{host_tag()}-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def _is_stale(entry: os.DirEntry, name: str) -> bool:
    match = _LEFTOVER.match(name)
    if match is None:
        return False  # not ours: never touched
    pid = int(match["pid"])
    if pid == os.getpid():
        return False
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    if st.st_uid != os.geteuid():
        return False
    if match["host"] == host_tag() and not _pid_alive(pid):
        return True
    return time.time() - st.st_mtime > _STALE_SECONDS


def _sweep(directory: Path, prefix: str = "") -> None:
    """Remove what dead processes left in `directory`: entries named `<prefix><pid>-…-<host>-…`."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(prefix) and _is_stale(entry, entry.name[len(prefix):]):
            _remove(Path(entry.path))


def _remove(path: Path) -> None:
    """Remove a file, a symlink (never its target) or a directory tree."""
    try:
        if path.is_symlink() or not path.is_dir():
            path.unlink(missing_ok=True)
        else:
            shutil.rmtree(path, ignore_errors=True)
    except OSError:
        pass


def _remove_at_exit(path: Path) -> None:
    if not _created_here:
        atexit.register(_remove_created_here)
    _created_here[path] = os.getpid()


def _remove_created_here() -> None:
    # a forked child inherits the registry: only the process that made a directory removes it
    for path, pid in list(_created_here.items()):
        if pid == os.getpid():
            shutil.rmtree(path, ignore_errors=True)
            del _created_here[path]


def work_dir(purpose: str = "work") -> Path:
    """A new private directory under <cache>/work (mode 0700, a name nobody else can hold), removed at
    exit if its user does not remove it first. A cache that cannot be written is replaced by the
    temporary stand-in (see `fall_back`)."""

    def make(root: Path) -> Path:
        work = root / WORK
        work.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=_leftover_name(purpose), dir=work))

    path = writing(make)
    _remove_at_exit(path)
    return path


def _sweep_once(work: Path) -> None:
    if work not in _swept:
        _swept.add(work)
        _sweep(work)


@contextlib.contextmanager
def scratch(purpose: str) -> Iterator[Path]:
    """A `work_dir` removed when the block ends."""
    path = work_dir(purpose)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        _created_here.pop(path, None)


# ------------------------------------------------------------------------------------------------
# publishing an entry whole


def is_entry(path: Path) -> bool:
    """A real directory: a symlink planted at an entry's name is never read or written through."""
    return path.is_dir() and not path.is_symlink()


def publish_entry(staged: Path, home: Path, good: Callable[[Path], bool], retired: Path) -> bool:
    """Rename the finished directory `staged` to `home` unless a good entry is already there.

    True: ours is published. False: an equivalent entry published by a concurrent reader is kept
    (good entries are never replaced, so nobody reading one loses it). Whatever else sits at
    `home` (a damaged entry, a planted symlink or file) is moved into `retired`, a work directory
    about to be removed, and never followed."""
    home.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(8):
        try:
            os.rename(staged, home)
            return True
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
                raise
        if is_entry(home) and good(home):
            return False
        moved = retired / f"retired-{attempt}"
        try:
            os.rename(home, moved)  # a symlink is moved itself, not its target
        except FileNotFoundError:
            continue  # someone else retired it first
        if is_entry(moved) and good(moved):
            # a concurrent reader replaced the damaged entry between our check and the move: put
            # its good entry back rather than delete it from under whoever reads it
            with contextlib.suppress(OSError):
                os.rename(moved, home)
    raise OSError(errno.EBUSY, f"{home} keeps changing under concurrent writers")
