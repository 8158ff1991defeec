"""What the decoder reads and what it hands on: the msgspec Structs one Kineto event (and the trace
header) decode into, the Arrow schema of the events table, and what decoding saw (`TraceStats`).

Only what the SQL needs is kept: phase, category, name, process, thread, exact timestamps, and the
handful of `args` the analysis joins on. Timestamps are kept as their JSON text and turned into
integer nanoseconds by DuckDB's DECIMAL cast, so sub-µs fractions survive on absolute µs clocks
(float64 would round …689.047 to …689.0).
"""

from __future__ import annotations

import msgspec
import pyarrow as pa

RAW_NULL = msgspec.Raw(b"null")


class EventArgs(msgspec.Struct, gc=False):
    correlation: int | str | None = None
    external_id: int | str | None = msgspec.field(default=None, name="External id")
    external_id_2021: int | str | None = msgspec.field(default=None, name="external id")
    device: int | str | None = None
    stream: int | str | None = None
    total_allocated: float | None = msgspec.field(default=None, name="Total Allocated")
    total_reserved: float | None = msgspec.field(default=None, name="Total Reserved")
    device_type: int | None = msgspec.field(default=None, name="Device Type")
    device_id: int | None = msgspec.field(default=None, name="Device Id")
    input_dims: msgspec.Raw = msgspec.field(default=RAW_NULL, name="Input Dims")


class Event(msgspec.Struct, gc=False):
    # text fields stay raw JSON: Arrow builds strings from bytes ~4x faster than from str objects
    ph: str = ""
    cat: msgspec.Raw = RAW_NULL
    name: msgspec.Raw = RAW_NULL
    pid: msgspec.Raw = RAW_NULL
    tid: msgspec.Raw = RAW_NULL
    ts: msgspec.Raw = RAW_NULL
    dur: msgspec.Raw = RAW_NULL
    args: EventArgs | None = None


class DeviceProperties(msgspec.Struct, gc=False):
    id: int | str | None = None
    name: str | None = None
    totalGlobalMem: int | float | None = None


class DistributedInfo(msgspec.Struct, gc=False):
    rank: int | str | None = None
    world_size: int | str | None = None
    backend: str | None = None


class Header(msgspec.Struct, gc=False):
    """Everything of the trace object except its events (which may come before or after these)."""
    deviceProperties: list[DeviceProperties] | None = None
    distributedInfo: DistributedInfo | None = None


EVENT_DECODER = msgspec.json.Decoder(Event)
EVENTS_DECODER = msgspec.json.Decoder(list[Event])

# Input Dims are kept only for the ops that reveal the batch size (see sql/ingest.sql).
BATCH_REVEALING_OPS = frozenset({"aten::conv2d", "aten::convolution", "aten::linear", "aten::matmul"})
BATCH_REVEALING_RAW = frozenset(f'"{name}"'.encode() for name in BATCH_REVEALING_OPS)
KEPT_PHASES = frozenset(("X", "i", "I"))  # duration and instant events: the rows of the table

EVENT_SCHEMA = pa.schema([
    ("ph", pa.string()),
    ("cat", pa.string()),
    ("name", pa.string()),
    ("pid", pa.string()),
    ("tid", pa.string()),
    ("ts_text", pa.string()),
    ("dur_text", pa.string()),
    ("correlation", pa.string()),
    ("external_id", pa.string()),
    ("device", pa.string()),
    ("stream", pa.string()),
    ("mem_allocated", pa.float64()),
    ("mem_reserved", pa.float64()),
    ("mem_device_type", pa.int64()),
    ("mem_device_id", pa.int64()),
    ("input_dims", pa.string()),
])


class TraceStats(msgspec.Struct):
    """What reading the trace saw, and what it had to repair or leave out."""
    events_seen: int = 0  # events in traceEvents, of every phase
    events_kept: int = 0  # rows of the table (duration and instant events)
    bytes_total: int = 0  # size of the file on disk
    bytes_read: int = 0  # decompressed JSON bytes read
    truncated: bool = False  # the JSON ends before the event array is closed
    repairs: int = 0  # invalid spots fixed (bad UTF-8, control characters, bare inf/NaN, stray quotes)
    dropped_events: int = 0  # event texts that could not be decoded even after repair
    workers: int = 1  # processes that decoded the events


class ParsedTrace(msgspec.Struct):
    events: pa.Table
    devices: list[dict]  # [{"device": id, "name": str, "total_mb": float}]
    rank: int | None
    world_size: int | None
    stats: TraceStats | None = None
