"""The daily analyses as Python one-liners (docs/PYTHON.md, api/analyses.py): each against the readers it
overlaps (the blame, the headline, the kernels table, the job's ranks table) and, for the ones read from the
trace's timeline (launch outliers, queue length, comm/compute overlap), against a plain-Python computation
from the trace's raw events. The traces come from the shared folder by glob, never by name."""

from __future__ import annotations

import functools
import gzip
import json
import re
from collections import Counter, defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from conftest import TRACES, job_folders, trace_files, trace_id

# the small GPU traces of the shared folder (a few hundred kB at most): the raw-event references read them whole
SMALL = [p for p in trace_files() if p.stat().st_size < 150_000]


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory, analysed_traces) -> Path:
    """One reader cache for the module: a trace's launches section (a second read of the trace, kept in the cache
    that asked) is computed once for the tests that read it, not once per test."""
    return analysed_traces.seeded(tmp_path_factory.mktemp("analyses-cache"))


@pytest.fixture(scope="module")
def profiles() -> dict:
    """The module's opened profiles by trace: the tests only read them, so each trace is opened once for the
    four tests that read it, not once per test."""
    return {}


@pytest.fixture
def opened(shared_cache, analysed_traces, profiles, monkeypatch):
    """lp.open of a shared trace, through the module's cache, with the trace's analysis in it."""
    import libreyolo_profile as lp

    monkeypatch.setenv("XDG_CACHE_HOME", str(shared_cache))

    def open_trace(path: Path):
        if path not in profiles:
            analysed_traces.provide(path, shared_cache)
            profiles[path] = lp.open(path)
        return profiles[path]

    return open_trace


def _rows(relation) -> list[dict]:
    return [dict(zip(relation.columns, row, strict=True)) for row in relation.fetchall()]


# --- a plain-Python reading of a Kineto trace ---------------------------------------------------------------

RUNTIME = {"cuda_runtime", "runtime", "cuda_driver", "hip_runtime", "hip_driver"}
DEVICE = {"kernel": "kernel", "gpu_memcpy": "memcpy", "memcpy": "memcpy", "gpu_memset": "memset", "memset": "memset"}


def _ns(value) -> int:
    """A Kineto time (µs, as written) in integer ns, rounded half away from zero as the decoder does."""
    return int((Decimal(str(value)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def raw_activity(path: Path, launched: bool = True) -> list[dict]:
    """Every device execution (kernel, memcpy, memset) with its launch: the earliest runtime call of its
    correlation id (its start and duration), in absolute ns; launched=False keeps those with none too."""
    work = _raw_work(Path(path))
    return work if not launched else [w for w in work if w["launch"] is not None]


@functools.cache
def _raw_work(path: Path) -> list[dict]:
    """raw_activity's every execution, read once per trace for the tests that compare against it (never
    changed by them)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc  # a JSON list: the pre-Kineto format
    launches: dict[int, tuple[int, int]] = {}
    work = []
    for e in events:
        if e.get("ph") != "X" or "ts" not in e:
            continue
        cat, args = str(e.get("cat", "")).lower(), e.get("args") or {}
        corr = args.get("correlation")
        if cat in RUNTIME and (corr is None or int(corr) == 0):
            continue
        ts, dur = _ns(e["ts"]), max(_ns(e.get("dur", 0)), 0)
        if cat in RUNTIME:
            if int(corr) not in launches or ts < launches[int(corr)][0]:
                launches[int(corr)] = (ts, dur)
        elif cat in DEVICE:
            device = args.get("device", e.get("pid"))
            stream = str(args.get("stream"))
            work.append(
                {"kind": DEVICE[cat], "name": e.get("name", ""), "device": int(device), "stream": stream,
                 "ts": ts, "dur": dur, "corr": None if corr is None else int(corr)}
            )  # fmt: skip
    for w in work:  # work queued before the capture began has no launch
        w["launch"], w["call"] = launches.get(w["corr"], (None, None))
    return work


def _timeline(profile, rank):
    """The profile's trace ingested again (the window and steps the analyses are defined on), absolute ns: the
    analyses themselves read the launches section kept with the profile."""
    return _ingested_timeline(profile._timelines.sources[rank], profile.doc.get("kind"))


@functools.cache
def _ingested_timeline(source, kind):
    """_timeline's ingest, once per trace and kind for the tests that compare against it."""
    from libreyolo_profile.readers.launches import trace_timeline

    con = trace_timeline(source, kind)
    try:
        origin = con.execute("SELECT origin_ns FROM trace_origin").fetchone()[0]
        start, end = con.execute("SELECT start_ns, end_ns FROM measurement_window").fetchone()
        steps = con.execute("SELECT start_ns, host_end_ns FROM step_ranges ORDER BY start_ns").fetchall()
    finally:
        con.close()
    return origin, origin + start, origin + end, [(origin + s, origin + e) for s, e in steps]


# --- the breakdowns over the profile's tables -------------------------------------------------------------


@pytest.mark.parametrize("path", SMALL, ids=trace_id)
def test_temporal_and_idle_breakdown_add_up_to_the_blame(opened, path):
    p = opened(path)
    steps = _rows(p.temporal_breakdown(per_step=True))
    blame = _rows(p.table("blame"))
    assert steps, "no steps"
    for row in steps:
        mine = [b for b in blame if b["step"] == row["step"] and b["rank"] == row["rank"]]
        assert row["step_ms"] == pytest.approx(sum(b["ns"] for b in mine) / 1e6, abs=1e-9)
        assert row["compute_ms"] + row["non_compute_ms"] + row["idle_ms"] == pytest.approx(row["step_ms"], abs=1e-9)
        if p.doc["device_type"] == "gpu":  # the device idle: every host-side cause, nothing else
            host = sum(b["ns"] for b in mine if b["side"] == "host") / 1e6
            assert row["idle_ms"] == pytest.approx(host, abs=1e-9)
    (total,) = _rows(p.temporal_breakdown())
    assert total["step_ms"] == pytest.approx(p.doc["metrics"]["blame_step_ms"], rel=1e-9)
    assert total["compute_pct"] + total["non_compute_pct"] + total["idle_pct"] == pytest.approx(100)
    idle = _rows(p.idle_breakdown())
    assert sum(r["idle_ms"] for r in idle) == pytest.approx(total["idle_ms"], abs=1e-9)
    if idle:
        assert sum(r["idle_share_pct"] for r in idle) == pytest.approx(100)
        assert all(r["meaning"] for r in idle)
    if p.doc["device_type"] == "gpu":  # the blame's own shares, as summary prints them
        shares = p.blame["total"]
        assert total["idle_pct"] == pytest.approx(sum(v for c, v in shares.items() if c in {r["cause"] for r in idle}))


@pytest.mark.parametrize("path", SMALL, ids=trace_id)
def test_kernel_breakdown_adds_up_to_the_kernels_table(opened, path):
    p = opened(path)
    kernels = _rows(p.table("kernels"))
    for top in (1, 3, None):
        rows = _rows(p.kernel_breakdown(top=top))
        assert sum(r["total_ms"] for r in rows) == pytest.approx(sum(k["total_ms"] for k in kernels), abs=1e-9)
        assert sum(r["kernels"] for r in rows) == len({(k["category"], k["name"]) for k in kernels})
        for category in {r["category"] for r in rows}:
            mine = [r for r in rows if r["category"] == category]
            named = [r for r in mine if not re.fullmatch(r"\(\d+ other kernels\)", r["name"])]
            assert top is None or len(named) <= top
            assert len(mine) - len(named) <= 1
        if rows:
            assert sum(r["share_pct"] for r in rows) == pytest.approx(100)
    with pytest.raises(Exception, match="top must be at least 1"):
        p.kernel_breakdown(top=0)


# --- launches and queues, against the raw events ------------------------------------------------------------


def _quantile(values: list[int], q: float) -> float:
    """Linear interpolation between the closest ranks (DuckDB's quantile_cont, numpy's default)."""
    ordered = sorted(values)
    at = q * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


@pytest.mark.parametrize("path", SMALL, ids=trace_id)
def test_launch_outliers_match_the_raw_events(opened, path):
    p = opened(path)
    rank = p.doc.get("rank")
    work = raw_activity(path)
    if not [w for w in work if w["kind"] == "kernel"]:
        assert _rows(p.launch_outliers()) == []
        return
    origin, _start, _end, steps = _timeline(p, rank)
    # kernels launched inside a measured step (its start to its host end)
    inside = [w for w in work if w["kind"] == "kernel" and any(s <= w["launch"] < e for s, e in steps)]
    durations = defaultdict(list)
    for w in inside:
        durations[w["name"]].append(w["dur"])
    delay_cut, call_cut = 20.0, 10.0  # low cutoffs, so every trace has some of each
    expected = Counter()  # a multiset: two executions of one kernel can agree in every field
    for w in inside:
        d = durations[w["name"]]
        q1, med, q3 = _quantile(d, 0.25), _quantile(d, 0.5), _quantile(d, 0.75)
        flags = []
        if w["ts"] - w["launch"] > delay_cut * 1000:
            flags.append("launch_delay")
        if w["call"] > call_cut * 1000:
            flags.append("slow_launch")
        if w["dur"] < w["call"]:
            flags.append("short_kernel")
        if len(d) >= 4 and w["dur"] > q3 + 3 * (q3 - q1) and w["dur"] > 2 * med:
            flags.append("long_kernel")
        if flags:
            expected[(w["name"], w["stream"], w["ts"] - w["launch"], w["dur"], tuple(flags))] += 1
    got = _rows(p.launch_outliers(delay_cutoff_us=delay_cut, call_cutoff_us=call_cut))
    mine = Counter((r["name"], str(r["stream"]), round(r["delay_us"] * 1000), round(r["duration_us"] * 1000),
                    tuple(r["outliers"])) for r in got)  # fmt: skip
    assert mine == expected
    assert [r["delay_us"] for r in got] == sorted((r["delay_us"] for r in got), reverse=True)
    stats = _rows(p.launch_outliers(delay_cutoff_us=delay_cut, call_cutoff_us=call_cut, stats=True))
    assert sum(s["kernels"] for s in stats) == len(inside)
    assert sum(s["launch_delay"] for s in stats) == sum(n for e, n in expected.items() if "launch_delay" in e[4])


@pytest.mark.parametrize("path", SMALL, ids=trace_id)
def test_queue_length_matches_the_raw_events(opened, path):
    p = opened(path)
    rank = p.doc.get("rank")
    work = raw_activity(path)
    if not work:
        assert _rows(p.queue_length()) == []
        return
    origin, start, end, _steps = _timeline(p, rank)
    changes: dict = defaultdict(lambda: defaultdict(int))
    for w in work:  # +1 at the launch call's start, -1 at the execution's end
        key = (w["device"], w["stream"])
        changes[key][w["launch"]] += 1
        changes[key][max(w["ts"] + w["dur"], w["launch"])] -= 1
    expected = {}
    for key, by_ts in changes.items():
        level, points = 0, []
        for ts in sorted(by_ts):
            level += by_ts[ts]
            points.append((ts - start, level))
        expected[key] = points
    got = defaultdict(list)
    for r in _rows(p.queue_length(timeline=True)):
        got[(r["device"], str(r["stream"]))].append((round(r["ts_ms"] * 1e6), r["queued"]))
    assert dict(got) == expected
    summary = {(r["device"], str(r["stream"])): r for r in _rows(p.queue_length())}
    for key, points in expected.items():
        # the time-weighted mean over the window, from the levels; the deepest level held inside it
        weighted, deepest = 0, None
        for (ts, level), (nxt, _) in zip(points, [*points[1:], (None, 0)], strict=True):
            s, e = max(ts, 0), min(end - start if nxt is None else nxt, end - start)
            if e > s:
                weighted += level * (e - s)
                deepest = level if deepest is None else max(deepest, level)
        if deepest is None:
            assert key not in summary
            continue
        assert summary[key]["max_queued"] == deepest
        assert summary[key]["mean_queued"] == pytest.approx(weighted / (end - start), rel=1e-9)


# --- comm/compute overlap, per rank of a job ------------------------------------------------------------------


def _union(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for s, e in sorted(i for i in intervals if i[1] > i[0]):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [(s, e) for s, e in merged]


def _length(intervals) -> int:
    return sum(e - s for s, e in intervals)


def _intersection(a, b) -> int:
    return sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)


COMM = re.compile(r"(?i)nccl|rccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|sendrecv")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    import libreyolo_profile as lp

    folders = job_folders()
    if not folders:
        pytest.skip("no multi-rank job in the shared traces")
    return lp.import_job(folders[0], tmp_path_factory.mktemp("job-project"))


def test_overlap_per_rank_matches_the_raw_events_and_the_ranks_table(job):
    rows = _rows(job.overlap())
    ranks = {r["rank"]: r for r in _rows(job.table("ranks"))}
    assert {r["rank"] for r in rows} == set(ranks) == {int(k) for k in job.doc["job"]["traces"]}
    for row in rows:
        path = Path(job.doc["job"]["traces"][str(row["rank"])])
        _origin, start, end, _steps = _timeline(job, row["rank"])
        kernels = [
            (w["name"], max(w["ts"], start), min(w["ts"] + w["dur"], end))
            for w in raw_activity(path, launched=False)
            if w["kind"] == "kernel" and w["device"] == row["device"] and w["ts"] < end and w["ts"] + w["dur"] > start
        ]
        comm = _union([(s, e) for n, s, e in kernels if COMM.search(n)])
        compute = _union([(s, e) for n, s, e in kernels if not COMM.search(n)])
        steps = row["steps"]
        assert row["comm_ms"] == pytest.approx(_length(comm) / 1e6 / steps, abs=1e-9)
        assert row["compute_ms"] == pytest.approx(_length(compute) / 1e6 / steps, abs=1e-9)
        assert row["overlapped_ms"] == pytest.approx(_intersection(comm, compute) / 1e6 / steps, abs=1e-9)
        assert row["overlap_pct"] == pytest.approx(100 * _intersection(comm, compute) / _length(comm))
        # what no compute hid is the blame's communication, as `ranks` prints it
        assert row["exposed_comm_ms"] == pytest.approx(ranks[row["rank"]]["exposed_comm_ms"], abs=1e-3)
    (first, *_) = rows
    assert first["null_reason"] is None


def test_job_breakdown_agrees_with_its_headline(job):
    (total,) = _rows(job.temporal_breakdown())
    assert total["rank"] == job.doc["job"]["metrics_rank"]
    assert total["step_ms"] == pytest.approx(job.doc["metrics"]["blame_step_ms"], rel=1e-9)


def test_overlap_without_collectives_is_null_with_a_reason(opened):
    single = [p for p in SMALL if "multirank" not in p.parts]
    for path in single:
        rows = _rows(opened(path).overlap())
        for row in rows:
            if row["comm_ms"] == 0:
                assert row["overlap_pct"] is None and row["null_reason"]
                return
    pytest.skip("every small trace runs collectives")


# --- diffs, import_job, folder of ranks ---------------------------------------------------------------------


def test_diff_is_compare_items(opened):
    from conftest import cli_json

    gpu = [p for p in SMALL if "multirank" not in p.parts][:2]
    before, after = (opened(p) for p in (gpu[0], gpu[-1]))
    for what in ("kernels", "ops"):
        rows = _rows(before.diff(after, what))
        doc = cli_json("compare", str(before.path), str(after.path), f"--{what}")
        assert [r["name"] for r in rows] == [r["name"] for r in doc[what]["rows"]]
        assert [r["delta_ms"] for r in rows] == pytest.approx([r["delta_ms"] for r in doc[what]["rows"]], nan_ok=True)
    with pytest.raises(Exception, match="unknown diff"):
        before.diff(after, "modules")


def test_a_folder_of_rank_traces_points_to_import_job():
    import libreyolo_profile as lp

    folders = job_folders()
    if not folders:
        pytest.skip("no multi-rank job in the shared traces")
    with pytest.raises(lp.UsageError, match=r"import --job .*lp\.import_job"):
        lp.open(folders[0])


def test_import_job_refuses_nothing_and_object_storage(tmp_path):
    import libreyolo_profile as lp

    with pytest.raises(lp.UsageError, match="rank traces"):
        lp.import_job([], tmp_path)
    with pytest.raises(lp.UsageError, match="object storage"):
        lp.import_job(TRACES, "s3://bucket/prefix")
