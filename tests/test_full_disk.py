"""A full disk, or a place that cannot take what a command writes, is one line with the documented exit code
(issue 54): `import`, `db` and `report` exit 1 naming the device and that nothing was written (old: a raw
`OSError: [Errno 28]`, DuckDB's "CHECKPOINT during DETACH failed…"); `infer` exits 3 naming the full disk
when the profiler could not write its trace (old: exit 2, "no such file: …/trial1_trace.json"); a
--project that is a file or /dev/null exits 2 (old: FileExistsError, exit 1), an empty one too (old: the
current directory was written into)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import require_traces, run_cli

TRACE = "h100_vit_image_classifier.json.gz"


def one_error_line(result, code: int, *words: str) -> str:
    assert result.returncode == code, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and "LIBREYOLO_PROFILE_DEBUG" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def full_device(tmp_path):
    """A 64 KiB tmpfs (we may mount one as root): too small for any profile, report or database, so the
    kernel itself says ENOSPC to DuckDB's, pyarrow's and Python's writes. Skipped where nothing can be
    mounted; the injected tests below run everywhere."""
    mount = tmp_path / "full"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """A profile directory tree to read from (the `db` input), on a disk with room: imported once for the
    file, as no test writes into it."""
    project = tmp_path_factory.mktemp("imported") / "profiles"
    done = run_cli("import", str(require_traces() / TRACE), "--project", str(project))
    assert done.returncode == 0, done.stderr
    return project


def test_import_db_and_report_on_a_full_device(full_device, imported, tmp_path):
    trace = require_traces() / TRACE
    project = full_device / "project"
    result = run_cli("import", str(trace), "--project", str(project), "--json")
    line = one_error_line(result, 1, "no space left on the device holding", str(project), "no profile written")
    assert json.loads(result.stdout) == {"error": line.split("error: ", 1)[1], "exit_code": 1}
    result = run_cli("db", str(full_device / "all.duckdb"), str(imported))
    one_error_line(result, 1, "no space left", "all.duckdb", "no database written")
    result = run_cli("report", str(trace), "--out", str(full_device / "r.html"))
    one_error_line(result, 1, "no space left", "r.html", "no report written")
    assert tree(full_device) == [], "staging, a half-written file or an empty directory left on the full device"


def test_import_with_an_injected_enospc(tmp_path, monkeypatch):
    """No mount needed: the profile's JSON write fails as a full disk fails it, in this process."""
    from libreyolo_profile.cli import run_cli as cli
    from libreyolo_profile.store.disk import writer

    project = tmp_path / "project"
    real_dump = writer.dump_json

    def full(doc, path):
        if project not in Path(path).parents:  # the reader cache's writes go on
            return real_dump(doc, path)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(writer, "dump_json", full)
    result = _in_process(cli, ["import", str(require_traces() / TRACE), "--project", str(project)], monkeypatch)
    one_error_line(result, 1, "no space left on the device holding", "no profile written")
    assert not project.exists(), tree(project)


def _in_process(cli, args: list[str], monkeypatch) -> SimpleNamespace:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(args, prog="libreyolo-profile")
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


class _SilentProfiler:
    """Kineto on a full disk: export_chrome_trace returns and leaves no file (or a cut one)."""

    def __init__(self, writes: bytes | None = None):
        self.writes = writes

    def export_chrome_trace(self, path: str) -> None:
        if self.writes is not None:
            Path(path).write_bytes(self.writes)


def test_infer_whose_profiler_could_not_write_its_trace_exits_3_naming_the_disk(tmp_path, monkeypatch):
    from libreyolo_profile.errors import ProfileError
    from libreyolo_profile.measure import common, profiler

    project = tmp_path / "project"
    real_statvfs = os.statvfs

    def no_free_block(path):
        st = real_statvfs(path)
        return SimpleNamespace(f_bavail=0, f_bfree=0, f_frsize=st.f_frsize)

    monkeypatch.setattr(profiler.os, "statvfs", no_free_block)
    for cut in (None, b'{"traceEvents": [{"ph": "X", "na'):
        with pytest.raises(ProfileError) as failure:
            with common.workspace(project, "infer") as tmp:
                profiler.export_trace(_SilentProfiler(cut), tmp / "trial1_trace.json")
        assert failure.value.exit_code == 3
        assert "no space left on the device holding" in failure.value.message
        assert str(project) in failure.value.message and "no profile written" in failure.value.message
    monkeypatch.setattr(profiler.os, "statvfs", real_statvfs)
    with pytest.raises(ProfileError) as failure:  # room left, and still no trace: said so, exit 3
        with common.workspace(project, "infer") as tmp:
            profiler.export_trace(_SilentProfiler(), tmp / "trial1_trace.json")
    assert failure.value.exit_code == 3 and "the profiler wrote no trace" in failure.value.message
    assert tree(project) == []  # the workspace is gone


@pytest.mark.parametrize("kind", ["file", "devnull", "file_parent", "empty"])
def test_a_project_that_cannot_take_a_profile_is_exit_2(kind, tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    project = {"file": str(a_file), "devnull": os.devnull, "file_parent": str(a_file / "sub"), "empty": ""}[kind]
    result = run_cli("import", str(require_traces() / TRACE), "--project", project, "--json", cwd=cwd)
    line = one_error_line(result, 2, "--project")
    assert json.loads(result.stdout)["exit_code"] == 2, line
    assert a_file.read_text() == "mine\n" and list(cwd.iterdir()) == []


def test_an_empty_project_or_out_is_refused_by_every_writer(tmp_path):
    for args in (["infer", "--project", ""], ["run", "coco128", "--project", ""], ["report", "t.json", "--out", ""]):
        result = run_cli(*args, cwd=tmp_path)
        one_error_line(result, 2, "is empty")
    assert list(tmp_path.iterdir()) == []


def test_a_file_where_db_or_report_wants_a_directory_is_exit_2(imported, tmp_path):
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    for args in (
        ["db", str(a_file / "all.duckdb"), str(imported)],
        ["report", str(next(imported.glob("*/profile.json"))), "--out", str(a_file / "r.html")],
    ):
        one_error_line(run_cli(*args), 2, str(a_file), "Not a directory")
    assert a_file.read_text() == "mine\n"
