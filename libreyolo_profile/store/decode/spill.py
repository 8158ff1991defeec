"""Where decoded batches go: kept in memory, and spilled to a memory-mapped Arrow file once they grow
large, so the table of a big trace is backed by the page cache instead of anonymous memory."""

from __future__ import annotations

import os
import shutil
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


def map_table(file: Path) -> pa.Table:
    """The Arrow file as a table backed by the page cache; the file is unlinked once mapped."""
    table = pa.ipc.open_file(pa.memory_map(str(file))).read_all()
    file.unlink(missing_ok=True)
    return table
