"""Small typed JSON entries a measuring command remembers for the next one, under the reader cache
($XDG_CACHE_HOME/libreyolo-profile/<area>/<key>.json): the FLOP count of an architecture at an input shape
(flop_cache.py) and the CPU's measured roof (cpu_peak.py). Best effort both ways: an entry that is
absent, a link, not a regular file, larger than a few KiB or not of its type reads as None (measured
again); a cache that cannot be written costs a measurement next time, nothing else. An entry is written
under a fresh name and renamed into place, so a reader never sees half of one."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import TypeVar

import msgspec

from libreyolo_profile.store.workdir import cache_root

MAX_BYTES = 4096  # an entry is a few numbers and a sentence
T = TypeVar("T")


def entry_path(area: str, key: str) -> Path:
    return cache_root() / area / f"{key}.json"


def read_entry(entry: Path, kind: type[T]) -> T | None:
    """The entry decoded as `kind` (a msgspec type: its constraints are checked), or None."""
    try:
        fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a FIFO must not block a run
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        raw = os.read(fd, MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return msgspec.json.decode(raw, type=kind)
    except msgspec.DecodeError:  # not JSON, or not of its type (ValidationError is a DecodeError)
        return None


def write_entry(entry: Path, value) -> None:
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, staged = tempfile.mkstemp(prefix=f".{entry.parent.name}-", suffix=".tmp", dir=entry.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(msgspec.json.encode(value))
            os.replace(staged, entry)  # replaces a link or file of that name itself, never what a link points to
        except BaseException:
            Path(staged).unlink(missing_ok=True)
            raise
    except OSError:
        return
