"""`run --device 0,1` (one rank per GPU, NCCL) and `run --device cpu --nproc N` (N CPU ranks, gloo):
each rank of one DDP job measured in its own process, and one job profile of them all.

LibreYOLO's own `train(device="0,1")` spawns its DDP workers inside train() and gives nothing back to
profile; here the parent starts one `measure/trial_process.py` per rank with the environment a
launcher gives (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). Each rank joins the process
group before LibreYOLO's trainer is built, so the trainer runs its own DDP path as under torchrun:
DistributedSampler, `batch // world_size` images per rank, the model wrapped in
DistributedDataParallel (gradients all-reduced in the backward). Every rank measures the same window
(warmup, steps, the unprofiled replay) and exports its trace; the parent reads the traces as
`import --job` does (store/document/job.py) and publishes one profile in <project>/train.

If one rank fails, the others are stopped at once (they would wait at their next collective for as
long as the backend's timeout), and the failing rank's own one-line error is the command's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from libreyolo_profile.errors import ProfileError, UsageError
from libreyolo_profile.measure import common
from libreyolo_profile.measure.common import MeasuredProfile
from libreyolo_profile.measure.isolated import ERROR, RESULT, SPEC, child_failure, options_json, reserve

LOOPBACK = "127.0.0.1"
JOIN_TIMEOUT_S = 1800  # how long a rank waits at a collective (the join included) for the others


def rank_devices(device: str, nproc: int) -> list[str] | None:
    """The device of each rank (None: one process, the ordinary `run`). `0,1` or `cuda:0,cuda:1`: one
    rank per GPU; `cpu` with --nproc N: N ranks on the CPU. Exit 2 for a list that is not one."""
    raw = str(device).strip().lower().strip("[]")
    if "," not in raw:
        if nproc > 1 and raw != "cpu":
            raise UsageError(
                f"--nproc {nproc} starts CPU ranks (--device cpu); for GPU ranks list the GPUs: --device 0,1"
            )
        return ["cpu"] * nproc if nproc > 1 else None
    parts = listed_gpus(device)
    if nproc not in (1, len(parts)):
        raise UsageError(f"--device {device} makes {len(parts)} ranks; --nproc {nproc} says otherwise")
    _check_gpus([int(p) for p in parts], device)
    return [f"cuda:{p}" for p in parts]


def listed_gpus(device: str) -> list[str]:
    """The GPU indices a `--device 0,1` list names; exit 2 for a list that is not one (before torch is imported:
    measure/preflight.py asks first)."""
    parts = [p.strip().removeprefix("cuda:") for p in str(device).strip().lower().strip("[]").split(",")]
    if not all(p.isdigit() for p in parts):
        raise UsageError(f"--device {device}: a list of GPU indices (0,1) or cuda:N, one per rank")
    if len(set(parts)) != len(parts):
        raise UsageError(f"--device {device}: a GPU listed twice (one rank per GPU)")
    return parts


def _check_gpus(indices: list[int], spec: str) -> None:
    import torch

    if not torch.cuda.is_available():
        raise UsageError(
            f"--device {spec} asks for CUDA, but CUDA is not available here; "
            "use --device cpu --nproc N for CPU ranks (gloo)"
        )
    count = torch.cuda.device_count()
    missing = [i for i in indices if i >= count]
    if missing:
        raise UsageError(f"--device {spec}: only {count} CUDA device(s) visible (0..{count - 1})")


def check_job_options(opts, world: int) -> None:
    """What one measured job cannot do: several trials (each would be a job of its own) or --batch -1
    (a memory probe of one rank's device, made before the ranks exist)."""
    if opts.repeat > 1:
        raise UsageError(f"--repeat {opts.repeat} with {world} ranks: a job is measured once; run it again to compare")
    if opts.auto_batch:
        raise UsageError(f"--batch -1 with {world} ranks: give the job's global batch (each rank takes batch/{world})")
    if opts.batch < world:
        raise UsageError(f"--batch {opts.batch} with {world} ranks: each rank needs at least one image per step")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def measure_job(opts, argv: list[str], devices: list[str]) -> MeasuredProfile:
    """Every rank in its own process at once, then one job profile of their traces (the options
    passed check_job_options)."""
    backend = "gloo" if devices[0] == "cpu" else "nccl"
    with common.workspace(opts.project, "train") as tmp:
        outs = _start_ranks(opts, argv, devices, backend, tmp)
        results = [json.loads((out / RESULT).read_text()) for out in outs]
        return _publish(opts, argv, results, outs, devices, backend)


def _start_ranks(opts, argv: list[str], devices: list[str], backend: str, tmp: Path) -> list[Path]:
    world, port = len(devices), free_port()
    common.note(f"{world} ranks of one DDP job ({backend}, {', '.join(devices)}): a process each")
    children, outs = [], []
    for rank, device in enumerate(devices):
        out = tmp / f"rank{rank}"
        out.mkdir()
        options = options_json(dataclasses.replace(opts, device=device, nproc=1))
        job = {"rank": rank, "world_size": world, "backend": backend, "devices": devices}
        (out / SPEC).write_text(json.dumps({"kind": "train", "options": options, "trial": 0, "argv": argv, "job": job}))
        reserve(out / ERROR)
        env = {
            **os.environ,
            common.SAID_ENV: str(tmp / "warnings_said"),
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
            "WORLD_SIZE": str(world),
            "MASTER_ADDR": LOOPBACK,
            "MASTER_PORT": str(port),
        }
        command = [sys.executable, "-m", "libreyolo_profile.measure.trial_process", str(out / SPEC)]
        # rank 0 speaks (progress, notes); the others' stderr would repeat it
        quiet = subprocess.DEVNULL if rank else sys.stderr.fileno()
        children.append(subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=quiet, stderr=quiet))
        outs.append(out)
    _wait_all(children, outs)
    return outs


def _wait_all(children: list[subprocess.Popen], outs: list[Path]) -> None:
    """Wait for every rank; the first to fail stops the rest, and its error is raised."""
    try:
        while any(child.poll() is None for child in children):
            failed = next((i for i, c in enumerate(children) if c.returncode not in (None, 0)), None)
            if failed is not None:
                _stop(children)
                raise _rank_failure(outs, children, failed)
            time.sleep(0.2)
    except BaseException:
        _stop(children)
        raise
    for i, child in enumerate(children):
        if child.returncode != 0 or not (outs[i] / RESULT).is_file():
            raise _rank_failure(outs, children, i)


def _stop(children: list[subprocess.Popen]) -> None:
    for child in children:
        if child.poll() is None:
            child.terminate()
    for child in children:
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _rank_failure(outs: list[Path], children: list[subprocess.Popen], failed: int) -> ProfileError:
    """The failing rank's own error; a rank stopped because another failed says nothing of its own."""
    error = child_failure(outs[failed], 0, children[failed].returncode)
    return ProfileError(f"rank {failed}: {error}", error.exit_code)


def _publish(opts, argv, results: list[dict], outs: list[Path], devices: list[str], backend: str) -> MeasuredProfile:
    from libreyolo_profile.store.disk.writer import write_directory
    from libreyolo_profile.store.document.capture import TrialCapture
    from libreyolo_profile.store.document.job import measured_job_document

    captures = [TrialCapture.from_json(r["capture"]) for r in results]
    first = results[0]
    settings = {k: v for k, v in first["settings"].items() if k != "rank"}  # rank 0's setup: the job's
    settings.update(
        device=devices[0] if devices[0] == "cpu" else ",".join(devices),
        device_requested=str(opts.device),
        project=str(Path(opts.project).resolve()),
        world_size=len(devices),
        rank_devices=devices,
        backend=backend,
        nproc=len(devices),
        global_batch=first["settings"]["batch"] * len(devices),
    )
    marks = dict(first["marks"])
    common.mark_contention([c.machine for c in captures], settings, marks)  # any rank's threads that fought
    measured = {
        "command": list(argv),
        "settings": settings,
        "environment": first["environment"],
        "model": first["model"],
        "marks": marks,
    }
    traces = [out / "trial1_trace.json" for out in outs]
    wanted = Path(opts.project) / "train"
    with common.status(f"analysing {len(outs)} rank traces and writing {wanted}/profile.json"):
        doc, kept = measured_job_document(traces, captures, kind="train", measured=measured)
        written = write_directory(doc, wanted, kept, exist_ok=opts.exist_ok)
    if written != wanted:
        common.note(f"{wanted} is taken and was kept; this profile went to {written} (--exist-ok replaces it instead)")
    return MeasuredProfile(Path(written), doc)


def join_job(job: dict, device: str) -> None:
    """In a rank's process, before LibreYOLO's trainer is built: join the job's process group with the
    backend its devices need (LibreYOLO's trainer then finds it joined and runs its DDP path)."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    if device.startswith("cuda"):
        torch.cuda.set_device(torch.device(device))
    dist.init_process_group(
        backend=job["backend"],
        init_method="env://",
        rank=job["rank"],
        world_size=job["world_size"],
        timeout=timedelta(seconds=JOIN_TIMEOUT_S),
    )


def leave_job() -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
