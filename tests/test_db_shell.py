"""`db` writes a file the DuckDB shell people install can open (issue #25): `pip install duckdb-cli`
gives a 1.x shell that reads storage versions 64–68 only, while the duckdb module we write with would
default to a newer one. The file's header says which version it is; where a `duckdb` shell is on PATH
(or named by $DUCKDB_CLI) it opens the file and reads the rows back."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess

import pytest

from tests.conftest import cli_json, require_traces

# what duckdb-cli 1.5.6 (PyPI) accepts: "we can only read versions between 64 and 68"
SHELL_READS = range(64, 69)


@pytest.fixture
def database(tmp_path):
    from libreyolo_profile.store.disk.writer import write_directory
    from libreyolo_profile.store.document.from_trace import profile_from_trace

    root = tmp_path / "runs"
    write_directory(profile_from_trace(require_traces() / "cpu_only_rank34.json.gz"), root / "cpu")
    out = tmp_path / "all.duckdb"
    assert cli_json("db", str(out), str(root))["profiles"] == 1
    return out


def storage_version(path) -> int:
    """The version number in a DuckDB file's main header: checksum (8 bytes), magic `DUCK`, version."""
    header = path.read_bytes()[:20]
    assert header[8:12] == b"DUCK"
    return struct.unpack("<Q", header[12:20])[0]


def test_db_file_is_in_a_format_the_installed_shells_read(database):
    assert storage_version(database) in SHELL_READS


def test_a_duckdb_shell_opens_it(database):
    shell = os.environ.get("DUCKDB_CLI") or shutil.which("duckdb")
    if not shell:
        pytest.skip("no duckdb shell on PATH (pip install duckdb-cli, or set DUCKDB_CLI)")
    result = subprocess.run(
        [shell, "-readonly", str(database), "-csv", "-c", "SELECT kind, count(*) FROM profiles GROUP BY kind"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "train,1" in result.stdout
