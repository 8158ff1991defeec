"""`import --job` and `ranks`: a job of rank traces as one profile, against an independent plain-Python
matcher over the raw DLRM events, hand-derived synthetic 2- and 4-rank jobs, and hostile sets."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import duckdb
import pytest
from conftest import cli_json, require_traces, run_cli
from ddp_gloo_job import run_job
from synthetic_traces import annotation, kernel, runtime, write_trace

GEMM = "ampere_sgemm_128x64_nn"
ALLREDUCE = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
ALLGATHER = "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"


def table(profile_dir: Path, name: str) -> list[dict]:
    cursor = duckdb.execute(f"SELECT * FROM read_parquet('{profile_dir / name}.parquet')")
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


# ---------------------------------------------------------------------------------------------
# the DLRM job: 8 ranks of one step, checked against plain Python over the raw events


def raw_rank(path: Path) -> dict:
    """One rank from its raw events alone: its step, its collectives and its exposed communication (the
    collectives' time on its device that no other kernel overlapped), all in µs on its own clock."""
    doc = json.load(gzip.open(path))
    events = doc["traceEvents"]
    step = next(e for e in events if e.get("name", "").startswith("ProfilerStep#"))
    kernels = [e for e in events if e.get("cat") == "kernel"]
    comm = sorted(((e["ts"], e["ts"] + e["dur"]) for e in kernels if e["name"].startswith("nccl")))
    other = [(e["ts"], e["ts"] + e["dur"]) for e in kernels if not e["name"].startswith("nccl")]
    return {
        "rank": doc["distributedInfo"]["rank"],
        "step": (step["ts"], step["ts"] + step["dur"]),
        "collectives": comm,
        "exposed_us": sum(_uncovered(s, e, other) for s, e in _union(comm)),
    }


def _union(spans):
    merged = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return merged


def _uncovered(s, e, covers) -> float:
    inside = _union([(max(s, cs), min(e, ce)) for cs, ce in covers if cs < e and ce > s])
    return (e - s) - sum(ce - cs for cs, ce in inside)


def reference_job(directory: Path) -> dict:
    """Match the k-th collective of every rank (one stream each), the last arrival, the waits."""
    ranks = {r["rank"]: r for r in map(raw_rank, sorted(directory.glob("*.json.gz")))}
    count = len(next(iter(ranks.values()))["collectives"])
    last_at, waits, totals = {}, {r: 0.0 for r in ranks}, {r: 0.0 for r in ranks}
    caused = {r: 0.0 for r in ranks}
    for k in range(count):
        starts = {r: ranks[r]["collectives"][k][0] for r in ranks}
        last = max(starts, key=starts.get)
        last_at[last] = last_at.get(last, 0) + 1
        for r in ranks:
            s, e = ranks[r]["collectives"][k]
            wait = min(max(starts[last] - s, 0), e - s)
            waits[r] += wait
            totals[r] += e - s
            if r != last:
                caused[last] += wait
    straggler = max(caused, key=caused.get)
    others_total = sum(t for r, t in totals.items() if r != straggler)
    first = min(r["step"][0] for r in ranks.values())
    return {
        "ranks": ranks,
        "last_at": last_at,
        "waits_us": waits,
        "straggler": straggler,
        "waited_on_pct": 100 * caused[straggler] / others_total,
        "entered_us": {r: v["step"][0] - first for r, v in ranks.items()},
    }


@pytest.fixture(scope="module")
def dlrm(tmp_path_factory):
    directory = require_traces() / "multirank" / "dlrm_8x_v100"
    project = tmp_path_factory.mktemp("dlrm")
    result = run_cli("import", "--job", str(directory), "--project", str(project), "--json", timeout=600)
    assert result.returncode == 0, result.stderr
    return directory, Path(json.loads(result.stdout)["directory"])


def test_dlrm_job_matches_the_raw_events(dlrm):
    directory, profile = dlrm
    ref = reference_job(directory)
    rows = {r["rank"]: r for r in table(profile, "ranks")}
    assert sorted(rows) == list(range(8))
    for rank, raw in ref["ranks"].items():
        row = rows[rank]
        assert row["step_ms"] == pytest.approx((raw["step"][1] - raw["step"][0]) / 1000, abs=1e-3)
        assert row["exposed_comm_ms"] == pytest.approx(raw["exposed_us"] / 1000, abs=2e-3)
        assert row["collective_wait_ms"] == pytest.approx(ref["waits_us"][rank] / 1000, abs=2e-3)
        assert row["entered_ms"] == pytest.approx(ref["entered_us"][rank] / 1000, abs=2e-3)
        assert row["last_arrivals"] == ref["last_at"].get(rank, 0)
        assert row["clock_offset_ms"] == 0  # the ends agree: nothing is shifted without evidence
    assert [r for r, row in rows.items() if row["straggler"]] == [ref["straggler"]] == [7]
    assert rows[7]["waited_on_pct"] == pytest.approx(ref["waited_on_pct"], abs=0.05)
    # the figures, read from the same raw events
    assert min(r["step_ms"] for r in rows.values()) == pytest.approx(12.5, abs=0.05)
    assert max(r["step_ms"] for r in rows.values()) == pytest.approx(19.9, abs=0.05)
    assert rows[7]["exposed_comm_pct"] == pytest.approx(12.6, abs=0.05)
    assert rows[1]["exposed_comm_pct"] == pytest.approx(55.6, abs=0.05)


def test_dlrm_every_table_carries_every_rank(dlrm):
    _, profile = dlrm
    for name in ("steps", "kernels", "ops", "phases", "blame", "roofline", "collectives", "ranks"):
        assert {r["rank"] for r in table(profile, name)} == set(range(8)), name
    doc = json.loads((profile / "profile.json").read_text())
    assert doc["world_size"] == 8 and doc["job"]["rank_source"] == "distributedInfo"
    assert doc["verdict"]["bound"] == "straggler" and doc["verdict"]["evidence"]["arises_in"] == "before the step"


def test_ranks_reader_names_the_straggler(dlrm):
    _, profile = dlrm
    out = cli_json("ranks", str(profile))
    assert out["straggler"]["rank"] == 7 and len(out["ranks"]) == 8
    text = run_cli("ranks", str(profile), env={"COLUMNS": "200"})
    assert text.returncode == 0 and "straggler: rank 7" in text.stdout
    summary = cli_json("summary", str(profile))
    assert summary["job"]["straggler"]["rank"] == 7
    query = run_cli("query", "SELECT count(DISTINCT rank) FROM kernels", str(profile.parent), "--json")
    assert query.returncode == 0 and "8" in query.stdout


# ---------------------------------------------------------------------------------------------
# synthetic jobs: every wait derived by hand


def rank_trace(path: Path, rank: int, world: int, step_at, collectives, shift_us=0, backend="nccl") -> Path:
    """One rank: a step from `step_at` to 1000 µs, a 100 µs GEMM launched at its start, then its collectives
    [(kernel name, start µs, end µs)], each launched 20 µs before it starts; every time shifted by shift_us
    (the rank's clock)."""
    t = shift_us
    events = [annotation("ProfilerStep#1", t + step_at, 1000 - step_at)]
    events += [runtime("cudaLaunchKernel", t + step_at + 10, 5, 1), kernel(GEMM, t + step_at + 20, 100, 1)]
    for i, (name, start, end) in enumerate(collectives, 2):
        events += [runtime("cudaLaunchKernel", t + start - 20, 5, i), kernel(name, t + start, end - start, i, stream=9)]
    write_trace(path, events)
    text = path.read_text()
    info = {"backend": backend, "rank": rank, "world_size": world}
    path.write_text(
        text.replace('{"schemaVersion": 1,', '{"schemaVersion": 1, "distributedInfo": ' + json.dumps(info) + ",", 1)
    )
    return path


def two_ranks(tmp_path: Path) -> list[Path]:
    # rank 0 enters at 0 and reaches the all_reduce at 150; rank 1 enters 300 µs later and reaches it at 450;
    # both finish it at 600. Rank 0 waits 150→450 = 300 µs, then transfers 150 µs; rank 1 waits 0.
    return [
        rank_trace(tmp_path / "a.json", 0, 2, 0, [(ALLREDUCE, 150, 600)]),
        rank_trace(tmp_path / "b.json", 1, 2, 300, [(ALLREDUCE, 450, 600)]),
    ]


def aligned_ranks(tmp_path: Path) -> list[Path]:
    # both arrive together: no wait
    return [
        rank_trace(tmp_path / "c.json", 0, 2, 0, [(ALLREDUCE, 150, 600)]),
        rank_trace(tmp_path / "d.json", 1, 2, 0, [(ALLREDUCE, 150, 600)]),
    ]


# each job imported once for the tests that read it (the hand-derived waits, the verdict, compare)
@pytest.fixture(scope="module")
def late_job(tmp_path_factory) -> Path:
    """two_ranks imported as one job: its profile directory."""
    base = tmp_path_factory.mktemp("late-job")
    out = cli_json("import", "--job", *map(str, two_ranks(base)), "--project", str(base / "p"))
    return Path(out["directory"])


@pytest.fixture(scope="module")
def aligned_job(tmp_path_factory) -> Path:
    """aligned_ranks imported as one job: its profile directory."""
    base = tmp_path_factory.mktemp("aligned-job")
    out = cli_json("import", "--job", *map(str, aligned_ranks(base)), "--project", str(base / "p"))
    return Path(out["directory"])


def test_two_ranks_hand_derived(late_job):
    profile = late_job
    calls = {r["rank"]: r for r in table(profile, "collectives")}
    assert calls[0]["wait_ms"] == pytest.approx(0.300) and calls[0]["transfer_ms"] == pytest.approx(0.150)
    assert calls[1]["wait_ms"] == 0 and calls[1]["transfer_ms"] == pytest.approx(0.150)
    assert calls[0]["skew_ms"] == pytest.approx(0.300) and calls[0]["last_rank"] == 1
    # rank 0's device does nothing else while it waits: all 300 µs of the wait are exposed
    assert calls[0]["exposed_wait_ms"] == pytest.approx(0.300)
    ranks = {r["rank"]: r for r in table(profile, "ranks")}
    # the wait for rank 1 is 300 of rank 0's 450 µs in the collective: 66.7%
    assert ranks[1]["straggler"] and ranks[1]["waited_on_pct"] == pytest.approx(100 * 300 / 450)
    assert ranks[1]["entered_ms"] == pytest.approx(0.300)
    doc = json.loads((profile / "profile.json").read_text())
    assert doc["verdict"]["bound"] == "straggler"
    assert doc["verdict"]["evidence"]["arises_in"] == "before the step"  # all 300 µs were there at the start


def test_four_ranks_shifted_clock_and_a_missing_collective(tmp_path):
    # all_reduce: ranks 0, 1, 3 arrive at 150, rank 2 (entering at 200) at 350; all end at 500.
    # all_gather: rank 1's trace misses it; ranks 0, 2, 3 arrive at 600, 650, 610 and end at 700.
    # Rank 3's clock runs 5000 µs ahead: its ends lie 5000 µs past the others' at both: shifted by 5000.
    spec = {
        0: (0, [(ALLREDUCE, 150, 500), (ALLGATHER, 600, 700)], 0),
        1: (0, [(ALLREDUCE, 150, 500)], 0),
        2: (200, [(ALLREDUCE, 350, 500), (ALLGATHER, 650, 700)], 0),
        3: (0, [(ALLREDUCE, 150, 500), (ALLGATHER, 610, 700)], 5000),
    }
    traces = [rank_trace(tmp_path / f"r{r}.json", r, 4, s, c, shift) for r, (s, c, shift) in spec.items()]
    out = cli_json("import", "--job", *map(str, traces), "--project", str(tmp_path / "p"))
    profile = Path(out["directory"])
    ranks = {r["rank"]: r for r in table(profile, "ranks")}
    assert ranks[3]["clock_offset_ms"] == pytest.approx(5.0) and ranks[0]["clock_offset_ms"] == 0
    assert "aligned on the median end of 2" in ranks[3]["clock_method"]
    calls = {(r["collective"], r["rank"]): r for r in table(profile, "collectives")}
    assert calls[("allgather", 0)]["matched_ranks"] == 3 and ("allgather", 1) not in calls
    for r in (0, 1, 3):  # waited 150 → 350 for rank 2, then transferred 350 → 500
        assert calls[("allreduce", r)]["wait_ms"] == pytest.approx(0.200)
        assert calls[("allreduce", r)]["transfer_ms"] == pytest.approx(0.150)
    assert calls[("allgather", 0)]["wait_ms"] == pytest.approx(0.050)
    assert calls[("allgather", 3)]["wait_ms"] == pytest.approx(0.040)
    assert calls[("allgather", 2)]["last_rank"] == 2
    # others' wait for rank 2: 3 × 200 + 50 + 40 = 690 µs of their 3 × 350 + 100 + 90 = 1240 µs
    assert ranks[2]["straggler"] and ranks[2]["waited_on_pct"] == pytest.approx(100 * 690 / 1240)
    assert ranks[2]["last_arrivals"] == 2 and ranks[2]["entered_ms"] == pytest.approx(0.200)


def test_no_straggler_reads_like_one_rank(aligned_job):
    # both arrive together: no wait, so the job's verdict is its slowest rank's own
    doc = json.loads((aligned_job / "profile.json").read_text())
    assert doc["verdict"]["bound"] != "straggler" and doc["job"]["straggler"] is None
    assert not any(r["straggler"] for r in table(aligned_job, "ranks"))


# ---------------------------------------------------------------------------------------------
# hostile sets: one line, exit 2, nothing written


def _refused(tmp_path, traces, words):
    project = tmp_path / "p"
    result = run_cli("import", "--job", *map(str, traces), "--project", str(project))
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr, result.stderr
    assert not project.exists() or not any(project.iterdir())


def test_a_rank_twice_is_refused(tmp_path):
    a, _ = two_ranks(tmp_path)
    twin = rank_trace(tmp_path / "c.json", 0, 2, 0, [(ALLREDUCE, 150, 600)])
    _refused(tmp_path, [a, twin], "rank 0 appears twice")


def test_a_missing_rank_is_refused(tmp_path):
    traces = [rank_trace(tmp_path / f"r{r}.json", r, 3, 0, [(ALLREDUCE, 150, 600)]) for r in (0, 2)]
    _refused(tmp_path, traces, "rank 1 missing")


def test_mixed_world_sizes_are_refused(tmp_path):
    a = rank_trace(tmp_path / "a.json", 0, 2, 0, [(ALLREDUCE, 150, 600)])
    b = rank_trace(tmp_path / "b.json", 1, 4, 0, [(ALLREDUCE, 150, 600)])
    _refused(tmp_path, [a, b], "mixed world sizes")


def test_different_jobs_are_refused(tmp_path):
    a = rank_trace(tmp_path / "a.json", 0, 2, 0, [(ALLREDUCE, 150, 600)])
    b = rank_trace(tmp_path / "b.json", 1, 2, 0, [(ALLREDUCE, 150, 600)], backend="gloo")
    _refused(tmp_path, [a, b], "different jobs")
    # the same job's shape, but rank 1 recorded an hour later: its steps share no time with rank 0's
    c = rank_trace(tmp_path / "c.json", 1, 2, 0, [(ALLREDUCE, 150, 600)], shift_us=3_600_000_000)
    _refused(tmp_path, [a, c], "different jobs")


def test_a_rank_that_records_no_distributed_info_is_no_other_job(tmp_path):
    """Unknown is no difference: rank 1's trace without distributedInfo was refused as `differ in backend
    (nccl vs None)`; its rank comes from the file names then, as for every rank."""
    a = rank_trace(tmp_path / "job_rank0.json", 0, 2, 0, [(ALLREDUCE, 150, 600)])
    b = rank_trace(tmp_path / "job_rank1.json", 1, 2, 300, [(ALLREDUCE, 450, 600)])
    b.write_text(json.dumps({k: v for k, v in json.loads(b.read_text()).items() if k != "distributedInfo"}))
    out = cli_json("import", "--job", str(a), str(b), "--project", str(tmp_path / "p"))
    assert out["job"]["rank_source"] == "file name" and out["job"]["traces"]["1"].endswith("job_rank1.json")


def test_ranks_from_file_names_then_order(tmp_path):
    def events(at):
        return [annotation("ProfilerStep#1", 0, 1000), runtime("cudaLaunchKernel", 10, 5, 1), kernel(GEMM, at, 100, 1)]

    named = [write_trace(tmp_path / f"job_rank{r}.json", events(20)) for r in (1, 0)]
    out = cli_json("import", "--job", *map(str, named), "--project", str(tmp_path / "p"))
    assert out["job"]["rank_source"] == "file name" and out["job"]["traces"]["0"].endswith("job_rank0.json")
    plain = [write_trace(tmp_path / f"{n}.json", events(20)) for n in ("x", "y")]
    out = cli_json("import", "--job", *map(str, plain), "--project", str(tmp_path / "q"))
    assert out["job"]["rank_source"] == "order given" and out["job"]["traces"]["0"].endswith("x.json")


def test_steps_match_by_their_profiler_step_number(tmp_path):
    # rank 0's window holds ProfilerStep#5 and #6, rank 1's only #6: its first step is rank 0's second.
    # In #6 rank 0 arrives at 1150 and rank 1 at 1250, both end at 1400: rank 0 waits 100 µs.
    def rank(path, number, steps):
        events = []
        for i, (mark, at) in enumerate(steps):
            events += [
                annotation(f"ProfilerStep#{mark}", at, 1000),
                runtime("cudaLaunchKernel", at + 10, 5, 10 * i + 1),
            ]
            events += [kernel(GEMM, at + 20, 100, 10 * i + 1)]
        for i, (start, end) in enumerate(number["collectives"]):
            events += [
                runtime("cudaLaunchKernel", start - 20, 5, 100 + i),
                kernel(ALLREDUCE, start, end - start, 100 + i, 9),
            ]
        write_trace(path, events)
        info = json.dumps({"backend": "nccl", "rank": number["rank"], "world_size": 2})
        path.write_text(
            path.read_text().replace('{"schemaVersion": 1,', '{"schemaVersion": 1, "distributedInfo": ' + info + ",", 1)
        )
        return path

    a = rank(tmp_path / "a.json", {"rank": 0, "collectives": [(150, 600), (1150, 1400)]}, [(5, 0), (6, 1000)])
    b = rank(tmp_path / "b.json", {"rank": 1, "collectives": [(1250, 1400)]}, [(6, 1000)])
    out = cli_json("import", "--job", str(a), str(b), "--project", str(tmp_path / "p"))
    calls = {(r["rank"], r["step_mark"]): r for r in table(Path(out["directory"]), "collectives")}
    assert calls[(0, 6)]["step"] == 2 and calls[(1, 6)]["step"] == 1
    assert calls[(0, 6)]["matched_ranks"] == 2 and calls[(0, 6)]["wait_ms"] == pytest.approx(0.100)
    assert calls[(0, 5)]["matched_ranks"] == 1 and calls[(0, 5)]["wait_ms"] is None  # no peer recorded it


def test_a_real_two_process_gloo_job(tmp_path):
    # two real torch.distributed processes (gloo on the CPU) train DDP for 3 profiled steps; rank 1 sleeps
    # 30 ms before each, so rank 0 waits for it in every gradient all_reduce (tests/ddp_gloo_job.py)
    run_job(tmp_path / "ranks", late_rank=1, late_ms=30)
    out = cli_json("import", "--job", str(tmp_path / "ranks"), "--project", str(tmp_path / "p"))
    profile = Path(out["directory"])
    ranks = {r["rank"]: r for r in table(profile, "ranks")}
    calls = table(profile, "collectives")
    assert sorted(ranks) == [0, 1] and out["job"]["rank_source"] == "distributedInfo"
    reduces = [c for c in calls if c["collective"] == "allreduce"]
    assert {c["step_mark"] for c in reduces} == {1, 2, 3} and all(c["matched_ranks"] == 2 for c in reduces)
    # every all_reduce: rank 1 arrives last, and rank 0's wait is about its 30 ms sleep
    assert all(c["last_rank"] == 1 for c in reduces)
    for c in (c for c in reduces if c["rank"] == 0):
        assert 20 < c["wait_ms"] < 60
    assert ranks[1]["straggler"] and not ranks[0]["straggler"]
    assert ranks[0]["collective_wait_ms"] > 20 and ranks[1]["collective_wait_ms"] == 0


def test_recorded_process_groups_sizes_and_kinds_key_the_match(tmp_path):
    # Two groups: rank 0 issues pg 0's collective first, rank 1 pg 1's first (each on the stream of its
    # own order). Matched by the recorded group, pg 0's: arrivals 100 (rank 0) and 300 (rank 1), ends 400;
    # pg 1's: 500 (rank 0) and 150 (rank 1), ends 600. Generic kernel names: the kind comes from
    # "Collective name". Rank 0 waits 200 µs in pg 0's; rank 1 waits 350 µs in pg 1's.
    generic = "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"

    def rank(path, number, calls):
        events = [annotation("ProfilerStep#1", 0, 1000)]
        for i, (pg, start, end, nelems) in enumerate(calls, 1):
            args = {"Process Group Name": pg, "In msg nelems": nelems, "Collective name": "allreduce"}
            events += [runtime("cudaLaunchKernel", start - 20, 5, i), kernel(generic, start, end - start, i, 9)]
            events[-1]["args"].update(args)
        write_trace(path, events)
        info = json.dumps({"backend": "nccl", "rank": number, "world_size": 2})
        path.write_text(
            path.read_text().replace('{"schemaVersion": 1,', '{"schemaVersion": 1, "distributedInfo": ' + info + ",", 1)
        )
        return path

    a = rank(tmp_path / "a.json", 0, [("0", 100, 400, 1024), ("1", 500, 600, 64)])
    b = rank(tmp_path / "b.json", 1, [("1", 150, 600, 64), ("0", 300, 400, 2048)])
    out = cli_json("import", "--job", str(a), str(b), "--project", str(tmp_path / "p"))
    calls = {(r["process_group"], r["rank"]): r for r in table(Path(out["directory"]), "collectives")}
    assert calls[("pg 0", 0)]["wait_ms"] == pytest.approx(0.200) and calls[("pg 0", 0)]["last_rank"] == 1
    assert calls[("pg 1", 1)]["wait_ms"] == pytest.approx(0.350) and calls[("pg 1", 1)]["last_rank"] == 0
    assert calls[("pg 0", 0)]["collective"] == "allreduce" and calls[("pg 0", 0)]["nelems"] == 1024
    assert calls[("pg 0", 0)]["sizes_agree"] is False and calls[("pg 1", 0)]["sizes_agree"] is True


def test_compare_of_two_jobs_compares_the_ranks(late_job, aligned_job):
    # before: rank 1 enters 300 µs late and rank 0 waits 300 µs for it; after: both arrive together
    a, b = str(late_job), str(aligned_job)
    c = cli_json("compare", a, b)["ranks"]
    assert c["straggler"] == {"before": 1, "after": None}
    rows = {r["rank"]: r for r in c["ranks"]}
    assert rows[0]["collective_wait_ms_before"] == pytest.approx(0.300) and rows[0]["collective_wait_ms_after"] == 0
    assert rows[1]["step_ms_delta"] == pytest.approx(0.300)  # rank 1's step now starts with rank 0's
    assert rows[1]["straggler_before"] and not rows[1]["straggler_after"]
    text = run_cli("compare", a, b, env={"COLUMNS": "200"})
    assert text.returncode == 0 and "straggler: rank 1 before, none after" in text.stdout
    # the pull-request comment has the same ranks, rounded as its other figures are
    md = run_cli("compare", a, b, "--markdown").stdout
    assert "| rank | step ms before | step ms after | Δ step ms |" in md, md
    rank1 = next(line for line in md.splitlines() if line.startswith("| 1 |"))
    assert float(rank1.split(" | ")[3]) == pytest.approx(0.300)  # rank 1's Δ step ms
    assert rank1.rstrip(" |").endswith("before") and "straggler: rank 1 before, none after" in md


def test_report_draws_a_lane_per_rank(dlrm, tmp_path):
    _, profile = dlrm
    out = tmp_path / "report.html"
    result = run_cli("report", str(profile), "--out", str(out))
    assert result.returncode == 0, result.stderr
    page = out.read_text()
    lanes = page[page.index('data-chart="ranks"') : page.index("</svg>", page.index('data-chart="ranks"'))]
    assert all(f">rank {r}" in lanes for r in range(8)) and ">rank 7 (straggler)<" in lanes
    # every rank's 8 collectives, each a wait and a transfer box; the 8 matched collectives' skews above
    from libreyolo_profile.readers.report_page import color_for

    assert lanes.count("<g><title>") == 64 and lanes.count(f'fill="{color_for("rank_skew")}"') == 8


@pytest.mark.parametrize(
    "args, words",
    [
        (["import", "--job", "ONE"], "at least two ranks"),
        (["import", "--job", "EMPTY_DIR", "ONE"], "holds no trace files"),
        (["import", "--job", "ONE", "ONE"], "given twice"),
        (["import", "--job", "ONE", "NOWHERE"], "no such file"),
        (["import", "--job", "--jobs", "2", "ONE", "TWO"], "without --jobs"),
        (["ranks", "SINGLE"], "not a job profile"),
    ],
)
def test_job_usage_errors_are_one_line_exit_2(tmp_path, args, words):
    one, two = two_ranks(tmp_path)
    (tmp_path / "empty").mkdir()
    where = {"ONE": one, "TWO": two, "EMPTY_DIR": tmp_path / "empty", "NOWHERE": tmp_path / "nowhere"}
    if "SINGLE" in args:  # a profile of one trace, imported only where the case reads it
        where["SINGLE"] = cli_json("import", str(one), "--project", str(tmp_path / "single"))["directory"]
    result = (
        run_cli(*[str(where.get(a, a)) for a in args], "--project", str(tmp_path / "p"))
        if args[0] == "import"
        else run_cli(*[str(where.get(a, a)) for a in args])
    )
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr, result.stderr
    assert not (tmp_path / "p").exists()
