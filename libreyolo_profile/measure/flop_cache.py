"""The FLOP count of one forward, remembered per architecture and input shape (issue 27). Counting runs the
whole forward under torch's FlopCounterMode (about 1.4 s of `infer`'s model build for LibreYOLO9-t at
640 px on a 2-core CPU), and the count depends only on the module tree, its tensors' shapes and the input
shape — not on the weights. The key hashes all of them (the module's repr, every parameter's and buffer's
name and shape, the input shape, torch's version); an entry is a small JSON file under the reader cache
($XDG_CACHE_HOME/libreyolo-profile/flops, measure/remembered.py). A count that fails is not remembered: it
is counted again (and its reason given) next time."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated

import msgspec

from libreyolo_profile.measure import families
from libreyolo_profile.measure.remembered import entry_path, read_entry, write_entry

_VERSION = "1"  # of the key and the entry: bump when either changes


class _Count(msgspec.Struct):
    flops: Annotated[int, msgspec.Meta(ge=0)]


def forward_flops(module, input_shape: tuple[int, ...], device) -> tuple[int | None, str | None]:
    """(FLOPs, None) of one inference forward at `input_shape` (families.forward_flops), from the cache when
    this architecture and shape were counted before; (None, why) when they cannot be counted."""
    entry = _entry(module, input_shape)
    remembered = read_entry(entry, _Count)
    if remembered is not None:
        return remembered.flops, None
    flops, why = families.forward_flops(module, input_shape, device)
    if flops is not None:
        write_entry(entry, _Count(flops))
    return flops, why


def architecture_key(module, input_shape: tuple[int, ...]) -> str:
    import torch

    digest = hashlib.sha256(f"{_VERSION}|{torch.__version__}|{tuple(input_shape)}|{type(module).__qualname__}".encode())
    digest.update(repr(module).encode())
    for name, tensor in (*module.named_parameters(), *module.named_buffers()):
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype}".encode())
    return digest.hexdigest()[:32]


def _entry(module, input_shape: tuple[int, ...]) -> Path:
    return entry_path("flops", architecture_key(module, input_shape))
