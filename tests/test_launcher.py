"""The `libreyolo` console script after a real (non-editable) pip install: `libreyolo profile …` and
`libreyolo detect profile …` run ours, every other command reaches LibreYOLO's CLI unchanged, and
`libreyolo-profile` runs the group directly (SPEC §8, §10).

The throwaway venv sees torch/libreyolo through a .pth pointing at this interpreter's
site-packages (a `--system-site-packages` venv would see the base interpreter's instead), and the
project is installed into it with `pip install --no-deps --no-build-isolation` (works offline).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from libreyolo_profile.launcher import _profile_args

REPO = Path(__file__).resolve().parents[1]


def test_profile_args_dispatch():
    assert _profile_args(["profile", "infer", "--device", "cpu"]) == ["infer", "--device", "cpu"]
    assert _profile_args(["detect", "profile", "summary", "x"]) == ["summary", "x"]
    assert _profile_args(["profile"]) == []
    assert _profile_args(["predict", "profile"]) is None
    assert _profile_args(["--help"]) is None
    assert _profile_args([]) is None


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    venv = tmp_path_factory.mktemp("launcher") / "venv"
    r = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot create a venv here: {r.stderr.strip()[-300:]}")
    py = venv / "bin" / "python"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(site, "_outer_site.pth").write_text(ours + "\n")  # torch, libreyolo, pip, setuptools
    build = tmp_path_factory.mktemp("build")
    # Build from a copy: setuptools writes build/ and *.egg-info into the source tree.
    src = build / "src"
    shutil.copytree(
        REPO,
        src,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "runs", "build", "*.egg-info", "tests", "benchmarks", "fixtures", "__pycache__", ".*cache"
        ),
    )
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", TMPDIR=str(build))
    r = subprocess.run(
        [
            str(py),
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--prefix",
            str(venv),
            str(src),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=build,
    )
    if r.returncode != 0:
        pytest.skip(f"pip could not build the project offline: {r.stderr.strip()[-400:]}")
    assert (venv / "bin" / "libreyolo").is_file() and (venv / "bin" / "libreyolo-profile").is_file()
    return venv


def _run(venv: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '')}"
    return subprocess.run(
        [str(venv / "bin" / args[0]), *args[1:]], capture_output=True, text=True, env=env, timeout=timeout, cwd=venv
    )


def test_installed_profile_runs_ours(installed):
    r = _run(installed, "libreyolo", "profile")
    assert r.returncode == 0, r.stderr
    assert "summary" in r.stdout and "infer" in r.stdout and "compare" in r.stdout
    r = _run(installed, "libreyolo", "detect", "profile")
    assert r.returncode == 0 and "what-if" in r.stdout
    r = _run(installed, "libreyolo-profile")
    assert r.returncode == 0 and "summary" in r.stdout
    # the installed copy, not the working tree
    r = _run(installed, "python", "-c", "import libreyolo_profile; print(libreyolo_profile.__file__)")
    assert str(installed) in r.stdout


def test_installed_other_commands_reach_libreyolo(installed):
    r = _run(installed, "libreyolo", "--help")
    assert r.returncode == 0, r.stderr
    assert "LibreYOLO" in r.stdout and "profile" not in r.stdout.split("Commands")[0].lower().split("usage")[0]
    r = _run(installed, "libreyolo", "profile", "summary", "no/such/profile.json")
    assert r.returncode == 2  # ours: a nonexistent file is exit 2
