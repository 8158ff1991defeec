"""The headline of a measured profile: step time, throughput, latency percentiles and the stage split,
from the calls timed WITHOUT the profiler; and the evidence that the machine was noisy meanwhile.

A profile we measured carries, per trial, the same work timed without the profiler (capture.py
`UnprofiledTiming`, blocks interleaved with the profiled window on the same inputs). Those calls
define the headline, so a profile's step time is what the work costs when nobody watches; the trace
(sql/metrics.sql) supplies the attribution: shares, kernels, ops, blame. A foreign trace, or a
profile measured with --no-overhead, has only the trace: its headline is the trace's, and
`timing.headline` says so.

Each figure has the meaning METRICS gives it (metric_catalog.py) and is computed once, in SQL:
sql/headline.sql for a trial's headline, sql/trial_spread.sql for the spread over trials.
"""

from __future__ import annotations

from contextlib import contextmanager

from libreyolo_profile.metric_catalog import PERCENTILE_MIN_CALLS
from libreyolo_profile.store.document.capture import TrialCapture, UnprofiledTiming
from libreyolo_profile.store.document.window import WINDOW_RULES

INFER_STAGES = ("preprocess", "forward", "postprocess")
TRAIN_STAGES = ("dataload", "to_device")


def unprofiled_metrics(kind: str, timing: UnprofiledTiming) -> dict:
    """The headline metrics of one trial, from its unprofiled calls (sql/headline.sql)."""
    stages = INFER_STAGES if kind == "infer" else TRAIN_STAGES
    stage_rows = [(stage, i, ms) for stage in stages for i, ms in enumerate(timing.stage_ms.get(stage) or [])]
    tables = {
        "headline_trial": {
            "kind": [kind],
            "images_per_call": [timing.images_per_call],
            "blocks_wall_ms": [float(sum(timing.block_wall_ms))],
        },
        "headline_calls": {"call_index": list(range(len(timing.call_ms))), "call_ms": list(timing.call_ms)},
        "headline_stages": {
            "stage": [r[0] for r in stage_rows],
            "call_index": [r[1] for r in stage_rows],
            "ms": [float(r[2]) for r in stage_rows],
        },
    }
    with _module_connection(tables, "headline.sql") as con:
        m = _one_row(con, "SELECT * FROM headline")
        split = con.execute("SELECT stage, stage_ms, stage_pct FROM headline_stage_split").fetchall()
    for stage, stage_ms, stage_pct in sorted(split, key=lambda row: stages.index(row[0])):
        m[f"{stage}_ms"], m[f"{stage}_pct"] = stage_ms, stage_pct
    return m


def trial_spread(values_by_metric: dict[str, list[float]]) -> dict:
    """{metric: {mean, std, n, values}} over a repeated measurement's trials (sql/trial_spread.sql)."""
    rows = [(name, trial, float(v)) for name, values in values_by_metric.items() for trial, v in enumerate(values)]
    if not rows:
        return {}
    table = {"metric": [r[0] for r in rows], "trial": [r[1] for r in rows], "value": [r[2] for r in rows]}
    with _module_connection({"trial_values": table}, "trial_spread.sql") as con:
        spread = con.execute('SELECT metric, mean, std, n, "values" FROM trial_spread').fetchall()
    found = {name: {"mean": mean, "std": std, "n": n, "values": values} for name, mean, std, n, values in spread}
    return {name: found[name] for name in values_by_metric if name in found}  # the caller's order


@contextmanager
def _module_connection(tables: dict[str, dict[str, list]], module: str):
    """An in-memory DuckDB with `tables` (column lists) registered and `module` run over them."""
    import pyarrow as pa

    from libreyolo_profile.connections import scratch_connection
    from libreyolo_profile.sqlmodules import run_module

    con = scratch_connection()
    try:
        for name, columns in tables.items():
            con.register(name, pa.table(columns, schema=_schema(columns)))
        run_module(con, module)
        yield con
    finally:
        con.close()


def _schema(columns: dict[str, list]):
    """Column types fixed up front, so an empty list still has one (pyarrow would infer `null`)."""
    import pyarrow as pa

    kinds = {"kind": pa.string(), "stage": pa.string(), "metric": pa.string()}
    counts = {"images_per_call", "call_index", "trial"}
    return pa.schema([(name, kinds.get(name) or (pa.int64() if name in counts else pa.float64())) for name in columns])


def _one_row(con, sql: str) -> dict:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return dict(zip(names, cursor.fetchone(), strict=True))


def apply_headline(m: dict, capture: TrialCapture | None) -> None:
    """Overwrite the trace's headline figures of one trial with its unprofiled ones, and pair the two
    for profiler_overhead_pct. Without unprofiled calls the trace's figures stay the headline."""
    kind = m.get("kind")
    profiled = capture.profiled_step_ms if capture is not None else None
    m["profiled_step_ms"] = profiled if profiled is not None else m.get("step_ms")
    m["profiler_overhead_pct"] = None
    m["timing_cv_pct"] = None
    m["other_cpu_pct"] = (capture.machine or {}).get("other_cpu_pct") if capture is not None else None
    if capture is None or capture.unprofiled is None or not capture.unprofiled.call_ms:
        return
    m.update(unprofiled_metrics(kind, capture.unprofiled))
    if profiled is not None and m.get("step_ms"):
        m["profiler_overhead_pct"] = 100.0 * (profiled - m["step_ms"]) / m["step_ms"]


def calls_behind_percentiles(capture: TrialCapture | None, trace_steps) -> int | None:
    """How many calls the trial's latency percentiles are computed from."""
    if capture is not None and capture.unprofiled is not None and capture.unprofiled.call_ms:
        return len(capture.unprofiled.call_ms)
    return trace_steps if isinstance(trace_steps, int) else None


def drop_thin_percentiles(m: dict, calls: int | None) -> dict:
    """Null every percentile with too few calls behind it; returns {metric: why} for those nulled."""
    reasons = {}
    for name, minimum in PERCENTILE_MIN_CALLS.items():
        if m.get(name) is None or calls is None or calls >= minimum:
            continue
        m[name] = None
        reasons[name] = (
            f"{name.split('_')[1]} needs at least {minimum} calls to mean anything; this trial timed "
            f"{calls} (raise --runs)"
        )
    return reasons


def timing_record(kind: str, captures: list) -> dict:
    """profile.json's `timing`: where the headline came from and how the overhead was measured."""
    measured = [c for c in captures if c is not None]
    unprofiled = [c.unprofiled for c in measured if c.unprofiled is not None]
    if not measured:
        return {"headline": "trace", "why": "a foreign trace carries only profiled work", "overhead_method": None}
    if not unprofiled:
        return {
            "headline": "trace",
            "why": "measured with --no-overhead: no unprofiled calls were timed",
            "overhead_method": None,
            "processes": [c.process for c in measured],
            "machine": [c.machine for c in measured],
        }
    first = unprofiled[0]
    unit = "calls" if kind == "infer" else "steps"
    pair = "mean call time" if kind == "infer" else "wall time per step, each block ending when the device is done"
    places = list(dict.fromkeys(u.where for u in unprofiled))  # trials alternate sides in `run`
    window = [c.extra.get("profiled_calls" if kind == "infer" else "profiled_steps") for c in measured]
    return {
        "headline": "unprofiled",
        "unprofiled_calls_per_trial": [len(u.call_ms) for u in unprofiled],
        **(
            {"profiled_calls_per_trial": window, "window_rule": WINDOW_RULES[kind]}
            if kind in WINDOW_RULES and all(n is not None for n in window)
            else {}
        ),
        "where": places[0] if len(places) == 1 else places,
        "clock": first.clock,
        "stage_clock": "host perf_counter around each phase of the unprofiled calls",
        "overhead_method": (
            f"profiler_overhead_pct = (profiled_step_ms − step_ms) ÷ step_ms, each the {pair}: of the "
            f"profiled {unit}, and of the {unit} timed without the profiler ({'; '.join(places)}); "
            "can be negative within timing noise"
        ),
        "processes": [c.process for c in measured],
        "machine": [c.machine for c in measured],
    }


def noise_evidence(kind: str, captures: list, per_trial: list[dict], thresholds: dict) -> list[str]:
    """Why the measurement was noisy, one sentence per finding with its figures (empty: it was not)."""
    found = []
    many = len(captures) > 1
    for index, (capture, m) in enumerate(zip(captures, per_trial, strict=False), 1):
        if capture is None:
            continue
        where = f" (trial {index})" if many else ""
        machine = capture.machine or {}
        other, steal = machine.get("other_cpu_pct"), machine.get("steal_pct")
        if other is not None and other >= thresholds["noisy_other_cpu_pct"]:
            found.append(
                f"other processes used {other:.0f}% of the machine's {machine.get('cpu_count')} CPUs while "
                f"it measured{where} (load average {machine.get('loadavg_1m_end')})"
            )
        if steal is not None and steal >= thresholds["noisy_steal_pct"]:
            found.append(f"the hypervisor stole {steal:.1f}% of CPU time{where}")
        for side in ("start", "end"):
            gpu = (machine.get("gpu") or {}).get(side) or {}
            slowing = [r for r in gpu.get("throttle_reasons", []) if r in SLOWING_THROTTLES]
            if slowing:
                found.append(
                    f"the GPU was throttled ({', '.join(slowing)}; SM clock {gpu.get('sm_clock_mhz')} of "
                    f"{gpu.get('sm_clock_max_mhz')} MHz) at the {side}{where}"
                )
                break
        cv = m.get("timing_cv_pct")
        if kind == "infer" and cv is not None and cv >= thresholds["noisy_cv_pct"]:
            found.append(f"the unprofiled calls' times varied by {cv:.0f}% (coefficient of variation){where}")
    return found


# NVML throttle reasons that slow the work against the card's own rules (measure/noise.py records them)
SLOWING_THROTTLES = frozenset(
    {
        "software power cap",
        "hardware slowdown",
        "software thermal slowdown",
        "hardware thermal slowdown",
        "hardware power brake slowdown",
    }
)
