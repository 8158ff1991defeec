"""`run --device cpu --nproc 2`: LibreYOLO's own DDP training (its trainer's DistributedSampler, per-rank
batch and DistributedDataParallel, gloo on the CPU), each rank measured in its own process and read as
one job profile; and the multi-rank flags it refuses with one line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest
from conftest import REPO, cli_json, run_cli

FIXTURE_YAML = REPO / "fixtures" / "synth3.yaml"
JOB = ["--device", "cpu", "--nproc", "2", "--batch", "4", "--imgsz", "64", "--workers", "0"]
# two profiled steps: "every step" already means more than one, and each step is ~35,000 ops a rank to record,
# replay unprofiled and analyse (the whole job ~30 % dearer with 3)
STEPS = 2
MEASURED = ["--steps", str(STEPS), "--warmup", "1", "--no-report"]


def table(profile_dir: Path, name: str) -> list[dict]:
    cursor = duckdb.execute(f"SELECT * FROM read_parquet('{profile_dir / name}.parquet')")
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def raw_steps(trace: Path) -> tuple[int, int, int]:
    """(the trace's rank, its ProfilerStep ranges, the all_reduce calls that start inside them) from the
    raw events alone."""
    doc = json.loads(trace.read_text())
    spans = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in spans if e["name"].startswith("ProfilerStep#")]
    reduces = [e["ts"] for e in spans if e["name"] == "c10d::allreduce_"]
    inside = sum(1 for ts in reduces if any(start <= ts < end for start, end in steps))
    return doc["distributedInfo"]["rank"], len(steps), inside


@pytest.mark.slow
def test_run_with_two_cpu_ranks_writes_one_job_profile(tmp_path):
    # --threads 1: each rank held to a CPU of its own (measure/common.py), rank 0 to the first
    run = run_cli("run", str(FIXTURE_YAML), *JOB, *MEASURED, "--threads", "1", "--project", str(tmp_path / "p"))
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    profile = tmp_path / "p" / "train"
    doc = json.loads((profile / "profile.json").read_text())
    s = doc["settings"]
    assert (s["world_size"], s["backend"], s["batch"], s["global_batch"]) == (2, "gloo", 2, 4)
    assert s["config_overrides"] == {"sync_bn": False} and "rank" not in s
    assert doc["world_size"] == 2 and doc["job"]["ranks"] == [0, 1]
    assert doc["job"]["rank_source"] == "distributedInfo"  # the profiler recorded each rank's process group
    assert doc["timing"]["headline"] == "unprofiled"  # each rank replayed its steps without the profiler
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) > 1:
        assert s["cpus_pinned"] == [allowed[0]] and s["torch_threads"] == 1  # the job's settings are rank 0's
    # every per-rank table holds both ranks
    for name in ("steps", "phases", "ops", "blame", "modules", "ranks"):
        assert {r["rank"] for r in table(profile, name)} == {0, 1}, name
    # the kept trace is the metrics rank's, and the tables agree with its raw events
    rank, steps, reduces = raw_steps(profile / "profile_trace.json")
    assert rank == doc["job"]["metrics_rank"] and doc["job"]["traces"] == {str(rank): "profile_trace.json"}
    assert steps == STEPS and reduces >= STEPS  # DDP all-reduces the gradients in every step
    own = [r for r in table(profile, "steps") if r["rank"] == rank]
    assert len(own) == STEPS
    reduced = [c for c in table(profile, "collectives") if c["collective"] == "allreduce" and c["rank"] == rank]
    assert len(reduced) == reduces and all(c["matched_ranks"] == 2 for c in reduced)
    # the readers take it as any job
    ranks = cli_json("ranks", str(profile))
    assert [r["rank"] for r in ranks["ranks"]] == [0, 1]
    assert all(r["compute_ms"] is None for r in ranks["ranks"])  # no device on a CPU rank: nothing to split
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["train"]  # no workspace left


@pytest.mark.parametrize(
    "args, message",
    [
        (["--device", "0,1"], "CUDA is not available"),
        (["--device", "0,0"], "a GPU listed twice"),
        (["--device", "cpu", "--nproc", "2", "--repeat", "2"], "a job is measured once"),
        (["--device", "cpu", "--nproc", "2", "--batch", "-1"], "global batch"),
        (["--device", "cpu", "--nproc", "4", "--batch", "2"], "at least one image per step"),
        (["--device", "0", "--nproc", "2"], "--device cpu"),
        (["--device", "cpu", "--nproc", "0"], "--nproc"),
    ],
)
def test_multi_rank_flags_it_cannot_honour_are_one_line(tmp_path, args, message):
    result = run_cli("run", str(FIXTURE_YAML), *args, "--project", str(tmp_path / "p"))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "p" / "train").exists()
