"""Every reader and `import` over every bad input (tests/bad_inputs/make_bad_inputs.py): the exit
code SPEC §1 asks for, one error line on stderr, never a traceback, and stdout empty or one valid
JSON document under --json. A recoverable input (cut off, repairable) behaves like the clean trace.

The commands run through the real CLI entry (`launcher._run`, what the console script calls) in
forked children of one driver process, so ~300 commands fit the test budget.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bad_inputs.make_bad_inputs import build
from tests.conftest import run_cli

DRIVER = r"""
import json, os, sys, tempfile
from libreyolo_profile import launcher
import libreyolo_profile.cli, libreyolo_profile.readers.common, libreyolo_profile.store.analyse  # warm the fork
jobs = json.load(open(sys.argv[1]))
results = []
for job in jobs:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            try:
                code = launcher._run(job, "libreyolo-profile")
            except BaseException:
                import traceback
                traceback.print_exc()
                code = 99
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        results.append({"args": job, "rc": os.waitstatus_to_exitcode(status),
                        "stdout": out.read().decode(errors="replace"), "stderr": err.read().decode(errors="replace")})
json.dump(results, open(sys.argv[2], "w"))
"""


def reader_commands(path: Path, scratch: Path, tag: str) -> list[list[str]]:
    p = str(path)
    return [
        ["summary", p, "--json"],
        ["get", p, "step_ms", "--json"],
        ["get", p, "--json"],
        ["phases", p, "--json"],
        ["kernels", p, "--json"],
        ["ops", p, "--json"],
        ["compare", p, p, "--json"],
        ["what-if", p, "--remove-launches", "1", "--json"],
        ["report", p, "--out", str(scratch / f"report-{tag}.html"), "--json"],
        ["import", p, "--project", str(scratch / f"import-{tag}"), "--json"],
    ]


def run_driver(jobs: list[list[str]], work: Path, env: dict) -> list[dict]:
    jobs_file, results_file = work / "jobs.json", work / "results.json"
    jobs_file.write_text(json.dumps(jobs))
    full_env = dict(os.environ, **env)
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(jobs_file), str(results_file)],
                          env=full_env, capture_output=True, text=True, timeout=600,
                          cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr
    return json.loads(results_file.read_text())


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The generated corpus plus profile-directory cases derived from an imported clean trace."""
    root = tmp_path_factory.mktemp("bad-inputs")
    files = root / "files"
    expected = build(files)
    cache = root / "cache"
    env = {"XDG_CACHE_HOME": str(cache)}
    project = root / "project"
    done = run_cli("import", str(files / "clean.json"), "--project", str(project), "--json", env=env)
    assert done.returncode == 0, done.stderr
    kind_dir = project / json.loads(done.stdout)["kind"]

    def profile_copy(name: str) -> Path:
        target = files / name
        shutil.copytree(kind_dir, target)
        return target

    good = profile_copy("profile_dir_clean")
    expected["profile_dir_clean"] = ("ok", None)
    newer = profile_copy("profile_dir_newer_schema")
    doc = json.loads((newer / "profile.json").read_text())
    doc["schema_version"] = 999
    (newer / "profile.json").write_text(json.dumps(doc))
    expected["profile_dir_newer_schema"] = (1, "upgrade")
    corrupt = profile_copy("profile_dir_corrupt_sidecars")
    for parquet in corrupt.glob("*.parquet"):
        parquet.write_bytes(b"PAR1 this is not parquet")
    expected["profile_dir_corrupt_sidecars"] = ("ok", None)
    missing = profile_copy("profile_dir_missing_sidecars")
    for parquet in missing.glob("*.parquet"):
        parquet.unlink()
    expected["profile_dir_missing_sidecars"] = ("ok", None)
    lone = files / "lone_profile"
    lone.mkdir()
    shutil.copy(good / "profile.json", lone / "profile.json")
    expected["lone_profile/profile.json"] = ("ok", None)
    broken = profile_copy("profile_dir_truncated_json")
    text = (broken / "profile.json").read_bytes()
    (broken / "profile.json").write_bytes(text[:len(text) // 2])
    expected["profile_dir_truncated_json"] = (1, None)
    (files / "empty_dir").mkdir()
    expected["empty_dir"] = (2, None)
    expected["does_not_exist.json"] = (2, None)

    scratch = root / "scratch"
    scratch.mkdir()
    jobs, keys = [], []
    for name in expected:
        for command in reader_commands(files / name, scratch, name.replace("/", "_")):
            jobs.append(command)
            keys.append(name)
    results = run_driver(jobs, root, env)
    by_input: dict[str, list[dict]] = {}
    for key, result in zip(keys, results):
        by_input.setdefault(key, []).append(result)
    return {"expected": expected, "results": by_input, "scratch": scratch, "files": files}


def _check_contract(result: dict) -> None:
    args, rc, out, err = result["args"], result["rc"], result["stdout"], result["stderr"]
    where = f"{' '.join(args)} -> rc={rc}\nstderr: {err}\nstdout: {out[:500]}"
    assert "Traceback" not in err, where
    assert "LIBREYOLO_PROFILE_DEBUG" not in err, f"an unexpected exception reached the user: {where}"
    if rc == 0:
        json.loads(out)  # exactly one JSON document
    else:
        assert out == "", where
        errors = [line for line in err.splitlines() if "error:" in line]
        assert len(errors) == 1, where


CASES = ["clean.json", "clean.json.gz", "empty.json", "whitespace.json", "not_json.json", "binary_garbage.json.gz",
         "json_object_not_trace.json", "json_list_not_trace.json", "trace_events_not_list.json", "no_events.json",
         "truncated_mid_file.json", "truncated_mid_file.json.gz", "truncated_in_header.json",
         "control_chars_in_name.json", "invalid_utf8_in_name.json", "unescaped_quote_in_name.json",
         "bare_inf_nan_ignored_args.json", "bare_nan_duration.json", "negative_and_overlapping.json",
         "out_of_order.json", "compact_braces_in_names.json", "string_timestamps_mixed_ids.json", "only_metadata.json",
         "profile_dir_clean", "profile_dir_newer_schema", "profile_dir_corrupt_sidecars",
         "profile_dir_missing_sidecars", "lone_profile/profile.json", "profile_dir_truncated_json", "empty_dir",
         "does_not_exist.json"]


def test_every_case_is_listed(corpus):
    assert sorted(CASES) == sorted(corpus["expected"])


@pytest.mark.parametrize("name", CASES)
def test_every_reader_over_bad_input(corpus, name):
    expectation, stderr_note = corpus["expected"][name]
    results = corpus["results"][name]
    clean_codes = [r["rc"] for r in corpus["results"]["clean.json"]]
    for result, clean_rc in zip(results, clean_codes):
        _check_contract(result)
        if expectation == "ok":
            assert result["rc"] == clean_rc, (result["args"], result["stderr"])
        else:
            assert result["rc"] == expectation, (result["args"], result["rc"], result["stderr"])
        if stderr_note:
            assert stderr_note in result["stderr"] or result["args"][0] != "summary", result
    if expectation != "ok":
        project = corpus["scratch"] / f"import-{name.replace('/', '_')}"
        assert not project.exists() or not any(project.rglob("profile.json")), "a failed import left a profile"


def test_clean_readers_all_succeed(corpus):
    """The baseline the recoverable cases are held to is itself a success for every reader."""
    for result in corpus["results"]["clean.json"]:
        assert result["rc"] == 0, (result["args"], result["stderr"])


def test_rebuilt_sidecars_give_identical_answers(corpus):
    def answer(name: str) -> dict:
        doc = json.loads(corpus["results"][name][0]["stdout"])
        doc.pop("profile", None)
        return doc

    clean = answer("profile_dir_clean")
    assert answer("profile_dir_corrupt_sidecars") == clean
    assert answer("profile_dir_missing_sidecars") == clean
    assert answer("lone_profile/profile.json") == clean


def test_truncated_trace_recovers_its_complete_events(corpus):
    result = corpus["results"]["truncated_mid_file.json"][0]
    assert "cut off" in result["stderr"] and "recovered" in result["stderr"]
    steps = json.loads(result["stdout"])["window"]["steps"]
    clean_steps = json.loads(corpus["results"]["clean.json"][0]["stdout"])["window"]["steps"]
    assert 0 < steps < clean_steps


def _unprivileged_runner() -> list[str] | None:
    if os.geteuid() != 0:
        return []  # already unprivileged
    for candidate in (["runuser", "-u", "nobody", "--"], ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]):
        if shutil.which(candidate[0]):
            probe = subprocess.run([*candidate, sys.executable, "-c", "import libreyolo_profile.cli"],
                                   capture_output=True, text=True)
            if probe.returncode == 0:
                return candidate
    return None


@pytest.fixture
def shared_tmp():
    """A directory other users can traverse (pytest's tmp_path lives under a 0700 root)."""
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="libreyolo-profile-perm-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_unreadable_file_as_unprivileged_user(shared_tmp):
    runner = _unprivileged_runner()
    if runner is None:
        pytest.skip("no unprivileged user can run this venv's python (runuser/setpriv as nobody failed)")
    tmp_path = shared_tmp
    secret = tmp_path / "secret.json"
    secret.write_bytes(b'{"traceEvents": []}')
    secret.chmod(0o000)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)
    for args in (["summary", str(secret), "--json"], ["get", str(secret), "step_ms"], ["import", str(secret), "--project", str(cache / "p")]):
        proc = subprocess.run([*runner, sys.executable, "-m", "libreyolo_profile", *args], cwd=tmp_path,
                              env=dict(os.environ, XDG_CACHE_HOME=str(cache)), capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, (args, proc.stderr)
        assert ("permission denied" in proc.stderr or "not readable" in proc.stderr) and "Traceback" not in proc.stderr
        assert proc.stdout == ""
