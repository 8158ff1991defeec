"""What `infer` and `run` can refuse before torch is imported (#52): importing torch and LibreYOLO takes
seconds to a minute on a loaded machine, and a typo in --weights, --device or the dataset said only
after it wastes all of it. Each check reads the file system only, answers in milliseconds, and refuses
only what is certainly wrong; whatever it cannot tell is left to the checks after the import
(measure/adapter.py, common.resolve_device, dataset.py), which say the same things.

- --weights: neither a file (as given, or under ./weights/) nor a name a LibreYOLO family claims
  (its FILENAME_PREFIX, read from LibreYOLO's source text, not by importing it); --weights/--size conflicts.
- --device asking for CUDA: on Linux, where this torch build has no GPU support (torch/version.py), where
  CUDA_VISIBLE_DEVICES hides every device, or where no GPU driver shows itself at all (no
  /proc/driver/nvidia, /dev/nvidia*, WSL's /dev/dxg, Jetson's /dev/nvhost-* or ROCm's /dev/kfd). Elsewhere
  (macOS, Windows) torch alone decides.
- `run`'s dataset: neither a path nor one of LibreYOLO's built-in dataset YAMLs, looked up as LibreYOLO's
  `resolve_dataset_yaml` does.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import sys
from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.measure import adapter, ranks
from libreyolo_profile.measure.dataset import dataset_not_found

# device files and directories a GPU driver makes: any one of them and torch is asked
GPU_EVIDENCE = ("/proc/driver/nvidia", "/dev/nvidia*", "/dev/dxg", "/dev/nvhost-*", "/dev/nvgpu*", "/dev/kfd")
_PREFIX = re.compile(r"""FILENAME_PREFIX\s*(?::\s*\w+\s*)?=\s*["']([^"']+)["']""")


def check_infer(opts) -> None:
    check_device(opts.device)
    check_weights(opts.weights, opts.size)


def check_run(opts) -> None:
    if "," in str(opts.device):
        ranks.listed_gpus(opts.device)  # a list that is none says so before whether CUDA is here
    for device in str(opts.device).strip().strip("[]").split(","):  # a DDP job lists its GPUs
        check_device(device, shown=opts.device)
    check_weights(opts.weights, opts.size)
    check_dataset(opts.data)


def _package_dir(name: str) -> Path | None:
    """Where an installed package lives, found without importing it (None: not installed)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


# ---------------------------------------------------------------------------------------------
# --weights


@functools.lru_cache(maxsize=1)
def family_prefixes() -> tuple[str, ...]:
    """Every weights-name prefix a LibreYOLO model class declares (`FILENAME_PREFIX = "LibreYOLO9"`), read
    from the text of its models package; empty where LibreYOLO or that package is not found."""
    root = _package_dir("libreyolo")
    models = root / "models" if root is not None else None
    if models is None or not models.is_dir():
        return ()
    found = set()
    for source in models.rglob("*.py"):
        try:
            text = source.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "FILENAME_PREFIX" in text:
            found.update(_PREFIX.findall(text))
    return tuple(sorted(found))


def check_weights(weights: str, size: str) -> None:
    weights, _ = adapter.resolve_size(weights, size)  # a --weights/--size conflict: exit 2 now
    if adapter.local_weights(weights) is not None:
        return
    prefixes = family_prefixes()
    name = Path(weights).name.lower()
    if not prefixes or any(name.startswith(p.lower()) for p in prefixes):
        return  # a family's name: downloaded, or built with random weights and marked (adapter.build_model)
    looked = Path(weights).expanduser()
    where = str(looked) if looked.is_absolute() else f"{looked} and {Path('weights') / looked}"
    raise UsageError(
        f"--weights {weights}: no such file (looked at {where}), and not a LibreYOLO detection weights name "
        f"(e.g. {adapter.DEFAULT_WEIGHTS}); pass a checkpoint path or a name LibreYOLO publishes"
    )


# ---------------------------------------------------------------------------------------------
# --device


def _asks_for_cuda(spec: str) -> bool:
    raw = spec.strip().lower()
    return raw.isdigit() or raw == "cuda" or (raw.startswith("cuda:") and raw[5:].isdigit())


def torch_gpu_build() -> bool | None:
    """Whether the installed torch was built with CUDA or ROCm, read from torch/version.py's text (None:
    cannot tell)."""
    root = _package_dir("torch")
    try:
        text = (root / "version.py").read_text() if root is not None else ""
    except OSError:
        return None
    found = dict(re.findall(r"^(cuda|hip)\s*(?::[^=]*)?=\s*(.+?)\s*$", text, flags=re.MULTILINE))
    if set(found) != {"cuda", "hip"}:
        return None
    return found["cuda"] != "None" or found["hip"] != "None"


def _no_visible_device() -> bool:
    """CUDA_VISIBLE_DEVICES set to hide every device ('' or a list that starts with -1)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return False
    first = visible.split(",")[0].strip()
    return first == "" or first.startswith("-")


def gpu_driver_present() -> bool:
    import glob

    return any(glob.glob(pattern) for pattern in GPU_EVIDENCE)


def why_no_gpu() -> str | None:
    """Why this machine certainly has no GPU torch could use (None: it may have one, torch decides)."""
    if not sys.platform.startswith("linux"):
        return None
    build = torch_gpu_build()
    if build is False:
        return "this torch build has no GPU support (CPU-only)"
    if _no_visible_device():
        return f"CUDA_VISIBLE_DEVICES={os.environ['CUDA_VISIBLE_DEVICES']!r} hides every GPU"
    if not gpu_driver_present():
        return "no GPU driver here: no /proc/driver/nvidia, /dev/nvidia*, /dev/dxg or /dev/kfd"
    return None


def check_device(spec: str, shown: str | None = None) -> None:
    if not _asks_for_cuda(str(spec)):
        return  # cpu, auto, or a spelling common.resolve_device refuses with its own words
    why = why_no_gpu()
    if why is not None:
        raise UsageError(
            f"--device {shown or spec} asks for CUDA, but CUDA is not available here ({why}); "
            "use --device cpu to profile on the CPU"
        )


# ---------------------------------------------------------------------------------------------
# run's dataset


def check_dataset(data: str) -> None:
    """Exit 2 where LibreYOLO's dataset lookup (path, cwd, built-in YAMLs) certainly finds nothing."""
    root = _package_dir("libreyolo")
    builtin = root / "config" / "datasets" if root is not None else None
    if builtin is None or not builtin.is_dir():
        return  # not the layout this lookup knows: LibreYOLO's own lookup decides
    path = Path(data)
    if path.exists():
        return
    if not data.endswith((".yaml", ".yml")):
        path = Path(f"{data}.yaml")
        if path.exists():
            return
    if (builtin / path.name).exists() or (builtin / f"{path.stem}.yaml").exists():
        return
    raise UsageError(dataset_not_found(data, sorted(p.stem for p in builtin.glob("*.yaml"))))
