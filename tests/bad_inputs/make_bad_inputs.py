"""Build the corpus of bad inputs every reader must survive (tests/test_bad_inputs.py).

    python tests/bad_inputs/make_bad_inputs.py OUT_DIR

Files are generated, not committed: each is a small, deliberate mutation of one clean synthetic
Kineto trace (`clean.json`), so the corpus stays a few kilobytes and documents itself here.
`EXPECTED` says, per file, what the readers must do: "ok" (exit 0, maybe with a warning on
stderr naming what was recovered or repaired) or an exit code (SPEC §1: 1 unanalysable, 2 usage).
Profile-directory cases (newer schema, corrupt or missing sidecars) need a real profile and are
built by the test from `import`; so are the special files (a FIFO, a device, a socket), which git
cannot hold (`special_files`).

The hostile cases are small on disk and huge inflated: gzip members of 1 MiB of one byte each
(concatenated members are one valid gzip file, and each member is ~1 KB, so building them is instant).
"""

from __future__ import annotations

import gzip
import json
import socket
import sys
import zlib
from pathlib import Path

T0 = 1_700_000_000_000_000  # absolute µs clock, like Kineto's


def clean_events(steps: int = 12) -> list[dict]:
    """A tiny CUDA training trace: per step a ProfilerStep, forward and backward ops, launches and
    kernels linked by correlation ids, one host-to-device copy."""
    events, corr, t = [], 1, T0
    for step in range(steps):
        start = t
        events.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{step}",
                "pid": 1,
                "tid": 1,
                "ts": start,
                "dur": 900,
                "args": {"External id": 10_000 + step},
            }
        )
        ops = [
            ("aten::conv2d", 100, 200),
            ("aten::relu", 320, 60),
            ("aten::linear", 400, 150),
            ("autograd::engine::evaluate_function: AddmmBackward0", 600, 200),
        ]
        for name, offset, dur in ops:
            args = {"External id": corr}
            if name in ("aten::conv2d", "aten::linear"):
                args["Input Dims"] = [[4, 3, 32, 32], [8, 3, 3, 3]]
            events.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": name,
                    "pid": 1,
                    "tid": 1,
                    "ts": start + offset,
                    "dur": dur,
                    "args": args,
                }
            )
            events.append(
                {
                    "ph": "X",
                    "cat": "cuda_runtime",
                    "name": "cudaLaunchKernel",
                    "pid": 1,
                    "tid": 1,
                    "ts": start + offset + 5,
                    "dur": 8.125,
                    "args": {"correlation": corr, "cbid": 211},
                }
            )
            kernel = "volta_sgemm_128x64_nn" if "conv" in name or "linear" in name else "vectorized_elementwise_kernel"
            events.append(
                {
                    "ph": "X",
                    "cat": "kernel",
                    "name": kernel,
                    "pid": 0,
                    "tid": 7,
                    "ts": start + offset + 20.5,
                    "dur": dur * 0.8,
                    "args": {"correlation": corr, "device": 0, "stream": 7, "External id": corr},
                }
            )
            corr += 1
        events.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaMemcpyAsync",
                "pid": 1,
                "tid": 1,
                "ts": start + 10,
                "dur": 12,
                "args": {"correlation": corr},
            }
        )
        events.append(
            {
                "ph": "X",
                "cat": "gpu_memcpy",
                "name": "Memcpy HtoD (Pageable -> Device)",
                "pid": 0,
                "tid": 7,
                "ts": start + 30,
                "dur": 40,
                "args": {"correlation": corr, "device": 0, "stream": 7},
            }
        )
        corr += 1
        t += 1000
    return events


def kineto_text(events: list[dict], header: dict | None = None) -> bytes:
    """Kineto's own layout: two-space indented events separated by `},\\n  {`."""
    header = (
        header
        if header is not None
        else {
            "schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "Tesla V100-SXM2-16GB", "totalGlobalMem": 16_945_512_448}],
        }
    )
    head = json.dumps(header)[:-1] + ', "traceEvents": [\n'
    body = ",\n".join("  " + json.dumps(e) for e in events)
    return (head + body + '\n  ],\n  "traceName": "synthetic"\n}\n').encode()


MIB = 1 << 20
BOM = b"\xef\xbb\xbf"


def _gzip_member(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    return packer.compress(data) + packer.flush()


def _gzip_runs(*parts: bytes | tuple[bytes, int]) -> bytes:
    """A gzip of the parts in order; (byte, n) is n MiB of that byte, written as n copies of one
    tiny member, so a gigabyte inflated costs a megabyte on disk and no time to build."""
    out = []
    for part in parts:
        if isinstance(part, tuple):
            out.append(_gzip_member(part[0] * MIB) * part[1])
        else:
            out.append(_gzip_member(part))
    return b"".join(out)


def _cut(data: bytes, fraction: float) -> bytes:
    return data[: int(len(data) * fraction)]


def _replace_first(data: bytes, old: bytes, new: bytes) -> bytes:
    assert old in data, old
    return data.replace(old, new, 1)


# name -> "ok" (readers succeed; the substring, if any, must appear on stderr) or an exit code
EXPECTED: dict[str, tuple] = {
    "clean.json": ("ok", None),
    "clean.json.gz": ("ok", None),
    "empty.json": (1, None),
    "whitespace.json": (1, None),
    "not_json.json": (1, None),
    "binary_garbage.json.gz": (1, None),
    "json_object_not_trace.json": (1, None),
    "json_list_not_trace.json": (1, None),
    "trace_events_not_list.json": (1, None),
    "no_events.json": (1, None),
    "truncated_mid_file.json": ("ok", "cut off"),
    "truncated_mid_file.json.gz": ("ok", "cut off"),
    "truncated_in_header.json": (1, None),
    "control_chars_in_name.json": ("ok", "repaired"),
    "invalid_utf8_in_name.json": ("ok", "repaired"),
    "unescaped_quote_in_name.json": ("ok", "repaired"),
    "bare_inf_nan_ignored_args.json": ("ok", None),
    "bare_nan_duration.json": ("ok", "repaired"),
    "negative_and_overlapping.json": ("ok", None),
    "out_of_order.json": ("ok", None),
    "compact_braces_in_names.json": ("ok", None),
    "string_timestamps_mixed_ids.json": ("ok", None),
    "only_metadata.json": (1, None),
    # hostile input: never a hang, never unbounded memory, and the right diagnosis
    "whitespace_bomb.json.gz": (1, "decompression bomb"),  # 2 MB gzip, 2 GiB of whitespace
    "huge_string.json.gz": (1, "capped"),  # 1 MB gzip, one 1 GiB string
    "whitespace_runs.json.gz": ("ok", None),  # 3 x 64 MiB runs around a clean trace: linear, under every cap
    "binary_garbage.json": (1, "binary data"),
    "bom.json": ("ok", None),  # a UTF-8 byte order mark first
    # every duration negative, NaN or missing: refused in one line, since every figure would be made up
    "durations_unusable.json": (1, "usable duration"),
    # 3,000 nested nn.Module events / `## forward ##` ranges in one step: the old code's memory grew with
    # the square of the depth (> 1 GiB); nesting past the cap is left out with the nesting_cut mark
    "deeply_nested_modules.json": ("ok", None),
    "deeply_nested_phases.json": ("ok", None),
    # ESC, BEL and a C1 CSI in an op and a kernel name: no reader hands them to a terminal or a page
    "escape_sequences_in_names.json": ("ok", None),
}

DEEP_NESTING = 3000


def build(out: Path) -> dict[str, tuple]:
    out.mkdir(parents=True, exist_ok=True)
    events = clean_events()
    clean = kineto_text(events)
    files: dict[str, bytes] = {
        "clean.json": clean,
        "clean.json.gz": gzip.compress(clean),
        "empty.json": b"",
        "whitespace.json": b"  \n\t \n",
        "not_json.json": b"this is not a trace\n",
        "binary_garbage.json.gz": b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4,
        "json_object_not_trace.json": b'{"hello": "world", "values": [1, 2, 3]}',
        "json_list_not_trace.json": b"[1, 2, 3]",
        "trace_events_not_list.json": b'{"traceEvents": 5}',
        "no_events.json": b'{"schemaVersion": 1, "traceEvents": []}',
        "truncated_mid_file.json": _cut(clean, 0.6),
        "truncated_mid_file.json.gz": gzip.compress(clean)[: int(len(gzip.compress(clean)) * 0.6)],
        "truncated_in_header.json": clean[:40],
        # a raw control character and a raw newline inside a name (pytorch#130622)
        "control_chars_in_name.json": _replace_first(clean, b'"aten::relu"', b'"aten::re\x01l\nu"'),
        # invalid UTF-8 in a python_function-like name (pytorch#136180)
        "invalid_utf8_in_name.json": _replace_first(clean, b'"aten::relu"', b'"aten::re\xff\xfelu"'),
        # an unescaped quote inside a name (pytorch#113001)
        "unescaped_quote_in_name.json": _replace_first(clean, b'"aten::relu"', b'"aten::relu "inplace" x"'),
        # bare inf / NaN numbers (kineto#105): in args nobody reads, and as a kept event's duration
        "bare_nan_duration.json": _replace_first(clean, b'"dur": 60,', b'"dur": NaN,'),
        "bare_inf_nan_ignored_args.json": _replace_first(
            _replace_first(clean, b'"cbid": 211', b'"cbid": 211, "bandwidth": inf'),
            b'"cbid": 211}',
            b'"cbid": 211, "occupancy": NaN}',
        ),
        "negative_and_overlapping.json": kineto_text(_negative_and_overlapping(events)),
        "out_of_order.json": kineto_text(list(reversed(events))),
        # compact JSON with `}, {` inside kernel names (C++ lambdas)
        "compact_braces_in_names.json": _compact_with_braces(events),
        "string_timestamps_mixed_ids.json": kineto_text(_stringly(events)),
        "only_metadata.json": kineto_text(
            [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}}]
        ),
        "whitespace_bomb.json.gz": _gzip_runs((b" ", 2048)),
        "huge_string.json.gz": _gzip_runs(b'{"traceEvents": [{"ph": "X", "name": "', (b"a", 1024), b'"}]}'),
        "whitespace_runs.json.gz": _gzip_runs(
            (b"\n", 64), clean[: clean.index(b"[") + 1], (b" ", 64), clean[clean.index(b"[") + 1 :], (b"\t", 64)
        ),
        "binary_garbage.json": bytes((i * 197 + 89) % 256 for i in range(8192)),  # like /dev/urandom, but fixed
        "bom.json": BOM + clean,
        "durations_unusable.json": kineto_text(_unusable_durations(events)),
        "deeply_nested_modules.json": kineto_text(events + nested_ranges("python_function", "nn.Module: Block_{}")),
        "deeply_nested_phases.json": kineto_text(events + nested_ranges("user_annotation", "## forward ##")),
        "escape_sequences_in_names.json": kineto_text(_escape_sequences(events)),
    }
    for name, data in files.items():
        (out / name).write_bytes(data)
    return dict(EXPECTED)


def _unusable_durations(events: list[dict]) -> list[dict]:
    """Every duration event's duration made unusable, in turn negative, NaN (bare, repaired to null)
    and missing: no time in the trace can be trusted."""
    changed = []
    for i, e in enumerate(events):
        e = dict(e)
        if e["ph"] == "X":
            if i % 3 == 0:
                e["dur"] = -abs(e["dur"]) - 1
            elif i % 3 == 1:
                e["dur"] = float("nan")  # json.dumps writes a bare NaN
            else:
                del e["dur"]
        changed.append(e)
    return changed


def special_files(out: Path) -> dict[str, tuple]:
    """Inputs that are not regular files, made where the test runs: reading one must be refused at
    once (a FIFO blocks its first open or read forever; a device never ends)."""
    import os

    os.mkfifo(out / "fifo")
    (out / "char_device").symlink_to("/dev/zero")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(out / "socket"))  # the socket file stays after the listener closes
    listener.close()
    return {
        "fifo": (2, "is a FIFO, not a regular file"),
        "char_device": (2, "is a character device"),
        "socket": (2, "is a socket"),
    }


def _negative_and_overlapping(events: list[dict]) -> list[dict]:
    changed = [dict(e) for e in events]
    ops = [e for e in changed if e["cat"] == "cpu_op"]
    ops[0]["dur"] = -50  # negative duration
    ops[1]["ts"] = ops[0]["ts"] + 10  # overlaps its neighbour without nesting
    ops[1]["dur"] = 500
    kernels = [e for e in changed if e["cat"] == "kernel"]
    kernels[1]["ts"] = kernels[0]["ts"]  # two kernels at once on one stream
    return changed


def _compact_with_braces(events: list[dict]) -> bytes:
    changed = [dict(e) for e in events]
    for e in changed:
        if e["cat"] == "kernel" and "elementwise" in e["name"]:
            e["name"] = "void at::native::vectorized_elementwise_kernel<4, {lambda()#1}, {lambda(float)#2}>"
    return (
        json.dumps({"schemaVersion": 1, "traceEvents": changed}, separators=(",", ":")).replace("},{", "}, {").encode()
    )


def _stringly(events: list[dict]) -> list[dict]:
    """ts as strings with sub-µs fractions, pid/tid as strings, ROCm-style stream ids."""
    changed = []
    for e in events:
        e = dict(e)
        e["ts"] = f"{e['ts']:.3f}"
        if e["cat"] in ("kernel", "gpu_memcpy"):
            e["args"] = dict(e["args"], stream="0x7")
            e["tid"] = "stream 7"
        else:
            e["pid"] = str(e["pid"])
        changed.append(e)
    return changed


def other_schema_sidecar(path: Path) -> None:
    """Rewrite a sidecar with the same footer metadata (its profile's generation) but other columns: a
    reader that trusts the generation alone reads a table that is not ours (issue 22)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    metadata = pq.read_schema(path).metadata
    pq.write_table(pa.table({"unexpected": [1, 2, 3]}).replace_schema_metadata(metadata), path)


# ------------------------------------------------------------------------------------------------
# profile.json head mutations (tests/test_profile_mutations.py): one field of a real profile document
# changed at a time, as a hand edit or a hostile writer would

MISSING = object()  # the mutation that deletes the field
GARBAGE = {"x": [1, {"y": None}], "": "\x1b]0;retitled\x07"}
HUGE_INT = 2**64 + 1  # above every fixed-width integer (DuckDB's BIGINT, msgspec's int64)


def field_mutations(value) -> list[tuple[str, object]]:
    """(name, new value) of every single-field mutation: wrong type, null, huge int, negative, nested
    garbage, missing key."""
    wrong = 7 if isinstance(value, str) else "yesterday"
    return [
        ("wrong_type", wrong),
        ("null", None),
        ("huge_int", HUGE_INT),
        ("negative", -1),
        ("garbage", GARBAGE),
        ("missing", MISSING),
    ]


def head_paths(doc: dict, declared: dict[str, list[str]]) -> list[tuple]:
    """Every field of the head one level deep (the first element of a list of objects stands for the
    rest), plus the nested fields `declared` by the readers' schema that this document lacks."""
    paths = []
    for key, value in doc.items():
        if key == "tables":
            continue
        paths.append((key,))
        inner = value[0] if isinstance(value, list) and value and isinstance(value[0], dict) else value
        prefix = (key, 0) if inner is not value else (key,)
        names = list(inner) if isinstance(inner, dict) else []
        if isinstance(inner, dict):
            names += [name for name in declared.get(key, []) if name not in inner]
        paths += [prefix + (name,) for name in names]
    return paths


def mutated(doc: dict, path: tuple, value) -> dict:
    """A deep copy of `doc` with the field at `path` set to `value` (MISSING: deleted)."""
    import copy

    changed = copy.deepcopy(doc)
    parent = changed
    for step in path[:-1]:
        parent = parent[step]
    if value is MISSING:
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = value
    return changed


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("bad_inputs_out")
    for name, expected in build(target).items():
        print(f"{name}: {expected[0]}")


def nested_ranges(cat: str, name: str, depth: int = DEEP_NESTING, start: float = T0 + 100) -> list[dict]:
    """`depth` host ranges on the model's thread, each strictly inside the one before (1 µs in on each
    side): level i starts at start + i and lasts 2 * (depth - i) + 1 µs. `name` may hold {} for the level."""
    return [
        {"ph": "X", "cat": cat, "name": name.format(i), "pid": 1, "tid": 1, "ts": start + i, "dur": 2 * (depth - i) + 1}
        for i in range(depth)
    ]


def _escape_sequences(events: list[dict]) -> list[dict]:
    changed = [dict(e) for e in events]
    for e in changed:
        if e["name"] == "aten::relu":
            e["name"] = "aten::re\x1b]0;retitled\x07lu"  # OSC: retitles the terminal
        elif e["cat"] == "kernel" and "elementwise" in e["name"]:
            e["name"] = "elementwise\x1b[2J\x9b31mkernel"  # clear screen, then a one-byte CSI
    return changed
