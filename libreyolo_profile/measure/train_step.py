"""One training step of LibreYOLO's loop, as the trial loop (measure/trials.py) calls it, and the
state it needs to replay a trial without the profiler.

The step does what LibreYOLO 1.6's `BaseTrainer._train_epoch` does for one batch, in its order:
next batch; images and targets to the device (non_blocking); forward and loss (under CUDA autocast
when AMP is active); `optimizer.zero_grad()`; backward (scaled by the GradScaler under AMP), with
the trainer's gradient clipping when its config asks for it; scaler/optimizer step; EMA update; the
per-step logging reads `loss.item()` and `get_loss_components()` (one `.cpu()` of the stacked
components); LR/momentum schedule. On a GPU the logging reads are a real host/device sync every
step: exactly what the profile must show.

Our phases tile the step, so each piece of the trainer's loop sits in one of them:
`## dataload ##` (next batch), `## to_device ##`, `## forward ##` (forward and loss), `## backward ##`
(zero_grad, then backward and clipping), `## optimizer ##` (scaler/optimizer step, EMA update,
logging reads, schedule).

Left out because they do nothing for a single-process LibreYOLO9 run: the DDP loss scaling (identity
outside DDP), the distiller hooks (no teacher), multi-scale batches, CUDA-graph/compile routing
(off by default; `on_forward` is the eager path it falls back to), and the tqdm bar's postfix (host
string formatting; our own progress bar ticks in its place). Anything else left out is a departure,
chosen by an option and recorded in the profile (measure/options.py TRAINER_DEPARTURES):
`loss_item=False` (`--no-loss-item`) skips the logging reads.
"""

from __future__ import annotations

import contextlib
import copy
import random

from libreyolo_profile.errors import ProfileError
from libreyolo_profile.measure import trials
from libreyolo_profile.measure.modules import ModuleRanges


class TrainStep:
    """Steps of one pass over the training loader: `begin_pass(loader)`, then `step(index, annotate)`
    per batch (the trial loop's `Call`), then `end_pass()`."""

    def __init__(self, trainer, device, autocast_dtype, *, loss_item: bool = True, module_depth: int = 0):
        import torch

        self.torch = torch
        self.trainer = trainer
        self.model = trainer.model
        self.optimizer = trainer.optimizer
        self.scaler = trainer.scaler
        self.ema = trainer.ema_model
        self.device = device
        self.autocast_dtype = autocast_dtype
        self.loss_item = loss_item  # the trainer's per-step logging reads (a sync on a GPU)
        # module ranges in annotated steps only; their backward ranges end inside loss.backward()
        # (under DDP, the wrapped model's own tree: its names as in a single-process run)
        ddp = isinstance(self.model, torch.nn.parallel.DistributedDataParallel)
        self.module_ranges = ModuleRanges(self.model.module if ddp else self.model, module_depth)
        self.iteration = 0  # schedule position, like the trainer's current_iter
        self.batches = None  # the current pass's loader iterator
        apply = getattr(trainer, "_apply_scheduler", None)
        self._apply_scheduler = apply if callable(apply) else None

    def begin_pass(self, loader) -> None:
        """A fresh pass over `loader` (its shuffle draws from the RNG as seeded now)."""
        self.batches = iter(loader)

    def end_pass(self) -> None:
        """Drop the pass's iterator, which stops the loader's worker processes."""
        self.batches = None

    def _phase(self, name: str, annotate: bool):
        return trials.phase(name, annotate)

    def step(self, index: int, annotate: bool) -> None:
        """The next step of the pass (`index` is the loop's count; batches come in loader order)."""
        with self._phase("dataload", annotate):
            batch = next(self.batches)
        with self._phase("to_device", annotate):
            imgs = batch[0].to(self.device, non_blocking=True)
            targets = batch[1].to(self.device, non_blocking=True)
        polygons = batch[4] if len(batch) == 5 else None  # segment-task batches carry polygons
        with self._phase("forward", annotate):
            with self.module_ranges.recording(annotate), _fails_as_usage(self.trainer, "forward and loss"):
                outputs = self._forward(imgs, targets, polygons)
                loss = outputs["total_loss"]
        with self._phase("backward", annotate):
            self.optimizer.zero_grad()  # the trainer's call: set_to_none, between forward and backward
            with _fails_as_usage(self.trainer, "backward"):
                self._backward(loss)
        with self._phase("optimizer", annotate):
            self._optimizer_step()
            if self.ema is not None:
                self.ema.update(self.model)
            if self.loss_item:
                self._log_loss(loss, outputs)
            del outputs, loss  # as the trainer: no reference to this step's graph outlives it
            self.iteration += 1
            if self._apply_scheduler is not None:
                self._apply_scheduler(self.iteration)

    def _forward(self, imgs, targets, polygons) -> dict:
        extra = {} if polygons is None else {"polygons": polygons}
        if self.autocast_dtype is None:
            return self.trainer.on_forward(imgs, targets, **extra)
        with self.torch.autocast("cuda", dtype=self.autocast_dtype):
            return self.trainer.on_forward(imgs, targets, **extra)

    def _backward(self, loss) -> None:
        """Backward, then the trainer's clipping where its config sets clip_max_norm (under AMP the
        gradients are unscaled first, as the trainer does)."""
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        if self._clips_gradients():
            if self.scaler is not None:
                self.scaler.unscale_(self.optimizer)
            self.trainer._clip_gradients()

    def _clips_gradients(self) -> bool:
        should_clip = getattr(self.trainer, "_should_clip_gradients", None)
        return bool(should_clip()) if callable(should_clip) else False

    def _optimizer_step(self) -> None:
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()

    def _log_loss(self, loss, outputs: dict) -> None:
        """The trainer's per-step logging reads: the loss to a Python float, then the loss components
        to floats as the trainer's `_scalar_mapping` does (YOLO9's `get_loss_components` first moves
        them to the host with one `.cpu()`). Values unused."""
        float(loss.item())
        components = self.trainer.get_loss_components(outputs)
        to_scalars = getattr(self.trainer, "_scalar_mapping", None)
        if callable(to_scalars):
            to_scalars(components)

    __call__ = step

    # state for the unprofiled replay
    def snapshot(self) -> dict:
        torch = self.torch
        snap = {
            "model": {k: v.detach().clone() for k, v in self.model.state_dict().items()},
            "optimizer": copy.deepcopy(self.optimizer.state_dict()),
            "iteration": self.iteration,
            "rng": (
                random.getstate(),
                _np_state(),
                torch.get_rng_state(),
                torch.cuda.get_rng_state_all() if self.device.type == "cuda" else None,
            ),
        }
        if self.ema is not None:
            snap["ema"] = ({k: v.detach().clone() for k, v in self.ema.ema.state_dict().items()}, self.ema.updates)
        if self.scaler is not None:
            snap["scaler"] = copy.deepcopy(self.scaler.state_dict())
        return snap

    def restore(self, snap: dict) -> None:
        torch = self.torch
        self.model.load_state_dict(snap["model"])
        self.optimizer.load_state_dict(copy.deepcopy(snap["optimizer"]))
        self.optimizer.zero_grad(set_to_none=True)
        self.iteration = snap["iteration"]
        if self._apply_scheduler is not None:
            self._apply_scheduler(self.iteration)
        if "ema" in snap:
            self.ema.ema.load_state_dict(snap["ema"][0])
            self.ema.updates = snap["ema"][1]
        if "scaler" in snap:
            self.scaler.load_state_dict(copy.deepcopy(snap["scaler"]))
        py, npst, cpu, cuda = snap["rng"]
        random.setstate(py)
        _np_set_state(npst)
        torch.set_rng_state(cpu)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)


@contextlib.contextmanager
def _fails_as_usage(trainer, what: str):
    """A family whose training step fails here (a loss that cannot take this input size, a missing
    dependency) exits 2 with LibreYOLO's reason instead of a traceback."""
    try:
        yield
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise ProfileError(
            f"{type(trainer).__name__}: LibreYOLO's training {what} failed ({type(exc).__name__}: {first})", 2
        ) from None


def _np_state():
    import numpy as np

    return np.random.get_state()


def _np_set_state(state) -> None:
    import numpy as np

    np.random.set_state(state)
