"""`libreyolo profile run`: a short LibreYOLO9 training, step by step.

The pipeline is LibreYOLO's own, built the way `LibreYOLO9.train()` builds it: seed 0, the class
head re-built for the dataset's nc, the PGI aux branch attached (aux_weight 0.25, the training
default), then `YOLO9Trainer.setup()` for the data pipeline (YOLO9TrainTransform, YOLODataset,
YOLO9MosaicMixupDataset, create_dataloader with its collate and `--workers`), the optimizer's three
param groups, the LR/momentum schedule, EMA and, on CUDA with --amp, the GradScaler. The trainer's
save directory is pointed into the run's temporary directory inside --project and deleted with it.

One measured step = `## dataload ##` (next batch), `## to_device ##`, `## forward ##` (forward and
loss, under CUDA autocast when AMP is active), `## backward ##`, `## optimizer ##` (scaler/optimizer
step, zero_grad, EMA update, LR/momentum schedule). LibreYOLO's trainer does zero_grad before the
backward; doing it after the step (set_to_none) leaves the same gradients for the next backward and
keeps the phases contiguous. Its per-step `loss.item()` (logging) is left out: no host/device
synchronization inside the window except one at the end of the last step (the GradScaler's own
inf check on the fp16 path is part of LibreYOLO's AMP step and stays).

Each trial is a fresh pass over the training split: `--warmup` steps untraced, then `--steps`
traced, all from that one pass (no epoch boundary, no validation, no checkpoint in the window).
Profiler overhead: the same trial replayed without the profiler (weights, optimizer, EMA, scaler,
schedule and RNG restored to the trial's start, so the same batches come out) and the window wall
times compared.
"""

from __future__ import annotations

import copy
import random
import statistics
import time
from pathlib import Path

from libreyolo_profile.errors import EXIT_NO_PROFILE, ProfileError, UsageError
from libreyolo_profile.measure import common
from libreyolo_profile.measure.common import note

AUX_WEIGHT = 0.25  # LibreYOLO9.train()'s default PGI weight
SEED = 0  # LibreYOLO's training default
AUTO_FRACTION = 0.70  # --batch -1 targets about 70% of device memory
CPU_AUTO_CAP = 16  # --batch -1 on the CPU never goes above the default batch


# ---------------------------------------------------------------------------------------------
# dataset


def resolve_dataset(data: str) -> dict:
    """LibreYOLO's own lookup (path, cwd, built-in names) without any download or directory
    creation. Exit 2 when the images are not on this machine, saying how to point at a local YAML."""
    from libreyolo.data import load_data_config

    try:
        cfg = load_data_config(data, autodownload=False)
    except FileNotFoundError:
        try:
            from libreyolo.data.utils import list_builtin_datasets

            builtin = ", ".join(sorted(list_builtin_datasets()))
        except Exception:
            builtin = "?"
        raise UsageError(f"dataset {data}: no such YAML file (from the cwd) and not a LibreYOLO built-in dataset name "
                         f"({builtin}); pass a local dataset YAML path, e.g. "
                         "`libreyolo profile run path/to/data.yaml`") from None
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise UsageError(f"dataset {data}: LibreYOLO could not read it ({type(exc).__name__}: {first})") from None
    files = cfg.get("train_img_files") or []
    if not files:
        where = cfg.get("train")
        url = cfg.get("download")
        how = (f"LibreYOLO would download it{f' from {url}' if isinstance(url, str) and url.startswith('http') else ''}, "
               "but `libreyolo profile run` never downloads. ") if url else ""
        raise UsageError(
            f"dataset {data}: no training images on this machine (looked in {where}). {how}"
            "Point at a local dataset YAML whose `train:` resolves to an image directory or list, e.g. "
            "`libreyolo profile run path/to/data.yaml`; a relative `path:` is looked up under "
            "$LIBREYOLO_DATASETS_DIR (default ~/datasets) and then beside the YAML")
    if cfg.get("train_annotation_file"):
        raise UsageError(f"dataset {data}: COCO-JSON annotations are not supported by libreyolo profile run; "
                         "use a YOLO-format dataset (images/ + labels/)")
    nc = cfg.get("nc")
    if nc is None and cfg.get("names") is not None:
        nc = len(cfg["names"])
    if nc is None:
        raise UsageError(f"dataset {data}: the YAML declares neither nc nor names")
    cfg["nc"] = int(nc)
    return cfg


def too_small_message(data: str, available: int, warmup: int, steps: int, batch: int) -> str:
    need = (warmup + steps) * batch
    ways = [f"a dataset with at least {need} training images"]
    max_steps = available // batch - warmup
    if max_steps >= 1:
        ways.append(f"--steps {max_steps} (the most that fit with --warmup {warmup} --batch {batch})")
    else:
        fit_warmup = available // batch - 1
        if fit_warmup >= 0:
            ways.append(f"--warmup {fit_warmup} --steps 1 (at --batch {batch}, the warmup alone needs "
                        f"{warmup * batch} images)")
        else:
            ways.append(f"fewer steps cannot help at --batch {batch}: one batch needs more than the {available} images")
    max_batch = available // (warmup + steps)
    if max_batch >= 1:
        ways.append(f"--batch {max_batch} (the largest that fits with --warmup {warmup} --steps {steps})")
    else:
        ways.append(f"no batch fits {warmup + steps} steps; lower --warmup/--steps to at most {available} together")
    return (f"dataset {data} has {available} training images, but one trial needs "
            f"(--warmup {warmup} + --steps {steps}) × --batch {batch} = {need} images from a single pass "
            f"(incomplete last batch dropped, no epoch boundary in the window); no profile written. Ways out: "
            + "; or ".join(ways))


# ---------------------------------------------------------------------------------------------
# --batch -1


def _synthetic_batch(b: int, imgsz: int, device):
    import torch

    g = torch.Generator().manual_seed(1234)
    imgs = torch.rand(b, 3, imgsz, imgsz, generator=g)
    targets = torch.full((b, 300, 5), -1.0)
    for i in range(b):  # a few boxes per image so the assigner and loss do real work
        for j in range(8):
            x1, y1 = torch.rand(2, generator=g) * 0.6
            targets[i, j] = torch.tensor([j % 3, x1, y1, x1 + 0.2, y1 + 0.25])
    return imgs.to(device), targets.to(device)


def _probe_step(model, b: int, imgsz: int, device, autocast_dtype) -> None:
    import torch

    imgs, targets = _synthetic_batch(b, imgsz, device)
    model.train()
    if autocast_dtype is not None:
        with torch.autocast("cuda", dtype=autocast_dtype):
            loss = model(imgs, targets=targets)["total_loss"]
    else:
        loss = model(imgs, targets=targets)["total_loss"]
    loss.backward()
    model.zero_grad(set_to_none=True)


def _current_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise OSError("no VmRSS")


def _available_ram_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    raise OSError("no MemAvailable")


def auto_batch(model, imgsz: int, device, autocast_dtype, supply_cap: int) -> tuple[int, str]:
    """Pick the batch for --batch -1. Returns (batch, why)."""
    import torch

    probes = (1, 2, 4)
    param_mb = sum(p.numel() * p.element_size() for p in model.parameters()) / 2**20
    if device.type == "cuda":
        total = torch.cuda.get_device_properties(device).total_memory / 2**20
        peaks = []
        try:
            for b in probes:
                torch.cuda.synchronize(device)
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats(device)
                _probe_step(model, b, imgsz, device, autocast_dtype)
                torch.cuda.synchronize(device)
                peaks.append(torch.cuda.max_memory_allocated(device) / 2**20)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            if not peaks:
                return 1, "--batch -1: even batch 1 ran out of device memory in the probe; using 1"
            probes = probes[:len(peaks)]
        finally:
            model.zero_grad(set_to_none=True)
            torch.cuda.empty_cache()
        slope = (peaks[-1] - peaks[0]) / max(probes[len(peaks) - 1] - probes[0], 1) if len(peaks) > 1 else peaks[0]
        slope = max(slope, 1e-3)
        intercept = peaks[0] - slope * probes[0] + 2 * param_mb  # + SGD momentum buffers + the EMA copy
        mem_batch = max(1, int((AUTO_FRACTION * total - intercept) // slope))
        basis = (f"CUDA probe: training steps (forward+loss+backward, "
                 f"{'autocast ' + str(autocast_dtype).replace('torch.', '') if autocast_dtype else 'fp32'}) at batch "
                 f"{', '.join(map(str, probes[:len(peaks)]))} peaked at "
                 f"{', '.join(f'{p:.0f}' for p in peaks)} MiB; linear fit {slope:.1f} MiB/image + {intercept:.0f} MiB "
                 f"(incl. {2 * param_mb:.0f} MiB momentum + EMA) → {mem_batch} fills {AUTO_FRACTION:.0%} of {total:.0f} MiB")
        picked = min(mem_batch, supply_cap) if supply_cap >= 1 else mem_batch
        if picked < mem_batch:
            basis += f"; capped at {picked} so the dataset supplies warmup+steps full batches in one pass"
        return picked, basis
    # CPU: no allocator statistics without the profiler, so measure the process's resident memory
    # right after forward+loss (the autograd graph then holds every activation) at batch 2 and 4,
    # after one untimed batch-1 step has grown the allocator's pools.
    try:
        _probe_step(model, 1, imgsz, device, None)
        rss = {}
        for b in (2, 4):
            base = _current_rss_mb()
            imgs, targets = _synthetic_batch(b, imgsz, device)
            model.train()
            loss = model(imgs, targets=targets)["total_loss"]
            rss[b] = _current_rss_mb() - base
            loss.backward()
            model.zero_grad(set_to_none=True)
            del loss, imgs, targets
        per_image = (rss[4] - rss[2]) / 2
        if per_image <= 0:
            per_image = rss[4] / 4
        per_image = max(per_image, 1.0)
        available = _available_ram_mb()
        mem_batch = max(1, int(AUTO_FRACTION * available // (per_image * 2.0)))  # ×2: grads + backward buffers
        basis = (f"CPU rule: resident-memory growth after forward+loss at batch 2, 4 = "
                 f"{rss[2]:.0f}, {rss[4]:.0f} MiB → ~{per_image:.0f} MiB/image, doubled for backward; "
                 f"{mem_batch} fits {AUTO_FRACTION:.0%} of {available:.0f} MiB available RAM")
    except (OSError, ValueError, KeyError) as exc:
        mem_batch = CPU_AUTO_CAP
        basis = f"CPU rule: memory could not be measured ({exc}); assuming the default"
    picked = min(mem_batch, CPU_AUTO_CAP)
    if picked < mem_batch:
        basis += f"; capped at {CPU_AUTO_CAP} (the default batch) to keep CPU steps short"
    if supply_cap >= 1 and supply_cap < picked:
        picked = supply_cap
        basis += f"; capped at {picked} so the dataset supplies warmup+steps full batches in one pass"
    return max(1, picked), basis


# ---------------------------------------------------------------------------------------------
# the step


class _Stepper:
    """One training step of LibreYOLO's loop, optionally annotated with phases."""

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
        apply = getattr(trainer, "_apply_scheduler", None)
        self._apply_scheduler = apply if callable(apply) else None

    def _phase(self, name: str, annotate: bool):
        import contextlib

        return self.record_function(f"## {name} ##") if annotate else contextlib.nullcontext()

    def step(self, it, annotate: bool) -> None:
        torch = self.torch
        with self._phase("dataload", annotate):
            batch = next(it)
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


def _seed_all(seed: int, device) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if device.type == "cuda":
        torch.cuda.manual_seed_all(seed)


# ---------------------------------------------------------------------------------------------


def _validate(opts: dict) -> None:
    if opts["batch"] != -1:
        common.check_positive("batch", opts["batch"])
    common.check_positive("steps", opts["steps"])
    common.check_positive("warmup", opts["warmup"], 0)
    common.check_positive("repeat", opts["repeat"])
    common.check_positive("workers", opts["workers"], 0)
    common.check_positive("imgsz", opts["imgsz"])


def profile_run(opts: dict, argv: list[str]) -> dict:
    _validate(opts)
    warmup, steps, repeat = opts["warmup"], opts["steps"], opts["repeat"]
    data = str(opts["data"])
    with common.status("importing torch and LibreYOLO"):
        import torch

        device = common.resolve_device(opts["device"])
        from libreyolo_profile.measure import adapter

        adapter.check_libreyolo()
        cfg = resolve_dataset(data)
    n_files = len(cfg["train_img_files"])
    batch_req = opts["batch"]
    if batch_req != -1 and (warmup + steps) * batch_req > n_files:
        raise ProfileError(too_small_message(data, n_files, warmup, steps, batch_req), EXIT_NO_PROFILE)
    if batch_req == -1 and n_files < warmup + steps:
        raise ProfileError(too_small_message(data, n_files, warmup, steps, 1), EXIT_NO_PROFILE)

    amp_active = bool(opts["amp"]) and device.type == "cuda"
    autocast_dtype = torch.float16 if amp_active else None
    project = Path(opts["project"])
    with common.workspace(project, "train") as tmp:
        with common.status(f"building LibreYOLO9-{opts['size']} on {device}"):
            wrapper, model_info, marks = adapter.build_model(opts["weights"], opts["size"], device, tmp)
        imgsz = adapter.round_imgsz(wrapper, opts["imgsz"])
        # As LibreYOLO9.train(): seed, re-head for the dataset's classes, attach the PGI aux branch.
        _seed_all(SEED, device)
        nc = cfg["nc"]
        model_info["nb_classes_checkpoint"] = int(wrapper.nb_classes)
        if nc != wrapper.nb_classes:
            wrapper._rebuild_for_new_classes(nc)
        model_info["nb_classes"] = int(nc)
        wrapper.model.enable_aux(weight=AUX_WEIGHT)
        wrapper.model.to(device)
        model_info["aux_weight"] = AUX_WEIGHT
        model_info["parameter_count"] = adapter.parameter_count(wrapper.model)

        batch_rule = None
        if batch_req == -1:
            with common.status("--batch -1: probing memory per image"):
                batch, batch_rule = auto_batch(wrapper.model, imgsz, device, autocast_dtype,
                                               n_files // (warmup + steps))
            note(f"--batch -1 → {batch} ({batch_rule})")
            _seed_all(SEED, device)
        else:
            batch = batch_req
        if opts["amp"] and not amp_active:
            marks["amp_inactive"] = (f"AMP requested (--amp) but LibreYOLO's AMP path is CUDA-only; this "
                                     f"{device.type.upper()} run is fp32")

        from libreyolo.models.yolo9.trainer import YOLO9Trainer

        with common.status("building LibreYOLO's training pipeline (dataset, loader, optimizer, EMA)"):
            trainer = YOLO9Trainer(
                model=wrapper.model, wrapper_model=wrapper, size=model_info["size"], num_classes=nc,
                data=str(Path(cfg["yaml_file"]).resolve()), batch=batch, imgsz=imgsz, workers=opts["workers"],
                device=str(device), project=str(tmp / "trainer"), name="setup", exist_ok=True,
                amp=bool(opts["amp"]), amp_dtype="float16", seed=SEED)
            trainer.setup()
        loader = trainer.train_loader
        available = len(loader.dataset)
        full_batches = available // batch
        if full_batches < warmup + steps:
            raise ProfileError(too_small_message(data, available, warmup, steps, batch), EXIT_NO_PROFILE)
        if amp_active and trainer.scaler is None:  # pragma: no cover - LibreYOLO decides
            amp_active, autocast_dtype = False, None
        stepper = _Stepper(trainer, device, autocast_dtype)
        from torch.profiler import record_function

        trials = []
        for trial in range(repeat):
            label = f"trial {trial + 1}/{repeat}" if repeat > 1 else "run"
            snap = stepper.snapshot() if opts["overhead"] else None
            trial_seed = SEED + 1 + trial
            total = (warmup + steps) * (2 if opts["overhead"] else 1)
            with common.progress(f"{label}: warmup {warmup}, {steps} profiled steps of batch {batch}"
                                 + (", then the same steps unprofiled" if opts["overhead"] else ""), total) as advance:
                _seed_all(trial_seed, device)
                stepper.model.train()
                it = iter(loader)
                for _ in range(warmup):
                    stepper.step(it, annotate=False)
                    advance()
                common.sync(device)
                retries = common.cuda_memory_reset(device)
                prof = common.make_profiler(device)
                step_ms: list[float] = []
                with common.profiling(prof):
                    t_window = time.perf_counter()
                    for s in range(steps):
                        t0 = time.perf_counter()
                        with record_function(f"ProfilerStep#{s + 1}"):
                            stepper.step(it, annotate=True)
                            if s == steps - 1:
                                common.sync(device)  # the window ends when the device is done
                        step_ms.append((time.perf_counter() - t0) * 1000.0)
                        advance()
                    window_ms = (time.perf_counter() - t_window) * 1000.0
                mem = common.cuda_memory_capture(device, retries)
                del it
                trace_path = common.export_trace(prof, tmp / f"trial{trial + 1}_trace.json")
                del prof
                plain_ms = None
                if snap is not None:
                    state_after = stepper.snapshot()
                    stepper.restore(snap)
                    _seed_all(trial_seed, device)
                    it = iter(loader)
                    for _ in range(warmup):
                        stepper.step(it, annotate=False)
                        advance()
                    common.sync(device)
                    t_window = time.perf_counter()
                    for _ in range(steps):
                        stepper.step(it, annotate=False)
                        advance()
                    common.sync(device)
                    plain_ms = (time.perf_counter() - t_window) * 1000.0
                    del it
                    # continue from the profiled trial's end state, as if the replay never happened
                    stepper.restore(state_after)
                    del state_after, snap
            trials.append(_capture(trace_path, batch, mem, step_ms, window_ms, plain_ms, steps, device))

        env = common.environment(device)
        settings = {
            "data": data,
            "data_yaml": str(Path(cfg["yaml_file"]).resolve()),
            "dataset_root": str(cfg.get("root")),
            "train_split": str(cfg.get("train")),
            "train_images": available,
            "nc": nc,
            "weights": opts["weights"],
            "size": model_info["size"],
            "batch": batch,
            "batch_requested": batch_req,
            "batch_rule": batch_rule,
            "imgsz": imgsz,
            "imgsz_requested": opts["imgsz"],
            "workers": opts["workers"],
            "amp": bool(opts["amp"]),
            "amp_active": amp_active,
            "amp_dtype": "float16" if amp_active else None,
            "steps": steps,
            "warmup": warmup,
            "repeat": repeat,
            "device": str(device),
            "device_requested": str(opts["device"]),
            "project": str(project.resolve()),
            "overhead": bool(opts["overhead"]),
            "seed": SEED,
            "trial_seeds": [SEED + 1 + t for t in range(repeat)],
            "aux_weight": AUX_WEIGHT,
            "optimizer": _optimizer_desc(trainer),
            "ema": trainer.ema_model is not None,
            "scheduler": str(getattr(trainer.config, "scheduler", None)),
            "images_per_trial": (warmup + steps) * batch,
            "window": (f"{warmup} warmup + {steps} measured batches from one fresh shuffled pass over "
                       f"{available} training images ({full_batches} full batches, last incomplete batch "
                       "dropped); no validation, checkpoint or epoch boundary inside"),
            "step_scope": ("dataload (next batch) | to_device | forward+loss"
                           + (" (CUDA autocast float16)" if amp_active else "")
                           + " | backward | optimizer step + zero_grad + EMA update + LR/momentum schedule"),
            "synchronization": ("one device synchronize at the end of the last measured step"
                                + ("; GradScaler.step checks for inf/nan on the host every step (LibreYOLO's fp16 AMP path)"
                                   if amp_active else "")
                                + "; LibreYOLO's per-step loss.item() logging is omitted"),
            "torch_threads": torch.get_num_threads(),
            "profiler": dict(common.PROFILER_OPTIONS, activities=["cpu"] + (["cuda"] if device.type == "cuda" else [])),
        }
        return common.write_and_print(project / "train", kind="train", trials=trials, keep_trace=True,
                                      command=list(argv), settings=settings, env=env, model=model_info,
                                      marks=marks, as_json=bool(opts["as_json"]),
                                      report=bool(opts.get("report", True)),
                                      exist_ok=bool(opts.get("exist_ok", False)))


def _optimizer_desc(trainer) -> dict:
    opt = trainer.optimizer
    groups = [{"params": len(g["params"]), "weight_decay": g.get("weight_decay")} for g in opt.param_groups]
    return {"name": type(opt).__name__, "lr0": getattr(trainer.config, "lr0", None),
            "momentum": getattr(trainer.config, "momentum", None), "nesterov": getattr(trainer.config, "nesterov", None),
            "groups": groups}


def _capture(trace_path: Path, batch: int, mem: dict, step_ms: list[float], window_ms: float,
             plain_ms: float | None, steps: int, device):
    from libreyolo_profile.store.document.capture import TrialCapture

    extra = {
        "host_window_ms": round(window_ms, 3),
        "host_step_ms": [round(v, 3) for v in step_ms],
        "host_step_p50_ms": round(statistics.median(step_ms), 3),
    }
    pct = method = None
    if plain_ms is not None:
        pct = round((window_ms - plain_ms) / plain_ms * 100.0, 3)
        method = (f"wall time of the {steps} profiled steps vs the same {steps} steps replayed without the "
                  "profiler (weights, optimizer, EMA, scaler, LR schedule and RNG restored to the trial's "
                  "start, so the same batches come out), each window ending with a device synchronize; "
                  "can be negative within timing noise")
        extra["unprofiled_window_ms"] = round(plain_ms, 3)
    if device.type == "cpu":
        extra["peak_rss_mb"] = common.peak_rss_mb()
        extra["peak_rss_note"] = ("process peak resident set size since start (interpreter, libraries, model, "
                                  "dataset and every tensor), not an allocator peak")
    return TrialCapture(trace_path=trace_path, images_per_step=batch, profiler_overhead_pct=pct,
                        overhead_method=method, extra=extra, **mem)
