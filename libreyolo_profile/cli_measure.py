"""`libreyolo profile run` and `infer`, the measurement commands: their arguments (cli.py registers them;
measure/ does the work, imported lazily) and what they show once the profile is published."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

import libreyolo_profile as lp  # the Python API: the published profile is opened through it
from libreyolo_profile.cli_help import EXIST_OK_HELP, JSON_HELP
from libreyolo_profile.store.document.window import PROFILED_RUNS, PROFILED_STEPS

DEVICE_HELP = "device: 0, cuda:N or cpu; auto: CUDA device 0 where CUDA is present, else the CPU (with a note)"
RUN_DEVICE_HELP = DEVICE_HELP + "; a list (0,1) profiles one DDP job, a rank per GPU, as one job profile"
FRESH_HELP = "--repeat N: each trial in its own fresh process (the spread then includes process-to-process drift)"
# the cost: benchmarks/bench_memory_cost.py (its docstring says how it is measured)
MEMORY_HELP = (
    "record allocator events (torch.profiler profile_memory, CPU and CUDA) in the profiled window only, "
    "for `libreyolo profile memory`; the headline stays unprofiled. Measured cost to the profiled window "
    "(benchmarks/bench_memory_cost.py, CPU infer, one thread, ~3,300 allocator events per call): "
    "+4% CPU time per call at 640 px, +9% at 320 px"
)
MODULE_DEPTH_HELP = (
    "named ranges for the model's modules down to this depth (1: backbone, neck, head; 2: also their blocks; 0: off)"
)
REPORT_HELP = "write report.html beside profile.json"
PROFILED_RUNS_HELP = (
    "calls in the profiled window, the attribution (kernels, ops, blame, modules); "
    f"default min(--runs, {PROFILED_RUNS}), with --no-overhead --runs: every call is the same work, "
    "so the shares settle within a few calls"
)
PROFILED_STEPS_HELP = (
    "steps in the profiled window, the attribution (kernels, ops, blame, modules); "
    f"default min(--steps, {PROFILED_STEPS}), {PROFILED_STEPS} being the fewest steps that are not a tiny window "
    "(training steps differ batch to batch), or with --no-overhead --steps; the headline is every --steps step, "
    "unprofiled"
)
RUN_OVERHEAD_HELP = "time an unprofiled pass to record profiler_overhead_pct"
INFER_OVERHEAD_HELP = "time the same calls without the profiler to record profiler_overhead_pct"
LOSS_ITEM_HELP = (
    "keep the trainer's per-step loss.item() logging (a device sync); "
    "--no-loss-item departs from the trainer and is recorded in the profile"
)
NPROC_HELP = (
    "ranks of one DDP job on the CPU (gloo; with --device cpu), each in its own process, read as one "
    "job profile; for GPU ranks list the GPUs instead: --device 0,1 (NCCL). --batch is the job's global batch"
)


def run_cmd(
    data: str = typer.Argument(..., help="dataset YAML or name, e.g. coco128"),
    weights: str = typer.Option("LibreYOLO9t.pt", help="model weights file or name"),
    size: str = typer.Option("t", help="model size variant"),
    batch: int = typer.Option(16, help="micro-batch; -1 picks it to fill about 70% of device memory"),
    imgsz: int = typer.Option(640, help="training image size"),
    workers: int = typer.Option(8, help="dataloader workers"),
    amp: bool = typer.Option(True, "--amp/--no-amp", help="use the model family's AMP path (CUDA only)"),
    steps: int = typer.Option(20, help="steps measured"),
    profiled_steps: int | None = typer.Option(None, show_default=False, help=PROFILED_STEPS_HELP),
    warmup: int = typer.Option(5, help="warmup steps before measuring"),
    repeat: int = typer.Option(1, help="repeat N times for mean and standard deviation"),
    device: str = typer.Option("auto", help=RUN_DEVICE_HELP),
    project: Path = typer.Option(Path("runs/profile"), help="output directory root"),
    overhead: bool = typer.Option(True, "--overhead/--no-overhead", help=RUN_OVERHEAD_HELP),
    report: bool = typer.Option(True, "--report/--no-report", help=REPORT_HELP),
    exist_ok: bool = typer.Option(False, "--exist-ok", help=EXIST_OK_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    loss_item: bool = typer.Option(True, "--loss-item/--no-loss-item", help=LOSS_ITEM_HELP),
    module_depth: int = typer.Option(2, help=MODULE_DEPTH_HELP),
    fresh_processes: bool = typer.Option(True, "--fresh-processes/--same-process", help=FRESH_HELP),
    memory: bool = typer.Option(False, "--memory/--no-memory", help=MEMORY_HELP),
    nproc: int = typer.Option(1, help=NPROC_HELP),
) -> None:
    """Profile a short training and write <project>/train/profile.json."""
    from libreyolo_profile.measure.options import RunOptions

    options = RunOptions(
        data=data,
        weights=weights,
        size=size,
        batch=batch,
        imgsz=imgsz,
        workers=workers,
        amp=amp,
        steps=steps,
        profiled_steps=profiled_steps,
        warmup=warmup,
        repeat=repeat,
        device=device,
        project=project,
        overhead=overhead,
        exist_ok=exist_ok,
        loss_item=loss_item,
        module_depth=module_depth,
        fresh_processes=fresh_processes,
        memory=memory,
        nproc=nproc,
    )
    from libreyolo_profile.measure.train import profile_run

    _show_measurement(profile_run(options, argv=sys.argv), report=report, as_json=as_json)


def infer_cmd(
    source: Optional[str] = typer.Argument(None, help="image or directory; omitted: LibreYOLO's bundled sample image"),
    weights: str = typer.Option("LibreYOLO9t.pt", help="model weights file or name"),
    size: str = typer.Option("t", help="model size variant"),
    batch: int = typer.Option(1, help="images per forward pass"),
    imgsz: int = typer.Option(640, help="input image size"),
    half: bool = typer.Option(False, "--half/--no-half", help="forward pass under autocast (CUDA only)"),
    amp_dtype: str = typer.Option("float16", help="CUDA autocast dtype: float16 or bfloat16"),
    warmup: int = typer.Option(20, help="warmup iterations before measuring"),
    runs: int = typer.Option(100, help="measured iterations: the unprofiled calls the headline is timed on"),
    profiled_runs: int | None = typer.Option(None, show_default=False, help=PROFILED_RUNS_HELP),
    repeat: int = typer.Option(1, help="repeat N times for mean and standard deviation"),
    conf: float = typer.Option(0.25, help="confidence threshold (changes NMS work)"),
    iou: float = typer.Option(0.45, help="NMS IoU threshold"),
    max_det: int = typer.Option(300, help="maximum detections per image (changes NMS work)"),
    device: str = typer.Option("auto", help=DEVICE_HELP),
    trace: bool = typer.Option(True, "--trace/--no-trace", help="keep the Chrome trace as profile_trace.json"),
    project: Path = typer.Option(Path("runs/profile"), help="output directory root"),
    overhead: bool = typer.Option(True, "--overhead/--no-overhead", help=INFER_OVERHEAD_HELP),
    report: bool = typer.Option(True, "--report/--no-report", help=REPORT_HELP),
    exist_ok: bool = typer.Option(False, "--exist-ok", help=EXIST_OK_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    module_depth: int = typer.Option(2, help=MODULE_DEPTH_HELP),
    fresh_processes: bool = typer.Option(True, "--fresh-processes/--same-process", help=FRESH_HELP),
    memory: bool = typer.Option(False, "--memory/--no-memory", help=MEMORY_HELP),
) -> None:
    """Profile the inference path and write <project>/infer/profile.json."""
    from libreyolo_profile.measure.options import InferOptions

    options = InferOptions(
        source=source,
        weights=weights,
        size=size,
        batch=batch,
        imgsz=imgsz,
        half=half,
        amp_dtype=amp_dtype,
        warmup=warmup,
        runs=runs,
        profiled_runs=profiled_runs,
        repeat=repeat,
        conf=conf,
        iou=iou,
        max_det=max_det,
        device=device,
        trace=trace,
        project=project,
        overhead=overhead,
        exist_ok=exist_ok,
        module_depth=module_depth,
        fresh_processes=fresh_processes,
        memory=memory,
    )
    from libreyolo_profile.measure.infer import profile_infer

    _show_measurement(profile_infer(options, argv=sys.argv), report=report, as_json=as_json)


def _show_measurement(measured, *, report: bool, as_json: bool) -> None:
    """After `run` or `infer` published a profile: report.html beside it (unless --no-report), the
    summary on stdout, and where both files are on stderr. The profile is opened once for both."""
    from libreyolo_profile.output.terminal import stderr_note
    from libreyolo_profile.readers.report import write_report
    from libreyolo_profile.readers.summary import print_summary

    profile = lp.open(measured.profile_json)
    written = []
    if report:
        try:
            written.append(write_report(measured.directory, profile))
        except Exception as exc:  # the measured profile is safe on disk; a report failure must not lose it
            from libreyolo_profile.measure.common import warn

            warn(
                f"the HTML report could not be written ({type(exc).__name__}: {exc}); "
                f"`libreyolo profile report {measured.directory}` retries it"
            )
    try:
        print_summary(profile, as_json)
    finally:  # last, so the paths stay in view under the summary
        stderr_note(f"profile: {measured.profile_json}")
        for path in written:
            stderr_note(f"report: {path}")
