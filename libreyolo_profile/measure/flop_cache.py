"""The FLOP count of one forward, remembered per architecture and input shape (issue 27). Counting runs the
whole forward under torch's FlopCounterMode (about 1.4 s of `infer`'s model build for LibreYOLO9-t at
640 px on a 2-core CPU), and the count depends only on the module tree, its tensors' shapes and the input
shape — not on the weights. The key hashes all of them (the module's repr, every parameter's and buffer's
name and shape, the input shape, torch's version); an entry is a small JSON file under the reader cache
($XDG_CACHE_HOME/libreyolo-profile/flops), written under a fresh name and renamed into place. A count
that fails is not remembered: it is counted again (and its reason given) next time."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from libreyolo_profile.measure import families
from libreyolo_profile.store.workdir import cache_root

_VERSION = "1"  # of the key and the entry: bump when either changes


def forward_flops(module, input_shape: tuple[int, ...], device) -> tuple[int | None, str | None]:
    """(FLOPs, None) of one inference forward at `input_shape` (families.forward_flops), from the cache when
    this architecture and shape were counted before; (None, why) when they cannot be counted."""
    entry = _entry(module, input_shape)
    remembered = _read(entry)
    if remembered is not None:
        return remembered, None
    flops, why = families.forward_flops(module, input_shape, device)
    if flops is not None:
        _write(entry, flops)
    return flops, why


def architecture_key(module, input_shape: tuple[int, ...]) -> str:
    import torch

    digest = hashlib.sha256(f"{_VERSION}|{torch.__version__}|{tuple(input_shape)}|{type(module).__qualname__}".encode())
    digest.update(repr(module).encode())
    for name, tensor in (*module.named_parameters(), *module.named_buffers()):
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype}".encode())
    return digest.hexdigest()[:32]


def _entry(module, input_shape: tuple[int, ...]) -> Path:
    return cache_root() / "flops" / f"{architecture_key(module, input_shape)}.json"


def _read(entry: Path) -> int | None:
    """The remembered count; None when absent or not a well-formed entry of ours (never trusted blindly)."""
    try:
        if not entry.is_file() or entry.is_symlink() or entry.stat().st_size > 4096:
            return None
        data = json.loads(entry.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    flops = data.get("flops") if isinstance(data, dict) else None
    return flops if isinstance(flops, int) and not isinstance(flops, bool) and flops >= 0 else None


def _write(entry: Path, flops: int) -> None:
    """Best effort: a cache that cannot be written costs a count next time, nothing else."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, staged = tempfile.mkstemp(prefix=".flops-", suffix=".tmp", dir=entry.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"flops": flops}, handle)
            os.replace(staged, entry)
        except BaseException:
            Path(staged).unlink(missing_ok=True)
            raise
    except OSError:
        return
