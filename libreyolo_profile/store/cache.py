"""Where readers put what they derive (rebuilt sidecars, ingested foreign traces): never beside
the input, always under $XDG_CACHE_HOME/libreyolo-profile (default ~/.cache/libreyolo-profile)."""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

_SAMPLE = 1 << 16


@cache
def analysis_version() -> str:
    """What a cached analysis depends on: this package's version and the text of every SQL file and
    of the store and analysis code, so an edited metric or rule invalidates old cache entries."""
    from importlib.resources import files

    from libreyolo_profile import __version__

    digest = hashlib.sha256(__version__.encode())
    for package, suffix in (("libreyolo_profile.sql", ".sql"), ("libreyolo_profile.store", ".py"),
                            ("libreyolo_profile.analysis", ".py")):
        for entry in sorted(files(package).iterdir(), key=lambda e: e.name):
            if entry.name.endswith(suffix):
                digest.update(entry.name.encode() + entry.read_bytes())
    return digest.hexdigest()[:12]


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "libreyolo-profile"


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
