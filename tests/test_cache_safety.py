"""The reader cache harms nothing and never collides (issue #10, part D): a symlink planted in it is
never written through, any number of concurrent readers succeed with identical answers, a cache
that cannot be written degrades to a private temporary directory with one note, and a reader killed
mid-ingest leaves nothing in TMPDIR, only a leftover in the cache that the next run sweeps."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.bad_inputs.make_bad_inputs import clean_events, kineto_text
from tests.conftest import run_cli_in_process
from tests.test_bad_inputs import _unprivileged_runner

# what these tests check is the cache itself: it starts empty
pytestmark = pytest.mark.cold_cache

NOTE = "not writable: working in a temporary directory"


def cli(*args: str, env: dict, runner: list[str] = (), cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*runner, sys.executable, "-m", "libreyolo_profile", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _traversable_dir():
    """A directory any user can traverse (pytest's tmp_path lives under a 0700 root), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="libreyolo-profile-cachetest-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


shared_dir = pytest.fixture(_traversable_dir, name="shared_dir")  # one a test
inputs_dir = pytest.fixture(_traversable_dir, name="inputs_dir", scope="module")  # the inputs', one a module


@pytest.fixture(scope="module")
def inputs(inputs_dir):
    """A foreign trace never seen before, and a profile.json alone in its directory (no sidecars
    beside it, so readers rebuild them into the cache). Made once for the module: every test reads them
    through its own empty cache, which has never seen them."""
    trace = inputs_dir / "trace.json"
    trace.write_bytes(kineto_text(clean_events()))
    # imported with a throwaway cache: no test's cache has seen the trace (in this process: an import needs
    # neither torch nor LibreYOLO, which a forked or fresh interpreter would start for it)
    import_cache = inputs_dir / "import-cache"
    done = run_cli_in_process(
        "import",
        str(trace),
        "--project",
        str(inputs_dir / "project"),
        "--json",
        env={"XDG_CACHE_HOME": str(import_cache)},
    )
    assert done.returncode == 0, done.stderr
    shutil.rmtree(import_cache)
    lone = inputs_dir / "lone" / "profile.json"
    lone.parent.mkdir()
    shutil.copyfile(json.loads(done.stdout)["profile"], lone)
    for path in (trace, lone):
        path.chmod(0o644)
    lone.parent.chmod(0o755)
    return {"trace": trace, "lone": lone}


@pytest.fixture(scope="module")
def expected(inputs, tmp_path_factory):
    """Each input's summary as a reader with a writable cache of its own answers it (the in-process reader:
    tests/test_cli_contract.py holds it to the answer a fresh interpreter gives)."""
    env = {"XDG_CACHE_HOME": str(tmp_path_factory.mktemp("expected-cache"))}
    return {which: summary_here(inputs[which], env=env)[0] for which in ("lone", "trace")}


def summary(path: Path, env: dict | None = None, **kwargs) -> tuple[dict, str]:
    """`summary --json` in a fresh interpreter: what needs a process of its own (another user, a TMPDIR
    read at start-up, readers racing each other) reads through this one."""
    done = cli("summary", str(path), "--json", env=env or dict(os.environ), **kwargs)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def summary_here(path: Path, env: dict | None = None) -> tuple[dict, str]:
    """`summary --json` by the in-process reader, in the cache `env` names (the test's private one by
    default): the same cache code as a fresh interpreter runs, without its start-up."""
    done = run_cli_in_process("summary", str(path), "--json", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


# ------------------------------------------------------------------------------------------------
# planted symlinks


@pytest.mark.parametrize("plant", ["old_temp_name", "entry_itself"])
def test_planted_symlink_is_never_written_through(inputs, private_cache, tmp_path, plant):
    expected, _ = summary_here(inputs["lone"])
    entries = list((private_cache / "libreyolo-profile" / "sidecars").iterdir())
    assert len(entries) == 1, entries
    entry = entries[0]
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "kernels.parquet").write_text("precious")
    (victim / "notes.txt").write_text("precious too")
    before = {p.name: p.read_bytes() for p in victim.iterdir()}
    shutil.rmtree(entry)
    if plant == "old_temp_name":  # the fixed temp name the cache used to write through
        entry.mkdir()
        (entry / ".kernels.parquet.tmp").symlink_to(victim / "notes.txt")
        (entry / "ops.parquet").symlink_to(victim / "kernels.parquet")
    else:  # the cache entry's own name
        entry.symlink_to(victim, target_is_directory=True)

    again, _ = summary_here(inputs["lone"])
    assert again == expected
    assert {p.name: p.read_bytes() for p in victim.iterdir()} == before, "a planted symlink was written through"
    assert entry.is_dir() and not entry.is_symlink()
    assert not any(p.is_symlink() for p in entry.iterdir())


# ------------------------------------------------------------------------------------------------
# concurrent readers

READERS = 12


@pytest.mark.parametrize("which", ["lone", "trace"])
def test_concurrent_readers_all_succeed_identically(inputs, private_cache, which):
    """Readers that all find the cache empty and build the same entry at once."""
    path = inputs[which]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "libreyolo_profile", "summary", str(path), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(READERS)
    ]
    results = [(*proc.communicate(timeout=240), proc.returncode) for proc in procs]
    failures = [(rc, err) for _, err, rc in results if rc != 0]
    assert failures == [], f"{len(failures)} of {READERS} concurrent readers failed: {failures[:2]}"
    answers = {out for out, _, _ in results}
    assert len(answers) == 1, "concurrent readers disagree"
    later, _ = summary_here(path)
    assert later == json.loads(answers.pop()), "the published cache entry answers differently"
    root = private_cache / "libreyolo-profile"
    area = root / ("sidecars" if which == "lone" else "traces")
    assert len(list(area.iterdir())) == 1, f"litter beside the one entry: {sorted(p.name for p in area.iterdir())}"
    assert _work_entries(private_cache) == [], "work directories outlived their readers"


# ------------------------------------------------------------------------------------------------
# a cache that cannot be written


def _unusable_cache(how: str, shared_dir: Path) -> tuple[Path, list[str]]:
    """XDG_CACHE_HOME and the command prefix that make the cache unusable."""
    if how == "regular_file":
        cache = shared_dir / "cache-file"
        cache.write_text("not a directory")
        return cache, []
    if how == "under_a_file":
        (shared_dir / "a-file").write_text("not a directory")
        return shared_dir / "a-file" / "cache", []
    runner = _unprivileged_runner()
    if runner is None:
        pytest.skip("no unprivileged user can run this venv's python (runuser/setpriv as nobody failed)")
    cache = shared_dir / "someone-elses-cache"  # ours (root's or the test user's) with 0755: not nobody's
    cache.mkdir(mode=0o755)
    cache.chmod(0o755)
    if not runner:
        pytest.skip("the tests do not run as root: no other user's cache to point at")
    return cache, runner


@pytest.mark.parametrize("how", ["regular_file", "under_a_file", "another_users_dir"])
def test_unwritable_cache_degrades_to_a_temporary_directory(inputs, expected, shared_dir, how):
    cache, runner = _unusable_cache(how, shared_dir)
    tmp = shared_dir / "tmpdir"
    tmp.mkdir()
    tmp.chmod(0o1777)
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), TMPDIR=str(tmp))
    for which in ("lone", "trace"):
        answer, stderr = summary(inputs[which], env=env, runner=runner, cwd=shared_dir)
        assert answer == expected[which], which
        notes = [line for line in stderr.splitlines() if NOTE in line]
        assert len(notes) == 1 and str(cache) in notes[0], stderr
        assert "Traceback" not in stderr
        assert list(tmp.iterdir()) == [], "the temporary directory outlived the reader"
    for place in (shared_dir, inputs["trace"].parent):
        assert list(place.glob("**/libreyolo-profile")) == [], "something wrote a cache after all"


# ------------------------------------------------------------------------------------------------
# a reader killed mid-ingest

# about 40 MB: above the decoder's two-process threshold (DecodeSizes.parallel_bytes), which opens a work dir at once
_PARALLEL_STEPS = 15_000


def _work_entries(cache: Path) -> list[Path]:
    work = cache / "libreyolo-profile" / "work"
    return sorted(work.iterdir()) if work.is_dir() else []


def test_killed_reader_leaves_nothing_in_tmpdir_and_its_leftover_is_swept(inputs, private_cache, tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(kineto_text(clean_events(steps=_PARALLEL_STEPS)))
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    proc = subprocess.Popen(
        [sys.executable, "-m", "libreyolo_profile", "summary", str(big), "--json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        # the kill point: the ingest has made its temporary work directory, wherever it puts it
        while not (list(tmp.iterdir()) or any("ingest" in p.name for p in _work_entries(private_cache))):
            assert proc.poll() is None, f"the reader ended (rc={proc.returncode}) before its ingest started"
            assert time.monotonic() < deadline, "the ingest never started"
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the reader and its forked second decoder
        proc.wait(timeout=60)

    assert list(tmp.iterdir()) == [], "a killed reader left files in TMPDIR"
    leftovers = [p for p in _work_entries(private_cache) if "ingest" in p.name]
    assert leftovers, "the killed reader's work directory should be under the cache"
    assert str(proc.pid) in leftovers[0].name, "a leftover names the process that made it"

    summary(inputs["lone"], env=env)  # any next run that touches the cache sweeps what dead processes left
    assert [p for p in leftovers if p.exists()] == [], "the next run did not sweep the leftover"
    assert _work_entries(private_cache) == [], "the next run left its own work directories"
    assert list(tmp.iterdir()) == []
