"""What does `--memory` cost the profiled window? (the figure `infer --help` / `run --help` state)

`--memory` turns on torch.profiler's profile_memory for the profiled window only: every allocation
and free becomes a `[memory]` event. The headline (unprofiled calls) never runs under it, so its only
cost is to the profiled window's own times (profiled_step_ms, the shares stay per-call). This times
that: LibreYOLO9-t (random init, eval) on LibreYOLO's sample image, the exact call and trial loop
`libreyolo profile infer` uses (measure/infer.py InferCall, measure/trials.py TrialRunner,
measure/profiler.py make_profiler), a block of N profiled calls without allocator events and a block
with them, in alternating order (A B, then B A, …) so drift hits both. Per round: cost =
median(with) / median(without) − 1, on the wall time per call and on the process's CPU time per call
(time.process_time: on a machine other jobs share, wall time swings with their load while the CPU
work the profiler adds does not). Reported: every round, the median and the spread over rounds, and
the allocator events one call records.

    python benchmarks/bench_memory_cost.py                         # CPU, imgsz 320 and 640
    python benchmarks/bench_memory_cost.py --imgsz 640 --rounds 8 --calls 10
    python benchmarks/bench_memory_cost.py --device cuda           # on a GPU machine
Prints figures; it is not a test.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _events_per_call(prof, calls: int) -> float:
    """`[memory]` events in the exported trace ÷ calls: what the flag records."""
    from libreyolo_profile.measure import profiler

    with tempfile.TemporaryDirectory() as tmp:
        path = profiler.export_trace(prof, Path(tmp) / "t.json")
        text = path.read_bytes()
        doc = json.loads(gzip.decompress(text) if text[:2] == b"\x1f\x8b" else text)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return sum(1 for e in events if e.get("name") == "[memory]") / calls


def bench_infer(imgsz: int, rounds: int, calls: int, device_name: str) -> dict:
    import libreyolo
    import torch
    from PIL import Image

    from libreyolo_profile.measure import common, profiler
    from libreyolo_profile.measure.infer import InferCall, batch_plan, over_plan
    from libreyolo_profile.measure.options import InferOptions
    from libreyolo_profile.measure.trials import TrialRunner

    common.quiet_libreyolo_logging()
    device = torch.device(device_name)
    torch.manual_seed(0)
    w = libreyolo.LibreYOLO9(None, size="t", device=device_name)
    w.model.eval()
    img = Image.open(libreyolo.SAMPLE_IMAGE).convert("RGB")
    call = over_plan(InferCall(w, device, imgsz, InferOptions(module_depth=0), None), batch_plan([img], 1, calls))
    runner = TrialRunner(device)
    runner.warmup(call, 5)
    events = []

    def window(memory: bool) -> tuple[float, float]:
        """(median wall ms per call, CPU ms per call) of one profiled window."""
        prof = profiler.make_profiler(device, profile_memory=memory)
        cpu = time.process_time()
        times = runner.profiled_window(call, calls, prof).call_ms
        cpu = (time.process_time() - cpu) * 1000 / calls
        if memory and not events:
            events.append(_events_per_call(prof, calls))
        del prof
        return statistics.median(times), cpu

    without, with_memory = [], []
    for r in range(rounds):
        for memory in (False, True) if r % 2 == 0 else (True, False):
            (with_memory if memory else without).append(window(memory))
    result = {"imgsz": imgsz, "rounds": rounds, "calls": calls, "events_per_call": events[0] if events else None}
    for i, clock in enumerate(("wall", "cpu")):
        cost = [(m[i] / p[i] - 1) * 100 for m, p in zip(with_memory, without, strict=False)]
        result[clock] = {
            "profiled_ms": statistics.median(p[i] for p in without),
            "profiled_memory_ms": statistics.median(m[i] for m in with_memory),
            "cost_pct_median": statistics.median(cost),
            "min": min(cost),
            "max": max(cost),
            "rounds_pct": cost,
        }
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description="cost of --memory (profile_memory) on the profiled window")
    ap.add_argument("--imgsz", type=int, nargs="*", default=[320, 640])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--device", default="cpu")
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads (1: CPU time is the work done, not other threads' spinning)",
    )
    a = ap.parse_args()
    import torch

    if a.threads:
        torch.set_num_threads(a.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {a.device}")
    for imgsz in a.imgsz:
        r = bench_infer(imgsz, a.rounds, a.calls, a.device)
        print(
            f"infer imgsz {imgsz}: {r['events_per_call']:,.0f} [memory] events per call "
            f"({a.rounds} rounds × {a.calls} calls, interleaved)"
        )
        for clock, v in (("wall time", r["wall"]), ("CPU time", r["cpu"])):
            print(
                f"  {clock:9s}: profiled {v['profiled_ms']:.1f} ms/call, with --memory {v['profiled_memory_ms']:.1f} "
                f"ms/call: cost median {v['cost_pct_median']:+.1f}% (spread {v['min']:+.1f}..{v['max']:+.1f}%; rounds: "
                + ", ".join(f"{x:+.1f}" for x in v["rounds_pct"])
                + ")"
            )


if __name__ == "__main__":
    main()
