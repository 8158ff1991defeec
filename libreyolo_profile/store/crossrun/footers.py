"""Whether a parquet sidecar was written for a given profile.json, read from the file's footer alone.

A parquet file ends with its footer (Thrift compact FileMetaData), the footer's length (4 bytes, little
endian) and b"PAR1". Our writer puts the profile's generation in the key-value metadata
(store/disk/sidecars.py), where Thrift encodes one KeyValue as: field header 0x18, varint length, key;
field header 0x18, varint length, value. Looking for exactly those bytes in the footer answers the question
with one small read per file. It stays because the libraries cost a first `query` what a user notices: over
1,000 never-seen profiles (10,000 sidecars) the checks take 0.12 CPU-s this way, 2.1 with
pyarrow.parquet.read_metadata and 3.3 with DuckDB's parquet_kv_metadata and parquet_schema, and the whole
query 1.76 CPU-s against 3.88 with pyarrow's (`python benchmarks/bench_hand_written.py footers`,
docs/design/performance.md). Anything unexpected answers False, which only sends the profile down the slow
path (its sidecars are checked by the loader and rebuilt into the cache when they differ).

The generation alone is not enough: a parquet file with the right generation but other columns (hand-made,
or written by another version) would break every `FROM kernels` under the root. So the footer's schema,
which Thrift writes first (FileMetaData field 2, a list of SchemaElement), is read too and must list exactly
the table's columns of store/schema.py with their parquet types (`schema_matches`).
"""

from __future__ import annotations

import os
import stat

from libreyolo_profile.store.schema import GENERATION_KEY, parquet_columns

_MAGIC = b"PAR1"
_MAX_FOOTER = 4 << 20  # our sidecars' footers are a few KB; a larger claim is not one of ours


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _thrift_string(text: str) -> bytes:
    data = text.encode("utf-8")
    return b"\x18" + _varint(len(data)) + data


def generation_pattern(generation: str) -> bytes:
    """The bytes of the KeyValue {GENERATION_KEY: generation} inside a footer."""
    return _thrift_string(GENERATION_KEY) + _thrift_string(generation)


def footer_length(tail: bytes, size: int) -> int | None:
    """The footer's length from a parquet file's last 8 bytes; None when they are not a parquet tail or
    claim more than the file (or than any sidecar of ours) holds."""
    if len(tail) != 8 or tail[4:] != _MAGIC:
        return None
    length = int.from_bytes(tail[:4], "little")
    return length if 0 < length <= min(_MAX_FOOTER, size - 12) else None


def footer(path: str) -> bytes | None:
    """The Thrift footer of a regular parquet file; None for anything else (opened without blocking, so a
    FIFO put there is refused, not waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size < 12:
            return None
        length = footer_length(os.pread(fd, 8, st.st_size - 8), st.st_size)
        return None if length is None else os.pread(fd, length, st.st_size - 8 - length)
    except OSError:
        return None
    finally:
        os.close(fd)


def written_for(path: str, generation: str, table: str) -> bool:
    """True when the parquet file at `path` carries `generation` in its footer's key-value metadata and
    holds exactly the columns of `table`."""
    data = footer(path)
    return data is not None and footer_matches(data, generation, table)


def footer_matches(data: bytes, generation: str, table: str) -> bool:
    """Whether a sidecar's Thrift footer was written for `generation` and has the schema of `table`."""
    return generation_pattern(generation) in data and schema_matches(data, table)


# parquet.thrift's `Type` enum, by its number in a SchemaElement
_PHYSICAL = ("BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY")


# table -> footer prefixes (version and schema fields) already found to hold its schema: every sidecar
# of one table written by one writer starts with the same bytes, so most footers are checked by a
# startswith instead of a parse (7,000 files of a first query over 1,000 profiles)
_CHECKED: dict[str, set[bytes]] = {}


def schema_matches(data: bytes, table: str) -> bool:
    """The footer's columns are the columns of `table`, in order, each with its parquet physical type."""
    known = _CHECKED.setdefault(table, set())
    if any(data.startswith(prefix) for prefix in known):
        return True
    try:
        columns, end = footer_columns(data)
    except (IndexError, ValueError):
        return False
    if columns != parquet_columns(table):
        return False
    known.add(data[:end])
    return True


def footer_columns(data: bytes) -> tuple[list[tuple[str, str | None]], int]:
    """(name, physical type) of each leaf column in a footer's schema, and where the schema ends;
    ValueError for a nested schema or a footer that does not start with FileMetaData's version and
    schema fields."""
    reader = _Compact(data)
    if reader.field() != (1, 5):  # field 1, i32: version
        raise ValueError("no version field")
    reader.varint()
    if reader.field() != (2, 9):  # field 2, list: schema
        raise ValueError("no schema field")
    size, element_type = reader.list_header()
    if element_type != 12 or size < 1:
        raise ValueError("schema is not a list of structs")
    elements = [reader.struct() for _ in range(size)]
    root, leaves = elements[0], elements[1:]
    if root.get(5) != len(leaves) or any(5 in leaf for leaf in leaves):
        raise ValueError("nested schema")  # our tables are flat: one root, then one leaf per column
    types = [leaf.get(1) for leaf in leaves]
    return [
        (leaf.get(4), _PHYSICAL[t] if isinstance(t, int) and 0 <= t < len(_PHYSICAL) else None)
        for leaf, t in zip(leaves, types, strict=False)
    ], reader.at


class _Compact:
    """Just enough of Thrift's compact protocol to read SchemaElements (parquet.thrift)."""

    def __init__(self, data: bytes):
        self.data, self.at, self.last = data, 0, 0

    def byte(self) -> int:
        self.at += 1
        return self.data[self.at - 1]

    def varint(self) -> int:
        shift = value = 0
        while True:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 63:
                raise ValueError("varint too long")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def field(self) -> tuple[int, int]:
        """(field id, compact type) of the next field of the current struct; (0, 0) at its end."""
        header = self.byte()
        if header == 0:
            return 0, 0
        delta, kind = header >> 4, header & 0x0F
        self.last = self.last + delta if delta else self.zigzag()
        return self.last, kind

    def list_header(self) -> tuple[int, int]:
        header = self.byte()
        size = header >> 4
        return (self.varint() if size == 15 else size), header & 0x0F

    def skip(self, kind: int) -> None:
        if kind in (1, 2):  # a boolean field: the value is in the type
            return
        if kind == 3:
            self.at += 1
        elif kind in (4, 5, 6):
            self.varint()
        elif kind == 7:
            self.at += 8
        elif kind == 8:
            self.at += self.varint()
        elif kind in (9, 10):
            size, element = self.list_header()
            for _ in range(size):
                self.at += 1 if element in (1, 2) else 0
                if element not in (1, 2):
                    self.skip(element)
        elif kind == 11:
            size = self.varint()
            types = self.byte() if size else 0
            for _ in range(size):
                self.skip(types >> 4)
                self.skip(types & 0x0F)
        elif kind == 12:
            self.struct()
        else:
            raise ValueError(f"unknown compact type {kind}")

    def struct(self) -> dict[int, object]:
        """A struct's integer and string fields by id (nested ones skipped)."""
        outer, self.last, fields = self.last, 0, {}
        while True:
            field, kind = self.field()
            if kind == 0:
                self.last = outer
                return fields
            if kind in (4, 5, 6):
                fields[field] = self.zigzag()
            elif kind == 8:
                length = self.varint()
                fields[field] = self.data[self.at : self.at + length].decode("utf-8", "replace")
                self.at += length
            else:
                self.skip(kind)
