"""The model and trainer of `libreyolo profile run`, built the way the family's own `train()` builds
them, for any LibreYOLO detection family whose trainer runs BaseTrainer's step loop.

LibreYOLO9 and YOLO9-P2 (as `LibreYOLO9.train()`): seed, class head re-built for the dataset's nc, and
for plain LibreYOLO9 the PGI aux branch attached (aux_weight 0.25, the training default). Every other
family (as its `train()`: YOLOX, RTMDet, PP-YOLOE, YOLO-NAS, …): class head re-built for the dataset's
nc, the dataset's names, then seed. Then the family's own trainer (`families.trainer_class`) with
`setup()`, its save directory inside the run's temporary directory.
"""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.errors import ProfileError
from libreyolo_profile.measure import adapter, common, families, flop_cache
from libreyolo_profile.measure.trials import seed_everything

AUX_WEIGHT = 0.25  # LibreYOLO9.train()'s default PGI weight
SEED = 0  # LibreYOLO's training default (measure/train.py seeds its trials from it too)


def build(opts, cfg: dict, device, tmp: Path):
    """(wrapper, model_info, marks, imgsz) ready for the trainer; exit 2 for what `run` cannot train."""
    with common.status(f"building {Path(opts.weights).name} on {device}"):
        wrapper, model_info, marks = adapter.build_model(opts.weights, opts.size, device, tmp)
    name = f"{model_info.get('family')}-{model_info.get('size')}"
    if model_info["format"] != "pytorch":
        raise ProfileError(
            f"--weights {opts.weights}: a {model_info['format']} export of {name}; exports are "
            "inference-only: `libreyolo profile run` trains PyTorch checkpoints (use `infer` for this "
            "file)",
            2,
        )
    model_info["trainer"] = families.trainer_class(wrapper).__name__
    yolo9_training, pgi_aux = families.uses_yolo9_training(wrapper), families.attaches_pgi_aux(wrapper)
    if opts.auto_batch and not pgi_aux:
        raise ProfileError(
            f"--batch -1 probes memory with LibreYOLO9's loss and target format, not {name}'s; pass --batch N", 2
        )
    imgsz = adapter.round_imgsz(wrapper, opts.imgsz)
    nc = int(cfg["nc"])
    model_info["nb_classes_checkpoint"] = int(wrapper.nb_classes)
    if yolo9_training:
        seed_everything(SEED, device)
        if nc != wrapper.nb_classes:
            wrapper._rebuild_for_new_classes(nc)
        if pgi_aux:
            wrapper.model.enable_aux(weight=AUX_WEIGHT)
            model_info["aux_weight"] = AUX_WEIGHT
    else:
        if nc != wrapper.nb_classes:
            wrapper._rebuild_for_new_classes(nc)
        if cfg.get("names") is not None:
            names = cfg["names"]
            names = dict(enumerate(names)) if isinstance(names, list) else names
            wrapper.names = wrapper._sanitize_names(names, wrapper.nb_classes)
        seed_everything(SEED, device)
    wrapper.model.to(device)
    model_info["nb_classes"] = nc
    model_info["parameter_count"] = adapter.parameter_count(wrapper.model)
    flops, why = _flops(wrapper, imgsz, device)
    model_info.update(
        {
            "input_shape": [1, 3, imgsz, imgsz],
            "flops": flops,
            "flops_imgsz": [imgsz, imgsz],
            "flops_scope": (
                "one image's inference forward (eval mode, no loss, no aux branch) at the "
                "training imgsz, counted by torch.utils.flop_counter (2 FLOPs per "
                "multiply-accumulate of convolutions, matmuls and attention)"
            ),
            "ops_source": "torch profiler (aten ops)",
        }
    )
    if why:
        model_info["flops_null_reason"] = why
    return wrapper, model_info, marks, imgsz


def _flops(wrapper, imgsz: int, device):
    """FLOPs without drawing from the RNG the pipeline was just seeded with."""
    import torch

    with torch.random.fork_rng(devices=[]):
        return flop_cache.forward_flops(wrapper.model, (1, 3, imgsz, imgsz), device)


def build_trainer(
    opts,
    cfg: dict,
    wrapper,
    model_info: dict,
    batch: int,
    imgsz: int,
    device,
    tmp: Path,
    overrides: dict | None = None,
    *,
    amp: bool,
):
    """The family's own trainer, set up (dataset, loader, optimizer, schedule, EMA, scaler); `overrides`:
    config the run must change (measure/train.py says which and why in the settings); `amp`: whether its
    AMP path runs (--amp where it can: CUDA only)."""
    trainer_cls = families.trainer_class(wrapper)
    with common.status(
        f"building LibreYOLO's training pipeline ({trainer_cls.__name__}: dataset, loader, optimizer, EMA)"
    ):
        trainer = trainer_cls(
            model=wrapper.model,
            wrapper_model=wrapper,
            size=model_info["size"],
            num_classes=cfg["nc"],
            data=str(Path(cfg["yaml_file"]).resolve()),
            batch=batch,
            imgsz=imgsz,
            workers=opts.workers,
            device=str(device),
            project=str(tmp / "trainer"),
            name="setup",
            exist_ok=True,
            amp=amp,
            amp_dtype="float16",
            seed=SEED,
            **(overrides or {}),
        )
        try:
            trainer.setup()
        except ProfileError:
            raise
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            raise ProfileError(
                f"{model_info.get('family')}-{model_info.get('size')}: LibreYOLO's "
                f"{trainer_cls.__name__}.setup() failed ({type(exc).__name__}: {first})",
                2,
            ) from None
    return trainer
