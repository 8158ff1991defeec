"""`libreyolo profile query`'s own limits (issue 22, items 10 and 11), through the real CLI: the terminal
table shows at most --max-rows rows and says how many were cut, --json and --csv stream every row,
--timeout covers printing the rows, and DuckDB gets a memory limit well below the machine's memory
(--memory-limit), past which the query fails in one line with exit 1."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest

from tests.bad_inputs.make_bad_inputs import build
from tests.conftest import run_cli

MANY = "SELECT i, i * 2 AS twice FROM range({n}) t(i)"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """A root with one profile (imported from the clean synthetic trace): queries need one to run."""
    work = tmp_path_factory.mktemp("query-output")
    build(work / "corpus")
    done = run_cli(
        "import",
        str(work / "corpus" / "clean.json"),
        "--project",
        str(work / "runs"),
        env={"XDG_CACHE_HOME": str(work / "cache")},
    )
    assert done.returncode == 0, done.stderr
    return work / "runs"


def table_rows(stdout: str) -> list[str]:
    """The data lines of a rich table: the ones below the header rule."""
    lines = stdout.splitlines()
    rule = next(i for i, line in enumerate(lines) if set(line.strip()) <= set("━╇"))
    return [line for line in lines[rule + 1 :] if line.strip()]


def test_table_is_capped_and_says_how_many_rows_were_cut(root):
    # the old code rendered every row of any result (5 M rows: still rendering after 300 s at 3.1 GB)
    done = run_cli("query", MANY.format(n=3_000_000), str(root), timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(table_rows(done.stdout)) == 1000  # the default cap
    assert "showing 1,000 of 3,000,000 rows (2,999,000 cut by --max-rows 1000)" in done.stderr
    capped = run_cli("query", MANY.format(n=50), str(root), "--max-rows", "7")
    assert capped.returncode == 0 and len(table_rows(capped.stdout)) == 7
    assert "showing 7 of 50 rows (43 cut" in capped.stderr
    whole = run_cli("query", MANY.format(n=50), str(root), "--max-rows", "0")
    assert whole.returncode == 0 and len(table_rows(whole.stdout)) == 50 and "cut" not in whole.stderr


def test_json_and_csv_print_every_row(root):
    rows = json.loads(run_cli("query", MANY.format(n=5000), str(root), "--json").stdout)
    assert rows == [{"i": i, "twice": 2 * i} for i in range(5000)]
    done = run_cli(
        "query", "SELECT i, i * 2 AS twice, 'a,\"b' AS text, NULL AS nothing FROM range(5000) t(i)", str(root), "--csv"
    )
    assert done.returncode == 0, done.stderr
    parsed = list(csv.reader(io.StringIO(done.stdout)))
    assert parsed[0] == ["i", "twice", "text", "nothing"]
    assert parsed[1:] == [[str(i), str(2 * i), 'a,"b', ""] for i in range(5000)]
    both = run_cli("query", "SELECT 1", str(root), "--json", "--csv")
    assert both.returncode == 2 and "not both" in both.stderr


def test_timeout_covers_printing_and_rows_stream(root):
    """100 M rows as JSON: the rows start at once (the old code fetched all of them first) and the
    deadline stops the printing, exit 1, with no JSON error document appended to half an array."""
    done = run_cli("query", "SELECT i FROM range(100000000) t(i)", str(root), "--json", "--timeout", "3", timeout=120)
    assert done.returncode == 1, done.stderr
    assert "exceeded --timeout 3 s (it covers printing the rows: the output above is cut off" in done.stderr
    assert done.stdout.startswith('[\n{"i": 0},\n{"i": 1},')  # streamed before the deadline
    assert '"error"' not in done.stdout
    assert len([line for line in done.stderr.splitlines() if "error:" in line]) == 1


def test_a_deadline_that_lands_inside_a_fetch_still_says_the_output_is_cut():
    """Whichever error stops the worker (here DuckDB's own interrupt, raised inside the statement that was
    running when the deadline passed, not the writers' StreamStopped), a stream that had begun printing is
    told as cut off, so cli.py appends no JSON error document to half an array (one CI run saw it)."""
    import duckdb

    from libreyolo_profile.readers.query_output import Stream, StreamStopped
    from libreyolo_profile.readers.query_worker import QueryWorker

    con = duckdb.connect(":memory:")
    stream = Stream(lambda: False)

    def printing_then_long_statement():
        stream.started = True
        return con.execute("SELECT count(*) FROM range(1000000000000) a(i)").fetchall()

    worker = QueryWorker(con, printing_then_long_statement, lambda: stream.started)
    with pytest.raises(StreamStopped) as stopped:
        worker.run(0.5)
    assert isinstance(worker.outcome.get("error"), duckdb.InterruptException)
    assert stopped.value.output_started and "the output above is cut off" in str(stopped.value)
    con.close()


def test_table_counting_stays_under_the_timeout(root):
    done = run_cli("query", "SELECT i FROM range(1000000000) t(i)", str(root), "--timeout", "3", timeout=120)
    assert done.returncode == 1 and "exceeded --timeout 3 s" in done.stderr
    assert "cut off" not in done.stderr and done.stdout == ""  # nothing printed yet: no table half drawn


def _bytes(setting: str) -> float:
    number, unit = setting.split()
    return float(number) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[unit]


def test_default_memory_limit_is_well_below_the_machine(root):
    done = run_cli("query", "SELECT current_setting('memory_limit') AS m", str(root), "--json")
    assert done.returncode == 0, done.stderr
    limit = _bytes(json.loads(done.stdout)[0]["m"])
    machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    # DuckDB's own default is 80% of the machine; ours min(4 GiB, 25%), rounded down to whole MiB
    assert limit <= min(4 << 30, machine / 4) and limit > min(4 << 30, machine / 4) - (2 << 20)
    given = run_cli(
        "query", "SELECT current_setting('memory_limit') AS m", str(root), "--json", "--memory-limit", "300MiB"
    )
    assert json.loads(given.stdout)[0]["m"] == "300.0 MiB"


def test_query_past_the_memory_limit_fails_in_one_line(root):
    sql = "SELECT list(i::VARCHAR || repeat('x', 100)) AS big FROM range(5000000) t(i)"
    done = run_cli("query", sql, str(root), "--memory-limit", "64MB", timeout=120)
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "Out of Memory" in errors[0] and "--memory-limit" in errors[0], done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize("value", ["100", "-1GB", "lots", "0MB", "1e9"])
def test_bad_memory_limit_is_a_usage_error(root, value):
    done = run_cli("query", "SELECT 1", str(root), "--memory-limit", value)
    assert done.returncode == 2 and "--memory-limit takes a size with a unit" in done.stderr
