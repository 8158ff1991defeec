"""The bytes of a trace file: read in blocks, gzip decompressed on the fly (by `isal` when installed,
else zlib) under a cap on inflation, and special files (FIFOs, devices, sockets) refused before
anything opens them."""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path
from typing import Iterator

from libreyolo_profile.errors import UnanalysableError, UsageError
from libreyolo_profile.store.decode.limits import ENV_MAX_INFLATED, MAX_INFLATION_RATIO, DecodeSizes, Limits, mib


def _gzip_decompressor():
    try:  # isal (PyPI `isal`) decompresses ~3x faster than zlib; optional
        if os.environ.get("LIBREYOLO_PROFILE_NO_ISAL"):
            raise ImportError
        from isal import isal_zlib

        return isal_zlib.decompressobj(31), isal_zlib.error
    except ImportError:
        return zlib.decompressobj(31), zlib.error


class TraceSource:
    """Decompressed blocks of a file (or of the byte range [start, end) of a plain file)."""

    def __init__(
        self,
        path: Path,
        start: int = 0,
        end: int | None = None,
        limits: Limits | None = None,
        sizes: DecodeSizes | None = None,
    ):
        self.path = path
        self.limits = limits or Limits()
        self.block_bytes = (sizes or DecodeSizes()).block_bytes
        try:
            self.handle = open(path, "rb")
        except FileNotFoundError:
            raise UsageError(f"no such file: {path}") from None
        except PermissionError:
            raise UsageError(f"permission denied: {path}") from None
        except IsADirectoryError:
            raise UsageError(f"{path} is a directory, not a trace") from None
        except OSError as exc:
            raise UnanalysableError(f"{path}: cannot read the trace ({exc.strerror or exc})") from None
        self.size = os.fstat(self.handle.fileno()).st_size
        self.gzip = self.handle.read(2) == b"\x1f\x8b"
        self.handle.seek(start)
        self.remaining = (end if end is not None else self.size) - start
        self.decompressor, self.gzip_error = _gzip_decompressor() if self.gzip else (None, None)
        self.truncated_gzip = False
        self.corrupt_gzip: str | None = None
        self.inflated = 0
        self.inflated_cap = self.limits.inflated_cap(self.size)

    def position(self) -> int:
        return self.handle.tell()

    def blocks(self) -> Iterator[bytes | memoryview]:
        """Blocks of JSON text; a memoryview is only valid until the next block is asked for."""
        block_bytes = self.block_bytes
        buffer = bytearray(block_bytes)  # reused: fresh 4 MB objects would page-fault on every read
        try:
            while self.remaining > 0:
                if not self.gzip:
                    view = memoryview(buffer)[: min(block_bytes, self.remaining)]
                    n = self.handle.readinto(view)
                    if not n:
                        break
                    self.remaining -= n
                    yield view[:n]
                    continue
                raw = self.handle.read(block_bytes // 4)
                if not raw:
                    break
                self.remaining -= len(raw)
                yield from self._inflate(raw)
            if self.gzip and not self.decompressor.eof:
                self.truncated_gzip = True
        except OSError as exc:
            raise UnanalysableError(f"{self.path}: cannot read the trace ({exc.strerror or exc})") from None
        finally:
            self.handle.close()

    def _inflate(self, raw: bytes) -> Iterator[bytes]:
        while raw:
            try:
                out = self.decompressor.decompress(raw, self.block_bytes)
            except self.gzip_error as exc:
                self.corrupt_gzip = str(exc)
                self.remaining = 0
                return
            if out:
                self.inflated += len(out)
                if self.inflated > self.inflated_cap:
                    self._refuse_bomb()
                yield out
            if self.decompressor.eof:
                raw = self.decompressor.unused_data
                if raw.lstrip(b"\0"):  # a concatenated gzip member follows
                    self.decompressor, _ = _gzip_decompressor()
                else:
                    return
            else:
                raw = self.decompressor.unconsumed_tail

    def _refuse_bomb(self):
        raise UnanalysableError(
            f"{self.path}: the gzip inflates past {mib(self.inflated_cap)} "
            f"({self.inflated_cap / max(self.size, 1):,.0f}x its {self.size:,} bytes; real traces inflate under "
            f"{MAX_INFLATION_RATIO}x): refused as a decompression bomb (set {ENV_MAX_INFLATED} to read it anyway)"
        )


def regular_file_size(path: Path) -> int:
    """The size of the trace, refusing before any open what would block or never end."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except PermissionError:
        raise UsageError(f"permission denied: {path}") from None
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        # opening a FIFO blocks until a writer comes; a device or socket never ends
        raise UsageError(f"{path} is {special_file_kind(info.st_mode)}, not a regular file")
    return info.st_size


def special_file_kind(mode: int) -> str:
    """What a file that is not a regular file or directory is, in words."""
    for test, kind in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def is_gzip(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(2) == b"\x1f\x8b"
    except PermissionError:
        raise UsageError(f"permission denied: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory, not a trace") from None
