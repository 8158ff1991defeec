"""Every reader over hand-edited and hostile profile.json files (issue 22, item 13): one field of a real
profile document changed at a time (tests/bad_inputs/make_bad_inputs.py: wrong type, null, an integer
above 2^64, negative, nested garbage, missing key). A reader named one either works or exits 1 or 2 with
one error line and no traceback; `query` and `db` over a root holding all of them and good profiles read
the good ones and skip each bad one with a note; a pooled `compare` side leaves a bad one out.

The base document is imported from the clean synthetic trace of the bad-input corpus (a real import,
with real sidecars, small). Every top-level field of its head gets each of the six mutations; each nested
field one of them, in turn (all six are used across the fields of each object). Each mutated profile is
read by summary and by one other reader in turn (top-level ones by get too), so every reader meets
mutations of every kind. `trials` is mutated as a whole: its elements have the
fields of `metrics`, which are mutated one by one.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import traceback
import typing
from pathlib import Path

import msgspec
import pytest

from tests.bad_inputs.make_bad_inputs import build, field_mutations, head_paths, mutated
from tests.conftest import run_cli, run_cli_in_process
from tests.test_bad_inputs import JOB_SECONDS, _check_contract

OTHER_READERS = ["phases", "kernels", "ops", "modules", "get-list", "compare", "what-if", "report"]


def declared_fields() -> dict[str, list[str]]:
    """The nested fields the readers' head schema types (store/document/head.py), by top-level field."""
    from libreyolo_profile.store.document.head import head_struct

    declared = {}
    for field in msgspec.structs.fields(head_struct()):
        for option in typing.get_args(field.type) or (field.type,):
            inner = typing.get_args(option)[0] if typing.get_origin(option) is list else option
            if isinstance(inner, type) and issubclass(inner, msgspec.Struct):
                declared[field.name] = [f.name for f in msgspec.structs.fields(inner)]
    return declared


def reader_command(reader: str, path: Path, good: Path, scratch: Path, tag: str) -> list[str]:
    p = str(path)
    return {
        "summary": ["summary", p, "--json"],
        "get": ["get", p, "step_ms", "--json"],
        "get-list": ["get", p, "--json"],
        "phases": ["phases", p, "--json"],
        "kernels": ["kernels", p, "--json"],
        "ops": ["ops", p, "--json"],
        "modules": ["modules", p, "--json"],
        "compare": ["compare", str(good), p, "--json"],
        "what-if": ["what-if", p, "--remove-launches", "1", "--json"],
        "report": ["report", p, "--out", str(scratch / f"{tag}.html"), "--json"],
    }[reader]


@pytest.fixture(scope="module")
def mutations(tmp_path_factory):
    """{tag: (profile directory, path, mutation)} under one root, beside two untouched profiles."""
    work = tmp_path_factory.mktemp("mutations")
    build(work / "corpus")
    env = {"XDG_CACHE_HOME": str(work / "cache")}
    # in this process: an import needs none of what the warm parent of the measuring commands imports (torch)
    done = run_cli_in_process(
        "import", str(work / "corpus" / "clean.json"), "--project", str(work / "base"), "--json", env=env
    )
    assert done.returncode == 0, done.stderr
    base = work / "base" / json.loads(done.stdout)["kind"]
    doc = json.loads((base / "profile.json").read_text())
    root = work / "root"
    for name in ("good_a", "good_b"):
        shutil.copytree(base, root / name)
    cases = {}
    paths = [path for path in head_paths(doc, declared_fields()) if len(path) == 1 or path[0] != "trials"]
    for n, path in enumerate(paths):
        every = field_mutations(_at(doc, path))
        chosen = every if len(path) == 1 else [every[n % len(every)]]
        for kind, value in chosen:
            tag = f"m{len(cases):04d}_{'.'.join(map(str, path))}_{kind}"
            target = root / tag
            target.mkdir(parents=True)
            for parquet in base.glob("*.parquet"):
                os.link(parquet, target / parquet.name)  # the sidecars as written: only profile.json differs
            (target / "profile.json").write_text(json.dumps(mutated(doc, path, value)))
            cases[tag] = (target, path, kind)
    return {"work": work, "root": root, "good": root / "good_a", "cases": cases, "env": env}


def _at(doc: dict, path: tuple):
    value = doc
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return None
    return value


@pytest.fixture(scope="module")
def reader_results(mutations):
    scratch = mutations["work"] / "scratch"
    scratch.mkdir()
    jobs, keys = [], []
    for n, (tag, (target, path, _)) in enumerate(sorted(mutations["cases"].items())):
        readers = ["summary", OTHER_READERS[n % len(OTHER_READERS)]] + (["get"] if len(path) == 1 else [])
        for reader in readers:
            jobs.append(reader_command(reader, target, mutations["good"], scratch, f"{tag}-{reader}"))
            keys.append((tag, reader))
    results = [_read(job, mutations["env"]) for job in jobs]
    return dict(zip(keys, results, strict=True))


class _Hung(BaseException):  # not an Exception: no reader's error handling turns it into an exit code
    pass


def _alarm(signum, frame):
    raise _Hung


def _read(job: list[str], env: dict) -> dict:
    """One reader command through the CLI's entry point in this process (run_cli: `launcher._run`, what the
    console script calls, with its own captured stdout and stderr, environment and working directory restored),
    as the forked bad-input driver reports it: 830 forks of a warm driver cost ~49 CPU-s, in-process ~22. A hang
    is cut by the driver's alarm (rc -14); an exception escaping the entry point is a traceback and rc 99,
    listed with the other broken cases."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(JOB_SECONDS)
    try:
        done = run_cli(*job, env=env)
        rc, stdout, stderr = done.returncode, done.stdout, done.stderr
    except _Hung:
        rc, stdout, stderr = -signal.SIGALRM, "", f"hung for {JOB_SECONDS} s"
    except Exception:
        rc, stdout, stderr = 99, "", traceback.format_exc()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return {"args": job, "rc": rc, "stdout": stdout, "stderr": stderr}


def test_every_reader_works_or_refuses_in_one_line(mutations, reader_results):
    refused, broken = 0, []
    for (tag, reader), result in reader_results.items():
        try:
            _check_contract(result)
            assert result["rc"] in (0, 1, 2), result["rc"]
            if result["rc"] == 1 and "not a valid profile" in result["stderr"]:
                refused += 1
                assert f"{tag}/profile.json" in result["stderr"], "the refusal does not name the file"
        except AssertionError as exc:  # every broken case listed at once, not only the first
            broken.append(f"{tag} {reader}: {str(exc).splitlines()[0][:300]}")
    assert not broken, f"{len(broken)} reader runs broke the contract:\n" + "\n".join(broken[:40])
    assert refused > 50  # the head check refuses most wrong types; the count only says it ran


def test_the_fields_that_broke_readers_are_refused(mutations, reader_results):
    """The cases the issue found: a created time that is no time, an integer above 2^63, a field of the
    wrong type. Named to a reader, each is refused in one line naming the field."""
    for wanted, field in (
        ("created_wrong_type", "created"),
        ("metrics_huge_int", "metrics"),
        ("verdict_garbage", "verdict"),
        ("kind_null", "kind"),
    ):
        tag = next(t for t in mutations["cases"] if t.endswith(wanted))
        result = reader_results[(tag, "summary")]
        assert result["rc"] == 1 and f"not a valid profile: {field}" in result["stderr"], result


QUERY = "SELECT profile, created, batch, step_ms FROM profiles ORDER BY profile"


def test_query_and_db_over_a_root_with_bad_profiles_read_the_good_ones(mutations, reader_results, tmp_path):
    root, cases = mutations["root"], mutations["cases"]
    done = run_cli("query", QUERY, str(root), "--json", env=mutations["env"], timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "LIBREYOLO_PROFILE_DEBUG" not in done.stderr
    found = {Path(row["profile"]).name for row in json.loads(done.stdout)}
    assert {"good_a", "good_b"} <= found
    skipped = {tag for tag in cases if f"skipped {root / tag / 'profile.json'}" in done.stderr}
    assert skipped and skipped.isdisjoint(found) and skipped | found == set(cases) | {"good_a", "good_b"}
    for tag in skipped:  # what query skips, a reader named it refuses
        assert reader_results[(tag, "summary")]["rc"] != 0, tag
    kernels = run_cli(
        "query",
        "SELECT profile, count(*) AS n FROM kernels GROUP BY profile",
        str(root),
        "--json",
        env=mutations["env"],
        timeout=600,
    )
    assert kernels.returncode == 0, kernels.stderr[-3000:]
    assert {Path(row["profile"]).name for row in json.loads(kernels.stdout)} >= {"good_a", "good_b"}
    db = run_cli("db", str(tmp_path / "all.duckdb"), str(root), "--json", env=mutations["env"], timeout=600)
    assert db.returncode == 0, db.stderr[-3000:]
    assert json.loads(db.stdout)["profiles"] == len(found)


def test_pooled_compare_side_leaves_a_bad_profile_out(mutations, tmp_path):
    side = tmp_path / "baseline"
    for name in ("good_a", "good_b"):
        shutil.copytree(mutations["root"] / name, side / name)
    bad = next(t for t in mutations["cases"] if t.endswith("created_wrong_type"))
    shutil.copytree(mutations["cases"][bad][0], side / "bad")
    done = run_cli("compare", str(side), str(mutations["good"]), "--json", env=mutations["env"])
    assert done.returncode == 0, done.stderr
    assert f"skipped {side / 'bad' / 'profile.json'}: not a valid profile: created" in done.stderr
    before = json.loads(done.stdout)["before"]
    # good_a and good_b are copies of one profile (one generation), so the gate pools them once (#26)
    assert [
        item
        for item in before["left_out"]
        if item["path"] == str(side / "bad" / "profile.json") and item["reason"].startswith("unreadable: ")
    ], before["left_out"]
    assert not any("/bad/" in path for path in before.get("profiles", []))
