"""One training step of LibreYOLO's loop, as the trial loop (measure/trials.py) calls it, and the
state it needs to replay a trial without the profiler.

A step = `## dataload ##` (next batch), `## to_device ##`, `## forward ##` (forward and loss, under
CUDA autocast when AMP is active), `## backward ##`, `## optimizer ##` (scaler/optimizer step,
zero_grad, EMA update, LR/momentum schedule). LibreYOLO's trainer does zero_grad before the
backward; doing it after the step (set_to_none) leaves the same gradients for the next backward and
keeps the phases contiguous.
"""

from __future__ import annotations

import contextlib
import copy
import random


class TrainStep:
    """Steps of one pass over the training loader: `begin_pass(loader)`, then `step(index, annotate)`
    per batch (the trial loop's `Call`), then `end_pass()`."""

    def __init__(self, trainer, device, autocast_dtype):
        import torch
        from torch.profiler import record_function

        self.torch = torch
        self.record_function = record_function
        self.trainer = trainer
        self.model = trainer.model
        self.optimizer = trainer.optimizer
        self.scaler = trainer.scaler
        self.ema = trainer.ema_model
        self.device = device
        self.autocast_dtype = autocast_dtype
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
        return self.record_function(f"## {name} ##") if annotate else contextlib.nullcontext()

    def step(self, index: int, annotate: bool) -> None:
        """The next step of the pass (`index` is the loop's count; batches come in loader order)."""
        torch = self.torch
        with self._phase("dataload", annotate):
            batch = next(self.batches)
        with self._phase("to_device", annotate):
            imgs = batch[0].to(self.device, non_blocking=True)
            targets = batch[1].to(self.device, non_blocking=True)
        with self._phase("forward", annotate):
            if self.autocast_dtype is not None:
                with torch.autocast("cuda", dtype=self.autocast_dtype):
                    loss = self.trainer.on_forward(imgs, targets)["total_loss"]
            else:
                loss = self.trainer.on_forward(imgs, targets)["total_loss"]
        with self._phase("backward", annotate):
            if self.scaler is not None:
                self.scaler.scale(loss).backward()
            else:
                loss.backward()
        with self._phase("optimizer", annotate):
            if self.scaler is not None:
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
            if self.ema is not None:
                self.ema.update(self.model)
            self.iteration += 1
            if self._apply_scheduler is not None:
                self._apply_scheduler(self.iteration)
        del loss

    __call__ = step

    # state for the unprofiled replay
    def snapshot(self) -> dict:
        torch = self.torch
        snap = {
            "model": {k: v.detach().clone() for k, v in self.model.state_dict().items()},
            "optimizer": copy.deepcopy(self.optimizer.state_dict()),
            "iteration": self.iteration,
            "rng": (random.getstate(), _np_state(), torch.get_rng_state(),
                    torch.cuda.get_rng_state_all() if self.device.type == "cuda" else None),
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


def _np_state():
    import numpy as np

    return np.random.get_state()


def _np_set_state(state) -> None:
    import numpy as np

    np.random.set_state(state)
