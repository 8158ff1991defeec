"""How much does our profiler configuration distort what it measures? (SPEC §7: ≤ 5% for `infer`
at --imgsz 640 on the CPU.)

Infer: one process, LibreYOLO9-t (random init, eval) on LibreYOLO's sample image, the exact call, trial
loop and profiler settings `libreyolo profile infer` uses (measure/infer.py `InferCall`,
measure/trials.py `TrialRunner`, measure/common.py `make_profiler`). Per round, a block of N unprofiled
calls and a block of N profiled calls (one profiler session, `ProfilerStep#n` + phase ranges, as in a
profile), in alternating order (A B, then B A, …) so drift hits both. Per round: overhead =
median(profiled) / median(unprofiled) − 1. Reported: every round, the median and the spread (min–max)
over rounds.
Optionally a third block with profile_memory=True, to decide whether CPU profiles can afford
allocator events.

Run: the real training step (`measure/train_step.py` `TrainStep`) on the fixture dataset, through the
same `TrialRunner`, rounds of S unprofiled steps vs S profiled steps (fresh loader pass each block),
window wall time compared.

    python benchmarks/bench_profiler_overhead.py                      # infer 640 + 320, run 256
    python benchmarks/bench_profiler_overhead.py --imgsz 640 --rounds 8 --calls 15 --memory
    python benchmarks/bench_profiler_overhead.py --skip-run
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


def _fmt(xs):
    return ", ".join(f"{x:+.1f}" for x in xs)


def bench_infer(imgsz: int, rounds: int, calls: int, memory: bool) -> dict:
    import libreyolo
    import torch
    from PIL import Image

    from libreyolo_profile.measure import common, profiler
    from libreyolo_profile.measure.infer import InferCall, batch_plan, over_plan
    from libreyolo_profile.measure.options import InferOptions
    from libreyolo_profile.measure.trials import TrialRunner

    common.quiet_libreyolo_logging()
    device = torch.device("cpu")
    torch.manual_seed(0)
    w = libreyolo.LibreYOLO9(None, size="t", device="cpu")
    w.model.eval()
    img = Image.open(libreyolo.SAMPLE_IMAGE).convert("RGB")
    call = over_plan(InferCall(w, device, imgsz, InferOptions(module_depth=0), None), batch_plan([img], 1, calls))
    runner = TrialRunner(device)
    runner.warmup(call, 5)

    def profiled(mem: bool) -> list[float]:
        prof = profiler.make_profiler(device, profile_memory=mem)
        times = runner.profiled_window(call, calls, prof).call_ms
        del prof
        return times

    blocks = {"plain": lambda: runner.time_block(call, range(calls)).call_ms, "profiled": lambda: profiled(False)}
    if memory:
        blocks["profiled+memory"] = lambda: profiled(True)
    names = list(blocks)
    per_round = {n: [] for n in names}
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        meds = {}
        for n in order:
            meds[n] = statistics.median(blocks[n]())
        for n in names:
            per_round[n].append(meds[n])
    res = {"imgsz": imgsz, "rounds": rounds, "calls": calls, "plain_ms": statistics.median(per_round["plain"])}
    for n in names[1:]:
        ov = [(p / u - 1) * 100 for p, u in zip(per_round[n], per_round["plain"], strict=False)]
        res[n] = {
            "overhead_pct_median": statistics.median(ov),
            "min": min(ov),
            "max": max(ov),
            "rounds": ov,
            "profiled_ms": statistics.median(per_round[n]),
        }
    return res


def bench_run(imgsz: int, rounds: int, steps: int) -> dict:
    import libreyolo
    import torch
    from libreyolo.models.yolo9.trainer import YOLO9Trainer

    from libreyolo_profile.measure import common, profiler
    from libreyolo_profile.measure.dataset import resolve_dataset
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
    runner = TrialRunner(device)
    step.begin_pass(trainer.train_loader)
    runner.warmup(step, 1)  # first-step setup cost out of the way

    def block(profile: bool) -> float:
        """ms per step of one window from a fresh loader pass, as `run` times its trials."""
        step.begin_pass(trainer.train_loader)
        if profile:
            prof = profiler.make_profiler(device)
            window = runner.profiled_window(step, steps, prof, sync_last=True)
            del prof
        else:
            window = runner.time_block(step, range(steps))
        step.end_pass()
        return window.wall_ms / steps

    plain, prof = [], []
    for r in range(rounds):
        if r % 2 == 0:
            plain.append(block(False))
            prof.append(block(True))
        else:
            prof.append(block(True))
            plain.append(block(False))
    ov = [(p / u - 1) * 100 for p, u in zip(prof, plain, strict=False)]
    return {
        "imgsz": imgsz,
        "rounds": rounds,
        "steps": steps,
        "plain_step_ms": statistics.median(plain),
        "profiled_step_ms": statistics.median(prof),
        "overhead_pct_median": statistics.median(ov),
        "min": min(ov),
        "max": max(ov),
        "rounds_pct": ov,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description="profiler overhead of libreyolo profile on the CPU")
    ap.add_argument("--imgsz", type=int, nargs="*", default=[640, 320])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=12)
    ap.add_argument("--memory", action="store_true", help="also time profile_memory=True")
    ap.add_argument("--skip-run", action="store_true")
    ap.add_argument("--run-imgsz", type=int, default=256)
    ap.add_argument("--run-steps", type=int, default=4)
    ap.add_argument("--run-rounds", type=int, default=4)
    a = ap.parse_args()
    import torch

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for imgsz in a.imgsz:
        r = bench_infer(imgsz, a.rounds, a.calls, a.memory)
        print(
            f"infer imgsz {imgsz}: unprofiled median {r['plain_ms']:.1f} ms/call "
            f"({a.rounds} rounds × {a.calls} calls, interleaved)"
        )
        for n in [k for k in r if k.startswith("profiled")]:
            v = r[n]
            print(
                f"  {n:16s}: {v['profiled_ms']:.1f} ms/call, overhead median {v['overhead_pct_median']:+.1f}% "
                f"(spread {v['min']:+.1f}..{v['max']:+.1f}%; rounds: {_fmt(v['rounds'])})"
            )
    if not a.skip_run:
        r = bench_run(a.run_imgsz, a.run_rounds, a.run_steps)
        print(
            f"run imgsz {r['imgsz']} batch 2 (fixture, aux on): unprofiled {r['plain_step_ms']:.0f} ms/step, "
            f"profiled {r['profiled_step_ms']:.0f} ms/step, overhead median {r['overhead_pct_median']:+.1f}% "
            f"(spread {r['min']:+.1f}..{r['max']:+.1f}%; rounds: {_fmt(r['rounds_pct'])})"
        )


if __name__ == "__main__":
    main()
