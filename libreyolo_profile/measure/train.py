"""`libreyolo profile run`: a short LibreYOLO9 training, step by step.

The pipeline is LibreYOLO's own, built the way `LibreYOLO9.train()` builds it: seed 0, the class
head re-built for the dataset's nc, the PGI aux branch attached (aux_weight 0.25, the training
default), then `YOLO9Trainer.setup()` for the data pipeline (YOLO9TrainTransform, YOLODataset,
YOLO9MosaicMixupDataset, create_dataloader with its collate and `--workers`), the optimizer's three
param groups, the LR/momentum schedule, EMA and, on CUDA with --amp, the GradScaler. The trainer's
save directory is pointed into the run's temporary directory inside --project and deleted with it.

One measured step is measure/train_step.py's `TrainStep`: the trainer's step in the trainer's order,
its per-step logging reads (`loss.item()`, the loss components' `.cpu()`) and, on the fp16 path, the
GradScaler's inf check included, because on a GPU those are real host/device syncs the profile must
show. A departure from the trainer (`--no-loss-item`) is an option, listed in settings.departures and
in the `departs_from_trainer` mark; a profile without them measured the step as LibreYOLO runs it.

Each trial is a fresh pass over the training split: `--warmup` steps untraced, then the first
`--profiled-steps` of the `--steps` (by default min(--steps, 10)) traced, all from that one pass (no epoch
boundary, no validation, no checkpoint in the window). The headline: the trial's `--steps` steps replayed
without the profiler (weights, optimizer, EMA, scaler, schedule and RNG restored to the trial's start, so
the same batches come out, the profiled ones first), before the profiled pass in odd trials and after it
in even ones. Its step time, throughput and stage split are the profile's; the profiled pass supplies the
attribution, and the two passes' wall times per step give profiler_overhead_pct.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from libreyolo_profile.errors import EXIT_NO_PROFILE, ProfileError
from libreyolo_profile.measure import common, preflight, profiler, train_model
from libreyolo_profile.measure.common import MeasuredProfile, note
from libreyolo_profile.measure.dataset import resolve_dataset, too_small_message
from libreyolo_profile.measure.noise import LoadSampler
from libreyolo_profile.measure.options import RunOptions
from libreyolo_profile.measure.train_model import SEED
from libreyolo_profile.measure.train_settings import run_settings
from libreyolo_profile.measure.train_step import TrainStep
from libreyolo_profile.measure.trials import Block, TrialRunner, seed_everything
from libreyolo_profile.store.document import marks as mark


@dataclass
class Training:
    """What setup built for the trials: the model, LibreYOLO's trainer and its loader, the step."""

    device: object
    cfg: dict
    model_info: dict
    marks: dict
    imgsz: int
    batch: int
    batch_rule: str | None
    batch_probe: list | None  # --batch -1: the memory measured per probed batch size
    amp_active: bool
    trainer: object
    step: TrainStep
    available: int  # training images the loader serves
    full_batches: int
    config_overrides: dict  # trainer config changed from the family's default, for a reason settings give


def profile_run(
    opts: RunOptions,
    argv: list[str],
    *,
    only_trial: int | None = None,
    hand_off_to: Path | None = None,
    job: dict | None = None,
) -> MeasuredProfile | None:
    """Measure `opts.repeat` trials of training and write the profile; returns where it went. With
    `only_trial` (a trial's own process, measure/isolated.py), measure that one trial and hand it to
    `hand_off_to`; `job`: that process is one rank of a DDP job (measure/ranks.py)."""
    preflight.check_run(opts)  # before torch: a typo is said in milliseconds, not after the import
    with common.status("importing torch and LibreYOLO"):
        from libreyolo_profile.measure import ranks

        devices = ranks.rank_devices(opts.device, opts.nproc) if job is None else None
        if devices is not None:
            ranks.check_job_options(opts, len(devices))
            cfg = resolve_dataset(opts.data)
            check_dataset_supply(opts, len(cfg["train_img_files"]))
            return ranks.measure_job(opts, argv, devices)
        device = common.resolve_device(opts.device)
        common.apply_threads(opts.threads, rank=job["rank"] if job else None)
        from libreyolo_profile.measure import adapter

        adapter.check_libreyolo()
        cfg = resolve_dataset(opts.data)
    check_dataset_supply(opts, len(cfg["train_img_files"]))
    if opts.repeat > 1 and opts.fresh_processes and only_trial is None:
        from libreyolo_profile.measure.isolated import measure_in_processes

        return measure_in_processes("train", opts, argv)
    with common.workspace(opts.project, "train") as tmp:
        with common.pinned():  # --threads' CPUs from the model's set-up to the last trial (measure/common.py)
            training = set_up(opts, cfg, device, tmp, world_size=job["world_size"] if job else 1)
            trials = [
                measure_trial(training, opts, (hand_off_to or tmp) / f"trial{trial + 1}_trace.json", trial)
                for trial in (range(opts.repeat) if only_trial is None else [only_trial])
            ]
        env = common.environment(device)
        if hand_off_to is not None:
            from libreyolo_profile.measure.isolated import hand_off

            return hand_off(
                hand_off_to,
                trials,
                settings=run_settings(opts, training) | ({"rank": job["rank"]} if job else {}),
                environment=env,
                model=training.model_info,
                marks=training.marks,
            )
        return common.publish(
            Path(opts.project) / "train",
            kind="train",
            trials=trials,
            keep_trace=True,
            command=list(argv),
            settings=run_settings(opts, training),
            env=env,
            model=training.model_info,
            marks=training.marks,
            exist_ok=opts.exist_ok,
        )


# ---------------------------------------------------------------------------------------------
# dataset sizing: a trial takes warmup + steps full batches from one pass, or there is no profile


def check_dataset_supply(opts: RunOptions, images: int) -> None:
    """Before building anything: exit 3 when the dataset's files cannot fill one trial
    (with --batch -1, not even at batch 1)."""
    batch = 1 if opts.auto_batch else opts.batch
    if opts.steps_per_trial * batch > images:
        raise ProfileError(too_small_message(opts.data, images, opts.warmup, opts.steps, batch), EXIT_NO_PROFILE)


def check_loader_supply(opts: RunOptions, available: int, batch: int) -> int:
    """After the loader is built (it may drop unreadable images): its full batches, or exit 3."""
    full_batches = available // batch
    if full_batches < opts.steps_per_trial:
        raise ProfileError(too_small_message(opts.data, available, opts.warmup, opts.steps, batch), EXIT_NO_PROFILE)
    return full_batches


# ---------------------------------------------------------------------------------------------
# setup


def set_up(opts: RunOptions, cfg: dict, device, tmp: Path, world_size: int = 1) -> Training:
    import torch

    amp_active = opts.amp and device.type == "cuda"
    autocast_dtype = torch.float16 if amp_active else None
    wrapper, model_info, marks, imgsz = train_model.build(opts, cfg, device, tmp)
    batch, batch_rule, batch_probe = _pick_batch(
        opts, wrapper, imgsz, device, autocast_dtype, len(cfg["train_img_files"])
    )
    if opts.departures:
        marks[mark.DEPARTS_FROM_TRAINER] = mark.departs_from_trainer(opts.departures)
    # SyncBatchNorm takes GPU modules only: CPU ranks keep each rank's own BatchNorm statistics
    overrides = {"sync_bn": False} if world_size > 1 and device.type == "cpu" else {}
    # off where it cannot run (the CPU): the trainer is built as the run measures it, said once in settings
    trainer = train_model.build_trainer(
        opts, cfg, wrapper, model_info, batch, imgsz, device, tmp, overrides, amp=amp_active
    )
    available = len(trainer.train_loader.dataset)
    if world_size > 1:  # LibreYOLO's DDP path: each rank takes batch // world_size of its share of the data
        batch = trainer.train_loader.batch_size
        full_batches = check_loader_supply(opts, len(trainer.train_loader.sampler), batch)
    else:
        full_batches = check_loader_supply(opts, available, batch)
    if amp_active and trainer.scaler is None:  # pragma: no cover - LibreYOLO decides
        amp_active, autocast_dtype = False, None
    return Training(
        device=device,
        cfg=cfg,
        model_info=model_info,
        marks=marks,
        imgsz=imgsz,
        batch=batch,
        batch_rule=batch_rule,
        batch_probe=batch_probe,
        amp_active=amp_active,
        trainer=trainer,
        step=TrainStep(trainer, device, autocast_dtype, loss_item=opts.loss_item, module_depth=opts.module_depth),
        config_overrides=overrides,
        available=available,
        full_batches=full_batches,
    )


def _pick_batch(opts: RunOptions, wrapper, imgsz: int, device, autocast_dtype, images: int):
    """(batch, the rule that picked it): --batch as given, or measured for --batch -1."""
    if not opts.auto_batch:
        return opts.batch, None, None
    from libreyolo_profile.measure.autobatch import auto_batch

    with common.status("--batch -1: probing memory per image"):
        batch, rule, probed = auto_batch(wrapper.model, imgsz, device, autocast_dtype, images // opts.steps_per_trial)
    if probed:
        note(
            "--batch -1 probe, memory per batch size: "
            + ", ".join(f"batch {p['batch']}: {p['memory_mb']:,.0f} MiB" for p in probed)
            + f" ({probed[0]['measure']})"
        )
    note(f"--batch -1 → {batch} ({rule})")
    seed_everything(SEED, device)  # the probe drew from the RNG: start the pipeline where it would have
    return batch, rule, probed


# ---------------------------------------------------------------------------------------------
# one trial


def measure_trial(training: Training, opts: RunOptions, trace_path: Path, trial: int):
    """The trial's profiled pass (warmup, then the window's steps) and, with --overhead, its --steps
    steps without the profiler (weights, optimizer, EMA, scaler, schedule and RNG restored, so the same
    batches come out, the window's first). Odd trials time the unprofiled pass first, so drift within a
    process hits both sides; the unprofiled pass is the headline. Training then continues from the
    profiled pass's end state."""
    step, device = training.step, training.device
    label = f"trial {trial + 1}/{opts.repeat}" if opts.repeat > 1 else "run"
    plain_first = opts.overhead and trial % 2 == 1
    start = step.snapshot() if plain_first else None
    trial_seed = SEED + 1 + trial
    profiled = opts.window_steps
    total = opts.warmup + profiled + (opts.steps_per_trial if plain_first else opts.steps if opts.overhead else 0)
    load = LoadSampler(device)
    with common.progress(
        f"{label}: warmup {opts.warmup}, {profiled} profiled steps of batch {training.batch}"
        + (f", {opts.steps} unprofiled" if opts.overhead else ""),
        total,
    ) as advance:
        runner = TrialRunner(device, advance)
        load.start()
        plain = None
        if plain_first:
            plain = _unprofiled_pass(training, opts, runner, trial_seed)
            step.restore(start)
        _begin_pass(training, trial_seed)
        runner.warmup(step, opts.warmup)
        warmed = step.snapshot() if opts.overhead and not plain_first else None
        retries = profiler.cuda_memory_reset(device)
        prof = trace_only_profiler(device, profile_memory=opts.memory)  # the profiled window only
        window = runner.profiled_window(step, profiled, prof, sync_last=True)
        mem = profiler.cuda_memory_capture(device, retries)
        step.end_pass()
        # the trace out and the profiler's records freed before anything else runs: the replay and the
        # analysis do not carry them (benchmarks/bench_run_cost.py)
        profiler.export_trace(prof, trace_path)
        del prof
        common.release_heap()
        if warmed is not None:
            end = step.snapshot()
            plain = _replay(training, opts, runner, trial_seed, warmed)
            step.restore(end)
        machine = load.stop()
    return _capture(trace_path, training.batch, mem, window, plain, machine, opts.steps, plain_first, device)


def trace_only_profiler(device, profile_memory: bool = False):
    """measure/profiler.py's profiler, told that only its trace is wanted (torch's `trace_only`): at stop it
    builds no event objects for Python beside the trace. In a 10-step window of LibreYOLO9-t (batch 2, 256 px,
    shapes recorded) the process grew ~1.9 GiB at the profiler's stop with them and ~1.5 GiB without; nothing
    here reads them (the trace is exported, then analysed from the file). A torch without the option gets the
    profiler as it is."""
    try:
        from torch._C._profiler import _ExperimentalConfig

        config = _ExperimentalConfig(trace_only=True)
    except (ImportError, TypeError):  # pragma: no cover - an older torch
        return profiler.make_profiler(device, profile_memory=profile_memory)
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    return profile(
        activities=activities, profile_memory=profile_memory, experimental_config=config, **profiler.PROFILER_OPTIONS
    )


def _begin_pass(training: Training, trial_seed: int) -> None:
    """Every pass of a trial starts alike: seeded, the model in its epoch's modes, the loader's first batch next."""
    seed_everything(trial_seed, training.device)
    _start_epoch(training)
    training.step.begin_pass(training.trainer.train_loader)


def _start_epoch(training: Training) -> None:
    """What the trainer's `_train_epoch` does before its first batch: train mode, frozen BatchNorms
    (if any layers are frozen) back to eval."""
    training.step.model.train()
    enforce_frozen_bn_eval = getattr(training.trainer, "_enforce_frozen_bn_eval", None)
    if callable(enforce_frozen_bn_eval):
        enforce_frozen_bn_eval()


def _unprofiled_pass(training: Training, opts: RunOptions, runner: TrialRunner, trial_seed: int) -> Block:
    """The trial's pass without the profiler, from the state the caller restored: warmup, then the
    measured steps as one timed block."""
    step = training.step
    _begin_pass(training, trial_seed)
    runner.warmup(step, opts.warmup)
    block = runner.time_block(step, range(opts.steps))
    step.end_pass()
    return block


def _replay(training: Training, opts: RunOptions, runner: TrialRunner, trial_seed: int, warmed: dict) -> Block:
    """The trial's --steps steps without the profiler (the profiled ones first), from `warmed` (the
    state after the warmup): the pass starts as seeded, the warmup's batches are only drawn from the
    loader (its order and workers as before, no step run on them: the process is warm by now), then the
    state after the warmup is restored, RNG included, and the steps run as one timed block, the profiled
    window's on the same batches."""
    step = training.step
    _begin_pass(training, trial_seed)
    for _ in range(opts.warmup):
        next(step.batches)
    step.restore(warmed)
    block = runner.time_block(step, range(opts.steps))
    step.end_pass()
    return block


# ---------------------------------------------------------------------------------------------
# what the profile records (its settings: measure/train_settings.py)


def _capture(
    trace_path: Path,
    batch: int,
    mem: dict,
    window: Block,
    plain: Block | None,
    machine: dict,
    steps: int,
    plain_first: bool,
    device,
):
    from libreyolo_profile.store.document.capture import TrialCapture, UnprofiledTiming

    extra = {
        "profiled_steps": len(window.call_ms),
        "host_window_ms": round(window.wall_ms, 3),
        "host_step_ms": [round(v, 3) for v in window.call_ms],
        "host_step_p50_ms": round(statistics.median(window.call_ms), 3),
    }
    if device.type == "cpu":
        extra["peak_rss_mb"] = profiler.peak_rss_mb()
        extra["peak_rss_note"] = (
            "process peak resident set size since start (interpreter, libraries, model, "
            "dataset and every tensor; the profiler's own records also grow with each profiled "
            "step), not an allocator peak"
        )
    unprofiled = None
    if plain is not None:
        extra["unprofiled_step_ms"] = [round(v, 3) for v in plain.call_ms]
        extra["unprofiled_window_ms"] = round(plain.wall_ms, 3)
        unprofiled = UnprofiledTiming.of_blocks(
            [plain],
            images_per_call=batch,
            where=(
                f"the trial's {steps} steps replayed without the profiler "
                + (
                    "before the profiled pass, from the trial's start "
                    if plain_first
                    else "after the profiled pass, from the state its warmup left "
                )
                + "(weights, optimizer, EMA, scaler, LR schedule and RNG restored, so the same batches come out, "
                + "the profiled steps' first)"
            ),
        )
    return TrialCapture(
        trace_path=trace_path,
        images_per_step=batch,
        profiled_step_ms=window.wall_ms / len(window.call_ms),
        profiled_window_ms=window.wall_ms,
        unprofiled=unprofiled,
        machine=machine,
        extra=extra,
        **mem,
    )
