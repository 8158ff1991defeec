"""LibreYOLO's detection families as `infer` and `run` see them: which family a weights name means,
a family built with random weights, the trainer its own `train()` uses, and the model's FLOPs.

Families are read from LibreYOLO's own registry (`BaseModel._registry`, filled by
`libreyolo.models`), in its order, so a name resolves to the family LibreYOLO's factory would pick
(`LibreYOLO9E2Et.pt` is YOLO9-E2E, not YOLO9). Only families whose tasks include `detect` count.
"""

from __future__ import annotations

import importlib
import inspect
import random
from pathlib import Path

from libreyolo_profile.errors import ProfileError, UsageError

RANDOM_SEED = 0
# optional families LibreYOLO registers lazily: weights prefix -> why it is not available here
_OPTIONAL_UNAVAILABLE: dict[str, str] = {}


def detection_families() -> list:
    """LibreYOLO's registered model classes that detect, in registry order (RF-DETR, an optional
    family LibreYOLO registers lazily, included when its dependencies are installed)."""
    import libreyolo.models as models

    ensure_optional = getattr(models, "_ensure_rfdetr", None)
    if callable(ensure_optional):
        try:
            ensure_optional()
        except Exception as exc:  # an optional family whose dependencies are missing: absent, with why
            _OPTIONAL_UNAVAILABLE["LibreRFDETR"] = " ".join(str(exc).split())
    return [
        cls
        for cls in models.BaseModel._registry
        if getattr(cls, "FAMILY", "") and getattr(cls, "FILENAME_PREFIX", "") and "detect" in cls._supported_tasks()
    ]


def display_name(cls) -> str:
    """The family as LibreYOLO names its weights: LibreYOLO9, LibreYOLOX, LibreRTDETR, …"""
    return cls.FILENAME_PREFIX


def sizes(cls) -> list[str]:
    return list(cls.INPUT_SIZES)


def from_name(name: str, size: str | None) -> tuple[object, str] | None:
    """(family class, size) for a weights name like `LibreYOLOXs.pt` (size from the name) or a bare
    family name like `LibreYOLOX` (size from `size`); None when no detection family claims it."""
    families = detection_families()
    for cls in families:
        found = cls.detect_size_from_filename(name)
        if found is not None:
            return cls, found
    stem = Path(name).stem if Path(name).suffix == ".pt" else name
    for cls in families:
        if stem.lower() == cls.FILENAME_PREFIX.lower():
            if size is None or size not in cls.INPUT_SIZES:
                raise UsageError(
                    f"--weights {name}: {display_name(cls)} comes in sizes {', '.join(sizes(cls))}; "
                    f"pass --size (e.g. --size {sizes(cls)[0]}) or a name like "
                    f"{cls.FILENAME_PREFIX}{sizes(cls)[0]}.pt"
                )
            return cls, size
    return None


def unknown_name_message(name: str) -> str:
    for prefix, why in _OPTIONAL_UNAVAILABLE.items():
        if Path(name).name.lower().startswith(prefix.lower()):
            return f"--weights {name}: {prefix} is an optional LibreYOLO family that cannot load here ({why})"
    names = ", ".join(f"{display_name(c)}{sizes(c)[0]}.pt" for c in detection_families()[:8])
    return (
        f"--weights {name}: no such file, and not a LibreYOLO detection weights name "
        f"(e.g. {names}, …); pass a checkpoint path or a name LibreYOLO publishes"
    )


def build_random(cls, size: str, device):
    """The family at `size` with LibreYOLO's from-scratch initialisation (no pretrained backbone
    download), seeded with RANDOM_SEED without disturbing the caller's random generators."""
    import numpy as np
    import torch

    py_state, np_state = random.getstate(), np.random.get_state()
    try:
        with torch.random.fork_rng(devices=[]):
            return cls._from_scratch(size=size, device=str(device), seed=RANDOM_SEED, nb_classes=_default_classes(cls))
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise ProfileError(
            f"{display_name(cls)}-{size} cannot be built with random weights here "
            f"({type(exc).__name__}: {first}); pass a checkpoint with --weights",
            2,
        ) from None
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)


def _default_classes(cls):
    """The class count the family's constructor defaults to (80 COCO classes for most; the Darknet
    families pass None to take their config's, e.g. YOLOv1's 20 VOC classes)."""
    parameter = inspect.signature(cls.__init__).parameters.get("nb_classes")
    return 80 if parameter is None or parameter.default is inspect.Parameter.empty else parameter.default


def trainer_class(wrapper):
    """The trainer the family's own `train()` drives: LibreYOLO's `_trainer_class()` hook where the
    family has one (LibreYOLO9, YOLO9-P2), else the BaseTrainer subclass in the family's `trainer`
    module whose `get_model_family()` names the family. Exit 2 when there is none, or when it
    replaces BaseTrainer's epoch loop (its step is then not the step `run` measures)."""
    from libreyolo.training.trainer import BaseTrainer

    cls = type(wrapper)
    name = display_name(cls)
    hook = getattr(wrapper, "_trainer_class", None)
    found = hook() if callable(hook) else _trainer_in_module(cls, BaseTrainer)
    if found is None:
        raise ProfileError(
            f"{name}: no trainer in {cls.__module__.rsplit('.', 1)[0]}.trainer names family {cls.FAMILY!r}; "
            "`libreyolo profile run` cannot profile its training — `infer` can",
            2,
        )
    for loop in ("_train_epoch", "_train_epoch_accum"):
        if getattr(found, loop) is not getattr(BaseTrainer, loop):
            raise ProfileError(
                f"{name}: its trainer {found.__name__} runs its own epoch loop ({found.__name__}.{loop}), "
                "which `libreyolo profile run` does not replicate step by step; profiling it with "
                "BaseTrainer's step would measure something LibreYOLO does not run",
                2,
            )
    return found


def _trainer_in_module(cls, base):
    package = cls.__module__.rsplit(".", 1)[0]
    name = display_name(cls)
    try:
        module = importlib.import_module(f"{package}.trainer")
    except ImportError:
        raise ProfileError(
            f"{name} has no trainer in LibreYOLO {_version()} (no {package}.trainer); "
            "`libreyolo profile run` cannot profile its training — `infer` can",
            2,
        ) from None
    for candidate in vars(module).values():
        if (
            inspect.isclass(candidate)
            and issubclass(candidate, base)
            and candidate.__module__ == module.__name__
            and _trains(candidate, cls.FAMILY)
        ):
            return candidate
    return None


def uses_yolo9_training(wrapper) -> bool:
    """True when the family trains through `LibreYOLO9.train()` itself (LibreYOLO9, YOLO9-P2), not an
    override of it (YOLO9-E2E)."""
    import libreyolo

    return isinstance(wrapper, libreyolo.LibreYOLO9) and type(wrapper).train is libreyolo.LibreYOLO9.train


def attaches_pgi_aux(wrapper) -> bool:
    """`LibreYOLO9.train()` attaches the PGI aux branch to plain LibreYOLO9 modules only (not YOLO9-P2)."""
    from libreyolo.models.yolo9.nn import LibreYOLO9Model

    return uses_yolo9_training(wrapper) and type(wrapper.model) is LibreYOLO9Model


def _trains(trainer_cls, family: str) -> bool:
    try:
        return trainer_cls.get_model_family(None) == family  # a constant in every LibreYOLO trainer
    except Exception:
        return False


def _version() -> str:
    import libreyolo

    return getattr(libreyolo, "__version__", "?")


def forward_flops(module, input_shape: tuple[int, ...], device) -> tuple[int | None, str | None]:
    """(FLOPs, None) of one inference forward of `module` on a zero input of `input_shape`, counted by
    torch.utils.flop_counter (2 per multiply-accumulate; convolutions, matmuls and attention; element-wise
    ops not counted), or (None, why) when the forward cannot be counted."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    was_training = module.training
    try:
        module.eval()
        counter = FlopCounterMode(display=False)
        with torch.no_grad(), counter:
            module(torch.zeros(input_shape, device=device))
        return int(counter.get_total_flops()), None
    except Exception as exc:
        return None, f"torch.utils.flop_counter could not count this forward ({type(exc).__name__}: {str(exc)[:160]})"
    finally:
        module.train(was_training)
