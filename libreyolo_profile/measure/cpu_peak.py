"""The CPU's roof, measured: what a short float32 matmul and a large copy reach on this machine with
the threads torch uses. The roofline of a CPU profile (sql/roofline.sql) is held to these figures;
they are recorded with their method in profile.json (environment.cpu_peak).

A measurement like any other: PROBES short probes, each the best of a few repeats, the roof the best
probe and the spread between the probes recorded beside it (a busy machine shows as a wide spread, and the
method says so), so a moment of contention on a shared machine lowers the figure less and never silently.
The probe costs a measuring command 0.3-1 s (a 2-core CPU, 2 and 1 torch threads), and the roof is the
machine's, not the run's: `cpu_peak` remembers it for REMEMBERED_HOURS per CPU model, logical CPU count,
torch thread count and torch version (measure/remembered.py), so the runs a user compares within a day are
held to one roof, and says in its method when it was measured. A remembered roof is checked each time by
one matmul and one copy: where they beat it by more than its recorded spread (the roof was measured on a
busy machine), the roof is measured again.

After a measured profile's analysis the roof is probed again (`reprobe`, measure/common.py decides when:
the measurement was marked noisy or contended, or an op ran faster than the roof). The roof is the best the
machine reaches, so it becomes the higher of the two per figure, remembered when the new probe raised it;
the profile records the re-probe, its figures and why (environment.cpu_peak.reprobed). That probe is one
short round (REPROBE_REPEATS): it can only raise the roof, so it needs no spread, and a machine busy enough
to ask for it would make the full probe slowest exactly when the measurement already was."""

from __future__ import annotations

import datetime
import hashlib
import math
import os
import time
from typing import Annotated

import msgspec

MATMUL_N = 1024  # 2·n³ = 2.1 GFLOP per product: tens of ms on a laptop core, enough to time
COPY_MIB = 64  # past every cache level of common CPUs: the copy runs at memory bandwidth
PROBES = 5  # short probes, each the best of REPEATS // PROBES repeats
REPEATS = 20
REPROBE_REPEATS = 3  # the re-probe after a measurement: one probe, the best of 3 (~0.2 s on a 2-core CPU)
REMEMBERED_HOURS = 24
BUSY_SPREAD_PCT = 20  # probes this far apart were not measured on a quiet machine: the method says so
_VERSION = "2"  # of the key and the entry: bump when either changes

_Positive = Annotated[float, msgspec.Meta(gt=0)]


class _Roof(msgspec.Struct):
    fp32_tflops: _Positive
    tb_per_s: _Positive
    threads: Annotated[int, msgspec.Meta(ge=1)]
    method: str
    measured_at: float  # Unix seconds
    fp32_spread_pct: Annotated[float, msgspec.Meta(ge=0)]  # (best − worst probe) ÷ best, %
    copy_spread_pct: Annotated[float, msgspec.Meta(ge=0)]


def cpu_peak(cpu_model: str) -> dict:
    """The roof for this command: the one an earlier command on this machine measured in the last
    REMEMBERED_HOURS (same CPU model, logical CPUs, torch threads and torch version), else measured now
    and remembered. {"fp32_tflops", "tb_per_s", "threads", "method", "measured_at"} or {"null_reason"}."""
    import torch

    from libreyolo_profile.measure.remembered import entry_path, read_entry, write_entry

    threads = torch.get_num_threads()
    entry = entry_path("cpu_peak", _key(cpu_model, threads, torch.__version__))
    kept, now = read_entry(entry, _Roof), time.time()
    if kept is not None and _usable(kept, threads, now) and not _beaten_now(kept):
        shown = dict(msgspec.structs.asdict(kept), measured_at=_utc(kept.measured_at))
        shown["method"] = (
            f"{kept.method}, at {shown['measured_at']} by an earlier command on this machine (remembered "
            f"{REMEMBERED_HOURS} h for the same CPU, thread count and torch)"
        )
        return shown
    measured = measure_cpu_peak()
    if "null_reason" in measured:
        return measured
    write_entry(entry, _Roof(**measured, measured_at=now))
    return dict(measured, measured_at=_utc(now))


def reprobe(cpu_model: str, roof: dict, why: str) -> dict:
    """`roof` (a cpu_peak() answer) after a short probe now, because `why`: each figure the higher of the two,
    the new figures remembered where they raised it, and `reprobed` saying when, why and what the probe read."""
    import torch

    from libreyolo_profile.measure.remembered import entry_path, write_entry

    now = time.time()
    measured = measure_cpu_peak(probes=1, repeats=REPROBE_REPEATS)
    if "null_reason" in measured:
        return dict(roof, reprobed={"why": why, "at": _utc(now), "null_reason": measured["null_reason"]})
    record = {
        "why": why,
        "at": _utc(now),
        "fp32_tflops": measured["fp32_tflops"],
        "tb_per_s": measured["tb_per_s"],
        "method": measured["method"],
    }
    if "null_reason" in roof:  # no roof before: the re-probe is the roof
        write_entry(
            entry_path("cpu_peak", _key(cpu_model, measured["threads"], torch.__version__)),
            _Roof(**measured, measured_at=now),
        )
        return dict(measured, measured_at=_utc(now), reprobed=record)
    raised = [k for k in ("fp32_tflops", "tb_per_s") if measured[k] > roof[k]]
    best = {k: max(roof[k], measured[k]) for k in ("fp32_tflops", "tb_per_s")}
    said = (
        f"; probed again after the measurement ({why}): {measured['fp32_tflops']:.3f} TFLOP/s, "
        f"{measured['tb_per_s']:.4f} TB/s, "
        + (
            f"raising the {' and the '.join(RAISED_WORDS[k] for k in raised)} roof"
            if raised
            else "below the roof, kept"
        )
    )
    if raised:
        # one probe has no spread of its own: the earlier roof's stays the margin a later quick check must beat
        spreads = {k: max(measured[k], roof.get(k, 0.0)) for k in ("fp32_spread_pct", "copy_spread_pct")}
        kept = _Roof(
            **best,
            threads=measured["threads"],
            method=f"measured: the higher of an earlier roof and a probe after a measurement ({why}); that probe: "
            + measured["method"],
            measured_at=now,
            **spreads,
        )
        write_entry(entry_path("cpu_peak", _key(cpu_model, measured["threads"], torch.__version__)), kept)
    return dict(roof, **best, method=roof["method"] + said, reprobed=record)


RAISED_WORDS = {"fp32_tflops": "matmul", "tb_per_s": "copy"}


def _key(cpu_model: str, threads: int, torch_version: str) -> str:
    key = f"{_VERSION}|{cpu_model}|{os.cpu_count()}|{threads}|{torch_version}|{MATMUL_N}|{COPY_MIB}|{REPEATS}|{PROBES}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _beaten_now(kept: _Roof) -> bool:
    """One matmul and one copy beat the remembered roof by more than its own recorded spread."""
    quick = measure_cpu_peak(probes=1, repeats=1)
    if "null_reason" in quick:
        return False
    return quick["fp32_tflops"] > kept.fp32_tflops * (1 + kept.fp32_spread_pct / 100) or quick[
        "tb_per_s"
    ] > kept.tb_per_s * (1 + kept.copy_spread_pct / 100)


def _usable(kept: _Roof, threads: int, now: float) -> bool:
    fresh = 0 <= now - kept.measured_at <= REMEMBERED_HOURS * 3600  # a time in the future is no time
    return fresh and kept.threads == threads and math.isfinite(kept.fp32_tflops) and math.isfinite(kept.tb_per_s)


def _utc(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _probe_seconds(work, probes: int, repeats: int) -> list[float]:
    """The best time of each of `probes` short probes of `repeats` repeats."""
    work()  # warm: allocation, thread pool, page faults
    bests = []
    for _ in range(probes):
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            work()
            best = min(best, time.perf_counter() - start)
        bests.append(best)
    return bests


def _spread_pct(seconds: list[float]) -> float:
    """How much slower the worst probe ran than the best, % of the best's rate."""
    return 100 * (1 - min(seconds) / max(seconds)) if max(seconds) > 0 else 0.0


def measure_cpu_peak(probes: int = PROBES, repeats: int = REPEATS // PROBES) -> dict:
    """{"fp32_tflops", "tb_per_s", "threads", "method", "fp32_spread_pct", "copy_spread_pct"}, or
    {"null_reason"} when torch cannot run the probe."""
    try:
        import torch

        a, b = torch.randn(MATMUL_N, MATMUL_N), torch.randn(MATMUL_N, MATMUL_N)
        product = torch.empty(MATMUL_N, MATMUL_N)
        matmul_s = _probe_seconds(lambda: torch.mm(a, b, out=product), probes, repeats)
        source = torch.empty(COPY_MIB * 2**20 // 4)
        target = torch.empty_like(source)
        copy_s = _probe_seconds(lambda: target.copy_(source), probes, repeats)
    except Exception as exc:  # a broken torch build: the roof stays unknown, and says why
        return {"null_reason": f"the CPU peak probe failed ({type(exc).__name__}: {str(exc)[:120]})"}
    threads = torch.get_num_threads()
    fp32_spread, copy_spread = _spread_pct(matmul_s), _spread_pct(copy_s)
    busy = ": the machine was busy while it measured" if max(fp32_spread, copy_spread) > BUSY_SPREAD_PCT else ""
    return {
        "fp32_tflops": 2 * MATMUL_N**3 / min(matmul_s) / 1e12,
        "tb_per_s": 2 * COPY_MIB * 2**20 / min(copy_s) / 1e12,  # bytes read + bytes written
        "threads": threads,
        "method": (
            f"measured: the best of {probes} probes, each the best of {repeats} torch.mm of two "
            f"{MATMUL_N}×{MATMUL_N} float32 matrices (2·n³ FLOPs) and copies of {COPY_MIB} MiB float32 (bytes "
            f"read + written), {threads} torch threads; the probes spread {fp32_spread:.0f}% (matmul) and "
            f"{copy_spread:.0f}% (copy){busy}"
        ),
        "fp32_spread_pct": fp32_spread,
        "copy_spread_pct": copy_spread,
    }
