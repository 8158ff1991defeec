"""Publish a finished directory in one step, so a profile is either the old one or the new one.

Everything is written into a unique staging directory beside the target, then exchanged with
the target by renameat2(RENAME_EXCHANGE) where Linux offers it (two renames otherwise). A
killed writer leaves at most a hidden staging directory, never a half-written profile, and of
two concurrent writers the later one wins whole.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import uuid
from pathlib import Path

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def staging_dir(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    path = target.parent / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    return path


def _exchange(a: Path, b: Path) -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return result == 0


def publish(staged: Path, target: Path, keep: tuple[str, ...] = ()) -> None:
    """Make `staged` the new `target`. Files in the old target that the new one does not have
    and that are not in `keep` (names the writer regenerates) are carried over, so nothing a user
    put there is lost."""
    if target.exists():
        for item in target.iterdir():
            if item.name not in keep and not (staged / item.name).exists() and not item.name.startswith("."):
                if item.is_dir():
                    shutil.copytree(item, staged / item.name)
                else:
                    shutil.copy2(item, staged / item.name)
        if _exchange(staged, target):
            shutil.rmtree(staged, ignore_errors=True)  # `staged` now holds the old profile
            return
        retired = target.parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
        os.rename(target, retired)
        os.rename(staged, target)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        try:
            os.rename(staged, target)
        except OSError:  # a concurrent writer published first: take its place whole
            publish(staged, target, keep)
