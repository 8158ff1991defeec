"""`libreyolo profile launches` (readers/launches.py, sql/launches.sql) on every shared trace, found by glob:
exit 0 with tables that fit 80 columns, or one line saying why the number is null (a trace with no launch,
a CPU-only one); --json agrees with the Python API; bad cutoffs are usage errors."""

from __future__ import annotations

import json
import re

import pytest
from conftest import TRACES, run_cli, trace_files, trace_id

EVERY = trace_files()
SMALL = [p for p in EVERY if p.stat().st_size < 150_000]


def _relative(path) -> str:
    return path.relative_to(TRACES).as_posix()


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory, analysed_traces) -> str:
    """One reader cache for the tests that read a trace's launches: the launches section (a second read of the
    trace, kept in the cache that asked) is computed once per trace for the module, not once per test. The test
    of the section's first computation keeps its own empty cache."""
    return str(analysed_traces.seeded(tmp_path_factory.mktemp("launches-cache")))


@pytest.mark.parametrize("path", EVERY, ids=trace_id)
def test_launches_on_every_trace(shared_cache, path):
    run = run_cli("launches", str(path), env={"COLUMNS": "80", "XDG_CACHE_HOME": shared_cache})
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines, "nothing printed"
    assert max(len(line) for line in lines) <= 80, run.stdout
    if lines[0].startswith("launches: null"):
        assert "—" in run.stdout and "launch" in run.stdout.split("—", 1)[1]
        assert len(run.stdout.strip().replace("\n", " ")) < 200  # one sentence, wrapped at most once
    else:
        assert lines[0].startswith("Launches per stream") and any(line.startswith("outliers:") for line in lines)
        # the µs of the top outliers in plain notation, with no zeros after the point that the trace never had
        # (most traces write whole µs: `4`, not `4.00`, beside `165,057`)
        top = [line.split("│") for line in lines if line.count("│") >= 4]
        shown = [cell.strip() for cells in top for cell in cells[-4:-1] if cell.strip()]
        assert not [c for c in shown if re.fullmatch(r"[\d,]*\.\d*0|.*e[+-]\d+", c)], run.stdout


@pytest.mark.parametrize("path", SMALL, ids=trace_id)
def test_launches_json_is_the_api(shared_cache, monkeypatch, path):
    import libreyolo_profile as lp

    monkeypatch.setenv("XDG_CACHE_HOME", shared_cache)  # the API's cache as the CLI's
    run = run_cli("launches", str(path), "--json", "--top", "3")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    p = lp.open(path)
    streams = p.launch_outliers(stats=True)
    outliers = p.launch_outliers()
    assert len(doc["streams"]) == len(streams.fetchall())
    assert doc["outliers"] == len(outliers.fetchall())
    assert len(doc["top_outliers"]) == min(3, doc["outliers"])
    assert [r["delay_us"] for r in doc["top_outliers"]] == [r[outliers.columns.index("delay_us")] for r in
                                                             outliers.fetchall()[:3]]  # fmt: skip
    assert len(doc["queues"]) == len(p.queue_length().fetchall())
    if doc["null_reason"] is not None:
        assert doc["streams"] == doc["queues"] == [] and doc["outliers"] == 0


def test_bad_options_are_usage_errors(trace):
    shown = str(trace(_relative(SMALL[0])))
    for args, message in [
        (["--top", "0"], "--top must be at least 1"),
        (["--delay-cutoff-us", "-1"], "--delay-cutoff-us must be 0 or more"),
        (["--call-cutoff-us", "nan"], "--call-cutoff-us must be 0 or more"),
    ]:
        run = run_cli("launches", shown, *args)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert message in run.stderr and "Traceback" not in run.stderr
        assert len(run.stderr.strip().splitlines()) == 1


def test_a_profile_without_its_trace_says_so(trace, tmp_path):
    import shutil

    path = SMALL[0]
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    assert run_cli("import", str(copy), "--project", str(tmp_path / "project")).returncode == 0
    copy.unlink()  # the imported profile's source trace is gone
    (profile,) = (tmp_path / "project").rglob("profile.json")
    run = run_cli("launches", str(profile))
    assert run.returncode == 2 and "need the trace's events" in run.stderr and "is gone" in run.stderr


@pytest.mark.cold_cache  # the shared analyses carry the section already (tests/trace_analyses.py)
def test_the_launches_section_is_kept_and_the_trace_read_once(trace, monkeypatch):
    """The first ask computes the launches section from the trace and keeps it with the profile; a later one, in
    a profile opened anew, reads what was kept (the parser, broken here, is never called) and answers the same."""
    import libreyolo_profile as lp
    import libreyolo_profile.store.decode.parse as parse
    from libreyolo_profile.readers.launches import SECTION, launch_document
    from libreyolo_profile.store.disk.kept_sections import kept_section

    shown = trace(_relative(SMALL[0]))
    p = lp.open(shown)
    ranks = list(p._timelines.sources)
    assert all(kept_section(p.doc, SECTION, rank) is None for rank in ranks)
    first = launch_document(shown)
    assert all(kept_section(p.doc, SECTION, rank) is not None for rank in ranks)

    def no_parse(*args, **kwargs):
        raise AssertionError("the trace was read again")

    monkeypatch.setattr(parse, "parse_trace", no_parse)
    assert launch_document(shown) == first
    again = lp.open(shown)
    assert again.launch_outliers().fetchall() == p.launch_outliers().fetchall()
    assert again.queue_length().fetchall() == p.queue_length().fetchall()
