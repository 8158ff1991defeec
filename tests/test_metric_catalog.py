"""The metric vocabulary and sql/metrics.sql stay in step: a new metric is one SQL column plus one row of
sql/metric_catalog.sql (libreyolo_profile/metric_catalog.py says so at its top), and this is the test that
fails when only one of the two was written. The rows hold together (a share's whole, a screen's order, a
unit with a range), and the vocabulary's cache (libreyolo_profile/vocabulary.py) gives the SQL's rows, read
again when the SQL changes. Also the rules the trace alone decides, now in sql/metrics.sql: peak_mem_mb per
device type and the CPU profile whose overhead cannot be told from work.

The traces are tiny synthetic Kineto traces (tests/synthetic_traces.py); times in µs."""

from __future__ import annotations

import json

import pytest

from libreyolo_profile import vocabulary
from libreyolo_profile.metric_catalog import (
    FROM_OUTSIDE_THE_TRACE,
    INTERNAL_COLUMNS,
    KINDS,
    METRICS,
    compared_metrics,
    metric_row,
    report_cards,
    summary_metrics,
)
from libreyolo_profile.store.ingest.analyse import analyse_trace
from tests.conftest import cli_json
from tests.synthetic_traces import A100, GEMM_TENSORCORE, T0_US, annotation, kernel, op, runtime, write_trace

MIB = 1024 * 1024


def memory(start_us, allocated_bytes: int, device_type: int) -> dict:
    """A Kineto `[memory]` instant: the allocator's running total after one allocation
    (Device Type 0 = host, 1 = CUDA)."""
    return {
        "ph": "i",
        "s": "t",
        "cat": "cpu_instant_event",
        "name": "[memory]",
        "pid": 1,
        "tid": 1,
        "ts": T0_US + start_us,
        "args": {
            "Total Allocated": allocated_bytes,
            "Total Reserved": allocated_bytes,
            "Device Type": device_type,
            "Device Id": 0 if device_type else -1,
            "Bytes": 1,
        },
    }


def gpu_events() -> list[dict]:
    """One 1000 µs step, all forward: a launch at 100..110 queues a GEMM at 200..700; the device
    allocator reaches 3 MiB at 300, then 5 MiB at 400 (its peak)."""
    return [
        annotation("ProfilerStep#1", 0, 1000),
        op("aten::mm", 90, 30),
        runtime("cudaLaunchKernel", 100, 10, 1),
        kernel(GEMM_TENSORCORE, 200, 500, 1),
        memory(300, 3 * MIB, 1),
        memory(400, 5 * MIB, 1),
    ]


def cpu_events(with_ops: bool) -> list[dict]:
    """Three 1000 µs CPU calls, all forward; the host allocator reaches 7 MiB in the second call.
    With ops: one leaf op (aten::add, 100..400) in each call."""
    events = []
    for call in range(3):
        start = 1000 * call
        events.append(annotation(f"ProfilerStep#{call + 1}", start, 1000))
        if with_ops:
            events.append(op("aten::add", start + 100, 300))
    events.append(memory(1500, 7 * MIB, 0))
    return events


def test_sql_columns_are_the_catalogue_minus_what_the_trace_cannot_know(tmp_path):
    trace = write_trace(tmp_path / "gpu.json", gpu_events(), [A100])
    columns = set(analyse_trace(trace)["metrics"])
    assert INTERNAL_COLUMNS <= columns, (
        f"INTERNAL_COLUMNS lists columns sql/metrics.sql no longer has: {sorted(INTERNAL_COLUMNS - columns)}"
    )
    assert FROM_OUTSIDE_THE_TRACE <= set(METRICS) and not FROM_OUTSIDE_THE_TRACE & columns
    missing_in_sql = set(METRICS) - FROM_OUTSIDE_THE_TRACE - columns
    missing_in_catalogue = columns - INTERNAL_COLUMNS - set(METRICS)
    assert not missing_in_sql, f"in METRICS but not defined by sql/metrics.sql: {sorted(missing_in_sql)}"
    assert not missing_in_catalogue, f"defined by sql/metrics.sql but not in METRICS: {sorted(missing_in_catalogue)}"


def test_get_answers_exactly_the_catalogue(tmp_path):
    trace = write_trace(tmp_path / "gpu.json", gpu_events(), [A100])
    assert set(cli_json("get", str(trace))) == set(METRICS)


def test_peak_mem_is_the_device_peak_on_a_gpu(tmp_path):
    trace = write_trace(tmp_path / "gpu.json", gpu_events(), [A100])
    m = {name: entry["value"] for name, entry in cli_json("get", str(trace)).items()}
    # the device allocator's largest total in the window: 5 MiB
    assert m["peak_vram_mb"] == pytest.approx(5.0)
    assert m["peak_mem_mb"] == pytest.approx(5.0)


def test_peak_mem_is_the_host_peak_on_a_cpu(tmp_path):
    trace = write_trace(tmp_path / "cpu.json", cpu_events(with_ops=True))
    got = cli_json("get", str(trace))
    # the host allocator's largest total in the window: 7 MiB; no device, so no VRAM figure
    assert got["peak_mem_mb"]["value"] == pytest.approx(7.0)
    assert got["peak_vram_mb"]["value"] is None


def test_a_cpu_profile_without_ops_has_no_overhead_figures(tmp_path):
    """No leaf op inside the steps: the whole step would read as overhead, so the four figures are
    null, with the reason; with one leaf op per call they are measured."""
    overhead = ("host_overhead_ms", "host_overhead_pct", "per_launch_host_us", "leaf_busy_pct")
    bare = write_trace(tmp_path / "bare.json", cpu_events(with_ops=False))
    for name in overhead:
        answer = cli_json("get", str(bare), name)
        assert answer["value"] is None
        assert "records no framework ops inside its steps" in answer["reason"]
    measured = cli_json("get", str(write_trace(tmp_path / "ops.json", cpu_events(with_ops=True))))
    # per call: the leaf op runs 300 µs of the 1000 µs forward → 700 µs overhead, 30% leaf-busy
    assert measured["host_overhead_ms"]["value"] == pytest.approx(0.7)
    assert measured["leaf_busy_pct"]["value"] == pytest.approx(30.0)


def test_the_document_keeps_internal_columns_out(tmp_path):
    trace = write_trace(tmp_path / "gpu.json", gpu_events(), [A100])
    out = tmp_path / "imported"
    cli_json("import", str(trace), "--project", str(out))
    doc = json.loads(next(out.rglob("profile.json")).read_text())
    assert set(doc["metrics"]) == set(METRICS)


# ---------------------------------------------------------------------------------------------
# the rows hold together


def test_the_rows_hold_together():
    units = {row["unit"] for row in vocabulary.rows("metric_units")}
    for name in METRICS:
        row = metric_row(name)
        assert set(row["kinds"]) <= set(KINDS) and row["kinds"], name
        assert row["device"] in ("any", "gpu", "cpu"), name
        assert row["type"] in ("DOUBLE", "VARCHAR", "BOOLEAN"), name
        assert row["unit"] in units | {""}, name
        assert row["better"] in ("higher", "lower", None), name
        if row["share_of"] is not None:
            assert row["unit"] == "%" and row["share_of"].startswith("% "), name
        if row["lowest"] is not None or row["highest"] is not None:
            assert row["lowest"] < row["highest"], name
    for column in ("summary_order", "card_order", "compare_order"):
        placed = [metric_row(n)[column] for n in METRICS if metric_row(n)[column] is not None]
        assert len(placed) == len(set(placed)), f"two metrics share a place in {column}"
    assert not {metric_row(n)["origin"] for n in INTERNAL_COLUMNS} - {"internal"}


def test_each_screen_shows_only_what_applies():
    for kind in KINDS:
        for name in summary_metrics(kind) + report_cards(kind) + [m for m, _ in compared_metrics(kind)]:
            assert kind in METRICS[name][1], (kind, name)
    # a comparison of profiles of no known kind compares the metrics of every kind, with their directions
    assert compared_metrics(None) == [(n, b) for n, b in compared_metrics("train") if set(METRICS[n][1]) == set(KINDS)]
    assert ("step_ms", False) in compared_metrics(None) and ("throughput_img_s", True) in compared_metrics(None)


# ---------------------------------------------------------------------------------------------
# the cache of the vocabulary's rows


def test_a_vocabulary_module_requires_nothing():
    """Its cached rows are named by its own SQL only, which holds while it requires no other module."""
    from libreyolo_profile.sqlmodules import module

    for name in set(vocabulary._MODULES.values()):
        assert module(name).requires == (), name


def _fresh(monkeypatch, *directories):
    """The vocabulary's cache in these directories only (beside the SQL, then the user's), read afresh."""
    monkeypatch.setattr(vocabulary, "_cache_directories", lambda: directories)
    vocabulary._module_rows.cache_clear()


def test_cached_rows_are_the_sql_rows_and_an_edit_reads_the_sql_again(tmp_path, monkeypatch):
    beside, user = tmp_path / "beside", tmp_path / "user"
    try:
        _fresh(monkeypatch, beside, user)
        first = vocabulary.rows("metric_catalog")  # a miss: DuckDB, then kept beside the SQL
        assert list(first) == json.loads(json.dumps(vocabulary._from_sql("metric_catalog.sql")["metric_catalog"]))
        kept = list(beside.glob("vocabulary-metric_catalog-*.json"))
        assert len(kept) == 1 and not user.exists()
        planted = json.loads(kept[0].read_text(encoding="utf-8"))
        planted["metric_catalog"][0]["meaning"] = "planted"
        kept[0].write_text(json.dumps(planted), encoding="utf-8")
        vocabulary._module_rows.cache_clear()
        assert vocabulary.rows("metric_catalog")[0]["meaning"] == "planted"  # a hit reads the file
        edited = vocabulary.sql_text("metric_catalog.sql") + "\n-- edited\n"
        monkeypatch.setattr(vocabulary, "sql_text", lambda name: edited)
        vocabulary._module_rows.cache_clear()
        assert vocabulary.rows("metric_catalog") == first  # another SQL: the planted file is not its rows
    finally:
        vocabulary._module_rows.cache_clear()


def test_a_package_that_cannot_be_written_keeps_the_rows_in_the_user_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    try:
        _fresh(monkeypatch, blocker / "__pycache__", tmp_path / "user")
        assert [row["name"] for row in vocabulary.rows("sidecar_tables")][:2] == ["kernels", "ops"]
        assert len(list((tmp_path / "user").glob("vocabulary-sidecar_columns-*.json"))) == 1
        _fresh(monkeypatch, blocker / "a", blocker / "b")  # nowhere to keep them: each process reads the SQL
        assert [row["name"] for row in vocabulary.rows("sidecar_tables")][:2] == ["kernels", "ops"]
    finally:
        vocabulary._module_rows.cache_clear()
