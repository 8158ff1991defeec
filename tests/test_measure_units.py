"""Fast checks of the measurement side's pure parts: the exit-3 arithmetic (SPEC §10), the
weights/size reconciliation, device parsing, the workspace cleanup, the Kineto noise filter."""

from __future__ import annotations

import os
import signal

import pytest

from libreyolo_profile.errors import ProfileError, UsageError
from libreyolo_profile.measure import adapter, common
from libreyolo_profile.measure.train import too_small_message


def test_too_small_coco128_defaults():
    # SPEC §10: with the seed's defaults coco128 (128 images) needs --steps ≤ 3 or --batch ≤ 5.
    msg = too_small_message("coco128", 128, warmup=5, steps=20, batch=16)
    assert "128 training images" in msg and "= 400 images" in msg
    assert "--steps 3 " in msg and "--batch 5 " in msg and "at least 400 training images" in msg


def test_too_small_when_warmup_alone_overflows():
    msg = too_small_message("tiny", 10, warmup=5, steps=1, batch=4)
    assert "--warmup 1 --steps 1" in msg and "--batch 1 " in msg


@pytest.mark.parametrize("weights, size, expect", [
    ("LibreYOLO9t.pt", "t", ("LibreYOLO9t.pt", "t")),
    ("LibreYOLO9t.pt", "s", ("LibreYOLO9s.pt", "s")),  # default name follows --size
    ("LibreYOLO9m.pt", "t", ("LibreYOLO9m.pt", "m")),  # a sized name sets the size
    ("custom.pt", "c", ("custom.pt", "c")),
])
def test_resolve_size(weights, size, expect):
    assert adapter.resolve_size(weights, size) == expect


def test_resolve_size_conflict_and_unknown():
    with pytest.raises(UsageError):
        adapter.resolve_size("LibreYOLO9m.pt", "s")
    with pytest.raises(UsageError):
        adapter.resolve_size("LibreYOLO9t.pt", "x")


def test_device_parsing():
    import torch

    assert common.resolve_device("cpu").type == "cpu"
    for bad in ("0,1", "gpu", "mps"):
        with pytest.raises(UsageError):
            common.resolve_device(bad)
    if not torch.cuda.is_available():
        for spec in ("0", "cuda", "cuda:1"):
            with pytest.raises(UsageError, match="--device cpu"):
                common.resolve_device(spec)


def test_workspace_cleans_up_on_error_and_sigterm(tmp_path):
    project = tmp_path / "a" / "b"
    with pytest.raises(RuntimeError):
        with common.workspace(project, "infer") as tmp:
            (tmp / "partial.json").write_text("{}")
            raise RuntimeError("boom")
    assert not (tmp_path / "a").exists()  # created dirs removed when left empty
    project.mkdir(parents=True)
    (project / "keep.json").write_text("{}")
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(ProfileError) as info:
        with common.workspace(project, "train") as tmp:
            assert tmp.parent == project and tmp.name.startswith(".libreyolo-profile-train-")
            os.kill(os.getpid(), signal.SIGTERM)
    assert info.value.exit_code == 143
    assert sorted(os.listdir(project)) == ["keep.json"]
    assert signal.getsignal(signal.SIGTERM) == before


def test_kineto_filter():
    noise = [
        "USDT:2026-11-30 09:33:30 4191:4191 SyncActivityProfilerHandler.cpp:39] profiler_start\n",
        "STAGE:2026-11-30 09:33:37 4274:4274 SyncActivityProfilerHandler.cpp:38] Completed Stage: Warm Up\n",
        "ERROR:2026-11-30 09:33:30 4191:4191 DeviceProperties.cpp:56] gpuGetDeviceCount failed with code 35\n",
    ]
    for line in noise:
        assert common._KINETO_NOISE.match(line)
    assert not common._KINETO_NOISE.match("ERROR:2026-11-30 09:33:30 1:1 CuptiActivityApi.cpp:1] CUPTI failed\n")
    assert not common._KINETO_NOISE.match("warning: something of ours\n")
