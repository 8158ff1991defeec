"""Where readers put what they derive (rebuilt sidecars, ingested foreign traces): never beside
the input, always under $XDG_CACHE_HOME/libreyolo-profile (default ~/.cache/libreyolo-profile)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

ANALYSIS_VERSION = "1"  # bump when ingest or metrics SQL changes what a cached trace profile holds
_SAMPLE = 1 << 16


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "libreyolo-profile"


def trace_key(path: Path) -> str:
    """The file's identity (path, size, mtime, inode) and a content sample: a changed file is a new key."""
    st = os.stat(path)
    digest = hashlib.sha256()
    digest.update(f"{ANALYSIS_VERSION}|{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}".encode())
    with open(path, "rb") as handle:
        digest.update(handle.read(_SAMPLE))
        if st.st_size > 2 * _SAMPLE:
            handle.seek(-_SAMPLE, os.SEEK_END)
            digest.update(handle.read(_SAMPLE))
    return digest.hexdigest()[:32]


def bytes_key(data: bytes) -> str:
    return hashlib.sha256(ANALYSIS_VERSION.encode() + data).hexdigest()[:32]
