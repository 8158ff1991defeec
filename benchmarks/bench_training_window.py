"""What a long profiled training window does to itself (issue 27: why `run` profiles at most 10 steps, and
records the scalar lists among the ops' inputs in the first profiled step only).

One fresh process per setting: LibreYOLO9-t built as `LibreYOLO9.train()` builds it (class head for the
dataset's nc, PGI aux branch at weight 0.25), its YOLO9Trainer, 2 untimed steps, then N steps under
torch.profiler with our options (measure/profiler.py PROFILER_OPTIONS: record_shapes on, scalar lists
recorded in the first step only, as measure/trials.py does it) and, for comparison, the same with the scalar
lists recorded in every step (torch's default), with record_shapes off, and with no profiler. Printed per
step: wall ms and the process's resident set (MiB) after the step; then the profiler's stop.

    python benchmarks/bench_training_window.py [--steps 14] [--imgsz 320] [--batch 4]

Measured on the project's 2-core machine (imgsz 320, batch 4): with the scalar lists recorded in every step
the process grew 0.6-0.85 GB a step and most steps after the first few took 1.6-2.1 s (from the 4th in one
run, the 9th in another, the 8th in a third); recorded in the first step only, it grew ~50 MB a step and the
steps stayed near 0.8 s, as with record_shapes off or without the profiler.
A training set big enough for one pass is generated with fixtures/make_dataset.py in a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import REPO, python_argv

STEPS = r"""
import json, sys, time
import torch
from libreyolo import LibreYOLO9
from libreyolo.models.yolo9.trainer import YOLO9Trainer
from libreyolo_profile.measure.profiler import PROFILER_OPTIONS, scalar_lists_switch
data, mode, steps, imgsz, batch, out = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6]), sys.argv[6]
torch.manual_seed(0)
wrapper = LibreYOLO9(None, size="t", device="cpu")
wrapper._rebuild_for_new_classes(3)
wrapper.model.enable_aux(weight=0.25)
trainer = YOLO9Trainer(model=wrapper.model, wrapper_model=wrapper, size="t", num_classes=3, data=data, batch=batch,
                       imgsz=imgsz, workers=0, device="cpu", project=out, name="bench", exist_ok=True, amp=False,
                       seed=0)
trainer.setup()
trainer.model.train()
batches = iter(trainer.train_loader)

def step():
    images, targets = next(batches)[:2]
    outputs = trainer.on_forward(images, targets)
    trainer.optimizer.zero_grad()
    outputs["total_loss"].backward()
    if trainer._should_clip_gradients():
        trainer._clip_gradients()
    trainer.optimizer.step()
    trainer.ema_model.update(trainer.model)
    float(outputs["total_loss"].item())

def rss_mib():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20

for _ in range(2):
    step()
prof = None
if mode != "none":
    from torch.profiler import ProfilerActivity, profile
    prof = profile(activities=[ProfilerActivity.CPU], **dict(PROFILER_OPTIONS, record_shapes=mode != "no-shapes"))
    prof.__enter__()
rows = []
with scalar_lists_switch() as stop_scalar_lists:
    for index in range(steps):
        t = time.perf_counter()
        step()
        rows.append((round((time.perf_counter() - t) * 1000), round(rss_mib())))
        if index == 0 and mode == "ours":
            stop_scalar_lists()
    t = time.perf_counter()
    if prof is not None:
        prof.__exit__(None, None, None)
print(json.dumps({"steps": rows, "stop_s": round(time.perf_counter() - t, 2)}))
"""

MODES = {
    "ours": "profiler as run and infer use it (scalar lists in the first step only)",
    "lists": "the same, scalar lists recorded in every step",
    "no-shapes": "profiler, record_shapes off",
    "none": "no profiler",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=14)
    ap.add_argument("--imgsz", type=int, default=320)
    ap.add_argument("--batch", type=int, default=4)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        maker = [str(REPO / "fixtures" / "make_dataset.py"), "--out", str(tmp), "--name", "window"]
        subprocess.run(python_argv(*maker, "--train", str((a.steps + 2) * a.batch)), check=True, capture_output=True)
        (tmp / "steps.py").write_text(STEPS)
        for mode, label in MODES.items():
            argv = [str(tmp / "window.yaml"), mode, str(a.steps), str(a.imgsz), str(a.batch), str(tmp / "out")]
            done = subprocess.run(python_argv(str(tmp / "steps.py"), *argv), capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"{label}: failed\n{done.stderr[-2000:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{label}  (imgsz {a.imgsz}, batch {a.batch}; stop {result['stop_s']} s)")
            print("  step ms  " + " ".join(f"{ms:6d}" for ms, _ in result["steps"]))
            print("  RSS MiB  " + " ".join(f"{mib:6d}" for _, mib in result["steps"]))


if __name__ == "__main__":
    main()
