"""A two-process torch.distributed (gloo, CPU) DDP training run, profiled on every rank: the rank traces a
job import reads (tests/test_job.py). `python tests/ddp_gloo_job.py OUT LATE_RANK LATE_MS PORT` writes
OUT/rank<r>.json; rank LATE_RANK sleeps LATE_MS before each step, so the other waits for it in DDP's
gradient all_reduce."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

STEPS = 3


def run_job(out: Path, late_rank: int, late_ms: float) -> None:
    """Run this script in a process of its own (torch stays out of the caller) on a free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    run = subprocess.run(
        [sys.executable, __file__, str(out), str(late_rank), str(late_ms), port],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]


def worker(rank: int, world: int, out: str, late_rank: int, late_ms: float, port: str) -> None:
    import torch
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile, schedule

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    model = torch.nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))

    def step() -> None:
        if rank == late_rank:
            time.sleep(late_ms / 1000)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    step()  # warm-up: DDP's first step builds its buckets
    path = os.path.join(out, f"rank{rank}.json")
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=0, warmup=1, active=STEPS, repeat=1),
        on_trace_ready=lambda p: p.export_chrome_trace(path),
    ) as prof:
        for _ in range(STEPS + 1):
            step()
            prof.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    import torch.multiprocessing as mp

    out, late_rank, late_ms, port = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    os.makedirs(out, exist_ok=True)
    # forked, not spawned: torch (imported above) is imported once for both ranks, not once more in each
    mp.start_processes(worker, args=(2, out, late_rank, late_ms, port), nprocs=2, start_method="fork")
