"""Nothing the user has is harmed by a writer (issue #10, part B).

`db OUT` and `report --out OUT` never write through a symlink, onto a device/FIFO/directory or onto
one of their own inputs, and replace an existing file only when it is an earlier output of the same
kind (a database or report of ours) or --force is given. `import`, `infer` and `run` never replace a
profile: an occupied <project>/<kind> is kept and the new one goes to <kind>2, <kind>3, … unless
--exist-ok. The property test hashes the whole tree around each writer and allows exactly the named
output to change.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from conftest import ON_CI, REPO, cli_json, run_cli

from tests.bad_inputs.make_bad_inputs import T0, clean_events, kineto_text

MARKER = '<meta name="generator" content="libreyolo-profile report">'


# ---------------------------------------------------------------------------------------------
# helpers


def inference_trace(path: Path) -> Path:
    """A tiny CPU trace without backward work: `import` files it as an infer profile."""
    events = []
    for step in range(12):
        start = T0 + step * 1000
        events.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{step}",
                "pid": 1,
                "tid": 1,
                "ts": start,
                "dur": 900,
            }
        )
        events.append(
            {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": start + 100, "dur": 600}
        )
    path.write_bytes(kineto_text(events, header={"schemaVersion": 1}))
    return path


def entry(path: Path) -> tuple:
    """What a path is, without following a link or opening a FIFO/device: type plus content identity."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISREG(st.st_mode):
        return ("file", hashlib.sha256(path.read_bytes()).hexdigest())
    if stat.S_ISDIR(st.st_mode):
        return ("dir",)
    return ("special", stat.S_IFMT(st.st_mode), st.st_rdev)


def tree(*roots: Path) -> dict[str, tuple]:
    """Every entry under the roots (links not followed), by absolute path."""
    found = {}
    for root in roots:
        for directory, dirs, files in os.walk(root):
            for name in dirs + files:
                path = Path(directory) / name
                found[str(path)] = entry(path)
    return found


def changed(before: dict, after: dict) -> set[str]:
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


def one_line_error(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def imported_once(base: Path) -> tuple[Path, dict]:
    """`base` holding t.json and a --project `p` with its import, and the tree of `base` as it was then."""
    trace = inference_trace(base / "t.json")
    done = run_cli("import", str(trace), "--project", str(base / "p"), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["profile"] == str(base / "p" / "infer" / "profile.json")
    return base, tree(base)


def copied_workspace(imported: tuple[Path, dict], tmp_path: Path) -> Path:
    """tmp_path holding copies of the imported t.json and `p`: the same bytes the import wrote, without an import
    per test (the profile names the shared t.json as its source, the folder the teardown check watches)."""
    base, _ = imported
    shutil.copy2(base / "t.json", tmp_path / "t.json")
    shutil.copytree(base / "p", tmp_path / "p", symlinks=True)
    return tmp_path


def assert_imported_untouched(imported: tuple[Path, dict]) -> None:
    """Nothing a test ran wrote beside the profile's recorded source or into the profile it was copied from."""
    base, before = imported
    assert changed(before, tree(base)) == set(), sorted(changed(before, tree(base)))


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    return imported_once(tmp_path_factory.mktemp("imported"))


@pytest.fixture
def ws(imported, tmp_path):
    """A cwd holding a trace and a --project (`p`) with one imported infer profile."""
    yield copied_workspace(imported, tmp_path)
    assert_imported_untouched(imported)


def device_node(path: Path) -> Path:
    """A character device like /dev/null (1, 3) where we may make one (root), else a FIFO."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        os.mkfifo(path)
    return path


# ---------------------------------------------------------------------------------------------
# db


def test_db_onto_a_device_node_is_refused_even_with_force(ws):
    node = device_node(ws / "node")
    before = tree(ws)
    for extra in ((), ("--force",)):
        one_line_error(run_cli("db", str(node), str(ws / "p"), *extra), "not a regular file")
    assert tree(ws) == before
    assert not stat.S_ISREG(os.lstat(node).st_mode)


def test_db_onto_its_own_input_is_refused_even_with_force(ws):
    for victim in (ws / "p" / "infer" / "profile.json", ws / "p" / "infer" / "ops.parquet"):
        before = tree(ws)
        for extra in ((), ("--force",)):
            one_line_error(run_cli("db", str(victim), str(ws / "p"), *extra), "input of this command")
        assert tree(ws) == before


def test_db_onto_an_unrelated_file_needs_force(ws):
    notes = ws / "notes.duckdb"
    notes.write_text("my notes\n")
    one_line_error(run_cli("db", str(notes), str(ws / "p")), "--force")
    assert notes.read_text() == "my notes\n"
    written = cli_json("db", str(notes), str(ws / "p"), "--force")
    assert written["profiles"] == 1
    with duckdb.connect(str(notes), read_only=True) as con:
        assert con.execute("SELECT producer FROM about").fetchone()[0].startswith("libreyolo-profile")


def test_db_through_a_symlink_is_refused_and_its_target_kept(ws):
    target = ws / "elsewhere.txt"
    target.write_text("keep me\n")
    link = ws / "all.duckdb"
    link.symlink_to(target)
    before = tree(ws)
    for extra in ((), ("--force",)):
        one_line_error(run_cli("db", str(link), str(ws / "p"), *extra), "symbolic link")
    assert tree(ws) == before and target.read_text() == "keep me\n"


def test_db_refreshes_its_own_database_without_force(ws):
    out = ws / "all.duckdb"
    cli_json("db", str(out), str(ws / "p"))
    first = os.stat(out).st_ino
    run_cli("import", str(ws / "t.json"), "--project", str(ws / "p"))  # a second profile: infer2
    again = cli_json("db", str(out), str(ws / "p"))
    assert again["profiles"] == 2 and os.stat(out).st_ino != first  # a new file renamed into place
    assert sorted(p.name for p in ws.iterdir()) == ["all.duckdb", "p", "t.json"]  # no temp left


# ---------------------------------------------------------------------------------------------
# report


def test_report_onto_its_own_trace_is_refused_even_with_force(ws):
    trace = ws / "t.json"
    before = tree(ws)
    for extra in ((), ("--force",)):
        one_line_error(run_cli("report", str(trace), "--out", str(trace), *extra, cwd=ws), "input of this command")
    profile = ws / "p" / "infer" / "profile.json"
    one_line_error(
        run_cli("report", str(profile.parent), "--out", str(profile), "--force", cwd=ws), "input of this command"
    )
    assert tree(ws) == before


def test_report_onto_a_symlink_is_refused(ws):
    target = ws / "page.html"
    target.write_text("<p>mine</p>\n")
    link = ws / "r.html"
    link.symlink_to(target)
    before = tree(ws)
    for extra in ((), ("--force",)):
        one_line_error(run_cli("report", str(ws / "t.json"), "--out", str(link), *extra, cwd=ws), "symbolic link")
    assert tree(ws) == before


def test_report_onto_an_unrelated_file_needs_force(ws):
    page = ws / "index.html"
    page.write_text("<p>my page</p>\n")
    one_line_error(run_cli("report", str(ws / "t.json"), "--out", str(page), cwd=ws), "--force")
    assert page.read_text() == "<p>my page</p>\n"
    cli_json("report", str(ws / "t.json"), "--out", str(page), "--force", cwd=ws)
    assert MARKER in page.read_text()


def test_report_rewrites_its_own_page_without_force(ws):
    for args in (["--out", str(ws / "r.html")], []):  # named, and the default beside the profile
        first = cli_json("report", str(ws / "p" / "infer"), *args, cwd=ws)
        inode = os.stat(first["out"]).st_ino
        again = cli_json("report", str(ws / "p" / "infer"), *args, cwd=ws)
        assert again["out"] == first["out"] and os.stat(again["out"]).st_ino != inode
    assert Path(first["out"]) == ws / "p" / "infer" / "report.html"


def test_a_report_from_before_the_marker_counts_as_ours(ws):
    out = ws / "old.html"
    cli_json("report", str(ws / "t.json"), "--out", str(out), cwd=ws)
    out.write_text(out.read_text().replace(MARKER, ""))  # as the previous version wrote it
    cli_json("report", str(ws / "t.json"), "--out", str(out), cwd=ws)
    assert MARKER in out.read_text()


# ---------------------------------------------------------------------------------------------
# import: no profile is replaced


def test_a_second_import_goes_to_the_next_name_and_keeps_the_first(ws):
    first = tree(ws / "p" / "infer")
    result = run_cli("import", str(ws / "t.json"), "--project", str(ws / "p"), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["directory"] == str(ws / "p" / "infer2") and doc["profile"] == str(ws / "p" / "infer2" / "profile.json")
    assert doc["replaced"] is False and "infer2" in result.stderr
    assert tree(ws / "p" / "infer") == first
    assert cli_json("summary", doc["profile"])["profile"]["kind"] == "infer"


def test_three_concurrent_imports_give_three_profiles(tmp_path):
    trace = inference_trace(tmp_path / "t.json")
    command = [
        sys.executable,
        "-m",
        "libreyolo_profile",
        "import",
        str(trace),
        "--project",
        str(tmp_path / "p"),
        "--json",
    ]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [err for _, err in outputs]
    directories = sorted(json.loads(out)["directory"] for out, _ in outputs)
    assert directories == [str(tmp_path / "p" / n) for n in ("infer", "infer2", "infer3")]
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["infer", "infer2", "infer3"]
    generations = {json.loads((Path(d) / "profile.json").read_text())["generation"] for d in directories}
    assert len(generations) == 3  # three whole profiles, none overwritten by another


def test_exist_ok_replaces_in_place(ws):
    old = json.loads((ws / "p" / "infer" / "profile.json").read_text())["generation"]
    doc = cli_json("import", str(ws / "t.json"), "--project", str(ws / "p"), "--exist-ok")
    assert doc["directory"] == str(ws / "p" / "infer") and doc["replaced"] is True
    assert json.loads((ws / "p" / "infer" / "profile.json").read_text())["generation"] != old
    assert sorted(p.name for p in (ws / "p").iterdir()) == ["infer"]


# ---------------------------------------------------------------------------------------------
# the primitives, where the CLI cannot reach them


def test_claim_without_renameat2_never_replaces(tmp_path, monkeypatch):
    from libreyolo_profile.store.disk import atomic

    monkeypatch.setattr(atomic, "_renameat2", lambda *a: None)  # an old C library
    target = tmp_path / "infer"
    placed = []
    for content in ("one", "two", "three"):
        staged = atomic.staging_dir(target)
        (staged / "profile.json").write_text(content)
        placed.append(atomic.claim(staged, target))
    assert placed == [tmp_path / "infer", tmp_path / "infer2", tmp_path / "infer3"]
    assert [(p / "profile.json").read_text() for p in placed] == ["one", "two", "three"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["infer", "infer2", "infer3"]


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path):
    from libreyolo_profile.store.disk.atomic import write_output

    out = tmp_path / "all.duckdb"
    out.write_text("old")

    def half_then_fail(path: Path) -> None:
        path.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_output(out, half_then_fail, what="database", ours=lambda p: True)
    assert out.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["all.duckdb"]


# ---------------------------------------------------------------------------------------------
# property: each writer changes exactly its named output


def _writers(ws: Path) -> list[tuple[str, list[str], set[Path]]]:
    """(name, CLI arguments, the paths allowed to change) for every writer that is cheap to run."""
    p = ws / "p"
    ours_db, ours_page = ws / "all.duckdb", ws / "r.html"
    return [
        ("db", ["db", str(ours_db), str(p)], {ours_db}),
        ("db again", ["db", str(ours_db), str(p)], {ours_db}),
        ("report --out", ["report", str(ws / "t.json"), "--out", str(ours_page)], {ours_page}),
        ("report --out again", ["report", str(ws / "t.json"), "--out", str(ours_page)], {ours_page}),
        ("report default", ["report", str(p / "infer")], {p / "infer" / "report.html"}),
        ("report --vs", ["report", str(p / "infer"), "--vs", str(ws / "t.json")], {p / "infer" / "report_vs.html"}),
        ("import", ["import", str(ws / "t.json"), "--project", str(p)], {p / "infer2"}),
        ("import train", ["import", str(ws / "train.json"), "--project", str(p)], {p / "train"}),
        ("import again", ["import", str(ws / "t.json"), "--project", str(p)], {p / "infer3"}),
    ]


def _allowed(path: str, outputs: set[Path]) -> bool:
    return any(path == str(o) or path.startswith(str(o) + os.sep) for o in outputs)


def test_every_writer_changes_only_its_output(ws):
    (ws / "train.json").write_bytes(kineto_text(clean_events()))
    (ws / "notes.txt").write_text("untouched\n")
    (ws / "link").symlink_to(ws / "notes.txt")
    for name, args, outputs in _writers(ws):
        before = tree(ws)
        result = run_cli(*args, cwd=ws)
        assert result.returncode == 0, (name, result.stderr)
        diff = changed(before, tree(ws))
        assert all(_allowed(p, outputs) for p in diff), (name, sorted(diff))
        for out in outputs:  # the named output is whole: a database, a page, or a profile directory
            assert out.exists(), (name, out)


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("libreyolo") is None or importlib.util.find_spec("torch") is None,
    reason="libreyolo/torch not installed",
)
def test_a_real_infer_into_an_occupied_project_writes_infer2(ws):
    """One tiny real measurement: the imported profile in p/infer stays byte-identical."""
    env = {"LIBREYOLO_PROFILE_OFFLINE": "1", "PYTHONPATH": str(REPO), "HOME": str(ws / "home")}
    (ws / "home").mkdir()
    before = tree(ws)
    result = run_cli(
        "infer",
        "--device",
        "cpu",
        "--imgsz",
        "64",
        "--warmup",
        "1",
        "--runs",
        "2",
        "--no-overhead",
        "--project",
        str(ws / "p"),
        "--json",
        cwd=ws,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["profile"]["path"] == str(ws / "p" / "infer2" / "profile.json")
    assert "infer2" in result.stderr
    diff = changed(before, tree(ws))
    assert all(_allowed(p, {ws / "p" / "infer2", ws / "home"}) for p in diff), sorted(diff)
    assert (ws / "p" / "infer2" / "report.html").is_file()


# ---------------------------------------------------------------------------------------------
# property, on the hostile side (issue 22): a refused write changes nothing at all, a bulk import only
# its own directories, whatever the inputs say about themselves


def _hostile_writers(ws: Path) -> list[tuple[str, list[str], int, set[Path], set[Path]]]:
    """(name, CLI arguments, exit code, paths allowed to change with all below them, paths allowed to
    appear themselves) for writers pointed at what they must not harm."""
    p, bulk, foreign = ws / "p", ws / "bulk", ws / "foreign"
    climb, absolute = str(ws / "climb.json"), str(ws / "absolute.json")
    return [
        ("import, kind ../../outside", ["import", climb, "--project", str(p / "sub")], 1, set(), set()),
        ("import, kind absolute, --exist-ok", ["import", absolute, "--project", str(p), "--exist-ok"], 1, set(), set()),
        (
            "import --exist-ok onto a foreign directory",
            ["import", str(ws / "t.json"), "--project", str(foreign), "--exist-ok"],
            2,
            set(),
            set(),
        ),
        (
            "infer --exist-ok onto a foreign directory",
            ["infer", "--device", "cpu", "--project", str(foreign), "--exist-ok"],
            2,
            set(),
            set(),
        ),
        (
            "run --exist-ok onto a foreign directory",
            ["run", "coco128", "--device", "cpu", "--project", str(foreign), "--exist-ok"],
            2,
            set(),
            set(),
        ),
        (
            "bulk import --jobs 2",
            [
                "import",
                str(ws / "t.json"),
                str(ws / "train.json"),
                climb,
                absolute,
                "--project",
                str(bulk),
                "--jobs",
                "2",
            ],
            1,
            {bulk / "t", bulk / "train"},
            {bulk},
        ),
        (
            "bulk import --jobs 2 --exist-ok",
            [
                "import",
                str(ws / "t.json"),
                str(ws / "train.json"),
                climb,
                "--project",
                str(bulk),
                "--jobs",
                "2",
                "--exist-ok",
            ],
            1,
            {bulk / "t" / "infer", bulk / "train" / "train"},
            set(),
        ),
    ]


def test_hostile_writes_change_nothing_but_their_own_output(ws):
    (ws / "train.json").write_bytes(kineto_text(clean_events()))
    doc = json.loads((ws / "p" / "infer" / "profile.json").read_text())
    victim = ws / "victim"
    victim.mkdir()
    (victim / "profile.json").write_text("mine\n")
    (victim / "report.html").write_text("<p>mine</p>\n")
    (ws / "climb.json").write_text(json.dumps(dict(doc, kind="../../outside")))
    (ws / "absolute.json").write_text(json.dumps(dict(doc, kind=str(victim))))
    for kind in ("infer", "train"):  # the user's files named like ours, and no profile.json
        (ws / "foreign" / kind).mkdir(parents=True)
        (ws / "foreign" / kind / "report.html").write_text("<p>my page</p>\n")
        (ws / "foreign" / kind / "kernels.parquet").write_text("my table\n")
    watched = (ws, ws.parent / "outside")
    for name, args, code, subtrees, exact in _hostile_writers(ws):
        before = tree(*watched)
        result = run_cli(*args, cwd=ws, timeout=300)
        assert result.returncode == code, (name, result.returncode, result.stderr)
        assert "Traceback" not in result.stderr, (name, result.stderr)
        diff = changed(before, tree(*watched))
        assert all(_allowed(p, subtrees) or p in {str(e) for e in exact} for p in diff), (name, sorted(diff))
        assert not (ws.parent / "outside").exists(), name
    assert sorted(p.name for p in (ws / "bulk").iterdir()) == ["t", "train"]


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("libreyolo") is None or importlib.util.find_spec("torch") is None,
    reason="libreyolo/torch not installed",
)
def test_infer_repeat_changes_only_its_output(ws):
    """`infer --repeat 2` (a fresh process per trial): only <project>/infer2 appears; no trial workspace stays."""
    env = {"LIBREYOLO_PROFILE_OFFLINE": "1", "PYTHONPATH": str(REPO), "HOME": str(ws / "home")}
    (ws / "home").mkdir()
    before = tree(ws)
    result = run_cli(
        "infer",
        "--device",
        "cpu",
        "--imgsz",
        "64",
        "--warmup",
        "1",
        "--runs",
        "2",
        "--repeat",
        "2",
        "--no-overhead",
        "--project",
        str(ws / "p"),
        "--json",
        cwd=ws,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["profile"]["path"] == str(ws / "p" / "infer2" / "profile.json")
    diff = changed(before, tree(ws))
    assert all(_allowed(p, {ws / "p" / "infer2", ws / "home"}) for p in diff), sorted(diff)
    assert sorted(p.name for p in (ws / "p").iterdir()) == ["infer", "infer2"]


def test_dask_bulk_import_of_hostile_inputs_changes_only_its_output(ws):
    """The bulk import above, run on a real Dask cluster (a LocalCluster of two worker processes):
    the hostile kinds fail their own inputs, and nothing but the project's two new profiles appears."""
    try:
        from distributed import LocalCluster
    except ImportError:
        if ON_CI:
            pytest.fail("CI=true but the [dask] extra (dask[distributed]) is missing")
        pytest.skip("needs the [dask] extra")
    (ws / "train.json").write_bytes(kineto_text(clean_events()))
    doc = json.loads((ws / "p" / "infer" / "profile.json").read_text())
    victim = ws / "victim"
    victim.mkdir()
    (victim / "report.html").write_text("<p>mine</p>\n")
    (ws / "climb.json").write_text(json.dumps(dict(doc, kind="../../outside")))
    (ws / "absolute.json").write_text(json.dumps(dict(doc, kind=str(victim))))
    project = ws / "dask"
    inputs = [str(ws / n) for n in ("t.json", "train.json", "climb.json", "absolute.json")]
    watched = (ws, ws.parent / "outside")
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None)
    try:
        before = tree(*watched)
        result = run_cli(
            "import", *inputs, "--project", str(project), "--scheduler", cluster.scheduler_address, cwd=ws, timeout=300
        )
    finally:
        cluster.close()
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    diff = changed(before, tree(*watched))
    assert all(_allowed(p, {project / "t", project / "train"}) or p == str(project) for p in diff), sorted(diff)
    assert sorted(p.name for p in project.iterdir()) == ["t", "train"]
    assert not (ws.parent / "outside").exists()
