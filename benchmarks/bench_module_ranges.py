"""What do the module ranges (measure/modules.py, `--module-depth`) add to a profiled call, on top of
what the profiler already costs? Issue 16's target: at depth 2, at most 1% more.

Infer: one process, LibreYOLO9-t (random init, eval) on LibreYOLO's sample image, the exact call and
trial loop `libreyolo profile infer` uses (measure/infer.py `InferCall`, measure/trials.py
`TrialRunner`, measure/profiler.py `make_profiler`). Per round, three blocks of N calls: unprofiled,
profiled without module ranges (depth 0: today's profile), profiled with them (depth 2), in rotating
order so drift hits all three. Per round: the ranges' cost = (median(profiled, depth 2) −
median(profiled, depth 0)) / median(unprofiled), in % of the unprofiled call: the extra distortion
of the headline.

Run: the real training step (measure/train_step.py `TrainStep`, forward and backward ranges) on the
fixture dataset, rounds of S profiled steps at depth 0 vs depth 2 and S unprofiled (a fresh loader
pass each block), per-step window time compared the same way.

CPU time (first, and robust on a shared machine): wall-clock blocks swing by tens of % when other
jobs share the CPUs, far more than the effect measured. So the ranges' own cost is also measured as
the calling thread's CPU time (`time.thread_time`) of profiled calls at depth 0 and depth 2, with
torch on one thread so all the call's work is on that thread and waiting for a CPU does not count;
the difference, per call or step, against the same call's CPU time unprofiled at depth 0.

    python benchmarks/bench_module_ranges.py                 # infer 640 + 320, run 256
    python benchmarks/bench_module_ranges.py --imgsz 320 --rounds 8 --calls 10 --skip-run
    python benchmarks/bench_module_ranges.py --cpu-time-only
Prints figures; it is not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEPTH = 2


def _rounds(blocks: dict, rounds: int) -> dict[str, list[float]]:
    """Each block once per round, the order rotated every round; the per-round figure of each."""
    names = list(blocks)
    per_round = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for n in order:
            per_round[n].append(blocks[n]())
    return per_round


def _cost(per_round: dict[str, list[float]]) -> dict:
    costs = [
        (d - z) / u * 100 for d, z, u in zip(per_round["depth2"], per_round["depth0"], per_round["plain"], strict=False)
    ]
    profiler = [(z / u - 1) * 100 for z, u in zip(per_round["depth0"], per_round["plain"], strict=False)]
    return {
        "plain_ms": statistics.median(per_round["plain"]),
        "depth0_ms": statistics.median(per_round["depth0"]),
        "depth2_ms": statistics.median(per_round["depth2"]),
        "ranges_cost_pct": statistics.median(costs),
        "ranges_cost_min": min(costs),
        "ranges_cost_max": max(costs),
        "rounds_pct": costs,
        "profiler_overhead_pct": statistics.median(profiler),
    }


def bench_infer(imgsz: int, rounds: int, calls: int) -> dict:
    import libreyolo
    import torch
    from PIL import Image

    from libreyolo_profile.measure import common, profiler
    from libreyolo_profile.measure.infer import InferCall, batch_plan, over_plan
    from libreyolo_profile.measure.modules import ModuleRanges
    from libreyolo_profile.measure.options import InferOptions
    from libreyolo_profile.measure.trials import TrialRunner

    common.quiet_libreyolo_logging()
    device = torch.device("cpu")
    torch.manual_seed(0)
    w = libreyolo.LibreYOLO9(None, size="t", device="cpu")
    w.model.eval()
    img = Image.open(libreyolo.SAMPLE_IMAGE).convert("RGB")
    infer_call = InferCall(w, device, imgsz, InferOptions(module_depth=0), None)
    call = over_plan(infer_call, batch_plan([img], 1, calls))
    ranges = {0: ModuleRanges(w.model, 0), DEPTH: ModuleRanges(w.model, DEPTH)}
    runner = TrialRunner(device)
    runner.warmup(call, 5)

    def profiled(depth: int) -> float:
        infer_call.module_ranges = ranges[depth]
        prof = profiler.make_profiler(device)
        times = runner.profiled_window(call, calls, prof).call_ms
        del prof
        return statistics.median(times)

    per_round = _rounds(
        {
            "plain": lambda: statistics.median(runner.time_block(call, range(calls)).call_ms),
            "depth0": lambda: profiled(0),
            "depth2": lambda: profiled(DEPTH),
        },
        rounds,
    )
    return {
        "imgsz": imgsz,
        "rounds": rounds,
        "calls": calls,
        "ranges_per_call": len(ranges[DEPTH].targets),
        **_cost(per_round),
    }


def bench_run(imgsz: int, rounds: int, steps: int) -> dict:
    import libreyolo
    import torch
    from libreyolo.models.yolo9.trainer import YOLO9Trainer

    from libreyolo_profile.measure import common, profiler
    from libreyolo_profile.measure.dataset import resolve_dataset
    from libreyolo_profile.measure.modules import ModuleRanges
    from libreyolo_profile.measure.train_step import TrainStep
    from libreyolo_profile.measure.trials import TrialRunner, seed_everything

    common.quiet_libreyolo_logging()
    device = torch.device("cpu")
    cfg = resolve_dataset(str(ROOT / "fixtures" / "synth3.yaml"))
    seed_everything(0, device)
    w = libreyolo.LibreYOLO9(None, size="t", device="cpu")
    w._rebuild_for_new_classes(cfg["nc"])
    w.model.enable_aux(weight=0.25)
    with tempfile.TemporaryDirectory() as tmp:
        trainer = YOLO9Trainer(
            model=w.model,
            wrapper_model=w,
            size="t",
            num_classes=cfg["nc"],
            data=cfg["yaml_file"],
            batch=2,
            imgsz=imgsz,
            workers=0,
            device="cpu",
            project=tmp,
            name="b",
            exist_ok=True,
            amp=False,
            seed=0,
        )
        trainer.setup()
    step = TrainStep(trainer, device, None)
    step.model.train()
    ranges = {0: ModuleRanges(step.model, 0), DEPTH: ModuleRanges(step.model, DEPTH)}
    runner = TrialRunner(device)
    step.begin_pass(trainer.train_loader)
    runner.warmup(step, 1)

    def block(depth: int | None) -> float:
        """ms per step of one window from a fresh loader pass (depth None: unprofiled)."""
        step.begin_pass(trainer.train_loader)
        if depth is None:
            window = runner.time_block(step, range(steps))
        else:
            step.module_ranges = ranges[depth]
            prof = profiler.make_profiler(device)
            window = runner.profiled_window(step, steps, prof, sync_last=True)
            del prof
        step.end_pass()
        return window.wall_ms / steps

    per_round = _rounds(
        {"plain": lambda: block(None), "depth0": lambda: block(0), "depth2": lambda: block(DEPTH)}, rounds
    )
    return {
        "imgsz": imgsz,
        "rounds": rounds,
        "steps": steps,
        "ranges_per_step": 2 * len(ranges[DEPTH].targets),
        **_cost(per_round),
    }


def _thread_cpu_cost(call, ranges: dict, device, rounds: int, calls: int, annotate_plain: bool = False) -> dict:
    """Median thread CPU ms per call: unprofiled at depth 0, profiled at depth 0 and at depth 2; rounds
    rotate the order. `call(index, annotate)` is the trial loop's call; `ranges` sets the depth on it."""
    import time

    from torch.profiler import record_function

    from libreyolo_profile.measure import profiler

    def block(depth: int, profiled: bool) -> float:
        ranges(depth)
        times = []
        prof = profiler.make_profiler(device) if profiled else None
        if prof is not None:
            with profiler.kineto_quiet():
                prof.start()
        for index in range(calls):
            t0 = time.thread_time()
            if prof is not None:
                with record_function(f"ProfilerStep#{index + 1}"):
                    call(index, True)
            else:
                call(index, annotate_plain)
            times.append((time.thread_time() - t0) * 1000.0)
        if prof is not None:
            with profiler.kineto_quiet():
                prof.stop()
        return statistics.median(times)

    per_round = _rounds(
        {"plain": lambda: block(0, False), "depth0": lambda: block(0, True), "depth2": lambda: block(DEPTH, True)},
        rounds,
    )
    return _cost(per_round)


def cpu_cost_infer(imgsz: int, rounds: int, calls: int) -> dict:
    import libreyolo
    import torch
    from PIL import Image

    from libreyolo_profile.measure import common
    from libreyolo_profile.measure.infer import InferCall, batch_plan, over_plan
    from libreyolo_profile.measure.modules import ModuleRanges
    from libreyolo_profile.measure.options import InferOptions

    common.quiet_libreyolo_logging()
    torch.set_num_threads(1)
    device = torch.device("cpu")
    torch.manual_seed(0)
    w = libreyolo.LibreYOLO9(None, size="t", device="cpu")
    w.model.eval()
    img = Image.open(libreyolo.SAMPLE_IMAGE).convert("RGB")
    infer_call = InferCall(w, device, imgsz, InferOptions(module_depth=0), None)
    call = over_plan(infer_call, batch_plan([img], 1, calls))
    for index in range(3):
        call(index, False)
    made = {d: ModuleRanges(w.model, d) for d in (0, DEPTH)}

    def set_depth(depth: int) -> None:
        infer_call.module_ranges = made[depth]

    return {"imgsz": imgsz, **_thread_cpu_cost(call, set_depth, device, rounds, calls)}


def cpu_cost_run(imgsz: int, rounds: int, steps: int) -> dict:
    """Forward + loss + backward of the training model (the part the ranges touch), thread CPU time."""
    import libreyolo
    import torch

    from libreyolo_profile.measure import common
    from libreyolo_profile.measure.modules import ModuleRanges

    common.quiet_libreyolo_logging()
    torch.set_num_threads(1)
    device = torch.device("cpu")
    torch.manual_seed(0)
    w = libreyolo.LibreYOLO9(None, size="t", device="cpu")
    w._rebuild_for_new_classes(3)
    w.model.enable_aux(weight=0.25)
    model = w.model.train()
    x = torch.rand(2, 3, imgsz, imgsz)
    targets = torch.zeros(2, 4, 5)
    targets[:, 0] = torch.tensor([1.0, 0.2, 0.2, 0.6, 0.6])
    made = {d: ModuleRanges(model, d) for d in (0, DEPTH)}
    current = {"ranges": made[0]}

    def call(index: int, annotate: bool) -> None:
        with current["ranges"].recording(annotate):
            loss = model(x, targets=targets)["total_loss"]
        loss.backward()
        model.zero_grad(set_to_none=True)

    for index in range(2):
        call(index, False)

    def set_depth(depth: int) -> None:
        current["ranges"] = made[depth]

    return {"imgsz": imgsz, **_thread_cpu_cost(call, set_depth, device, rounds, steps)}


def skeleton_cost_us(model, backward: bool, rounds: int = 7, reps: int = 200) -> dict:
    """The ranges' own cost per call, apart from the model's compute: a skeleton with the model's
    module tree down to depth 2 (same names, same nesting and call count) whose modules only pass a
    one-element tensor on (x * 1.0), called under the profiler with the ranges at depth 0 and depth 2,
    `reps` calls per block, blocks interleaved; thread CPU time, median over rounds, in µs per call.
    backward: the call also runs backward through the skeleton (the training step's ranges)."""
    import time

    import torch
    from torch.profiler import record_function

    from libreyolo_profile.measure import profiler
    from libreyolo_profile.measure.modules import ModuleRanges

    class Node(torch.nn.Module):
        def forward(self, x):
            for child in self.children():
                x = child(x)
            return x * 1.0

    def mirror(real, level: int) -> torch.nn.Module:
        node = Node()
        if level < DEPTH:
            for name, child in real.named_children():
                node.add_module(name, mirror(child, level + 1))
        return node

    skeleton = mirror(model, 0)
    made = {d: ModuleRanges(skeleton, d) for d in (0, DEPTH)}
    x = torch.ones(1, requires_grad=backward)

    def block(depth: int) -> float:
        t0 = time.thread_time()
        for index in range(reps):
            with record_function(f"ProfilerStep#{index + 1}"), torch.set_grad_enabled(backward):
                with made[depth].recording(True):
                    y = skeleton(x)
                if backward:
                    y.backward()
        return (time.thread_time() - t0) / reps * 1e6

    prof = profiler.make_profiler(torch.device("cpu"))
    with profiler.profiling(prof):
        block(0), block(DEPTH)
        diffs = []
        for r in range(rounds):
            order = (0, DEPTH) if r % 2 == 0 else (DEPTH, 0)
            got = {d: block(d) for d in order}
            diffs.append(got[DEPTH] - got[0])
    del prof
    return {
        "ranges": len(made[DEPTH].targets) * (2 if backward else 1),
        "cost_us": statistics.median(diffs),
        "min_us": min(diffs),
        "max_us": max(diffs),
    }


def plain_ms(call, rounds: int, calls: int) -> tuple[float, float]:
    """Median (wall, thread CPU) time of an unprofiled call, ms."""
    import time

    wall, cpu = [], []
    for index in range(rounds * calls):
        t0, c0 = time.perf_counter(), time.thread_time()
        call(index, False)
        wall.append((time.perf_counter() - t0) * 1000.0)
        cpu.append((time.thread_time() - c0) * 1000.0)
    return statistics.median(wall), statistics.median(cpu)


def skeleton_report(args) -> None:
    """The ranges' cost per call against the unprofiled call or step at each size (the primary figure)."""
    import libreyolo
    import torch

    from libreyolo_profile.measure import common

    common.quiet_libreyolo_logging()
    torch.set_num_threads(1)  # all of a call's work on the timed thread
    torch.manual_seed(0)
    w = libreyolo.LibreYOLO9(None, size="t", device="cpu")
    w._rebuild_for_new_classes(3)
    w.model.enable_aux(weight=0.25)
    train_cost = skeleton_cost_us(w.model.train(), backward=True)
    w.model.disable_aux()  # inference never calls the aux branch
    infer_cost = skeleton_cost_us(w.model.eval(), backward=False)
    print(
        f"ranges' own cost (skeleton of LibreYOLO9-t's tree to depth {DEPTH}, under the profiler, thread CPU time): "
        f"infer {infer_cost['cost_us']:.0f} µs per call ({infer_cost['ranges']} ranges; rounds "
        f"{infer_cost['min_us']:.0f} … {infer_cost['max_us']:.0f}), train {train_cost['cost_us']:.0f} µs per step "
        f"({train_cost['ranges']} ranges, forward + backward; rounds {train_cost['min_us']:.0f} … "
        f"{train_cost['max_us']:.0f})"
    )
    from PIL import Image

    from libreyolo_profile.measure.infer import InferCall, batch_plan, over_plan
    from libreyolo_profile.measure.options import InferOptions

    w.model.eval()
    img = Image.open(libreyolo.SAMPLE_IMAGE).convert("RGB")
    for imgsz in args.imgsz:
        call = over_plan(
            InferCall(w, torch.device("cpu"), imgsz, InferOptions(module_depth=0), None), batch_plan([img], 1, 4)
        )
        call(0, False)
        wall, cpu = plain_ms(call, 3, args.calls)
        pct = infer_cost["cost_us"] / 1000.0 / cpu * 100
        print(
            f"  infer {imgsz} px: unprofiled call {cpu:.1f} ms thread CPU time on 1 torch thread ({wall:.1f} ms wall)"
            f" → ranges {pct:.2f}% of it; target ≤ 1%: " + ("met" if pct <= 1.0 else "NOT met")
        )
    if not args.skip_run:
        w.model.enable_aux(weight=0.25)
        model = w.model.train()
        x = torch.rand(2, 3, args.run_imgsz, args.run_imgsz)
        targets = torch.zeros(2, 4, 5)
        targets[:, 0] = torch.tensor([1.0, 0.2, 0.2, 0.6, 0.6])

        def train_call(index: int, annotate: bool) -> None:
            model(x, targets=targets)["total_loss"].backward()
            model.zero_grad(set_to_none=True)

        train_call(0, False)
        wall, cpu = plain_ms(train_call, 2, args.steps)
        pct = train_cost["cost_us"] / 1000.0 / cpu * 100
        print(
            f"  train forward+backward {args.run_imgsz} px, batch 2: {cpu:.1f} ms thread CPU time on 1 torch thread "
            f"({wall:.1f} ms wall) → ranges {pct:.2f}% of it (the optimizer step, not counted, only lowers it); "
            "target ≤ 1%: " + ("met" if pct <= 1.0 else "NOT met")
        )


def _print(label: str, res: dict, unit: str) -> None:
    print(
        f"{label}: unprofiled {res['plain_ms']:.2f} ms/{unit}, profiled {res['depth0_ms']:.2f} (profiler "
        f"{res['profiler_overhead_pct']:+.2f}%), profiled + depth-{DEPTH} ranges {res['depth2_ms']:.2f}"
    )
    print(
        f"  ranges' cost: median {res['ranges_cost_pct']:+.2f}% of the unprofiled {unit} "
        f"(range {res['ranges_cost_min']:+.2f} … {res['ranges_cost_max']:+.2f}; rounds "
        + ", ".join(f"{x:+.2f}" for x in res["rounds_pct"])
        + "); target ≤ 1%: "
        + ("met" if res["ranges_cost_pct"] <= 1.0 else "NOT met")
    )
    spread = res["ranges_cost_max"] - res["ranges_cost_min"]
    if spread > 2.0:
        print(
            f"  (rounds spread {spread:.1f} points: this machine's noise is larger than the 1% measured; "
            "the skeleton figure above is the one that resolves it)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description="cost of the module ranges on top of the profiler, on the CPU")
    ap.add_argument("--imgsz", type=int, nargs="*", default=[640, 320])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--run-imgsz", type=int, default=256)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--skip-run", action="store_true")
    ap.add_argument("--cpu-time-only", action="store_true", help="only the thread-CPU-time measurement")
    args = ap.parse_args()
    import os

    print(f"load average at start: {', '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    # CPU time first: it sets torch to one thread for the rest of the process, so it runs in a child
    import subprocess

    if not os.environ.get("BENCH_MODULE_RANGES_CHILD"):
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--cpu-time-only",
                "--rounds",
                str(args.rounds),
                "--calls",
                str(args.calls),
                "--steps",
                str(args.steps),
                "--run-imgsz",
                str(args.run_imgsz),
                "--imgsz",
                *map(str, args.imgsz),
            ]
            + (["--skip-run"] if args.skip_run else []),
            env=dict(os.environ, BENCH_MODULE_RANGES_CHILD="1"),
            check=True,
        )
    if args.cpu_time_only:
        if not os.environ.get("BENCH_MODULE_RANGES_CHILD"):
            return
        skeleton_report(args)
        for imgsz in args.imgsz:
            _print(
                f"[thread CPU time, 1 torch thread] infer {imgsz} px, {args.rounds} rounds × {args.calls} calls",
                cpu_cost_infer(imgsz, args.rounds, args.calls),
                "call",
            )
        if not args.skip_run:
            _print(
                f"[thread CPU time, 1 torch thread] train forward+backward {args.run_imgsz} px, batch 2, "
                f"{args.rounds} rounds × {args.steps} steps",
                cpu_cost_run(args.run_imgsz, args.rounds, args.steps),
                "step",
            )
        return
    for imgsz in args.imgsz:
        res = bench_infer(imgsz, args.rounds, args.calls)
        _print(
            f"infer {imgsz} px, {res['ranges_per_call']} ranges per call, {args.rounds} rounds × {args.calls} calls",
            res,
            "call",
        )
    if not args.skip_run:
        res = bench_run(args.run_imgsz, args.rounds, args.steps)
        _print(
            f"run {args.run_imgsz} px, batch 2, {res['ranges_per_step']} ranges per step at most, "
            f"{args.rounds} rounds × {args.steps} steps",
            res,
            "step",
        )


if __name__ == "__main__":
    main()
