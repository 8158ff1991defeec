"""Whole commands side by side (issue 27): ours against LibreYOLO 1.6's built-in profiler and against a
plain script doing the same work, for `infer` (the seed's example) and `run`, in fresh processes,
interleaved rounds (benchmarks/harness.py), every run printed, then medians and ratios.

  infer   ours      libreyolo profile infer --device cpu --warmup 5 --runs 20
          builtin   the same command through LibreYOLO's own CLI (libreyolo.cli:entrypoint, the function its
                    `libreyolo` script calls; ours installs its own `libreyolo` script over that one, so the
                    built-in is called by its entry point here instead of a second venv)
          plain     a script that builds the same model (LibreYOLO9-t, eval mode) and makes
                    the same 25 predict calls on the bundled sample image
  run     ours      libreyolo profile run fixtures/synth3.yaml --device cpu --batch 4 --imgsz 320 --steps 5
                    --warmup 2 --workers 0 --no-amp
          builtin   the same through LibreYOLO's own CLI
          plain     a script that builds LibreYOLO9-t as LibreYOLO9.train() does (class head for the
                    dataset's nc, PGI aux branch at its default weight) and its trainer (YOLO9Trainer.setup():
                    dataset, loader, optimizer, EMA) and runs warmup + steps of the trainer's step: forward and
                    loss (trainer.on_forward), zero_grad, backward, the trainer's gradient clipping, optimizer
                    step, EMA update, the loss read

    python benchmarks/bench_whole_command.py [--rounds 3] [--only infer|run] [--run-warmup 2 --run-steps 5]

All three run in one temporary directory holding one random-init LibreYOLO9-t checkpoint (./LibreYOLO9t.pt, seed
0), which each finds by LibreYOLO's default name: the same weights everywhere, no download tried.
Targets (issue 27): ours ≤ 1.15× plain and ≤ 1.0× builtin.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from harness import REPO, Command, print_table, python_argv, run_once, run_rounds

OFFLINE = {"LIBREYOLO_PROFILE_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
BATCH = 4  # run's batch
FIXTURE_TRAIN_IMAGES = 32  # fixtures/synth3's training split

# one random-init checkpoint, in the working directory of all three: each finds ./LibreYOLO9t.pt itself
MAKE_WEIGHTS = r"""
import torch
from libreyolo import LibreYOLO9
torch.manual_seed(0)
LibreYOLO9(None, size="t", device="cpu").save("LibreYOLO9t.pt")
"""

PLAIN_INFER = r"""
import sys, libreyolo
from libreyolo import LibreYOLO9
model = LibreYOLO9("LibreYOLO9t.pt", size="t", device="cpu")
model.model.eval()
for _ in range(int(sys.argv[1])):
    model(libreyolo.SAMPLE_IMAGE, conf=0.25, iou=0.45, max_det=300)
"""

PLAIN_TRAIN = Path(__file__).with_name("plain_train.py")


def builtin(*args: str) -> list[str]:
    code = "import sys; from libreyolo.cli import entrypoint; sys.argv = ['libreyolo', *sys.argv[1:]]; entrypoint()"
    return python_argv("-c", code, *args)


def infer_commands(tmp: Path) -> list[Command]:
    (tmp / "plain_infer.py").write_text(PLAIN_INFER)
    flags = ["--device", "cpu", "--warmup", "5", "--runs", "20"]
    return [
        Command(
            "ours",
            python_argv("-m", "libreyolo_profile", "infer", *flags, "--project", str(tmp / "ours"), "--exist-ok"),
            tmp,
            OFFLINE,
        ),
        Command("builtin", builtin("profile", "infer", *flags, "--project", str(tmp / "builtin")), tmp, OFFLINE),
        Command("plain", python_argv(str(tmp / "plain_infer.py"), "25"), tmp, OFFLINE),
    ]


def run_commands(tmp: Path, warmup: int, steps: int) -> list[Command]:
    data = str(REPO / "fixtures" / "synth3.yaml")
    if (warmup + steps) * BATCH > FIXTURE_TRAIN_IMAGES:  # one pass must hold them: a bigger set, made the same way
        maker = [str(REPO / "fixtures" / "make_dataset.py"), "--out", str(tmp), "--name", "synth_big"]
        run_once(Command("dataset", python_argv(*maker, "--train", str((warmup + steps) * BATCH)), tmp, OFFLINE))
        data = str(tmp / "synth_big.yaml")
    flags = ["--device", "cpu", "--batch", str(BATCH), "--imgsz", "320", "--steps", str(steps), "--warmup", str(warmup)]
    flags += ["--workers", "0", "--no-amp"]
    return [
        Command(
            "ours",
            python_argv("-m", "libreyolo_profile", "run", data, *flags, "--project", str(tmp / "ours"), "--exist-ok"),
            tmp,
            OFFLINE,
        ),
        Command("builtin", builtin("profile", "run", data, *flags, "--project", str(tmp / "builtin")), tmp, OFFLINE),
        Command(
            "plain",
            python_argv(str(PLAIN_TRAIN), data, str(warmup + steps), str(BATCH), "320", str(tmp / "plain")),
            tmp,
            OFFLINE,
        ),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=("infer", "run"))
    ap.add_argument("--run-warmup", type=int, default=2, help="run's --warmup (default 2)")
    ap.add_argument(
        "--run-steps", type=int, default=5, help="run's --steps (default 5; its own default is 20, on a generated set)"
    )
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "make_weights.py").write_text(MAKE_WEIGHTS)
        run_once(Command("weights", python_argv(str(tmp / "make_weights.py")), tmp, OFFLINE))
        if a.only in (None, "infer"):
            results = run_rounds(infer_commands(tmp), a.rounds)
            print_table(results, "plain", "infer: the seed's example")
        if a.only in (None, "run"):
            results = run_rounds(run_commands(tmp, a.run_warmup, a.run_steps), a.rounds)
            print_table(
                results, "plain", f"run: {a.run_warmup} warmup + {a.run_steps} steps of batch {BATCH} at 320 px"
            )


if __name__ == "__main__":
    main()
