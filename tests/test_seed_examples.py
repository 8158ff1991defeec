"""SPEC §1's examples, exactly as written, through the installed `libreyolo` command in an empty
working directory: they must all work, and write nothing outside runs/profile."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SEED_EXAMPLES = [
    "libreyolo profile infer --device cpu --warmup 5 --runs 20",
    "libreyolo profile summary runs/profile/infer/profile.json",
    "libreyolo profile infer --device cpu --warmup 5 --runs 20 --project runs/profile/a",
    "libreyolo profile infer --device cpu --warmup 5 --runs 20 --batch 4 --project runs/profile/b",
    "libreyolo profile compare runs/profile/a/infer/profile.json runs/profile/b/infer/profile.json",
]


@pytest.mark.slow
def test_seed_examples_work_as_written(tmp_path):
    script = shutil.which("libreyolo", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.fail("the `libreyolo` console script is not installed beside this Python")
    env = dict(
        os.environ, HOME=str(tmp_path / "home"), LIBREYOLO_PROFILE_OFFLINE="1", XDG_CACHE_HOME=str(tmp_path / "cache")
    )
    work = tmp_path / "work"
    work.mkdir()
    outputs = []
    for line in SEED_EXAMPLES:
        argv = shlex.split(line)
        result = subprocess.run([script, *argv[1:]], cwd=work, env=env, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, f"{line}\n{result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr
        outputs.append(result.stdout)
    assert "verdict" in outputs[1] and "latency_p50_ms" in outputs[1]
    compare = outputs[4]
    assert "throughput_img_s" in compare and "single run" in compare
    for kind_dir in ("runs/profile/infer", "runs/profile/a/infer", "runs/profile/b/infer"):
        doc = json.loads((work / kind_dir / "profile.json").read_text())
        # the headline is every --runs call, unprofiled; the profiled window min(--runs, 3) of them
        assert doc["kind"] == "infer" and doc["timing"]["unprofiled_calls_per_trial"] == [20]
        assert doc["metrics"]["steps"] == doc["settings"]["profiled_runs"] == 3
        assert "random_weights" in doc["marks"]  # no weights offline: said, never hidden
        assert "tiny_window" not in doc["marks"]  # the default window is not called noisy on every run
    b = json.loads((work / "runs/profile/b/infer/profile.json").read_text())
    assert b["metrics"]["images_per_step"] == 4
    assert sorted(p.name for p in work.iterdir()) == ["runs"]  # nothing outside --project
