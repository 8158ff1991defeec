"""How much one trace may make the decoder hold or inflate (`Limits`, against hostile input), and the
sizes it works in (`DecodeSizes`, tuned for speed; tests pass small ones to cut everywhere)."""

from __future__ import annotations

import os

import msgspec

from libreyolo_profile.errors import UsageError

# Caps against hostile input. None bothers a real trace: the largest real event is a few KB (long
# Input Dims), and real Kineto gzips inflate 9-30x (the shared traces) where a gzip of whitespace or
# of one long string inflates ~1000x.
MAX_EVENT_BYTES = 64 << 20  # one event's text, so any one JSON string inside it
MAX_INFLATION_RATIO = 200  # a gzip may inflate to this many times its size ...
MIN_INFLATED_CAP = 256 << 20  # ... or to this much, whichever is more
ENV_MAX_EVENT = "LIBREYOLO_PROFILE_MAX_EVENT_MB"
ENV_MAX_INFLATED = "LIBREYOLO_PROFILE_MAX_INFLATED_MB"


class Limits(msgspec.Struct, frozen=True):
    """How much one trace may make the reader hold or inflate."""

    max_event_bytes: int = MAX_EVENT_BYTES
    max_inflated_bytes: int | None = None  # None: max(MIN_INFLATED_CAP, MAX_INFLATION_RATIO × file size)

    @classmethod
    def from_env(cls) -> "Limits":
        """The defaults, or the sizes (MiB) named by LIBREYOLO_PROFILE_MAX_EVENT_MB and
        LIBREYOLO_PROFILE_MAX_INFLATED_MB, for a real trace beyond them (or a test)."""
        return cls(
            max_event_bytes=_env_mib(ENV_MAX_EVENT) or MAX_EVENT_BYTES, max_inflated_bytes=_env_mib(ENV_MAX_INFLATED)
        )

    def inflated_cap(self, compressed_size: int) -> int:
        if self.max_inflated_bytes is not None:
            return self.max_inflated_bytes
        return max(MIN_INFLATED_CAP, MAX_INFLATION_RATIO * compressed_size)


class DecodeSizes(msgspec.Struct, frozen=True, kw_only=True):
    """The sizes the decoder works in. They change speed and memory, never the table."""

    block_bytes: int = 4 << 20  # bytes read (or decompressed) at a time
    piece_bytes: int = 128 << 10  # bytes decoded at a time: small enough that the Structs stay in the CPU cache
    batch_rows: int = 32768  # rows per Arrow record batch
    spill_bytes: int = 64 << 20  # Arrow output beyond this goes to a memory-mapped temporary file
    # plain files at least this big are decoded by two processes (a 100 MB trace: 1.2 s → 0.75 s on
    # 2 idle cores; below, forking costs more than it saves)
    parallel_bytes: int = 32 << 20
    # bytes searched for the "traceEvents" key before giving up (and header kept after the events)
    max_prefix_bytes: int = 256 << 20


def _env_mib(name: str) -> int | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise UsageError(f"{name}={text!r}: expected a positive number of MiB")
    return int(value * (1 << 20))


def mib(size: int) -> str:
    """A byte count in MiB, for messages."""
    return f"{size / (1 << 20):,.0f} MiB"
