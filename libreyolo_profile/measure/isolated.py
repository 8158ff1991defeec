"""`--repeat N` with each trial in its own fresh process (the default).

Trials inside one process agree with each other while whole processes drift (allocator layout, thread
placement, CPU frequency and cache state at start-up), so a standard error taken from trials of one
process understates the run-to-run spread `compare` tests against. Here every trial is a new Python
process that imports torch, builds the model and measures exactly one trial, the way a second
invocation of the command would; the parent only hands out the work and publishes the profile.

Hand-off, all inside the parent's workspace in --project (removed on every exit): the parent writes
`trialN/spec.json` (the kind, the options, the trial's index), the child runs `python -m
libreyolo_profile.measure.trial_process spec.json` and writes `trialN/trial.json` (its capture, and the
settings, environment, model and marks of its setup) beside its trace, or `trialN/error.json` with
the one-line error and exit code it would have printed. Trials run one after another, never at once.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

from libreyolo_profile.errors import ProfileError
from libreyolo_profile.measure import common
from libreyolo_profile.measure.common import MeasuredProfile

SPEC, RESULT, ERROR = "spec.json", "trial.json", "error.json"


def options_json(opts) -> dict:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(opts).items()}


def options_from_json(kind: str, data: dict):
    from libreyolo_profile.measure.options import InferOptions, RunOptions

    data = dict(data, project=Path(data["project"]))
    return InferOptions(**data) if kind == "infer" else RunOptions(**data)


def measure_in_processes(kind: str, opts, argv: list[str]) -> MeasuredProfile:
    """Each of `opts.repeat` trials in a fresh child process, then one profile from all of them."""
    from libreyolo_profile.store.document.capture import TrialCapture

    label = "infer" if kind == "infer" else "train"
    with common.workspace(opts.project, label) as tmp:
        results = []
        for trial in range(opts.repeat):
            out = tmp / f"trial{trial + 1}"
            out.mkdir()
            (out / SPEC).write_text(
                json.dumps({"kind": kind, "options": options_json(opts), "trial": trial, "argv": list(argv)})
            )
            reserve(out / ERROR)  # before the child fills the disk: room for its error is kept
            common.note(f"trial {trial + 1}/{opts.repeat}: a fresh process")
            code = subprocess.call(
                [sys.executable, "-m", "libreyolo_profile.measure.trial_process", str(out / SPEC)],
                env={**os.environ, common.SAID_ENV: str(tmp / "warnings_said")},
                stdin=subprocess.DEVNULL,
                stdout=sys.stderr.fileno(),
            )
            result = out / RESULT
            if code != 0 or not result.is_file():
                raise child_failure(out, trial, code)
            results.append(json.loads(result.read_text()))
        captures = [TrialCapture.from_json(r["capture"]) for r in results]
        first = results[0]
        settings = dict(
            first["settings"],
            project=str(Path(opts.project).resolve()),
            trial_processes="fresh: each trial in its own process",
        )
        return common.publish(
            Path(opts.project) / label,
            kind=label,
            trials=captures,
            keep_trace=getattr(opts, "trace", True),
            command=list(argv),
            settings=settings,
            env=first["environment"],
            model=first["model"],
            marks=first["marks"],
            exist_ok=opts.exist_ok,
        )


# error.json is made this long (spaces, which JSON ignores) before the child runs, and the child writes
# its error over the start of it: on a full disk the error still has its room
ERROR_ROOM = 4096


def reserve(path: Path) -> None:
    path.write_bytes(b" " * ERROR_ROOM)


def write_reserved(path: Path, document: dict) -> None:
    """`document` as JSON over the start of the reserved `path`, in place: needs no new space."""
    text = json.dumps(document, ensure_ascii=True).encode()
    if len(text) > ERROR_ROOM:
        document = dict(document, error=str(document["error"])[: ERROR_ROOM // 2] + "…")
        text = json.dumps(document, ensure_ascii=True).encode()
    with open(path, "r+b" if path.is_file() else "wb") as handle:
        handle.write(text.ljust(ERROR_ROOM))


def _child_error(error: Path) -> dict | None:
    try:
        found = json.loads(error.read_bytes() or b"null")
    except (OSError, ValueError):
        return None
    if isinstance(found, dict) and isinstance(found.get("error"), str) and isinstance(found.get("exit_code"), int):
        return found
    return None  # still the reserved blanks: the child died before it could say why


def child_failure(out: Path, trial: int, code: int) -> ProfileError:
    """The child's own error (its message and exit code), or what is known when it died without one."""
    with_code = _child_error(out / ERROR)
    if with_code is not None:
        return ProfileError(with_code["error"], with_code["exit_code"])
    if code in (130, -2):
        return ProfileError("interrupted during measurement: no profile written, existing files left as they were", 130)
    return ProfileError(
        f"trial {trial + 1}'s process ended with exit code {code} before it wrote its result; no profile written", 3
    )


def hand_off(out: Path, captures: list, *, settings: dict, environment: dict, model: dict, marks: dict) -> None:
    """In the child: its one capture and the setup's records, for the parent."""
    (capture,) = captures
    capture.process = {"pid": os.getpid(), "fresh": True}
    (out / RESULT).write_text(
        json.dumps(
            {
                "capture": capture.to_json(),
                "settings": settings,
                "environment": environment,
                "model": model,
                "marks": marks,
            },
            default=str,
        )
    )
