"""`libreyolo profile memory`: the allocator through the window, per device — the peak, when it
happened, what ran and what held it, the churn, the top allocating ops and modules and a sparkline
(sql/memory_reader.sql over the memory table, which sql/memory.sql builds)."""

from __future__ import annotations

import math
from pathlib import Path

from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import fmt_sig, stdout_console, table
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.readers.common import opened, profile_identity, records
from libreyolo_profile.sqlmodules import run_module

NO_MEMORY = (
    "this profile holds no allocator events: record them with `libreyolo profile run|infer --memory`, "
    "or a foreign trace with torch.profiler(profile_memory=True)"
)
# what the ops' net bytes are: summed over every call in the window, freed later by other ops, so a figure
# many times the peak is no leak (60.8 MiB of batch_norm outputs handed on against a 6.3 MiB peak)
HANDED_ON = (
    "handed on: what an op's calls allocated and did not free themselves (the tensors they returned, freed "
    "later by other ops), summed over every call in the window, so it can exceed the peak and is no leak; "
    "what an op still held at the peak is 'to peak' (and 'live@peak' where blocks have addresses)"
)
SPARK_COLUMNS = 60
TOP = 5
BLOCKS = "▁▂▃▄▅▆▇█"
LEVEL_NOTES = {
    "relative": " — relative levels: the trace records Bytes only, so every level is the rise above the window's start",
    "profiled": " — torch's host allocator total counts only the blocks allocated while the profiler recorded memory",
}


def memory_devices(source, top: int = TOP, columns: int = SPARK_COLUMNS) -> list[dict]:
    """One dict per device: the summary row with its top ops, top modules and sparkline slices
    (the report and summary read these too)."""
    con = opened(source).con
    run_module(con, "memory_reader.sql")  # once per connection: the report asks twice
    devices = records(*_select(con, "SELECT * FROM memory_summary"))
    ops = records(*_select(con, "SELECT * FROM memory_top_ops(CAST($n AS BIGINT))", {"n": top}))
    modules = records(*_select(con, "SELECT * FROM memory_top_modules(CAST($n AS BIGINT))", {"n": top}))
    spark = records(*_select(con, "SELECT * FROM memory_spark(CAST($n AS BIGINT))", {"n": columns}))

    def of(rows, d):
        return [r for r in rows if (r["allocator"], r["device"]) == (d["allocator"], d["device"])]

    for d in devices:
        d["top_ops"], d["top_modules"], d["spark"] = of(ops, d), of(modules, d), of(spark, d)
        d["sparkline"] = sparkline([s["level_mb"] for s in d["spark"]])
    return devices


def memory_chart(source) -> dict:
    """The report's memory chart: per device its summary and every kept timeline point, and the
    phase bands ({"devices": [], "bands": []} without allocator events)."""
    con = opened(source).con
    devices = memory_devices(source, top=3)
    points = records(*_select(con, "SELECT * FROM memory_chart_points"))
    for d in devices:
        d["points"] = [p for p in points if (p["allocator"], p["device"]) == (d["allocator"], d["device"])]
    return {"devices": devices, "bands": records(*_select(con, "SELECT * FROM memory_chart_bands"))}


def _select(con, query: str, params: dict | None = None):
    cursor = con.execute(query, params or {})
    return [c[0] for c in cursor.description], cursor.fetchall()


def sparkline(levels: list) -> str:
    """Block characters from the lowest to the highest level (a slice with no level yet: a space)."""
    known = [v for v in levels if v is not None]
    if not known:
        return ""
    low, high = min(known), max(known)
    span = (high - low) or 1.0
    return "".join(
        " " if v is None else BLOCKS[min(len(BLOCKS) - 1, int((v - low) / span * len(BLOCKS)))] for v in levels
    )


def device_name(d: dict) -> str:
    return "host (CPU allocator)" if d["allocator"] == "cpu" else f"{d['allocator']}:{d['device']}"


def mib(value: float) -> str:
    """MiB as people read them: one decimal, small figures to three significant digits."""
    return f"{value:,.1f}" if abs(value) >= 1 or value == 0 else fmt_sig(value)


def peak_phrase(d: dict) -> str:
    """The peak in words: an allocator total, or on relative levels what it is at least."""
    if d["levels"] == "relative":
        return f"at least {mib(d['peak_mb'])} MiB above the window's start"
    if d["levels"] == "profiled":
        return (
            f"at least {mib(d['peak_mb'])} MiB allocated (counting only blocks allocated while the profiler recorded)"
        )
    return f"{mib(d['peak_mb'])} MiB allocated"


def when_phrase(d: dict) -> str:
    where = ", ".join(
        x
        for x in (f"step {d['peak_step']}" if d["peak_step"] is not None else "outside the steps", d["peak_phase"])
        if x
    )
    return f"{d['peak_ms']:,.2f} ms into the window ({where})"


def running_phrase(d: dict) -> str:
    op = d["peak_op"] or "no op"
    leaf = f" (allocating: {d['peak_leaf_op']})" if d["peak_leaf_op"] and d["peak_leaf_op"] != d["peak_op"] else ""
    module = f"; module {d['peak_module']}" if d["peak_module"] else ""
    return f"{op}{leaf}{module}"


def held_phrase(d: dict) -> str:
    if d["live_at_peak_mb"] is None:
        return (
            "which blocks were live is unknown: the trace records no block addresses (Addr); "
            "the ops below show what they handed on up to the peak ('to peak') instead"
        )
    text = f"{mib(d['live_at_peak_mb'])} MiB allocated inside the window were still live (matched by Addr)"
    before = d["peak_mb"] - d["live_at_peak_mb"]
    if d["levels"] == "absolute" and before > 0:
        text += f"; the other {mib(before)} MiB were allocated before the window"
    return text


def churn_phrase(d: dict) -> str:
    text = f"{d['allocations']:,} allocations, {d['frees']:,} frees"
    if d["events_per_step"] is not None:
        text += f" ({d['events_per_step']:,.0f} events per step)"
    if d["allocator"] != "cpu":
        if d["steady_steps"]:
            text += (
                f"; cudaMalloc/cudaFree in steady state: {d['steady_runtime_calls_per_step']:,.1f} per step "
                f"({d['steady_steps_calling']} of {d['steady_steps']} steady steps called them)"
            )
        else:
            text += "; steady state unknown: one measured step"
    return text


def spark_label(d: dict) -> str:
    """What the sparkline shows, in words, so it reads without colour and in a pipe."""
    levels = [s["level_mb"] for s in d["spark"] if s["level_mb"] is not None]
    if not levels or not d["spark"]:
        return ""
    what = "MiB above the window's start" if d["levels"] == "relative" else "MiB allocated"
    first, last = d["spark"][0], d["spark"][-1]
    width = (last["end_ms"] - first["start_ms"]) / len(d["spark"])
    # digits from the column's width: a 0.2 ms window read "0.0 to 0.2 ms, one column = 0.00 ms"
    tenths = -math.floor(math.log10(width)) if width > 0 else 0
    digits, column_digits = max(1, tenths - 1), max(2, tenths)
    return (
        f"level over time ({what}): {BLOCKS[0]} = {mib(min(levels))}, {BLOCKS[-1]} = {mib(max(levels))}; "
        f"{first['start_ms']:,.{digits}f} to {last['end_ms']:,.{digits}f} ms, "
        f"one column = {width:,.{column_digits}f} ms"
    )


def print_memory(trace: Path, *, top: int, as_json: bool) -> None:
    from libreyolo_profile.errors import UsageError

    if top < 1:
        raise UsageError(f"--top {top}: must be ≥ 1")
    profile = opened(trace)
    devices = memory_devices(profile, top)
    note = None if devices else NO_MEMORY
    if as_json:
        for d in devices:
            d["sparkline_label"] = spark_label(d)
        emit_json({"profile": profile_identity(profile.loaded), "devices": devices, "note": note})
        return
    console = stdout_console()
    if note:
        console.print(note, highlight=False)
        return
    for d in devices:
        _print_device(console, d)


def _say(console, lead: str, text: str) -> None:
    """`text` after `lead`, wrapped between words at the terminal's width under its own first column (a pipe
    reads 80 columns: a sentence left to the terminal ran to 200)."""
    import textwrap

    lines = textwrap.wrap(
        safe_line(text),
        width=max(console.width, len(lead) + 20),
        initial_indent=lead,
        subsequent_indent=" " * len(lead),
        break_on_hyphens=False,
    )
    for line in lines:
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def _print_device(console, d: dict) -> None:
    relative = d["levels"] == "relative"
    title = f"Memory, {device_name(d)}" + LEVEL_NOTES.get(d["levels"], "")
    console.print(safe_line(title), style="bold", highlight=False, markup=False)
    reserved = "not recorded" if d["peak_reserved_mb"] is None else f"{d['peak_reserved_mb']:,.1f} MiB"
    for label, text in (
        ("peak", peak_phrase(d)),
        ("when", when_phrase(d)),
        ("running", running_phrase(d)),
        ("held", held_phrase(d)),
        ("reserved", f"peak {reserved}"),
        ("churn", churn_phrase(d)),
    ):
        _say(console, f"  {label:<9} ", text)
    if d["sparkline"]:
        # the legend of the line under it, one line whatever the width (it reads as one with the line)
        console.print(f"  {spark_label(d)}", highlight=False, markup=False, soft_wrap=True)
        console.print(f"  {d['sparkline']}", highlight=False, markup=False, soft_wrap=True)
    unit = "MiB above start" if relative else "MiB"
    console.print(
        table(
            f"Top allocating ops, {device_name(d)} (by what their calls handed on)",
            [
                ("op", "left"),
                ("allocs", "right"),
                ("alloc MiB", "right"),
                ("handed on MiB", "right"),
                ("to peak MiB", "right"),
                ("live@peak MiB", "right"),
            ],
            [
                [r["op"], r["allocations"], r["alloc_mb"], r["net_mb"], r["net_to_peak_mb"], r["live_at_peak_mb"]]
                for r in d["top_ops"]
            ],
        )
    )
    if d["top_ops"]:
        _say(console, "  ", HANDED_ON)
    if any(r["module"] != "(outside any module)" for r in d["top_modules"]):
        console.print(
            table(
                f"Modules holding the peak, {device_name(d)} ({unit})",
                [("module", "left"), ("alloc MiB", "right"), ("to peak MiB", "right"), ("live@peak MiB", "right")],
                [[r["module"], r["alloc_mb"], r["net_to_peak_mb"], r["live_at_peak_mb"]] for r in d["top_modules"]],
            )
        )
