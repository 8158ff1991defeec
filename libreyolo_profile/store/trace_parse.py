"""Decode a PyTorch profiler (Kineto) Chrome trace into one Arrow table of raw events.

Only what the SQL needs leaves this module: phase, category, name, process, thread, exact
timestamps, and the handful of `args` the analysis joins on. Timestamps are kept as their JSON
text and turned into integer nanoseconds by DuckDB's DECIMAL cast, so sub-µs fractions survive
on absolute µs clocks (float64 would round …689.047 to …689.0).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import msgspec
import pyarrow as pa

from libreyolo_profile.errors import UnanalysableError, UsageError

_NULL = msgspec.Raw(b"null")


class _Args(msgspec.Struct, gc=False):
    correlation: int | str | None = None
    external_id: int | str | None = msgspec.field(default=None, name="External id")
    external_id_2021: int | str | None = msgspec.field(default=None, name="external id")
    device: int | str | None = None
    stream: int | str | None = None
    total_allocated: float | None = msgspec.field(default=None, name="Total Allocated")
    total_reserved: float | None = msgspec.field(default=None, name="Total Reserved")
    device_type: int | None = msgspec.field(default=None, name="Device Type")
    device_id: int | None = msgspec.field(default=None, name="Device Id")
    input_dims: msgspec.Raw = msgspec.field(default=_NULL, name="Input Dims")


class _Event(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str | None = None
    name: str | int | float | None = None
    pid: int | str | None = None
    tid: int | str | None = None
    ts: msgspec.Raw = _NULL
    dur: msgspec.Raw = _NULL
    args: _Args | None = None


class _DeviceProperties(msgspec.Struct, gc=False):
    id: int | str | None = None
    name: str | None = None
    totalGlobalMem: int | float | None = None


class _DistributedInfo(msgspec.Struct, gc=False):
    rank: int | str | None = None
    world_size: int | str | None = None
    backend: str | None = None


class _Trace(msgspec.Struct, gc=False):
    traceEvents: list[_Event] | None = None
    deviceProperties: list[_DeviceProperties] | None = None
    distributedInfo: _DistributedInfo | None = None
    baseTimeNanoseconds: int | None = None


# Input Dims are kept only for the ops that reveal the batch size (see sql/ingest.sql).
_BATCH_REVEALING_OPS = frozenset({"aten::conv2d", "aten::convolution", "aten::linear", "aten::matmul"})

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


class ParsedTrace(msgspec.Struct):
    events: pa.Table
    devices: list[dict]  # [{"device": id, "name": str, "total_mb": float}]
    rank: int | None
    world_size: int | None


def _text(value) -> str | None:
    return None if value is None else str(value)


def _raw_text(raw: msgspec.Raw) -> str | None:
    text = bytes(raw).decode("utf-8", "replace")
    if text == "null":
        return None
    return text.strip('"')


def read_bytes(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            head = handle.read(2)
            handle.seek(0)
            if head == b"\x1f\x8b":
                return gzip.GzipFile(fileobj=handle).read()
            return handle.read()
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except PermissionError:
        raise UsageError(f"permission denied: {path}") from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise UnanalysableError(f"{path}: cannot read the trace ({exc})") from None


def parse_trace(path: Path) -> ParsedTrace:
    data = read_bytes(path)
    if not data.strip():
        raise UnanalysableError(f"{path}: the file is empty, not a PyTorch profiler trace")
    try:
        if data.lstrip()[:1] == b"[":
            trace = _Trace(traceEvents=msgspec.json.decode(data, type=list[_Event]))
        else:
            trace = msgspec.json.decode(data, type=_Trace)
    except msgspec.DecodeError as exc:
        raise UnanalysableError(f"{path}: not a readable PyTorch profiler trace ({exc})") from None
    del data
    if not trace.traceEvents:
        raise UnanalysableError(f"{path}: JSON without trace events, not a PyTorch profiler trace")

    events = [e for e in trace.traceEvents if e.ph in ("X", "i", "I")]
    trace.traceEvents = None
    no_args = _Args()
    args = [e.args or no_args for e in events]
    columns = {
        "ph": [e.ph for e in events],
        "cat": [e.cat for e in events],
        "name": [e.name if isinstance(e.name, str) or e.name is None else str(e.name) for e in events],
        "pid": [_text(e.pid) for e in events],
        "tid": [_text(e.tid) for e in events],
        "ts_text": [_raw_text(e.ts) for e in events],
        "dur_text": [_raw_text(e.dur) for e in events],
        "correlation": [_text(a.correlation) for a in args],
        "external_id": [_text(a.external_id if a.external_id is not None else a.external_id_2021) for a in args],
        "device": [_text(a.device) for a in args],
        "stream": [_text(a.stream) for a in args],
        "mem_allocated": [a.total_allocated for a in args],
        "mem_reserved": [a.total_reserved for a in args],
        "mem_device_type": [a.device_type for a in args],
        "mem_device_id": [a.device_id for a in args],
        "input_dims": [_raw_text(a.input_dims) if e.name in _BATCH_REVEALING_OPS else None
                       for e, a in zip(events, args)],
    }
    table = pa.table(columns, schema=EVENT_SCHEMA)

    devices = []
    for prop in trace.deviceProperties or []:
        total = prop.totalGlobalMem
        devices.append({"device": _text(prop.id), "name": prop.name,
                        "total_mb": None if total is None else float(total) / 2**20})
    info = trace.distributedInfo

    def _int(value):
        try:
            return None if value is None else int(value)
        except ValueError:
            return None

    return ParsedTrace(events=table, devices=devices,
                       rank=_int(info.rank) if info else None,
                       world_size=_int(info.world_size) if info else None)


def file_identity(path: Path) -> str:
    st = os.stat(path)
    return f"{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}"
