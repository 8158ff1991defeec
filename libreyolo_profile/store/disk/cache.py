"""Where readers put what they derive (rebuilt sidecars, ingested foreign traces): never beside
the input, always under $XDG_CACHE_HOME/libreyolo-profile (default ~/.cache/libreyolo-profile).

Writing into the cache never harms anything and never collides:
- all work (ingest spill files, DuckDB spills, entries being built) happens in private directories
  under <cache>/work/, swept after a killed process, and a cache that cannot be written degrades to a
  private temporary directory: both in store/workdir.py, a floor below, since the decoder and ingest
  make their scratch space there too;
- an entry is built whole in such a directory and renamed into place, never replacing a good one,
  so a concurrent reader sees nothing or a complete entry (`publish_entry`);
- an entry's key names the analysis code and SQL it was made with (`analysis_version`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from collections.abc import Callable  # not typing: its import alone costs a cold `get` ~3 ms
from functools import cache
from pathlib import Path

from libreyolo_profile.sqlfiles import sql_directory

_SAMPLE = 1 << 16


_PACKAGE = Path(__file__).resolve().parents[2]  # libreyolo_profile/, found without importing anything


@cache
def analysis_version() -> str:
    """What a cached analysis depends on: this package's version and the text of every SQL file and
    of the store and analysis code, so an edited metric or rule invalidates old cache entries.

    Every read of a cached trace pays for it (~60 small files, about 1 ms), so it walks with
    os.walk rather than Path.rglob and imports nothing."""
    from libreyolo_profile import __version__

    digest = hashlib.sha256(__version__.encode())
    for top, suffix in ((sql_directory(), ".sql"), (_PACKAGE / "store", ".py")):
        for entry in _files_under(top, suffix):  # every room of the store, not only its top floor
            digest.update(entry.relative_to(top).as_posix().encode() + entry.read_bytes())
    digest.update((_PACKAGE / "sqlmodules.py").read_bytes())  # the order the SQL runs in
    return digest.hexdigest()[:12]


def _files_under(top: Path, suffix: str) -> list[Path]:
    """Files ending in `suffix` at any depth under `top`, in a stable order (pycache skipped)."""
    found = []
    for directory, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        found += [Path(directory) / name for name in filenames if name.endswith(suffix)]
    return sorted(found, key=lambda path: path.relative_to(top).as_posix())


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
