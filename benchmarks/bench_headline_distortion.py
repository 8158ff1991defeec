"""Does the headline `libreyolo profile` reports match the work done with no profiler at all? (issue #13:
target |median distortion| ≤ 1% for `infer` at 640 and 320 and for `run` at 256, over 8 interleaved rounds.)

A (the headline): one trial exactly as `infer`/`run` measures it — measure/infer.py `_measure_trial`
   (warmup, unprofiled block, profiled window, unprofiled block) or measure/train.py `measure_trial`
   (profiled pass and its unprofiled replay) — and its headline step_ms, computed by the store's own
   definition (store/document/headline.py) from the trial's unprofiled calls.
B (plain work): the same calls (infer) or a pass of the same number of steps from the same seed (run),
   after the same warmup, in a bare loop: no profiler, no phase timers, no progress bar, one
   `time.perf_counter` around each call (infer) or the whole block (run).

Rounds alternate which goes first (A B, then B A, …), all in one process on one model, so drift hits
both. Per round: distortion = A ÷ B − 1. Printed: every round, the median and the spread.

    python benchmarks/bench_headline_distortion.py                      # infer 640 + 320, run 256, 8 rounds
    python benchmarks/bench_headline_distortion.py --rounds 4 --calls 20 --skip-run
Prints figures; it is not a test. On a machine shared with other work the spread says how far to trust it.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _fmt(xs) -> str:
    return ", ".join(f"{x:+.2f}" for x in xs)


def _load() -> str:
    try:
        return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    except OSError:
        return "load average unknown"


def bench_infer(imgsz: int, rounds: int, calls: int, warmup: int) -> list[float]:
    import libreyolo
    import torch
    from PIL import Image

    from libreyolo_profile.measure import common
    from libreyolo_profile.measure.infer import InferCall, _measure_trial, batch_plan, over_plan
    from libreyolo_profile.measure.options import InferOptions
    from libreyolo_profile.measure.trials import TrialRunner
    from libreyolo_profile.store.document.headline import unprofiled_metrics

    common.quiet_libreyolo_logging()
    device = torch.device("cpu")
    torch.manual_seed(0)
    wrapper = libreyolo.LibreYOLO9(None, size="t", device="cpu")
    wrapper.model.eval()
    image = Image.open(libreyolo.SAMPLE_IMAGE).convert("RGB")
    opts = InferOptions(imgsz=imgsz, runs=calls, warmup=warmup, device="cpu")  # the CLI's defaults otherwise
    call = over_plan(InferCall(wrapper, device, imgsz, opts, None), batch_plan([image], 1, calls))
    TrialRunner(device).warmup(call, warmup)

    def headline(tmp: Path) -> float:
        capture = _measure_trial(call, opts, device, tmp / "trace.json", 0, False)
        return unprofiled_metrics("infer", capture.unprofiled)["step_ms"]

    def plain() -> float:
        for index in range(warmup):
            call(index, False)
        gc.collect()  # as the headline's blocks start: neither side pays for the other's garbage
        times = []
        for index in range(calls):
            t0 = time.perf_counter()
            call(index, False)
            times.append((time.perf_counter() - t0) * 1000.0)
        return statistics.fmean(times)

    distortion = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            if r % 2 == 0:
                a = headline(Path(tmp))
                b = plain()
            else:
                b = plain()
                a = headline(Path(tmp))
            distortion.append((a / b - 1) * 100)
            print(
                f"  infer {imgsz} round {r + 1}: headline {a:.2f} ms, plain {b:.2f} ms, {distortion[-1]:+.2f}%",
                flush=True,
            )
    return distortion


def bench_run(imgsz: int, rounds: int, steps: int, warmup: int) -> list[float]:
    import torch

    from libreyolo_profile.measure import common, train
    from libreyolo_profile.measure.dataset import resolve_dataset
    from libreyolo_profile.measure.options import RunOptions
    from libreyolo_profile.measure.trials import seed_everything
    from libreyolo_profile.store.document.headline import unprofiled_metrics

    common.quiet_libreyolo_logging()
    device = torch.device("cpu")
    data = str(ROOT / "fixtures" / "synth3.yaml")
    opts = RunOptions(data=data, batch=2, imgsz=imgsz, workers=0, steps=steps, warmup=warmup, device="cpu", amp=False)
    distortion = []
    with tempfile.TemporaryDirectory() as tmp:
        training = train.set_up(opts, resolve_dataset(data), device, Path(tmp))
        step = training.step

        def headline(r: int) -> float:
            capture = train.measure_trial(training, opts, Path(tmp) / "trace.json", r)
            return unprofiled_metrics("train", capture.unprofiled)["step_ms"]

        def plain(r: int) -> float:
            seed_everything(train.SEED + 1 + r, device)  # the batches the headline's trial r draws
            train._start_epoch(training)
            step.begin_pass(training.trainer.train_loader)
            for index in range(warmup):
                step(index, False)
            gc.collect()  # as the headline's block starts
            t0 = time.perf_counter()
            for index in range(steps):
                step(index, False)
            wall = (time.perf_counter() - t0) * 1000.0
            step.end_pass()
            return wall / steps

        for r in range(rounds):
            if r % 2 == 0:
                a = headline(r)
                b = plain(r)
            else:
                b = plain(r)
                a = headline(r)
            distortion.append((a / b - 1) * 100)
            print(
                f"  run {imgsz} round {r + 1}: headline {a:.1f} ms/step, plain {b:.1f} ms/step, {distortion[-1]:+.2f}%",
                flush=True,
            )
    return distortion


def _report(name: str, distortion: list[float]) -> None:
    median = statistics.median(distortion)
    verdict = "meets" if abs(median) <= 1.0 else "misses"
    print(
        f"{name}: headline vs plain work, median distortion {median:+.2f}% over {len(distortion)} rounds "
        f"(spread {min(distortion):+.2f}..{max(distortion):+.2f}%) — {verdict} the ≤ 1% target; "
        f"rounds: {_fmt(distortion)}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description="distortion of libreyolo profile's headline against plain work")
    ap.add_argument("--imgsz", type=int, nargs="*", default=[640, 320])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--skip-run", action="store_true")
    ap.add_argument("--run-imgsz", type=int, default=256)
    ap.add_argument("--run-steps", type=int, default=4)
    a = ap.parse_args()
    import torch

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {_load()}", flush=True)
    for imgsz in a.imgsz:
        _report(f"infer imgsz {imgsz} ({a.calls} calls)", bench_infer(imgsz, a.rounds, a.calls, a.warmup))
    if not a.skip_run:
        _report(
            f"run imgsz {a.run_imgsz} ({a.run_steps} steps, batch 2)", bench_run(a.run_imgsz, a.rounds, a.run_steps, 1)
        )
    print(f"after: {_load()}")


if __name__ == "__main__":
    main()
