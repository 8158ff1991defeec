"""Finding the profiles under some roots for the cross-run views: every profile.json below them,
hidden directories skipped, and only regular files ever opened (a FIFO named profile.json would
block the read forever).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.store.schema import PROFILE_FILE


def skip_note(text: str) -> None:
    """One line on stderr about a profile left out (unreadable, not ours, too new)."""
    sys.stderr.write(safe_line(f"libreyolo profile: {text}") + "\n")


_SPECIAL_FILES = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _special(mode: int) -> str | None:
    """What a file that is neither a regular file nor a directory is ("a FIFO" …); None for those two."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None  # the common case, answered first: discovery asks for every profile.json
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


def walk_visible(root: Path | str) -> Iterator[tuple[str, list[str]]]:
    """(directory, names of its entries that are not directories) for `root` and every directory below
    it, top-down in name order, hidden directories skipped and links to directories not entered: what
    os.walk gives, without its recursion (Python 3.11's os.walk recurses, so a tree 1,000 directories
    deep raised RecursionError)."""
    stack = [os.fspath(root)]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as scan:
                entries = list(scan)
        except OSError:
            continue  # unreadable, or gone: os.walk skips it too
        subdirectories, files = [], []
        for entry in entries:
            try:
                is_directory = entry.is_dir()
            except OSError:
                is_directory = False
            (subdirectories if is_directory else files).append(entry.name)
        yield directory, files
        for name in sorted((d for d in subdirectories if not d.startswith(".")), reverse=True):
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                stack.append(path)


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
            for directory, filenames in walk_visible(root):
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
