"""What `libreyolo profile infer` and `libreyolo profile run` were asked to measure, as typed values.

cli.py builds one of these from the typer parameters; every range check happens here, when it is
built (a bad value is a usage error, exit 2, before torch is imported). The checks that need the
device (`--half` on the CPU, bfloat16 support) stay where the device is known (measure/infer.py).

One field per CLI option, with the CLI's default, except `--report` and `--json`: they say what the
CLI does after the measurement (write report.html, print the summary), which is none of measure's
business. tests/test_measure_units.py keeps the fields and defaults in step with the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.store.document.window import PROFILED_RUNS, PROFILED_STEPS

AMP_DTYPES = ("float16", "bfloat16")
AUTO_BATCH = -1  # `run --batch -1`: pick the batch from the device's memory
# `--module-depth`: named ranges for the model's modules down to this depth (measure/modules.py);
# 2 = the top-level parts (backbone, neck, head) and their direct children; 0 = none
MODULE_DEPTH = 2

# `run` measures LibreYOLO's training step as the trainer runs it; each way to depart from it is an
# option, named here with what it changes, and recorded in the profile (settings.departures and the
# `departs_from_trainer` mark). field name -> (the CLI flag that departs, what the step then does differently)
TRAINER_DEPARTURES: dict[str, tuple[str, str]] = {
    "loss_item": (
        "--no-loss-item",
        "the trainer's per-step logging reads (loss.item() and the loss components' "
        ".cpu()) are skipped, and with them the host/device sync they force every step",
    ),
}


def check_at_least(name: str, value: int, minimum: int = 1) -> None:
    if value < minimum:
        raise UsageError(f"--{name} {value}: must be ≥ {minimum}")


def check_fraction(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise UsageError(f"--{name} {value}: must be within [0, 1]")


def check_replaceable(project: Path, kind: str, exist_ok: bool) -> None:
    """--exist-ok onto <project>/<kind> that is not a profile of ours: exit 2 now, before measuring."""
    if exist_ok:
        from libreyolo_profile.store.disk.owned import refuse_unless_ours

        refuse_unless_ours(Path(project) / kind)


@dataclass(frozen=True)
class InferOptions:
    source: str | None = None
    weights: str = "LibreYOLO9t.pt"
    size: str = "t"
    batch: int = 1
    imgsz: int = 640
    half: bool = False
    amp_dtype: str = "float16"
    warmup: int = 20
    runs: int = 100
    repeat: int = 1
    conf: float = 0.25
    iou: float = 0.45
    max_det: int = 300
    device: str = "auto"  # CUDA device 0 when present, else the CPU (cli.py says which)
    trace: bool = True
    project: Path = Path("runs/profile")
    overhead: bool = True
    exist_ok: bool = False
    module_depth: int = MODULE_DEPTH
    fresh_processes: bool = True  # --repeat N: each trial in its own process (measure/isolated.py)
    memory: bool = False  # allocator events in the profiled window (torch.profiler profile_memory)
    profiled_runs: int | None = None  # calls under the profiler; None: min(runs, PROFILED_RUNS)

    def __post_init__(self) -> None:
        check_at_least("batch", self.batch)
        check_at_least("runs", self.runs)
        if self.profiled_runs is not None:
            check_at_least("profiled-runs", self.profiled_runs)
            if self.profiled_runs > self.runs:
                raise UsageError(
                    f"--profiled-runs {self.profiled_runs}: at most --runs ({self.runs}), the calls the window replays"
                )
        check_replaceable(self.project, "infer", self.exist_ok)
        check_at_least("module-depth", self.module_depth, 0)
        check_at_least("warmup", self.warmup, 0)
        check_at_least("repeat", self.repeat)
        check_at_least("max-det", self.max_det)
        check_at_least("imgsz", self.imgsz)
        if self.amp_dtype not in AMP_DTYPES:
            raise UsageError(f"--amp-dtype {self.amp_dtype}: expected float16 or bfloat16")
        check_fraction("conf", self.conf)
        check_fraction("iou", self.iou)

    @property
    def window_runs(self) -> int:
        """The calls under the profiler: --profiled-runs, else min(--runs, PROFILED_RUNS); with --no-overhead
        the window is the headline too, so by default it is all --runs calls."""
        if self.profiled_runs is not None:
            return self.profiled_runs
        return min(self.runs, PROFILED_RUNS) if self.overhead else self.runs


@dataclass(frozen=True)
class RunOptions:
    data: str
    weights: str = "LibreYOLO9t.pt"
    size: str = "t"
    batch: int = 16
    imgsz: int = 640
    workers: int = 8
    amp: bool = True
    steps: int = 20
    warmup: int = 5
    repeat: int = 1
    device: str = "auto"  # CUDA device 0 when present, else the CPU (cli.py says which)
    project: Path = Path("runs/profile")
    overhead: bool = True
    exist_ok: bool = False
    loss_item: bool = True  # False departs from the trainer: see TRAINER_DEPARTURES
    module_depth: int = MODULE_DEPTH
    fresh_processes: bool = True  # --repeat N: each trial in its own process (measure/isolated.py)
    memory: bool = False  # allocator events in the profiled window (torch.profiler profile_memory)
    nproc: int = 1  # CPU ranks of one DDP job (gloo); GPU ranks come from a --device list (measure/ranks.py)
    profiled_steps: int | None = None  # steps under the profiler; None: min(steps, PROFILED_STEPS)

    def __post_init__(self) -> None:
        check_replaceable(self.project, "train", self.exist_ok)
        check_at_least("nproc", self.nproc)
        if self.batch != AUTO_BATCH:
            check_at_least("batch", self.batch)
        check_at_least("steps", self.steps)
        if self.profiled_steps is not None:
            check_at_least("profiled-steps", self.profiled_steps)
            if self.profiled_steps > self.steps:
                raise UsageError(
                    f"--profiled-steps {self.profiled_steps}: at most --steps ({self.steps}), the steps the "
                    "unprofiled pass replays"
                )
        check_at_least("warmup", self.warmup, 0)
        check_at_least("repeat", self.repeat)
        check_at_least("workers", self.workers, 0)
        check_at_least("module-depth", self.module_depth, 0)
        check_at_least("imgsz", self.imgsz)

    @property
    def auto_batch(self) -> bool:
        return self.batch == AUTO_BATCH

    @property
    def departures(self) -> dict[str, str]:
        """The departures from LibreYOLO's training step this run was asked for: flag -> what it changes
        (empty for a run that measures the step as the trainer runs it)."""
        return {flag: what for field, (flag, what) in TRAINER_DEPARTURES.items() if not getattr(self, field)}

    @property
    def window_steps(self) -> int:
        """The steps under the profiler: --profiled-steps, else min(--steps, PROFILED_STEPS); with
        --no-overhead the window is the headline too, so by default it is all --steps steps."""
        if self.profiled_steps is not None:
            return self.profiled_steps
        return min(self.steps, PROFILED_STEPS) if self.overhead else self.steps

    @property
    def steps_per_trial(self) -> int:
        """Batches one trial takes from a single pass over the dataset: warmup, then the window."""
        return self.warmup + self.steps
