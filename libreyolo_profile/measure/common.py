"""What both writers share: device parsing, the temporary workspace inside --project (removed on
every exit, Ctrl-C and SIGTERM included), the environment record, progress on stderr, and the
hand-off to the store. The profiler's configuration is measure/profiler.py.

Measurement only measures and writes: progress and warnings go to stderr, and nothing here prints
on stdout. The CLI asks for the report and the summary once the profile is published.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import shutil
import signal
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from rich.console import Console
from rich.markup import escape

from libreyolo_profile.errors import ProfileError, UsageError
from libreyolo_profile.output.textsafe import safe_text
from libreyolo_profile.store.schema import PROFILE_FILE

console = Console(stderr=True, highlight=False, soft_wrap=True)


# A file the trials of one `--repeat` share (measure/isolated.py sets it): a warning already printed
# by an earlier trial's process is not printed again, so a command says each warning once.
SAID_ENV = "LIBREYOLO_PROFILE_SAID"


def _said_before(message: str) -> bool:
    import hashlib

    said = os.environ.get(SAID_ENV)
    if not said:
        return False
    digest = hashlib.sha256(message.encode()).hexdigest()
    path = Path(said)
    if path.is_file() and digest in path.read_text().split():
        return True
    with path.open("a") as record:
        record.write(digest + "\n")
    return False


def warn(message: str) -> None:
    if _said_before(message):
        return
    console.print(f"[bold yellow]warning:[/] {escape(safe_text(message))}")


def note(message: str) -> None:
    if _said_before(message):
        return
    console.print(f"[dim]{escape(safe_text(message))}[/]")


def quiet_libreyolo_logging() -> None:
    """LibreYOLO installs an INFO stderr handler on first model construction unless its logger
    already has one. Give it ours at WARNING so its warnings still reach stderr (never stdout) and
    its INFO chatter (dataset scan, optimizer groups, 'Tip: …') does not drown the progress."""
    if os.environ.get("LIBREYOLO_PROFILE_VERBOSE"):
        level = logging.INFO
    else:
        level = logging.WARNING
    lg = logging.getLogger("libreyolo")
    if not any(getattr(h, "_libreyolo_profile", False) for h in lg.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("libreyolo: %(levelname)s: %(message)s"))
        handler._libreyolo_profile = True  # type: ignore[attr-defined]
        lg.addHandler(handler)
    lg.setLevel(level)
    lg.propagate = False


# ---------------------------------------------------------------------------------------------
# device


def resolve_device(spec: str):
    """`0`, `cuda`, `cuda:N` or `cpu` → torch.device. Exit 2 with a way out when CUDA is absent."""
    import torch

    raw = str(spec).strip().lower()
    if raw == "auto":  # the default: the GPU where there is one, else the CPU, said once
        if torch.cuda.is_available():
            return torch.device("cuda:0")
        note("no CUDA device here: measuring on the CPU (--device cpu); pass --device 0 where a GPU is")
        return torch.device("cpu")
    if raw in ("cpu",):
        return torch.device("cpu")
    if "," in raw or raw.startswith("["):
        raise UsageError(
            f"--device {spec}: one device per profile; pass a single GPU index (e.g. --device 0) or --device cpu"
        )
    if raw.isdigit():
        index = int(raw)
    elif raw == "cuda":
        index = 0
    elif raw.startswith("cuda:") and raw[5:].isdigit():
        index = int(raw[5:])
    elif raw == "mps":
        raise UsageError("--device mps is not supported by libreyolo profile; use --device cpu or a CUDA device")
    else:
        raise UsageError(f"--device {spec}: expected a GPU index (0), cuda:N or cpu")
    if not torch.cuda.is_available():
        raise UsageError(
            f"--device {spec} asks for CUDA, but CUDA is not available here "
            f"(torch {torch.__version__}, CUDA build: {torch.version.cuda or 'none'}); "
            "use --device cpu to profile on the CPU"
        )
    count = torch.cuda.device_count()
    if index >= count:
        raise UsageError(
            f"--device {spec}: only {count} CUDA device(s) visible (0..{count - 1}); use one of those or --device cpu"
        )
    return torch.device(f"cuda:{index}")


def apply_threads(threads: int | None, rank: int | None = None) -> None:
    """--threads N: the torch threads every measured call runs with (None: torch's own choice, kept), and
    the N CPUs the measurement runs on (`pinned`); `rank`: this process is that rank of a job."""
    global _pin
    _pin = dict(_UNPINNED)  # a measurement before this one in the process does not choose for it
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
        _pin = _cpus_to_pin(threads, rank)


# --threads N also holds the process to N CPUs from the model's load to the last trial. Left free, the
# scheduler moves a one-thread measurement on a busy 2-core machine between a core of its own and a shared
# one, and its calls' times jump between the two (docs/design/performance.md, "Contention"). Processes it
# forks meanwhile (dataloader workers) get every CPU back, and the analysis after the trials runs on them all.
_UNPINNED = {"cpus": None, "reason": "no --threads: torch's own threads, on any CPU"}
_pin: dict = dict(_UNPINNED)


def _cpus_to_pin(threads: int, rank: int | None) -> dict:
    """{"cpus": the N CPUs, or None, "reason": why none}: N of the CPUs this process may use, from the one it
    runs on now (a job's rank: from its own N, so ranks do not share)."""
    if not hasattr(os, "sched_getaffinity"):
        return {"cpus": None, "reason": "this system has no CPU affinity calls"}
    allowed = sorted(os.sched_getaffinity(0))
    if threads >= len(allowed):
        return {"cpus": None, "reason": f"--threads {threads}: every CPU this process may use ({len(allowed)})"}
    start = rank * threads if rank is not None else allowed.index(_current_cpu(allowed))
    return {"cpus": [allowed[(start + k) % len(allowed)] for k in range(threads)], "reason": None}


def _current_cpu(allowed: list[int]) -> int:
    """The CPU this thread last ran on (/proc/thread-self/stat's `processor`), else the first allowed."""
    try:
        raw = Path("/proc/thread-self/stat").read_text()
        cpu = int(raw[raw.rfind(")") + 2 :].split()[36])  # field 39; the name may hold spaces and parentheses
    except (OSError, ValueError, IndexError):
        return allowed[0]
    return cpu if cpu in allowed else allowed[0]


def pinning_settings() -> dict:
    """What `pinned` held the trials to, for the profile's settings."""
    return {"cpus_pinned": _pin["cpus"], "cpus_pinned_null_reason": _pin["reason"]}


@contextlib.contextmanager
def pinned() -> Iterator[None]:
    """Every thread of this process (and the threads they start) on --threads' CPUs for the block, then back.
    The whole process, not the measuring thread alone, and from before the warmup, not the timed calls alone:
    held later or less, the other work still moved between our core and the other (docs/design/performance.md,
    "Contention")."""
    global _forked_children_get
    cpus = _pin["cpus"]
    if not cpus:
        yield
        return
    before = os.sched_getaffinity(0)
    kept = {tid: _affinity(tid) for tid in _threads()}
    try:
        os.sched_setaffinity(0, cpus)
    except OSError as exc:  # a cpuset changed under us: measure unpinned, and say so
        _pin.update(cpus=None, reason=f"sched_setaffinity refused: {exc.strerror}")
        yield
        return
    for tid in kept:
        _set_affinity(tid, cpus)
    _forked_children_get = before
    try:
        yield
    finally:
        _forked_children_get = None
        for tid in _threads():  # a thread born inside gets what its creator had
            _set_affinity(tid, kept.get(tid) or before)


def _threads() -> list[int]:
    try:
        return [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        return [threading.get_native_id()]


def _affinity(tid: int) -> set | None:
    try:
        return os.sched_getaffinity(tid)
    except OSError:  # the thread ended meanwhile
        return None


def _set_affinity(tid: int, cpus) -> None:
    with contextlib.suppress(OSError):  # the thread ended meanwhile
        os.sched_setaffinity(tid, cpus)


_forked_children_get: set | None = None  # the CPUs a child forked inside `pinned` gets back


def _unpin_forked_child() -> None:
    if _forked_children_get is not None:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, _forked_children_get)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_unpin_forked_child)


# ---------------------------------------------------------------------------------------------
# workspace: every temporary file lives in one directory inside --project, removed on any exit


class _Terminated(BaseException):
    """SIGTERM, turned into an exception so every `finally` (and the workspace cleanup) runs.

    A BaseException, so no `except Exception` on the way swallows it; not a KeyboardInterrupt, because
    the CLI reads a KeyboardInterrupt anywhere in an error's chain as Ctrl-C (exit 130, not 143)."""


# the workspace's name: `<prefix><kind>-<pid>-workspace-<host>-<random>`, so the next run in the same
# --project can tell a dead run's leftover (store/workdir.py sweep_leftovers) from a live one's
WORKSPACE_PREFIX = ".libreyolo-profile-"


def disk_error(exc: OSError, project: Path) -> ProfileError | None:
    """A full disk (or quota) while measuring or writing: exit 3, one line; None for any other error."""
    from libreyolo_profile.store.disk.atomic import no_space

    return no_space(exc, project, "profile", 3)


def _make_project(project: Path) -> list[Path]:
    """Create --project if needed (exit 2 when it cannot be made or written); the directories this
    made, deepest first."""
    p = project.absolute()
    missing = []
    while not p.exists():
        missing.append(p)
        p = p.parent
    try:
        project.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProfileError(f"--project {project}: cannot create it ({exc.strerror or exc})", 2) from None
    if not os.access(project, os.W_OK):
        raise ProfileError(f"--project {project}: not writable", 2)
    return missing


def _remove_empty(created: list[Path]) -> None:
    for d in created:  # deepest first; only the empty ones we made
        with contextlib.suppress(OSError):
            d.rmdir()


def _new_workspace(project: Path, kind: str) -> Path:
    """The private temp dir inside --project, after sweeping what killed runs left there (their pid
    and host are in the name, store/workdir.py)."""
    from libreyolo_profile.store.workdir import leftover_name, sweep_leftovers

    for label in ("infer", "train"):
        sweep_leftovers(project, f"{WORKSPACE_PREFIX}{label}-")
    try:
        return Path(tempfile.mkdtemp(prefix=leftover_name("workspace", f"{WORKSPACE_PREFIX}{kind}-"), dir=project))
    except OSError as exc:
        raise (disk_error(exc, project) or exc) from None


@contextlib.contextmanager
def workspace(project: Path, kind: str) -> Iterator[Path]:
    """Create --project if needed and a unique temp dir inside it; remove the temp dir on every
    exit, and the directories this call created if the command failed and left them empty.
    SIGTERM raises inside the main thread so the cleanup runs (the old handler is restored); what a
    killed run (SIGKILL) left is swept by the next. A full disk is exit 3 with one line."""
    project = Path(project)
    created = _make_project(project)
    try:
        tmp = _new_workspace(project, kind)
    except BaseException:
        _remove_empty(created)
        raise

    main_pid = os.getpid()
    old_handler = None

    def _on_sigterm(signum, frame):  # pragma: no cover - exercised by a subprocess test
        if os.getpid() == main_pid:
            raise _Terminated()

    try:
        old_handler = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: no handler, cleanup still runs on exceptions
        old_handler = None
    ok = False
    try:
        yield tmp
        ok = True
    except _Terminated:
        # typer would turn a KeyboardInterrupt into a bare exit code; say what happened instead
        raise ProfileError(
            "terminated (SIGTERM) during measurement: no profile written, existing files left as they were", 143
        ) from None
    except KeyboardInterrupt:
        raise ProfileError(
            "interrupted during measurement: no profile written, existing files left as they were", 130
        ) from None
    except OSError as exc:
        full = disk_error(exc, project)
        if full is None:
            raise
        raise full from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if old_handler is not None:
            with contextlib.suppress(ValueError):
                signal.signal(signal.SIGTERM, old_handler)
        if not ok:
            _remove_empty(created)


# ---------------------------------------------------------------------------------------------
# environment


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def environment(device) -> dict:
    import libreyolo
    import torch

    from libreyolo_profile import __version__

    cuda_available = torch.cuda.is_available()
    env = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda if cuda_available else None,
        "cudnn": (torch.backends.cudnn.version() if cuda_available else None),
        "libreyolo": getattr(libreyolo, "__version__", None),
        "libreyolo_profile": __version__,
        "device": str(device),
        "device_type": device.type,
        "device_name": None,
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env["device_name"] = props.name
        env["device_total_mb"] = round(props.total_memory / 2**20, 1)
        env["device_capability"] = f"{props.major}.{props.minor}"
    else:
        env["device_name"] = f"CPU: {env['cpu']}"
        from libreyolo_profile.measure.cpu_peak import cpu_peak

        env["cpu_peak"] = cpu_peak(env["cpu"])  # the roof the roofline table holds a CPU profile's ops to
    return env


def release_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's malloc_trim; nothing elsewhere). After the
    profiler's records are freed the process otherwise keeps their ~1.7 GiB of a 10-step training window
    resident through the replay, the analysis and the report (measured 2.6 GiB before, 0.9 GiB after)."""
    import gc

    gc.collect()
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)


# ---------------------------------------------------------------------------------------------
# progress


@contextlib.contextmanager
def progress(description: str, total: int) -> Iterator:
    """A rich progress bar on stderr; yields `advance(n=1, description=None)`."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if not console.is_terminal:
        # Logs and pipes get one line per stage, not a redrawn bar.
        console.print(f"{description} ({total})")

        def advance(n: int = 1, description: str | None = None) -> None:
            return None

        yield advance
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=total)

        def advance(n: int = 1, description: str | None = None) -> None:
            if description is not None:
                bar.update(task, description=description)
            bar.advance(task, n)

        yield advance


@contextlib.contextmanager
def status(message: str) -> Iterator[None]:
    if console.is_terminal:
        with console.status(message):
            yield
    else:
        console.print(message)
        yield


# ---------------------------------------------------------------------------------------------
# hand-off to the store


def mark_contention(machines: list, settings: dict, marks: dict) -> None:
    """Our threads fought for CPUs in a trial (measure/noise.py contention): the `contended` mark, one line
    with its remedy, and settings.contention with the figures."""
    from libreyolo_profile.measure.noise import contention
    from libreyolo_profile.store.document import marks as mark

    found = contention(list(machines))
    if found is not None:
        marks[mark.CONTENDED] = mark.contended(found)
        settings["contention"] = found


def machine_busy(machines: list, contention: dict | None) -> str | None:
    """Why the machine was busy while it measured, as the noisy mark's thresholds read its noise records
    (sql/verdict_thresholds.sql), or the contention found; None: quiet."""
    from libreyolo_profile.vocabulary import thresholds

    if contention is not None:
        return "the measurement was contended"
    limits = thresholds()
    for machine in machines:
        machine = machine or {}
        other, steal = machine.get("other_cpu_pct"), machine.get("steal_pct")
        if other is not None and other >= limits["noisy_other_cpu_pct"]:
            return f"other processes used {other:.0f}% of the CPUs while it measured"
        if steal is not None and steal >= limits["noisy_steal_pct"]:
            return f"the hypervisor stole {steal:.1f}% of CPU time while it measured"
    return None


def roof_doubted(doc: dict, directory: Path) -> str | None:
    """After the analysis: why the CPU roof it used is in doubt — ops that ran faster than it (the roofline
    table's rows whose device time is under their roofline time), or a noisy mark; None: neither."""
    from libreyolo_profile.connections import scratch_connection
    from libreyolo_profile.store.document import marks as mark

    table = directory / "roofline.parquet"
    if table.is_file():
        con = scratch_connection()
        try:
            (beaten,) = con.execute(
                "SELECT count(*) FROM read_parquet(?) WHERE roofline_us > device_us", [str(table)]
            ).fetchone()
        finally:
            con.close()
        if beaten:
            return f"{beaten} op(s) ran faster than the roof"
    if mark.NOISY in (doc.get("marks") or {}):
        return "the measurement was marked noisy"
    return None


def _roof_figures(roof: dict) -> tuple:
    return roof.get("fp32_tflops"), roof.get("tb_per_s"), roof.get("null_reason")


def _reprobed(env: dict, why: str) -> dict:
    from libreyolo_profile.measure.cpu_peak import reprobe

    with status(f"probing the CPU roof again: {why}"):
        return reprobe(env.get("cpu", ""), env["cpu_peak"], why)


@dataclass(frozen=True)
class MeasuredProfile:
    """Where a measurement was published, and the document written there."""

    directory: Path
    document: dict

    @property
    def profile_json(self) -> Path:
        return self.directory / PROFILE_FILE


def publish(
    out_dir: Path,
    *,
    kind: str,
    trials: list,
    keep_trace: bool,
    command: list[str],
    settings: dict,
    env: dict,
    model: dict,
    marks: dict,
    exist_ok: bool = False,
) -> MeasuredProfile:
    """Hand the trials to the store, which publishes the profile into `out_dir`, or, where a profile
    is already there and not `exist_ok`, into the next free `out_dir`2, 3, … (said on stderr).

    Before that, what the trials' noise records show of contention is marked (`contended`, with its remedy)
    and recorded in the settings; on a CPU the roof is probed again where the machine was busy (before the
    analysis, which holds the ops to it), or after the analysis where the profile came out marked noisy or an
    op ran faster than the roof (the profile is then analysed again with the roof probed now)."""
    from functools import partial

    from libreyolo_profile.store.disk.writer import analyse_trials, write_profile

    wanted = Path(out_dir)
    for trial in trials:  # trials measured here, not handed over by a trial's own process
        if trial.process is None:
            trial.process = {"pid": os.getpid(), "fresh": len(trials) == 1}
    settings, env, marks = dict(settings), dict(env), dict(marks)
    mark_contention([t.machine for t in trials], settings, marks)
    busy = machine_busy([t.machine for t in trials], settings.get("contention"))
    on_cpu = isinstance(env.get("cpu_peak"), dict)
    if on_cpu and busy:
        env["cpu_peak"] = _reprobed(env, busy)
    write = partial(
        write_profile,
        kind=kind,
        trials=trials,
        keep_trace=keep_trace,
        command=command,
        settings=settings,
        model=model,
        marks=marks,
    )
    with status(f"analysing {len(trials)} trial trace(s) and writing {wanted}/profile.json"):
        analyses = analyse_trials(trials, kind, keep_trace, env.get("cpu_peak"))
        doc, written = write(wanted, environment=env, exist_ok=exist_ok, analyses=analyses)
    after = roof_doubted(doc, Path(written)) if on_cpu and not busy else None
    if after:
        roof, env["cpu_peak"] = env["cpu_peak"], _reprobed(env, after)
        if _roof_figures(env["cpu_peak"]) != _roof_figures(roof):  # a raised roof changes the roofline: again
            with status(f"the CPU roof probed again ({after}) and raised: analysing again"):
                analyses = analyse_trials(trials, kind, keep_trace, env["cpu_peak"])
        # a roof kept as it was changes only what the profile says of it: the same analyses, written again
        doc, written = write(Path(written), environment=env, exist_ok=True, analyses=analyses)
    if written != wanted:
        note(f"{wanted} is taken and was kept; this profile went to {written} (--exist-ok replaces it instead)")
    return MeasuredProfile(Path(written), doc)
