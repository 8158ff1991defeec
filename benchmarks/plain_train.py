"""A plain LibreYOLO9-t training loop, the yardstick benchmarks/bench_run_cost.py and bench_whole_command.py time
`run` and the built-in profiler against: the model as LibreYOLO9.train() builds it (the class head for the
dataset's nc, the PGI aux branch at its default weight 0.25, ~60% of a step's work), no profiler.

usage: python plain_train.py DATA.yaml STEPS BATCH IMGSZ OUT_DIR
"""

import sys
from pathlib import Path

import torch
import yaml
from libreyolo import LibreYOLO9
from libreyolo.models.yolo9.trainer import YOLO9Trainer

data, out = Path(sys.argv[1]).resolve(), sys.argv[5]
steps, batch, imgsz = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
nc = len(yaml.safe_load(data.read_text())["names"])
torch.manual_seed(0)
wrapper = LibreYOLO9("LibreYOLO9t.pt", size="t", device="cpu")
if nc != wrapper.nb_classes:
    wrapper._rebuild_for_new_classes(nc)
wrapper.model.enable_aux(weight=0.25)
trainer = YOLO9Trainer(
    model=wrapper.model,
    wrapper_model=wrapper,
    size="t",
    num_classes=nc,
    data=str(data),
    batch=batch,
    imgsz=imgsz,
    workers=0,
    device="cpu",
    project=out,
    name="plain",
    exist_ok=True,
    amp=False,
    seed=0,
)
trainer.setup()
trainer.model.train()
batches = iter(trainer.train_loader)
for _ in range(steps):
    try:
        batch = next(batches)
    except StopIteration:
        batches = iter(trainer.train_loader)
        batch = next(batches)
    outputs = trainer.on_forward(batch[0], batch[1])
    trainer.optimizer.zero_grad()
    outputs["total_loss"].backward()
    if trainer._should_clip_gradients():
        trainer._clip_gradients()
    trainer.optimizer.step()
    if trainer.ema_model is not None:
        trainer.ema_model.update(trainer.model)
    float(outputs["total_loss"].item())
