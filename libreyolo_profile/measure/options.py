"""What `libreyolo profile infer` and `libreyolo profile run` were asked to measure, as typed values, and
the one declaration of each of their options: its field here carries its default, its flags and its help
(`option`, `argument`), and cli_measure.py builds each command's signature from these fields, so the CLI,
the options object and the defaults cannot drift apart.

Every range check happens when an options object is built (a bad value is a usage error, exit 2, before
torch is imported); measure/preflight.py checks what the file system can tell (weights, source, dataset, a
GPU asked for) before torch is imported too. The checks that need the device (`--half` on the CPU, bfloat16
support) stay where the device is known (measure/infer.py).

One field per CLI option, except `--report` and `--json`: they say what the CLI does after the measurement
(write report.html, print the summary), which is none of measure's business (cli_measure.py declares them).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field
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


def check_threads(threads: int | None) -> None:
    if threads is not None:
        check_at_least("threads", threads)


def check_replaceable(project: Path, kind: str, exist_ok: bool) -> None:
    """--exist-ok onto <project>/<kind> that is not a profile of ours: exit 2 now, before measuring."""
    if exist_ok:
        from libreyolo_profile.store.disk.owned import refuse_unless_ours

        refuse_unless_ours(Path(project) / kind)


# ---------------------------------------------------------------------------------------------
# how an option is declared: its field's default, and in the field's metadata its flags and help


@dataclass(frozen=True)
class Cli:
    """What the CLI shows of a field: its help, its flags (none: typer's `--field-name`), whether it is the
    command's positional argument, whether --help shows its default. `help` None: the text several
    commands share (cli_help.py), looked up by the CLI under the field's name."""

    help: str | None
    flags: tuple[str, ...] = ()
    argument: bool = False
    show_default: bool = True


def option(default, help: str | None, *flags: str, show_default: bool = True):
    """A field that is a CLI option: `default` is the option's default and the field's."""
    return field(default=default, metadata={"cli": Cli(help, flags, show_default=show_default)})


def argument(help: str, default=MISSING):
    """A field that is the command's positional argument (required where it has no default)."""
    return field(default=default, metadata={"cli": Cli(help, argument=True)})


def cli_of(f) -> Cli:
    return f.metadata["cli"]


# help texts of options both commands declare, or too long for their field's line
WEIGHTS_HELP = "model weights file or name"
SIZE_HELP = "model size variant"
REPEAT_HELP = "repeat N times for mean and standard deviation"
DEVICE_HELP = "device: 0, cuda:N or cpu; auto: CUDA device 0 where CUDA is present, else the CPU (with a note)"
RUN_DEVICE_HELP = DEVICE_HELP + "; a list (0,1) profiles one DDP job, a rank per GPU, as one job profile"
PROJECT_HELP = "output directory root"
FRESH_HELP = "--repeat N: each trial in its own fresh process (the spread then includes process-to-process drift)"
FRESH_FLAGS = ("--fresh-processes/--same-process",)
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
OVERHEAD_FLAGS = ("--overhead/--no-overhead",)
LOSS_ITEM_HELP = (
    "keep the trainer's per-step loss.item() logging (a device sync); "
    "--no-loss-item departs from the trainer and is recorded in the profile"
)
NPROC_HELP = (
    "ranks of one DDP job on the CPU (gloo; with --device cpu), each in its own process, read as one "
    "job profile; for GPU ranks list the GPUs instead: --device 0,1 (NCCL). --batch is the job's global batch"
)
THREADS_HELP = (
    "torch threads the measurement runs with (torch.set_num_threads), held to as many CPUs from the model's "
    "load to the last trial (both recorded in the profile's settings); default: torch's own choice, on any CPU. "
    "On a shared machine --threads 1 keeps the threads from waiting on each other and the calls from moving "
    "between cores"
)


@dataclass(frozen=True)
class InferOptions:
    source: str | None = argument("image or directory; omitted: LibreYOLO's bundled sample image", default=None)
    weights: str = option("LibreYOLO9t.pt", WEIGHTS_HELP)
    size: str = option("t", SIZE_HELP)
    batch: int = option(1, "images per forward pass")
    imgsz: int = option(640, "input image size")
    half: bool = option(False, "forward pass under autocast (CUDA only)", "--half/--no-half")
    amp_dtype: str = option("float16", "CUDA autocast dtype: float16 or bfloat16")
    warmup: int = option(20, "warmup iterations before measuring")
    runs: int = option(100, "measured iterations: the unprofiled calls the headline is timed on")
    # calls under the profiler; None: min(runs, PROFILED_RUNS)
    profiled_runs: int | None = option(None, PROFILED_RUNS_HELP, show_default=False)
    repeat: int = option(1, REPEAT_HELP)
    conf: float = option(0.25, "confidence threshold (changes NMS work)")
    iou: float = option(0.45, "NMS IoU threshold")
    max_det: int = option(300, "maximum detections per image (changes NMS work)")
    device: str = option("auto", DEVICE_HELP)  # CUDA device 0 when present, else the CPU (said once)
    trace: bool = option(True, "keep the Chrome trace as profile_trace.json", "--trace/--no-trace")
    project: Path = option(Path("runs/profile"), PROJECT_HELP)
    overhead: bool = option(True, INFER_OVERHEAD_HELP, *OVERHEAD_FLAGS)
    exist_ok: bool = option(False, None, "--exist-ok")
    module_depth: int = option(MODULE_DEPTH, MODULE_DEPTH_HELP)
    # --repeat N: each trial in its own process (measure/isolated.py)
    fresh_processes: bool = option(True, FRESH_HELP, *FRESH_FLAGS)
    # allocator events in the profiled window (torch.profiler profile_memory)
    memory: bool = option(False, MEMORY_HELP, "--memory/--no-memory")
    threads: int | None = option(None, THREADS_HELP, show_default=False)  # None: torch's default

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
        check_threads(self.threads)

    @property
    def window_runs(self) -> int:
        """The calls under the profiler: --profiled-runs, else min(--runs, PROFILED_RUNS); with --no-overhead
        the window is the headline too, so by default it is all --runs calls."""
        if self.profiled_runs is not None:
            return self.profiled_runs
        return min(self.runs, PROFILED_RUNS) if self.overhead else self.runs


@dataclass(frozen=True)
class RunOptions:
    data: str = argument("dataset YAML or name, e.g. coco128")
    weights: str = option("LibreYOLO9t.pt", WEIGHTS_HELP)
    size: str = option("t", SIZE_HELP)
    batch: int = option(16, "micro-batch; -1 picks it to fill about 70% of device memory")
    imgsz: int = option(640, "training image size")
    workers: int = option(8, "dataloader workers")
    amp: bool = option(True, "use the model family's AMP path (CUDA only)", "--amp/--no-amp")
    steps: int = option(20, "steps measured")
    # steps under the profiler; None: min(steps, PROFILED_STEPS)
    profiled_steps: int | None = option(None, PROFILED_STEPS_HELP, show_default=False)
    warmup: int = option(5, "warmup steps before measuring")
    repeat: int = option(1, REPEAT_HELP)
    device: str = option("auto", RUN_DEVICE_HELP)  # CUDA device 0 when present, else the CPU (said once)
    project: Path = option(Path("runs/profile"), PROJECT_HELP)
    overhead: bool = option(True, RUN_OVERHEAD_HELP, *OVERHEAD_FLAGS)
    exist_ok: bool = option(False, None, "--exist-ok")
    # False departs from the trainer: see TRAINER_DEPARTURES
    loss_item: bool = option(True, LOSS_ITEM_HELP, "--loss-item/--no-loss-item")
    module_depth: int = option(MODULE_DEPTH, MODULE_DEPTH_HELP)
    # --repeat N: each trial in its own process (measure/isolated.py)
    fresh_processes: bool = option(True, FRESH_HELP, *FRESH_FLAGS)
    # allocator events in the profiled window (torch.profiler profile_memory)
    memory: bool = option(False, MEMORY_HELP, "--memory/--no-memory")
    # CPU ranks of one DDP job (gloo); GPU ranks come from a --device list (measure/ranks.py)
    nproc: int = option(1, NPROC_HELP)
    threads: int | None = option(None, THREADS_HELP, show_default=False)  # None: torch's default

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
        check_threads(self.threads)

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
