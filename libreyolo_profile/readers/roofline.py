"""`libreyolo profile roofline`: per op and shape, FLOPs and bytes per call, the achieved rates and
the share of the device's roof reached (sql/roofline_reader.sql over the roofline table, which
sql/roofline.sql builds)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from libreyolo_profile.errors import UsageError
from libreyolo_profile.output.json_out import emit_json
from libreyolo_profile.output.terminal import fmt_sig, stdout_console, table
from libreyolo_profile.output.textsafe import safe_line
from libreyolo_profile.readers.common import open_profile, profile_identity, records, run_sql
from libreyolo_profile.store.document.marks import SECTION_UNAVAILABLE
from libreyolo_profile.store.sections import ROOFLINE_METRICS

NO_ROWS = (
    "this profile holds no roofline rows: it was written before the roofline table existed, or its "
    "window has no op calls (`libreyolo profile run|infer` record the shapes it needs)"
)


def roofline_rows(con, top: int | None = None, op: str | None = None) -> list[dict]:
    """The rows of sql/roofline_reader.sql (summary, report and what-if read them too)."""
    try:
        return records(*run_sql(con, "roofline_reader.sql", {"top": top, "op": op}))
    except duckdb.InvalidInputException as exc:
        raise UsageError(f"--op {op!r}: not a regular expression ({str(exc).splitlines()[0][:120]})") from None


ABOVE_ROOF_SHOWN = 3  # the few ops summary and report name


def above_roof_rows(con, top: int = ABOVE_ROOF_SHOWN) -> list[dict]:
    """The op shapes with the most device time above their roofline (sql/roofline_above.sql)."""
    return records(*run_sql(con, "roofline_above.sql", {"top": top}))


def above_roof_lines(rows: list[dict], noun: str = "step") -> list[str]:
    """One sentence per op: how much longer than its roofline time it took, at what share of its roof, bound
    by what (time over the roofline: the op ran slower than the roof allows)."""
    return [
        f"{r['op']} {_shape(r['input_dims'])}: {fmt_sig(r['above_roof_ms_per_step'])} ms/{noun} over its roofline "
        f"time ({fmt_sig(r['pct_of_roofline'])}% of roof, {r['bound']}-bound)"
        for r in rows
    ]


SIGNIFICANT = ("gflops", "tflops_per_s", "tb_per_s", "pct_of_roofline")  # span decades: CPU ops run at 1e-4 TFLOP/s


def _cell(key: str, value):
    """Rates and shares in 3 significant digits, so a CPU op's 0.000186 TFLOP/s does not print as 0.00."""
    return fmt_sig(value) if key in SIGNIFICANT and isinstance(value, (int, float)) else value


def _op_label(row: dict) -> str:
    """The op, or where the device work no op call launched came from (its row has op NULL)."""
    if row["op"] is not None:
        return row["op"]
    where = "outside the steps" if row["launched_outside_steps"] else f"in {row['phase'] or 'a step'}"
    return f"(no op: launched {where})"


def _shape(text: str | None, width: int = 40) -> str:
    """The recorded shapes without the empty entries of non-tensor arguments, cut to `width`."""
    if not text:
        return "—"
    text = text.replace(", []", "")
    return text if len(text) <= width else text[: width - 1] + "…"


# a CPU reaches GFLOP/s and GB/s: its rates are shown in those units (the JSON keeps the table's TFLOP/s, TB/s)
CPU_RATES = {"tflops_per_s": "GFLOP/s", "tb_per_s": "GB/s"}


def _row_cell(row: dict, key: str | None, on_cpu: bool = False):
    if key is None:
        return _shape(row["input_dims"])
    if key == "op":
        return _op_label(row)
    if on_cpu and key in CPU_RATES and isinstance(row[key], (int, float)):
        return _cell(key, row[key] * 1e3)
    if key == "device_ms_per_step" and isinstance(row[key], float):
        return f"{row[key]:.3f}"
    return _cell(key, row[key])


def print_roofline(trace: Path, *, top: int, op: str | None, as_json: bool) -> None:
    if top < 1:
        raise UsageError(f"--top {top}: must be ≥ 1")
    profile = open_profile(trace)
    rows = roofline_rows(profile.con, top, op)
    head = profile.head
    figures = {name: getattr(head.metrics, name) for name in ROOFLINE_METRICS}
    reasons = {name: head.null_reasons.get(name) for name in ROOFLINE_METRICS if figures[name] is None}
    note = None if rows else (NO_ROWS if op is None else f"no roofline row matches --op {op!r}")
    if not rows and SECTION_UNAVAILABLE in head.marks and reasons.get("sol_step_ms"):
        note = reasons["sol_step_ms"]  # the section could not be computed on this trace: why, not "no rows"
    if as_json:
        emit_json(
            {
                "profile": profile_identity(profile.loaded),
                "filters": {"top": top, "op": op},
                "metrics": figures,
                "null_reasons": reasons,
                "roofline": rows,
                "note": note,
            }
        )
        return
    console = stdout_console()
    if note:
        console.print(note)
        return
    on_cpu = head.device_type == "cpu"
    shown = [
        ("op", "left", "op"),
        ("shapes", "left", None),
        ("ms/step", "right", "device_ms_per_step"),
        ("calls/step", "right", "calls_per_step"),
        ("GFLOP", "right", "gflops"),
        ("device µs", "right", "device_us"),
        (CPU_RATES["tflops_per_s"] if on_cpu else "TFLOP/s", "right", "tflops_per_s"),
        (CPU_RATES["tb_per_s"] if on_cpu else "TB/s", "right", "tb_per_s"),
        ("% of roof", "right", "pct_of_roofline"),
        ("bound", "left", "bound"),
        ("above roof ms", "right", "above_roof_ms_per_step"),
    ]
    rate_headers = [header for header, _, key in shown if key in CPU_RATES]
    console.print(
        table(
            "Roofline per op and shape (per call; device time per step)",
            [(header, justify) for header, justify, _ in shown],
            [[_row_cell(r, key, on_cpu) for _, _, key in shown] for r in rows],
            # what a narrow terminal leaves out first: the per-call inputs of the rates, then the rates; the
            # time, the share of the roof and the time above it stay (--json keeps everything)
            optional=("GFLOP", "device µs", "calls/step", *reversed(rate_headers), "bound"),
        )
    )
    # a reason may quote the trace's device name: printed as plain, escaped text
    say = lambda text: console.print(safe_line(text), highlight=False, markup=False, style="dim")  # noqa: E731
    roofs = {(r["device_model"], r["peak_source"]) for r in rows if r["device_model"] and r["peak_source"]}
    for model, source in sorted(roofs, key=str):
        say(f"roof: {model} — {source}")
    for reason in sorted({r["no_model_reason"] for r in rows if r["no_model_reason"]}):
        say(f"NULL figures: {reason}")
    parts = [f"{name} {fmt_sig(value)}" for name, value in figures.items() if isinstance(value, (int, float))]
    parts += [f"{name} null ({why})" for name, why in reasons.items() if why]
    console.print(safe_line("; ".join(parts)), highlight=False, markup=False)
