"""Writing without harming what is already there.

Profile directories: everything is written into a unique staging directory beside the target.
`claim` then renames it into the first free name of LibreYOLO's runs/ convention (`infer`,
`infer2`, `infer3`, …) without ever replacing anything: renameat2(RENAME_NOREPLACE) where Linux
offers it, an exclusive mkdir of the name otherwise. `publish` (what `--exist-ok` asks for)
exchanges the staged directory with the target by renameat2(RENAME_EXCHANGE) (two renames
otherwise). A killed writer leaves at most a hidden staging directory, never a half-written profile.

Output files (`db`, `report`): `write_output` refuses a target that writing would harm (a symlink,
anything but a regular file, one of the command's own inputs, or a file that is not an earlier
output of the same kind unless --force), writes into a fresh directory beside the target and
renames the finished file into place.

A full disk (or quota) while writing is one line naming where (`no_space`): the staging is removed, so
what was there before is kept.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import shutil
import stat
import tempfile
import uuid
from pathlib import Path
from typing import Callable, Iterable, Iterator

from libreyolo_profile.errors import EXIT_UNANALYSABLE, ProfileError, UsageError

_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


# a full disk or quota; DuckDB passes the OS's words for them on inside its own errors, without the errno
_FULL_DISK = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def full_disk(exc: BaseException) -> str | None:
    """The OS's words when `exc`, or what it was raised from, is a full disk or quota; else None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _FULL_DISK:
            return exc.strerror or os.strerror(exc.errno)
        text = str(exc)
        words = next((os.strerror(code) for code in _FULL_DISK if os.strerror(code) in text), None)
        if words is not None:
            return words
        exc = exc.__cause__ or exc.__context__
    return None


def no_space(exc: BaseException, where: Path | str | None, what: str, exit_code: int) -> ProfileError | None:
    """The one-line error for a full disk met while writing a `what` (profile, report, database; None when
    `exc` is something else)."""
    words = full_disk(exc)
    if words is None:
        return None
    device = f"the device holding {where}" if where else "a device written to"
    return ProfileError(
        f"no space left on {device} ({words}): no {what} written, existing files left as they were; "
        "free some space and run again",
        exit_code,
    )


# a path that cannot be used as given: missing, a file where a directory is wanted, a directory where a
# file is, not allowed, read-only (the user's argument, exit 2, where a full disk or an I/O error is not)
_UNUSABLE_PATH = (
    errno.ENOENT,
    errno.ENOTDIR,
    errno.EEXIST,
    errno.EISDIR,
    errno.EACCES,
    errno.EPERM,
    errno.EROFS,
    errno.ELOOP,
    errno.ENAMETOOLONG,
)


def unusable_path(exc: BaseException) -> UsageError | None:
    """The one-line usage error (exit 2) for an OSError naming a path that cannot be used; else None."""
    if isinstance(exc, OSError) and exc.errno in _UNUSABLE_PATH and exc.filename:
        return UsageError(f"cannot use {exc.filename}: {exc.strerror or os.strerror(exc.errno)}")
    return None


def staging_dir(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    path = target.parent / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    return path


def _renameat2(source: Path, destination: Path, flags: int) -> int | None:
    """0 on success, else the errno renameat2 failed with; None where the C library lacks renameat2."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return None
    result = renameat2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(destination), flags)
    return 0 if result == 0 else ctypes.get_errno()


def _exchange(a: Path, b: Path) -> bool:
    return _renameat2(a, b, _RENAME_EXCHANGE) == 0


# ---------------------------------------------------------------------------------------------
# profile directories


def numbered(target: Path) -> Iterator[Path]:
    """`target`, then `target2`, `target3`, …: LibreYOLO's trainer names its runs/ directories so."""
    yield target
    n = 2
    while True:
        yield target.with_name(f"{target.name}{n}")
        n += 1


def _rename_noreplace(staged: Path, candidate: Path) -> bool:
    """Rename `staged` to `candidate` if nothing is there; False when the name is taken."""
    failure = _renameat2(staged, candidate, _RENAME_NOREPLACE)
    if failure == 0:
        return True
    if failure in (errno.EEXIST, errno.ENOTEMPTY):
        return False
    if failure not in (None, errno.ENOSYS, errno.EINVAL):  # EINVAL: the filesystem lacks the flag
        raise OSError(failure, os.strerror(failure), str(candidate))
    # No renameat2: an exclusive mkdir claims the name, and a directory renames onto its own empty
    # placeholder. Nobody else can be using the placeholder: they saw the name taken.
    try:
        os.mkdir(candidate)
    except FileExistsError:
        return False
    try:
        os.rename(staged, candidate)
    except BaseException:
        os.rmdir(candidate)
        raise
    return True


def claim(staged: Path, target: Path) -> Path:
    """Move `staged` into the first free name of `target`, `target2`, `target3`, … and return it.
    Nothing already there is ever replaced, and of concurrent writers each gets its own name."""
    for candidate in numbered(target):
        if _rename_noreplace(staged, candidate):
            return candidate
    raise AssertionError("unreachable: numbered() never ends")


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


# ---------------------------------------------------------------------------------------------
# output files

_FILE_TYPES = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind_of(mode: int) -> str:
    return next((name for test, name in _FILE_TYPES if test(mode)), "not a regular file")


def _input_identities(inputs: Iterable[Path | None]) -> set[tuple[int, int]]:
    identities = set()
    for path in inputs:
        if path is None:
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        identities.add((st.st_dev, st.st_ino))
    return identities


def check_output(
    out: Path, *, what: str, ours: Callable[[Path], bool], inputs: Iterable[Path | None] = (), force: bool = False
) -> None:
    """Refuse (exit 2) an output path whose existing entry writing would harm. Never follows a symlink.

    `what` names the output in messages ("database", "report"); `ours(path)` says whether an existing
    regular file is an earlier output of the same kind, which is replaced without --force."""
    out = Path(out)
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(
            f"{out} is a symbolic link: the {what} is never written through a link; name the file itself or a new path"
        )
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{out} is {_kind_of(st.st_mode)}, not a regular file: name a new {what} file to write")
    if (st.st_dev, st.st_ino) in _input_identities(inputs):
        raise UsageError(f"{out} is an input of this command: the {what} must go to another file")
    if not force and not ours(out):
        raise UsageError(
            f"{out} exists and is not a {what} written by libreyolo profile; "
            f"pass --force to replace it, or name a new file"
        )


def write_output(
    out: Path,
    write: Callable[[Path], None],
    *,
    what: str,
    ours: Callable[[Path], bool],
    inputs: Iterable[Path | None] = (),
    force: bool = False,
    mode: int | None = None,
) -> Path:
    """Check `out` (see check_output), let `write(path)` create the file at a fresh path in a new
    directory beside `out`, then rename it into place. The temporary directory goes on any failure."""
    out = Path(out)
    inputs = list(inputs)
    check_output(out, what=what, ours=ours, inputs=inputs, force=force)
    directory = out.parent if str(out.parent) else Path(".")
    if not directory.is_dir():
        raise UsageError(f"cannot write {out}: no such directory {directory}")
    try:
        scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=directory))
    except OSError as exc:
        raise no_space(exc, out, what, EXIT_UNANALYSABLE) or UsageError(
            f"cannot write {out}: {exc.strerror or exc}"
        ) from None
    try:
        staged = scratch / out.name
        write(staged)
        if mode is not None:
            os.chmod(staged, mode)
        # the target may have changed while we wrote: check again right before the rename
        check_output(out, what=what, ours=ours, inputs=inputs, force=force)
        os.replace(staged, out)
    except Exception as exc:
        full = no_space(exc, out, what, EXIT_UNANALYSABLE)
        if full is None:
            raise
        raise full from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


_DUCKDB_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file


def is_profile_database(path: Path) -> bool:
    """A .duckdb written by `libreyolo profile db`: its `about` table names libreyolo-profile.
    Opened read-only, so checking changes nothing."""
    try:
        with open(path, "rb") as handle:
            if handle.read(12)[8:12] != _DUCKDB_MAGIC:
                return False
    except OSError:
        return False
    import duckdb

    try:
        with duckdb.connect(str(path), read_only=True) as con:
            row = con.execute("SELECT producer FROM about LIMIT 1").fetchone()
    except duckdb.Error:
        return False
    return bool(row) and isinstance(row[0], str) and row[0].startswith("libreyolo-profile")
