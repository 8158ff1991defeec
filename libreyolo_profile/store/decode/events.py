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


# Every scalar arg takes any JSON scalar type: writers differ (ROCm writes `"bytes": "9216"`, others
# `"Device Id": 1.0`), and one odd value must not make its event undecodable. columns.py reads each as its
# column's type and counts, by reason, every value it had to convert or could not read (`TraceStats`).
Scalar = int | float | str | None


class EventArgs(msgspec.Struct, gc=False):
    correlation: Scalar = None
    external_id: Scalar = msgspec.field(default=None, name="External id")
    external_id_2021: Scalar = msgspec.field(default=None, name="external id")
    device: Scalar = None
    stream: Scalar = None
    total_allocated: Scalar = msgspec.field(default=None, name="Total Allocated")
    total_reserved: Scalar = msgspec.field(default=None, name="Total Reserved")
    device_type: Scalar = msgspec.field(default=None, name="Device Type")
    device_id: Scalar = msgspec.field(default=None, name="Device Id")
    # one allocation (> 0) or free (< 0) and its block's address: both formats of `[memory]` carry
    # Bytes; the 2021 one has no totals, so its level is the running sum (sql/memory.sql)
    mem_bytes: Scalar = msgspec.field(default=None, name="Bytes")
    mem_addr: Scalar = msgspec.field(default=None, name="Addr")
    copy_bytes: Scalar = msgspec.field(default=None, name="bytes")  # a memcpy/memset's size
    # a collective's process group and message size, where the profiler records them (PyTorch ≥ 2.1
    # puts them on the NCCL kernel and record_param_comms): sql/rank_timeline.sql matches on them
    pg_name: Scalar = msgspec.field(default=None, name="Process Group Name")
    msg_nelems: Scalar = msgspec.field(default=None, name="In msg nelems")
    collective: Scalar = msgspec.field(default=None, name="Collective name")
    input_dims: msgspec.Raw = msgspec.field(default=RAW_NULL, name="Input Dims")
    input_types: msgspec.Raw = msgspec.field(default=RAW_NULL, name="Input type")
    concrete_inputs: msgspec.Raw = msgspec.field(default=RAW_NULL, name="Concrete Inputs")


class Event(msgspec.Struct, gc=False):
    # text fields stay raw JSON: Arrow builds strings from bytes ~4x faster than from str objects
    ph: str = ""
    cat: msgspec.Raw = RAW_NULL
    name: msgspec.Raw = RAW_NULL
    pid: msgspec.Raw = RAW_NULL
    tid: msgspec.Raw = RAW_NULL
    ts: msgspec.Raw = RAW_NULL
    dur: msgspec.Raw = RAW_NULL
    # UNSET where the event has no args (normal for some events); anything but an object (null, a list …) is
    # taken as it is, so such an event stays on the fast path: its correlation and ids are unknown, and
    # columns.py counts it
    args: EventArgs | list | str | int | float | bool | None | msgspec.UnsetType = msgspec.UNSET


class DeviceProperties(msgspec.Struct, gc=False):
    id: int | str | None = None
    name: str | None = None
    totalGlobalMem: int | float | None = None
    numSms: int | float | str | None = (
        None  # multiprocessors (CUDA) or compute units (ROCm): tells an MI250's GCD apart
    )


class DistributedInfo(msgspec.Struct, gc=False):
    rank: int | str | None = None
    world_size: int | str | None = None
    backend: str | None = None
    # the process groups' configuration newer PyTorch records (names, sizes, ranks): the same in one job
    pg_config: msgspec.Raw = RAW_NULL


class Header(msgspec.Struct, gc=False):
    """Everything of the trace object except its events (which may come before or after these)."""

    deviceProperties: list[DeviceProperties] | None = None
    distributedInfo: DistributedInfo | None = None


EVENT_DECODER = msgspec.json.Decoder(Event)
EVENTS_DECODER = msgspec.json.Decoder(list[Event])

# Input Dims are kept only for the ops that reveal the batch size (see sql/ingest.sql).
BATCH_REVEALING_OPS = frozenset({"aten::conv2d", "aten::convolution", "aten::linear", "aten::matmul"})
BATCH_REVEALING_RAW = frozenset(f'"{name}"'.encode() for name in BATCH_REVEALING_OPS)
# The ops sql/roofline_models.sql has a cost model for: their shapes, input types and concrete
# inputs are kept (as recorded, JSON text) in shape_dims, input_types and concrete_inputs.
# tests/test_roofline.py keeps this set equal to the SQL table's op names.
ROOFLINE_SHAPED_OPS = frozenset(
    {
        "aten::mm",
        "aten::addmm",
        "aten::bmm",
        "aten::baddbmm",
        "aten::linear",
        "aten::matmul",
        "aten::convolution",
        "aten::_convolution",
        "aten::cudnn_convolution",
        "aten::mkldnn_convolution",
        "aten::_slow_conv2d_forward",
        "aten::convolution_backward",
        "aten::scaled_dot_product_attention",
        "aten::_scaled_dot_product_flash_attention",
        "aten::_scaled_dot_product_efficient_attention",
        "aten::_scaled_dot_product_cudnn_attention",
        "aten::_scaled_dot_product_flash_attention_for_cpu",
        "aten::_scaled_dot_product_flash_attention_backward",
        "aten::_scaled_dot_product_efficient_attention_backward",
        "aten::_scaled_dot_product_cudnn_attention_backward",
        "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
        "aten::add",
        "aten::add_",
        "aten::sub",
        "aten::sub_",
        "aten::mul",
        "aten::mul_",
        "aten::div",
        "aten::div_",
        "aten::neg",
        "aten::exp",
        "aten::sqrt",
        "aten::rsqrt",
        "aten::pow",
        "aten::where",
        "aten::clamp",
        "aten::clamp_",
        "aten::clamp_min",
        "aten::clamp_min_",
        "aten::relu",
        "aten::relu_",
        "aten::gelu",
        "aten::silu",
        "aten::silu_",
        "aten::sigmoid",
        "aten::sigmoid_",
        "aten::tanh",
        "aten::hardswish",
        "aten::hardswish_",
        "aten::leaky_relu",
        "aten::leaky_relu_",
        "aten::threshold_backward",
        "aten::silu_backward",
        "aten::gelu_backward",
        "aten::sigmoid_backward",
        "aten::tanh_backward",
        "aten::hardswish_backward",
        "aten::leaky_relu_backward",
        "aten::batch_norm",
        "aten::native_batch_norm",
        "aten::_native_batch_norm_legit_no_training",
        "aten::cudnn_batch_norm",
        "aten::native_batch_norm_backward",
        "aten::cudnn_batch_norm_backward",
        "aten::layer_norm",
        "aten::native_layer_norm",
        "aten::native_layer_norm_backward",
        "aten::group_norm",
        "aten::native_group_norm",
        "aten::native_group_norm_backward",
        "aten::max_pool2d",
        "aten::max_pool2d_with_indices",
        "aten::avg_pool2d",
        "aten::max_pool2d_with_indices_backward",
        "aten::adaptive_avg_pool2d",
        "aten::_adaptive_avg_pool2d",
        "aten::upsample_nearest2d",
        "aten::upsample_bilinear2d",
        "aten::cat",
        "aten::copy_",
        "aten::sum",
        "aten::mean",
        "aten::amax",
        "aten::softmax",
        "aten::_softmax",
        "aten::log_softmax",
        "aten::_log_softmax",
        "aten::embedding",
    }
)
ROOFLINE_SHAPED_RAW = frozenset(f'"{name}"'.encode() for name in ROOFLINE_SHAPED_OPS)
KEPT_PHASES = frozenset(("X", "i", "I"))  # duration and instant events: the rows of the table
# The other phases of the Trace Event Format: metadata, flows, counters, async and object events, marks,
# samples, contexts. None holds a host op, a runtime call or device work, so leaving them out loses nothing;
# begin/end pairs (B, E) would, and are counted when dropped, as is a phase outside the format.
OTHER_PHASES = frozenset("M s t f C b n e N O D P R c ( ) V v S T p F".split())
UNREAD_TIME_PHASES = frozenset(("B", "E"))

EVENT_SCHEMA = pa.schema(
    [
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
        ("mem_bytes", pa.float64()),
        ("mem_addr", pa.string()),
        ("input_dims", pa.string()),
        ("shape_dims", pa.string()),
        ("input_types", pa.string()),
        ("concrete_inputs", pa.string()),
        ("copy_bytes", pa.float64()),
        ("pg_name", pa.string()),
        ("msg_nelems", pa.string()),
        ("collective", pa.string()),
    ]
)


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
    # events left out or read differently, by reason (a phrase completing "N events …"), and one value
    # that showed each reason; parse.damage_notes says them, the profile keeps them in its trace_damaged mark
    altered: dict[str, int] = msgspec.field(default_factory=dict)
    examples: dict[str, str] = msgspec.field(default_factory=dict)
    header_notes: list[str] = msgspec.field(default_factory=list)  # header fields that could not be read

    def count(self, reason: str, events: int = 1, example: object = None) -> None:
        """`events` more events altered for `reason`, `example` (the first seen is kept) what showed it."""
        self.altered[reason] = self.altered.get(reason, 0) + events
        if example is not None and reason not in self.examples:
            self.examples[reason] = example_text(example)

    def merge(self, other: "TraceStats") -> None:
        """Add what another reader (the second process's range) counted."""
        for reason, events in other.altered.items():
            self.count(reason, events)
        for reason, example in other.examples.items():
            self.examples.setdefault(reason, example)


def example_text(value: object) -> str:
    """A value as a note shows it: its JSON, cut short."""
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, ValueError, OverflowError):
        text = str(value)
    return text if len(text) <= 40 else text[:37] + "…"


class ParsedTrace(msgspec.Struct):
    events: pa.Table
    devices: list[dict]  # [{"device": id, "name": str, "total_mb": float}]
    rank: int | None
    world_size: int | None
    stats: TraceStats | None = None
    # what distributedInfo says of the job (backend, pg_config as JSON text); None without one
    distributed: dict | None = None
