"""Where the cache is, and the private work directories under it: a floor below everything that
writes there, so the decoder (its spill files), ingest (DuckDB's spills) and the disk room (entries
being built) all make their scratch space the same way.

- all work happens in private directories under <cache>/work/ made by mkdtemp, named after the
  process (`<pid>-<purpose>-<host>-<random>`), removed at exit; what a killed process leaves there
  is swept by the next one;
- a cache that cannot be written (a read-only directory, a path through a regular file, another
  user's directory) degrades to one private temporary directory, removed at exit, with one note.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

# shutil, socket and tempfile are imported where they are used: a cached read (`get` on a trace read
# before) only asks for cache_root() and must not pay ~7 ms of imports for work it never does


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
    import tempfile

    why = reason if isinstance(reason, str) else (getattr(reason, "strerror", None) or str(reason))
    temporary = Path(tempfile.gettempdir())
    sweep_leftovers(temporary, _STANDIN_PREFIX)
    try:
        standin = Path(tempfile.mkdtemp(prefix=leftover_name("standin", _STANDIN_PREFIX)))
    except OSError as exc:
        raise UnanalysableError(
            f"cache {configured} not writable ({why}), nor the temporary directory "
            f"{temporary} ({exc.strerror or exc}): set XDG_CACHE_HOME to a writable "
            "directory"
        ) from None
    _remove_at_exit(standin)
    _REPLACED[configured] = standin
    sys.stderr.write(
        f"note: cache {configured} not writable: working in a temporary directory ({why}; "
        "set XDG_CACHE_HOME to a writable directory to keep what readers derive)\n"
    )
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
    import socket

    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def leftover_name(purpose: str, prefix: str = "") -> str:
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


def sweep_leftovers(directory: Path, prefix: str = "") -> None:
    """Remove what dead processes left in `directory`: entries named `<prefix><pid>-…-<host>-…`."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(prefix) and _is_stale(entry, entry.name[len(prefix) :]):
            _remove(Path(entry.path))


def _remove(path: Path) -> None:
    """Remove a file, a symlink (never its target) or a directory tree."""
    import shutil

    try:
        if path.is_symlink() or not path.is_dir():
            path.unlink(missing_ok=True)
        else:
            shutil.rmtree(path, ignore_errors=True)
    except OSError:
        pass


def _remove_at_exit(path: Path) -> None:
    import shutil  # noqa: F401 (loaded now, not first at interpreter exit, for _remove_created_here)

    if not _created_here:
        atexit.register(_remove_created_here)
    _created_here[path] = os.getpid()


def _remove_created_here() -> None:
    import shutil

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
        import tempfile

        work = root / WORK
        work.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=leftover_name(purpose), dir=work))

    path = writing(make)
    _remove_at_exit(path)
    return path


def _sweep_once(work: Path) -> None:
    if work not in _swept:
        _swept.add(work)
        sweep_leftovers(work)


@contextlib.contextmanager
def scratch(purpose: str) -> Iterator[Path]:
    """A `work_dir` removed when the block ends."""
    import shutil

    path = work_dir(purpose)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        _created_here.pop(path, None)
