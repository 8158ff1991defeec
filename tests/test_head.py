"""The typed head of profile.json (store/document/head.py): decoded once when a profile is loaded and read by
attribute by every reader after; the fields readers read are typed, so a hand-edited one is refused in one
line naming the field instead of failing inside a reader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from libreyolo_profile.store.document import head as head_module
from libreyolo_profile.store.document.head import BadHead, check_head

MEASURED = Path(__file__).parent / "reader_outputs" / "measured_cpu_infer"


def document() -> dict:
    return json.loads((MEASURED / "profile.json").read_text())


def test_created_is_kept_as_written_and_must_be_a_time():
    doc = document()
    assert check_head(dict(doc)).created == doc["created"]  # the text, as the report and the view take it
    for bad, words in (("yesterday", "created: Invalid RFC3339"), (5, "created: Expected `str | null`")):
        with pytest.raises(BadHead, match=words.replace("|", r"\|")):
            check_head({**doc, "created": bad})


def test_a_job_is_its_ranks_and_its_trace_keys_are_ranks():
    doc = document()
    job = check_head({**doc, "job": {"ranks": [0, 1], "metrics_rank": 1, "traces": {"1": "t.json"}}}).job
    assert job.ranks == [0, 1] and job.traces == {"1": "t.json"}
    with pytest.raises(BadHead, match="^job: Object missing required field `ranks`"):
        check_head({**doc, "job": {}})
    with pytest.raises(BadHead, match=r"^job\.traces: .* \(a key\)$"):
        check_head({**doc, "job": {"ranks": [0], "traces": {"rank one": "t.json"}}})


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """A copy of the measured CPU profile, and how many times a head was decoded since."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    shutil.copytree(MEASURED, tmp_path / "profile")
    calls = []
    real = head_module.check_head

    def check(doc):
        calls.append(1)
        return real(doc)

    monkeypatch.setattr(head_module, "check_head", check)
    return tmp_path / "profile", calls


def test_the_head_is_decoded_once_per_load(counted):
    from libreyolo_profile.readers.common import open_profile
    from libreyolo_profile.readers.summary import summary_document
    from libreyolo_profile.readers.what_if import what_if_document

    path, calls = counted
    profile = open_profile(path)
    assert len(calls) == 1
    summary_document(profile)
    what_if_document(profile, None, 1)
    assert len(calls) == 1 and profile.head is profile.loaded.head


def test_query_decodes_each_head_once(counted, tmp_path):
    from libreyolo_profile.store.crossrun.index import collect

    path, calls = counted
    shutil.copytree(path, tmp_path / "root" / "b")
    shutil.move(path, tmp_path / "root" / "a")
    found = collect([tmp_path / "root"])
    assert len(found) == 2 and len(calls) == 2
    assert [item.row["created"] for item in found] == [document()["created"]] * 2
