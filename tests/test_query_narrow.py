"""`query` in an 80-column terminal (issue #25): a result too wide for the terminal prints one record per
row (`column  value`), never a table whose cells fold letter by letter; a narrow result stays a table."""

from __future__ import annotations

from tests.conftest import cli_json, require_traces, run_cli


def test_wide_result_prints_records_and_narrow_one_a_table(tmp_path):
    from libreyolo_profile.store.disk.writer import write_directory
    from libreyolo_profile.store.document.from_trace import profile_from_trace

    root = tmp_path / "runs"
    write_directory(profile_from_trace(require_traces() / "cpu_only_rank34.json.gz"), root / "cpu")
    wide = run_cli("query", "SELECT * FROM profiles", str(root), env={"COLUMNS": "80"})
    assert wide.returncode == 0, wide.stderr
    lines = wide.stdout.splitlines()
    assert lines[0] == "── row 1 ──" and "┃" not in wide.stdout
    columns = list(cli_json("query", "SELECT * FROM profiles", str(root))[0])
    named = [line.split()[0] for line in lines[1:] if line and not line.startswith(" ")]
    assert named[: len(columns)] == columns  # every column, once, in order
    narrow = run_cli("query", "SELECT kind, step_ms FROM profiles", str(root), env={"COLUMNS": "80"})
    assert narrow.returncode == 0 and "┃" in narrow.stdout and "── row" not in narrow.stdout
