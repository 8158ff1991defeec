"""The one place that knows how to build a LibreYOLO model from outside LibreYOLO's CLI: any
detection family (measure/families.py) or an exported model (measure/runtimes.py).

Weights resolution is offline-first: a local file (as given, or ./weights/<name>) is loaded by
absolute path, so LibreYOLO's resolver never reaches its downloader (which retries for ~8 s and
leaves `*.download.lock` files in the cwd). Only when the network answers a short check is a
download tried, into the run's temporary directory (deleted afterwards). Otherwise the same family
and size is built with seeded random weights, loudly marked.

The hooks called here are LibreYOLO 1.6.0's semi-public wrapper methods (`_preprocess`, `_forward`,
`_postprocess`, `_rebuild_for_new_classes`) and `model.enable_aux`; `check_libreyolo` fails with
exit 2 when an installed LibreYOLO lacks any of them.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

from libreyolo_profile.errors import ProfileError, UsageError
from libreyolo_profile.measure.common import note, quiet_libreyolo_logging, warn
from libreyolo_profile.store.document import marks as mark

SUPPORTED_LIBREYOLO = "1.6.0"
SIZES = ("t", "s", "m", "c")
DEFAULT_WEIGHTS = "LibreYOLO9t.pt"
RANDOM_SEED = 0
_NAME_SIZE = re.compile(r"^LibreYOLO9([tsmc])\.pt$", re.IGNORECASE)


def check_libreyolo():
    """Import LibreYOLO and verify the hooks we drive exist. Returns the libreyolo module."""
    try:
        import libreyolo
    except Exception as exc:  # pragma: no cover - the package depends on it
        raise ProfileError(
            f"LibreYOLO could not be imported ({exc}); install libreyolo=={SUPPORTED_LIBREYOLO}", 2
        ) from exc
    version = getattr(libreyolo, "__version__", None) or "(no __version__)"
    quiet_libreyolo_logging()
    missing = []
    try:
        cls = libreyolo.LibreYOLO9
        for hook in ("_preprocess", "_forward", "_postprocess", "_rebuild_for_new_classes"):
            if not hasattr(cls, hook):
                missing.append(f"LibreYOLO9.{hook}")
        from libreyolo.models.yolo9.nn import LibreYOLO9Model

        for hook in ("enable_aux", "disable_aux"):
            if not hasattr(LibreYOLO9Model, hook):
                missing.append(f"LibreYOLO9Model.{hook}")
    except Exception as exc:
        missing.append(f"LibreYOLO9 ({type(exc).__name__}: {exc})")
    for mod, name in (
        ("libreyolo.postprocess.slicing", "slice_batch_outputs"),
        ("libreyolo.data", "load_data_config"),
        ("libreyolo.models.yolo9.trainer", "YOLO9Trainer"),
    ):
        try:
            module = __import__(mod, fromlist=[name])
            if not hasattr(module, name):
                missing.append(f"{mod}.{name}")
        except Exception:
            missing.append(f"{mod}.{name}")
    if missing:
        raise ProfileError(
            f"LibreYOLO {version} lacks hooks this profiler drives ({', '.join(missing)}); "
            f"libreyolo-profile supports libreyolo=={SUPPORTED_LIBREYOLO}: "
            f"pip install libreyolo=={SUPPORTED_LIBREYOLO}",
            2,
        )
    if version != SUPPORTED_LIBREYOLO:
        warn(
            f"LibreYOLO {version} is installed; libreyolo-profile is tested with {SUPPORTED_LIBREYOLO} "
            "(the hooks it drives are present, so it continues)"
        )
    return libreyolo


def resolve_size(weights: str, size: str) -> tuple[str, str]:
    """Reconcile --weights and --size for LibreYOLO9 names. The default weights name follows --size
    (`--size s` alone means LibreYOLO9s.pt); a name like LibreYOLO9m.pt sets the size when --size is
    left at its default; a real conflict is exit 2. Other families' names are left to
    `families.from_name` (their sizes differ)."""
    size = str(size).lower()
    m = _NAME_SIZE.match(Path(weights).name)
    if weights != DEFAULT_WEIGHTS and not m:
        return weights, size
    if size not in SIZES:
        raise UsageError(f"--size {size}: LibreYOLO9 comes in sizes {', '.join(SIZES)}")
    if weights == DEFAULT_WEIGHTS and size != "t":
        return f"LibreYOLO9{size}.pt", size
    if m and m.group(1).lower() != size:
        if size == "t":
            return weights, m.group(1).lower()
        raise UsageError(
            f"--weights {weights} is a LibreYOLO9-{m.group(1).lower()} checkpoint but --size is {size}; "
            "drop one of them"
        )
    return weights, size


def local_weights(weights: str) -> Path | None:
    """A local checkpoint file or export (file, or OpenVINO directory): as given, or ./weights/<name>."""
    p = Path(weights).expanduser()
    candidates = [p] if p.is_absolute() else [p, Path("weights") / p]
    for candidate in candidates:
        if candidate.is_file() or candidate.is_dir():
            return candidate.resolve()
    return None


def _network_answers(timeout: float = 1.5) -> bool:
    if os.environ.get("LIBREYOLO_PROFILE_OFFLINE") or os.environ.get("HF_HUB_OFFLINE") == "1":
        return False
    try:
        with socket.create_connection(("huggingface.co", 443), timeout=timeout):
            return True
    except OSError:
        return False


def _try_download(name: str, size: str, tmp: Path) -> Path | None:
    """Download into the run's temp dir (locks and partial files stay there, and go with it)."""
    if not _network_answers():
        return None
    try:
        from libreyolo.utils.download import download_weights

        target = tmp / "weights" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        note(f"downloading {name} into the run's temporary directory")
        download_weights(str(target), size)
        return target if target.is_file() else None
    except Exception as exc:  # any failure → random init, with the reason
        warn(f"download of {name} failed ({type(exc).__name__}: {exc})")
        return None


def build_model(weights: str, size: str, device, tmp: Path):
    """The model --weights names, on `device`: a checkpoint of any LibreYOLO detection family (the
    family read from the file by LibreYOLO's factory), an exported model (runtimes.py), or, with no
    file, the named family and size with random weights, loudly marked. Returns (model, model_info,
    marks); `model_info["format"]` says which ("pytorch" | "onnx" | "openvino" | "torchscript")."""
    from libreyolo_profile.measure import families, runtimes

    check_libreyolo()
    weights, size = resolve_size(weights, size)
    path = local_weights(weights)
    if path is not None:
        fmt = runtimes.export_format(path)
        if fmt is not None:
            backend, info = runtimes.load_export(path, fmt, device)
            return backend, {**info, "weights": weights, "weights_source": f"file:{path}"}, {}
    named = families.from_name(Path(weights).name, size)
    downloaded = False
    if path is None and named is not None:
        path = _try_download(Path(weights).name, named[1], tmp)
        downloaded = path is not None
    if path is not None:
        wrapper = _load_checkpoint(path, weights, device)
        source = f"file:{path}" if not downloaded else f"downloaded:{Path(weights).name} (temporary copy, deleted)"
        return _placed(wrapper, device), _info(wrapper, weights, source), {}
    if named is None:
        raise UsageError(families.unknown_name_message(weights))
    cls, size = named
    name = f"{families.display_name(cls)}-{size}"
    why = (
        f"weights file {weights} not found (looked at {Path(weights)} and {Path('weights') / weights}) "
        "and no download possible offline"
    )
    wrapper = families.build_random(cls, size, device)
    warn(
        f"{why}.\n  Using RANDOMLY INITIALIZED {name} weights: timing is representative, "
        f"detections and NMS work are not. Pass --weights /path/to/{Path(weights).name} for real weights."
    )
    marks = {mark.RANDOM_WEIGHTS: mark.random_weights(why, name, families.RANDOM_SEED)}
    source = f"random-init (seed {families.RANDOM_SEED}; {why})"
    return _placed(wrapper, device), _info(wrapper, weights, source), marks


def _load_checkpoint(path: Path, weights: str, device):
    """LibreYOLO's factory on a local checkpoint (absolute path: its resolver never downloads)."""
    import libreyolo

    try:
        wrapper = libreyolo.LibreYOLO(str(path), device=str(device))
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise ProfileError(
            f"--weights {weights}: LibreYOLO could not load it ({type(exc).__name__}: {first})", 2
        ) from None
    family = getattr(wrapper, "FAMILY", None)
    if not hasattr(wrapper, "model") or not hasattr(wrapper.model, "parameters"):
        raise ProfileError(
            f"--weights {weights}: LibreYOLO loaded it as {type(wrapper).__name__}, not a PyTorch detection model", 2
        )
    if getattr(wrapper, "task", "detect") != "detect":
        raise ProfileError(
            f"--weights {weights}: a {family} {wrapper.task} checkpoint; libreyolo profile measures detection models", 2
        )
    return wrapper


def _placed(wrapper, device):
    """Module and wrapper on the same device (there is no wrapper.to())."""
    import torch

    wrapper.model.to(device)
    wrapper.device = torch.device(device)
    return wrapper


def _info(wrapper, weights: str, source: str) -> dict:
    from libreyolo_profile.measure import families

    return {
        "family": families.display_name(type(wrapper)),
        "family_id": wrapper.FAMILY,
        "size": wrapper.size,
        "format": "pytorch",
        "runtime": "torch",
        "execution_provider": str(wrapper.device),
        "weights": weights,
        "weights_source": source,
        "nb_classes": int(wrapper.nb_classes),
        "input_size": int(getattr(wrapper, "input_size", 640) or 640),
        "letterbox_pad": str(getattr(wrapper, "letterbox_pad", None)),
    }


def parameter_count(module) -> int:
    return int(sum(p.numel() for p in module.parameters()))


def round_imgsz(wrapper, imgsz: int) -> int:
    """Families with a stride (LibreYOLO9: 32) need sides that are multiples of it; round up like
    LibreYOLO does. Families without one take --imgsz as given."""
    if imgsz < 1:
        raise UsageError(f"--imgsz {imgsz}: must be ≥ 1")
    stride = getattr(wrapper, "IMGSZ_STRIDE", None)
    if not stride:
        return imgsz
    stride = int(stride)
    rounded = -(-imgsz // stride) * stride
    if rounded != imgsz:
        warn(f"--imgsz {imgsz} is not a multiple of {stride}; using {rounded} (as LibreYOLO does)")
    return rounded
