"""The new local surfaces harm nothing (issue 22, the local part), each through the real CLI:

- `import` never takes a path from the profile it reads: a `kind` other than ours is refused (exit 1, one
  line), and every directory it writes stays inside --project after resolving links;
- `--exist-ok` replaces only a profile of ours; a foreign directory there is refused (exit 2), untouched;
- s3:// where we cannot write it (`infer`/`run --project`, `report --out`, `db`) is exit 2, one line;
- nesting (module calls, phase ranges) costs bounded memory: past 64 levels it is cut, with a mark;
- `infer --repeat` on a full disk is exit 3 with one line, the old profile intact; a killed run's
  workspace is swept by the next run;
- smaller: tls:// / ucx:// schedulers exit 2; discovery 1,100 directories deep; no ESC/BEL in report.html.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, cli_json, run_cli
from test_writers_safe import assert_imported_untouched, changed, copied_workspace, imported_once, inference_trace, tree

from tests.bad_inputs.make_bad_inputs import T0, kineto_text, nested_ranges

NEEDS_LIBREYOLO = pytest.mark.skipif(
    importlib.util.find_spec("libreyolo") is None or importlib.util.find_spec("torch") is None,
    reason="libreyolo/torch not installed",
)


def one_error_line(result: subprocess.CompletedProcess, code: int, *words: str) -> str:
    assert result.returncode == code, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and "LIBREYOLO_PROFILE_DEBUG" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, result.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    return imported_once(tmp_path_factory.mktemp("imported"))


@pytest.fixture
def ws(imported, tmp_path):
    """A trace, a --project `p` holding one imported infer profile (copies of the ones imported once for the
    file: test_writers_safe.copied_workspace), and profile.json copies whose kind is hostile: `climb.json`
    ("../../outside"), `absolute.json` (the user's directory `victim`)."""
    copied_workspace(imported, tmp_path)
    doc = json.loads((tmp_path / "p" / "infer" / "profile.json").read_text())
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "profile.json").write_text("my own profile.json\n")
    (victim / "report.html").write_text("<p>my page</p>\n")
    (tmp_path / "climb.json").write_text(json.dumps(dict(doc, kind="../../outside")))
    (tmp_path / "absolute.json").write_text(json.dumps(dict(doc, kind=str(victim))))
    yield tmp_path
    assert_imported_untouched(imported)


# ---------------------------------------------------------------------------------------------
# 1. a profile's kind is never a path


@pytest.mark.parametrize("hostile", ["climb.json", "absolute.json"])
@pytest.mark.parametrize("extra", [(), ("--exist-ok",)])
def test_import_refuses_a_kind_that_is_not_ours(ws, hostile, extra):
    """Old code: exit 0, a profile written at p/../../outside, or the user's `victim` replaced (its
    profile.json overwritten, report.html deleted) under --exist-ok."""
    before = tree(ws)
    result = run_cli("import", str(ws / hostile), "--project", str(ws / "p" / "sub"), *extra)
    one_error_line(result, 1, "is not one of train, infer")
    assert changed(before, tree(ws)) == set()
    assert not (ws.parent / "outside").exists() and not (ws / "outside").exists()


def test_bulk_import_refuses_hostile_kinds_per_input(ws):
    """--jobs 2: each hostile input fails on its own line, the good one is imported, nothing outside."""
    before = tree(ws)
    result = run_cli(
        "import",
        str(ws / "climb.json"),
        str(ws / "absolute.json"),
        str(ws / "t.json"),
        "--project",
        str(ws / "q"),
        "--jobs",
        "2",
        "--exist-ok",
    )
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert sum(line.startswith("failed ") and "is not one of train, infer" in line for line in lines) == 2, lines
    assert lines[-1] == "1 imported, 2 failed"
    diff = changed(before, tree(ws))
    assert diff and all(p.startswith(str(ws / "q" / "t")) or p == str(ws / "q") for p in diff), sorted(diff)


def test_bulk_import_never_writes_through_a_link_out_of_the_project(ws):
    """<project>/<input name> is a link to a directory outside --project: that input is refused."""
    outside = ws / "outside_dir"
    outside.mkdir()
    (ws / "q").mkdir()
    (ws / "q" / "t").symlink_to(outside)
    before = tree(ws)
    result = run_cli("import", str(ws / "t.json"), str(ws / "t.json"), "--project", str(ws / "q"), "--jobs", "2")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.count("outside --project") == 2, result.stdout
    assert changed(before, tree(ws)) == set() and list(outside.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# 2. --exist-ok replaces only a profile of ours


def _foreign_directories(ws: Path) -> dict[str, Path]:
    """Projects whose infer/ is not a profile of ours, each a different way."""
    cases = {}
    plain = ws / "plain" / "infer"  # the user's files named like ours, no profile.json
    plain.mkdir(parents=True)
    (plain / "report.html").write_text("<p>my page</p>\n")
    (plain / "kernels.parquet").write_text("my table\n")
    cases["no profile.json"] = plain.parent
    theirs = ws / "theirs" / "infer"  # a profile.json, but not ours
    theirs.mkdir(parents=True)
    (theirs / "profile.json").write_text('{"schema": "someone-else", "kind": "infer"}\n')
    cases["their profile.json"] = theirs.parent
    mixed = ws / "mixed"  # a profile of ours with the user's own report.html beside it
    shutil.copytree(ws / "p", mixed)
    (mixed / "infer" / "report.html").write_text("<p>my notes about this run</p>\n")
    cases["our profile, their report.html"] = mixed
    stale = ws / "stale"  # a profile of ours whose sidecar is another profile's
    shutil.copytree(ws / "p", stale)
    assert run_cli("import", str(ws / "t.json"), "--project", str(ws / "other")).returncode == 0
    shutil.copy(ws / "other" / "infer" / "ops.parquet", stale / "infer" / "ops.parquet")
    cases["a sidecar not written with it"] = stale
    linked = ws / "linked"  # infer/ is a link to a profile of ours beside it
    shutil.copytree(ws / "p" / "infer", linked / "real")
    (linked / "infer").symlink_to(linked / "real")
    cases["a link"] = linked
    return cases


def test_exist_ok_onto_a_foreign_directory_is_refused_and_nothing_changes(ws):
    """Old code: exit 0, the user's report.html deleted and kernels.parquet overwritten."""
    for case, project in _foreign_directories(ws).items():
        before = tree(ws)
        result = run_cli("import", str(ws / "t.json"), "--project", str(project), "--exist-ok")
        one_error_line(
            result, 2, "--exist-ok replaces only a profile written by libreyolo profile", "nothing was changed"
        )
        assert changed(before, tree(ws)) == set(), case


@pytest.mark.parametrize("command", [["infer", "--device", "cpu"], ["run", "coco128", "--device", "cpu"]])
def test_measuring_with_exist_ok_onto_a_foreign_directory_is_refused_before_measuring(ws, command):
    project = ws / "plain"
    (project / ("infer" if command[0] == "infer" else "train")).mkdir(parents=True)
    mine = project / ("infer" if command[0] == "infer" else "train") / "report.html"
    mine.write_text("<p>my page</p>\n")
    before = tree(ws)
    result = run_cli(*command, "--project", str(project), "--exist-ok", cwd=ws, timeout=120)
    one_error_line(result, 2, "--exist-ok replaces only a profile written by libreyolo profile")
    assert changed(before, tree(ws)) == set()


def test_exist_ok_replaces_our_profile_and_keeps_the_users_other_files(ws):
    (ws / "p" / "infer" / "notes.txt").write_text("my notes\n")
    cli_json("report", str(ws / "p" / "infer"))  # report.html of ours beside it: replaceable
    doc = cli_json("import", str(ws / "t.json"), "--project", str(ws / "p"), "--exist-ok")
    assert doc["replaced"] is True and doc["directory"] == str(ws / "p" / "infer")
    assert (ws / "p" / "infer" / "notes.txt").read_text() == "my notes\n"


# ---------------------------------------------------------------------------------------------
# 5. s3:// where nothing can write it


@pytest.mark.parametrize(
    "args",
    [
        ["infer", "--project", "s3://bucket/runs", "--device", "cpu"],
        ["run", "coco128", "--project", "s3://bucket/runs", "--device", "cpu"],
        ["report", "{trace}", "--out", "s3://bucket/report.html"],
        ["db", "s3://bucket/all.duckdb", "{project}"],
        ["db", "{out}", "s3://bucket/runs"],
    ],
)
def test_s3_where_we_cannot_write_it_is_exit_2(ws, args):
    """Old code: exit 0 and a local directory ./s3:/bucket/… (nothing reached a bucket)."""
    args = [a.format(trace=ws / "t.json", project=ws / "p", out=ws / "all.duckdb") for a in args]
    before = tree(ws)
    result = run_cli(*args, cwd=ws, timeout=120)
    one_error_line(result, 2, "s3://bucket/", "`query` roots and `import --project`")
    assert changed(before, tree(ws)) == set() and not (ws / "s3:").exists()


# ---------------------------------------------------------------------------------------------
# 9. nesting: bounded, and exact where it is kept


def _nested_trace(path: Path, depth: int, cat: str = "python_function", name: str = "nn.Module: Block_{}") -> Path:
    """One step of 10,000 µs holding `depth` nested ranges (level i: starts at 100 + i µs, lasts
    2 * (depth - i) + 1 µs) and one op, so the whole nest is measured."""
    step = {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": T0, "dur": 10_000}
    op = {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": T0 + 50, "dur": 10}
    path.write_bytes(kineto_text([step, op, *nested_ranges(cat, name, depth, T0 + 100)], header={"schemaVersion": 1}))
    return path


def test_small_module_nesting_matches_hand_derived_rows(tmp_path):
    """Three nested nn.Module events: level i lasts 2 * (3 - i) + 1 µs = 7, 5, 3 µs; self = own − child."""
    trace = _nested_trace(tmp_path / "three.json", 3)
    doc = cli_json("modules", str(trace))
    rows = {r["path"]: r for r in doc["modules"]}
    assert list(rows) == ["Block_0", "Block_0.Block_1", "Block_0.Block_1.Block_2"]
    assert [rows[p]["total_ms_per_step"] for p in rows] == [0.007, 0.005, 0.003]
    assert [rows[p]["self_ms_per_step"] for p in rows] == [0.002, 0.002, 0.003]
    assert [rows[p]["depth"] for p in rows] == [0, 1, 2]
    assert "nesting_cut" not in cli_json("summary", str(trace))["marks"]


def test_module_nesting_past_the_cap_is_cut_with_a_mark(tmp_path):
    """66 levels: the 64 outermost are kept; the deepest kept call's self time is its whole time (its
    children are cut), 2 · (66 − 63) + 1 = 7 µs; the mark says how many calls were left out."""
    trace = _nested_trace(tmp_path / "deep.json", 66)
    rows = cli_json("modules", str(trace))["modules"]
    assert [r["depth"] for r in rows] == list(range(64))
    deepest = rows[-1]
    assert deepest["path"].endswith("Block_62.Block_63") and deepest["total_ms_per_step"] == 0.007
    assert deepest["self_ms_per_step"] == 0.007
    assert rows[0]["total_ms_per_step"] == 0.133 and rows[0]["self_ms_per_step"] == 0.002
    assert "2 module calls below 64 levels" in cli_json("summary", str(trace))["marks"]["nesting_cut"]


def test_phase_nesting_past_the_cap_is_cut_with_a_mark(tmp_path):
    trace = _nested_trace(tmp_path / "phases.json", 70, cat="user_annotation", name="## forward ##")
    summary = cli_json("summary", str(trace))
    assert "6 phase ranges below 64 levels" in summary["marks"]["nesting_cut"]
    phases = {r["phase"]: r for r in cli_json("phases", str(trace))["phases"]}
    assert phases["forward"]["wall_ms"] == 10.0  # the whole step: cutting nested ranges moves no time


PEAK_RSS = r"""
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300)
sys.stderr.write(done.stderr)
print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


@pytest.mark.parametrize(
    "cat,name", [("python_function", "nn.Module: ConvNormActivationBlock_{}"), ("user_annotation", "## forward ##")]
)
def test_3000_nested_ranges_read_in_bounded_memory(tmp_path, cat, name):
    """Peak RSS of the whole CLI (the kernel's count over the child): ~190 MiB now; the old code took
    1.2 GiB (modules) and 1.0 GiB (phase ranges), growing with the square of the depth."""
    trace = _nested_trace(tmp_path / "nest.json", 3000, cat, name)
    proc = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, sys.executable, "-m", "libreyolo_profile", "modules", str(trace), "--json"],
        capture_output=True,
        text=True,
        timeout=360,
        env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache")),
    )
    rc, peak_kib = map(int, proc.stdout.split())
    assert rc == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert peak_kib < 512 * 1024, f"peak RSS {peak_kib / 1024:.0f} MiB"


# ---------------------------------------------------------------------------------------------
# 18. smaller ones


@pytest.mark.parametrize("scheme", ["tls", "ucx"])
def test_a_scheduler_we_cannot_speak_to_is_exit_2(ws, scheme):
    pytest.importorskip("distributed")
    result = run_cli(
        "import", str(ws / "t.json"), "--project", str(ws / "q"), "--scheduler", f"{scheme}://127.0.0.1:9", timeout=120
    )
    one_error_line(result, 2, f"cannot reach the Dask scheduler at {scheme}://127.0.0.1:9")
    assert not (ws / "q").exists()


def remove_deep_tree(root: Path) -> None:
    """Remove a chain of single directories too deep for shutil.rmtree (it recurses): bottom up."""
    chain = [str(root)]
    while True:
        below = [e.path for e in os.scandir(chain[-1]) if e.is_dir(follow_symlinks=False) and e.name == "d"]
        if not below:
            break
        chain.append(below[0])
    for directory in reversed(chain):
        for entry in os.scandir(directory):
            if entry.name != "d":
                shutil.rmtree(entry.path) if entry.is_dir(follow_symlinks=False) else os.unlink(entry.path)
        os.rmdir(directory)


@pytest.fixture
def deep_root(ws):
    root = ws / "root"
    yield root
    if root.exists():
        remove_deep_tree(root)  # pytest's own clean-up of old temporary directories would hit RecursionError


def test_a_profile_1100_directories_deep_is_found(ws, deep_root):
    """Old code: RecursionError inside os.walk (exit 1) for query, db and a pooled compare side."""
    deep = str(deep_root)
    os.mkdir(deep)
    for _ in range(1100):  # one level at a time: os.makedirs and Path.mkdir(parents=True) recurse too
        deep = os.path.join(deep, "d")
        os.mkdir(deep)
    deep = Path(deep)
    shutil.copytree(ws / "p" / "infer", deep / "infer")
    found = cli_json("query", "SELECT count(*) AS n FROM profiles", str(ws / "root"))
    assert found == [{"n": 1}], found
    assert cli_json("db", str(ws / "all.duckdb"), str(ws / "root"))["profiles"] == 1
    assert run_cli("compare", str(ws / "root"), str(ws / "p" / "infer"), "--json").returncode == 0


def test_report_html_holds_no_control_characters(tmp_path):
    from tests.bad_inputs.make_bad_inputs import clean_events

    events = clean_events()
    for e in events:
        if e["name"] == "aten::relu":
            e["name"] = "aten::re\x1b]0;retitled\x07lu"
    trace = tmp_path / "esc.json"
    trace.write_bytes(kineto_text(events))
    cli_json("report", str(trace), "--out", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_bytes()
    assert b"\x1b" not in page and b"\x07" not in page
    assert b"aten::re\\x1b]0;retitled\\x07lu" in page


# ---------------------------------------------------------------------------------------------
# 16. --repeat: a full disk, and a killed parent


@pytest.fixture
def small_filesystem(tmp_path):
    """A 1 MiB tmpfs (we may mount one as root): room for an imported profile, not for three trials'
    traces. Skipped where nothing can be mounted."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def _measure_env(tmp_path: Path) -> dict:
    (tmp_path / "home").mkdir(exist_ok=True)
    return {"HOME": str(tmp_path / "home"), "LIBREYOLO_PROFILE_OFFLINE": "1", "PYTHONPATH": str(REPO)}


SMALL_INFER = ["infer", "--device", "cpu", "--imgsz", "64", "--runs", "2", "--warmup", "1", "--no-overhead"]


@pytest.mark.slow
@NEEDS_LIBREYOLO
def test_repeat_on_a_full_disk_is_exit_3_and_keeps_the_old_profile(tmp_path, small_filesystem):
    """Old code: the child's chained traceback on the terminal, then exit 1 (a JSONDecodeError)."""
    trace = inference_trace(tmp_path / "t.json")
    assert run_cli("import", str(trace), "--project", str(small_filesystem)).returncode == 0
    before = tree(small_filesystem)
    result = run_cli(
        *SMALL_INFER,
        "--repeat",
        "3",
        "--project",
        str(small_filesystem),
        cwd=tmp_path,
        env=_measure_env(tmp_path),
        timeout=600,
    )
    one_error_line(result, 3, "no space left", "no profile written")
    assert "Traceback" not in result.stderr and "During handling" not in result.stderr
    assert tree(small_filesystem) == before  # the old profile whole, no workspace left


@pytest.mark.slow
@NEEDS_LIBREYOLO
def test_a_killed_repeat_leaves_a_workspace_the_next_run_sweeps(tmp_path):
    """SIGKILL of `infer --repeat 2` (its trial process with it): the hidden workspace stays in --project;
    the next run removes it. Old code: it stayed for ever."""
    project = tmp_path / "out"
    env = dict(os.environ, **_measure_env(tmp_path))
    proc = subprocess.Popen(
        [sys.executable, "-m", "libreyolo_profile", *SMALL_INFER, "--repeat", "2", "--project", str(project)],
        cwd=tmp_path,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 300
        while time.time() < deadline and not list(project.glob(".libreyolo-profile-infer-*/trial1")):
            time.sleep(0.2)
        assert list(project.glob(".libreyolo-profile-infer-*/trial1")), "the trial never started"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    leftovers = list(project.glob(".libreyolo-profile-*"))
    assert len(leftovers) == 1
    result = run_cli(*SMALL_INFER, "--project", str(project), cwd=tmp_path, env=_measure_env(tmp_path), timeout=600)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in project.iterdir()) == ["infer"]


def test_the_sweep_takes_dead_runs_workspaces_only(tmp_path):
    """Named `<prefix><kind>-<pid>-workspace-<host>-…`: a dead pid's is removed when the next workspace is
    made, a live one's (the test's parent process) stays, and a name not of that form is never touched."""
    from libreyolo_profile.measure.common import workspace
    from libreyolo_profile.store.workdir import host_tag

    project = tmp_path / "out"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    names = {
        "dead": f".libreyolo-profile-train-{dead.pid}-workspace-{host_tag()}-abc",
        "live": f".libreyolo-profile-infer-{os.getppid()}-workspace-{host_tag()}-abc",
        "old style": ".libreyolo-profile-infer-k2j4h5",
    }
    for name in names.values():
        (project / name / "trial1").mkdir(parents=True)
    with workspace(project, "infer") as tmp:
        assert tmp.name.startswith(f".libreyolo-profile-infer-{os.getpid()}-workspace-{host_tag()}-")
        assert sorted(p.name for p in project.iterdir()) == sorted([names["live"], names["old style"], tmp.name])
    assert sorted(p.name for p in project.iterdir()) == sorted([names["live"], names["old style"]])
