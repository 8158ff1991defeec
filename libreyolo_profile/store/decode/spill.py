"""Where decoded batches go: kept in memory, and spilled to a memory-mapped Arrow file once they grow
large, so the table of a big trace is backed by the page cache instead of anonymous memory."""

from __future__ import annotations

import mmap
import os
import shutil
import weakref
from pathlib import Path

import pyarrow as pa

from libreyolo_profile.store.decode.events import EVENT_SCHEMA
from libreyolo_profile.store.decode.limits import DecodeSizes
from libreyolo_profile.store.workdir import work_dir


class ArrowSink:
    """Record batches in memory until they pass `spill_bytes`, then in an Arrow file in `spill_dir`
    (default: a private work directory under the cache, swept by the next run if we are killed)."""

    def __init__(self, spill_dir: Path | None = None, sizes: DecodeSizes | None = None):
        self.batches: list[pa.RecordBatch] = []
        self.nbytes = 0
        self.spill_dir = spill_dir
        self.owns_spill_dir = False  # made here, so removed here
        self.spill_bytes = (sizes or DecodeSizes()).spill_bytes
        self.writer = None
        self.file: Path | None = None

    def add(self, batch: pa.RecordBatch) -> None:
        if self.writer is not None:
            self.writer.write_batch(batch)
            return
        self.batches.append(batch)
        self.nbytes += batch.nbytes
        if self.nbytes > self.spill_bytes:
            self.spill()

    def spill(self) -> None:
        """From now on write every batch to the Arrow file (what is held so far first)."""
        if self.spill_dir is None:
            self.spill_dir = work_dir("ingest")
            self.owns_spill_dir = True
        self.file = self.spill_dir / f"events-{os.getpid()}.arrow"
        self.writer = pa.ipc.new_file(self.file, EVENT_SCHEMA)
        for batch in self.batches:
            self.writer.write_batch(batch)
        self.batches = []

    def table(self) -> pa.Table:
        if self.writer is None:
            return pa.Table.from_batches(self.batches, schema=EVENT_SCHEMA)
        self.writer.close()
        return map_table(self.file)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.owns_spill_dir:
            shutil.rmtree(self.spill_dir, ignore_errors=True)


# the maps decoded tables live in, as (map, its first address, its length): release_pages finds a batch's map
_MAPS: list[tuple[weakref.ref, int, int]] = []


def map_table(file: Path) -> pa.Table:
    """The Arrow file as a table backed by the page cache; the file is unlinked once mapped."""
    with open(file, "rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    file.unlink(missing_ok=True)
    buffer = pa.py_buffer(mapped)  # the table's buffers are slices of it, and keep the map alive
    _MAPS[:] = [entry for entry in _MAPS if entry[0]() is not None]
    _MAPS.append((weakref.ref(mapped), buffer.address, len(mapped)))
    return pa.ipc.open_file(pa.BufferReader(buffer)).read_all()


def release_pages(batch: pa.RecordBatch) -> None:
    """Let go of the mapped pages holding `batch` once it has been read: the kernel reads them back from
    the file should anything touch them again. Without this a one-pass read of a mapped table keeps all of
    it resident to the end. A batch held in ordinary memory is left alone."""
    spans = [(b.address, b.address + b.size) for column in batch.columns for b in column.buffers() if b and b.size]
    if not spans or not hasattr(mmap, "MADV_DONTNEED"):  # a platform without madvise keeps the pages
        return
    low, high = min(s for s, _ in spans), max(e for _, e in spans)
    for ref, base, length in _MAPS:
        mapped = ref()
        if mapped is not None and base <= low and high <= base + length:
            start = (low - base) // mmap.PAGESIZE * mmap.PAGESIZE
            mapped.madvise(mmap.MADV_DONTNEED, start, high - base - start)
            return
