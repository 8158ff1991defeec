"""What a training profile records in its settings: the options asked for, what setup chose from them
(batch, image size, AMP), the trainer's optimizer and any config it had to change, and in words what the
measured window and one step cover."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.measure import common, profiler
from libreyolo_profile.measure.options import RunOptions
from libreyolo_profile.measure.train_model import SEED


def run_settings(opts: RunOptions, training) -> dict:
    """The settings of a run's profile; `training` is what measure/train.py's `set_up` built. The keys
    keep one order, the order the profile document lists them in."""
    import torch

    trainer, amp_active = training.trainer, training.amp_active
    warmup, steps, repeat = opts.warmup, opts.steps, opts.repeat
    return {
        **_dataset(opts, training),
        "weights": opts.weights,
        "size": training.model_info["size"],
        "batch": training.batch,
        "batch_requested": opts.batch,
        "batch_rule": training.batch_rule,
        "batch_probe": training.batch_probe,
        "imgsz": training.imgsz,
        "imgsz_requested": opts.imgsz,
        "workers": opts.workers,
        "amp": opts.amp,
        "amp_active": amp_active,
        "amp_dtype": "float16" if amp_active else None,
        **_amp_off(opts, training),
        "steps": steps,
        "profiled_steps": opts.window_steps,
        "warmup": warmup,
        "repeat": repeat,
        "device": str(training.device),
        "device_requested": str(opts.device),
        "project": str(Path(opts.project).resolve()),
        "overhead": opts.overhead,
        "seed": SEED,
        "trial_seeds": [SEED + 1 + t for t in range(repeat)],
        "aux_weight": training.model_info.get("aux_weight"),  # None: the family attaches no aux branch
        "optimizer": _optimizer_desc(trainer),
        "ema": trainer.ema_model is not None,
        "scheduler": str(getattr(trainer.config, "scheduler", None)),
        "images_per_trial": (warmup + steps) * training.batch,
        **_scope(opts, training),
        "loss_item": opts.loss_item,
        "module_depth": opts.module_depth,
        "profile_memory": opts.memory,
        "departures": list(opts.departures),
        **_overrides(training.config_overrides),
        "torch_threads": torch.get_num_threads(),
        "threads_requested": opts.threads,
        **common.pinning_settings(),
        "profiler": profiler.profiler_settings(training.device),
    }


def _dataset(opts: RunOptions, training) -> dict:
    """The dataset the run read, and how many training images its loader served."""
    cfg = training.cfg
    return {
        "data": opts.data,
        "data_yaml": str(Path(cfg["yaml_file"]).resolve()),
        "dataset_root": str(cfg.get("root")),
        "train_split": str(cfg.get("train")),
        "train_images": training.available,
        "nc": cfg["nc"],
    }


def _scope(opts: RunOptions, training) -> dict:
    """In words: which batches the measured window holds, what one step runs and where it waits for the device."""
    amp_active = training.amp_active
    warmup, steps, profiled = opts.warmup, opts.steps, opts.window_steps
    return {
        "window": (
            f"{warmup} warmup + {steps} measured batches from one fresh shuffled pass over "
            f"{training.available} training images ({training.full_batches} full batches, last incomplete "
            "batch dropped)"
            + (f", the first {profiled} of them profiled" if profiled < steps else "")
            + "; no validation, checkpoint or epoch boundary inside"
        ),
        "step_scope": (
            "LibreYOLO's trainer step in its order: dataload (next batch) | to_device | forward+loss"
            + (" (CUDA autocast float16)" if amp_active else "")
            + " | backward: zero_grad, backward (+ the trainer's clipping if configured)"
            + " | optimizer: optimizer step + EMA update"
            + (" + loss.item() and loss-component logging reads" if opts.loss_item else "")
            + " + LR/momentum schedule"
        ),
        "synchronization": (
            "one device synchronize at the end of the last measured step"
            + (
                "; GradScaler.step checks for inf/nan on the host every step (LibreYOLO's fp16 AMP path)"
                if amp_active
                else ""
            )
            + _logging_reads(opts.loss_item)
        ),
    }


def _amp_off(opts: RunOptions, training) -> dict:
    """--amp (the default) where LibreYOLO's AMP path cannot run: off, said here once (no mark, no warning)."""
    if not opts.amp or training.amp_active:
        return {}
    where = str(training.device).upper() if training.device.type == "cpu" else str(training.device)
    return {"amp_off": f"LibreYOLO's AMP path is CUDA-only: off on the {where}, the step runs in float32"}


def _overrides(overrides: dict) -> dict:
    """The trainer config a run changed, and why (absent from a run that changed none)."""
    if not overrides:
        return {}
    return {
        "config_overrides": overrides,
        "config_overrides_reason": (
            "sync_bn off on CPU ranks: SyncBatchNorm takes GPU modules only (LibreYOLO's own DDP would fail "
            "there); each rank normalises with its own batch statistics"
        ),
    }


def _logging_reads(loss_item: bool) -> str:
    if loss_item:
        return "; the trainer's per-step loss.item() and loss-component .cpu() read the device every step"
    return "; the trainer's per-step loss.item() logging is left out (--no-loss-item)"


def _optimizer_desc(trainer) -> dict:
    opt = trainer.optimizer
    groups = [{"params": len(g["params"]), "weight_decay": g.get("weight_decay")} for g in opt.param_groups]
    return {
        "name": type(opt).__name__,
        "lr0": getattr(trainer.config, "lr0", None),
        "momentum": getattr(trainer.config, "momentum", None),
        "nesterov": getattr(trainer.config, "nesterov", None),
        "groups": groups,
    }
