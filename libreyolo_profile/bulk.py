"""Bulk import: many inputs, each to <project>/<input name>/<kind>, by --jobs local processes
(worker_pool.py) or on a Dask cluster (dask_import.py). Every input gets its own outcome line; the exit
code is 1 when any failed.

A worker can die mid-import (killed, out of memory) and its input is then tried again: by our pool once,
by Dask's scheduler as its allowed-failures say. The first attempt may already have published, so
publishing is idempotent: each input's profile carries an import key (this run's id and the input's
content hash, in source.import_key), and an attempt first looks for a profile with its key under the
input's directory; found, it reports that one instead of publishing another.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import uuid
from pathlib import Path

from libreyolo_profile.errors import EXIT_OK, EXIT_UNANALYSABLE

_HASH_BLOCK = 1 << 20


def import_key(run: str, trace: str) -> str | None:
    """This run's id and the input's content hash; None when the input cannot be read (the import then
    fails with its own line)."""
    path = os.path.join(trace, "profile.json") if os.path.isdir(trace) else trace  # a profile directory
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # a FIFO or device: never opened here (it could block); the import refuses it
    except OSError:
        return None
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while block := handle.read(_HASH_BLOCK):
                digest.update(block)
    except OSError:
        return None
    return f"{run}-{digest.hexdigest()[:32]}"


def already_imported(project: str, subdirectory: str, key: str) -> str | None:
    """The directory under <project>/<subdirectory> whose profile was published with `key`, if any."""
    from libreyolo_profile.store.crossrun.objectstore import is_remote

    base = f"{project.rstrip('/')}/{subdirectory}"
    if is_remote(project):
        from libreyolo_profile.store.crossrun.upload import find_imported

        return find_imported(base, key)
    try:
        candidates = sorted(p for p in Path(base).iterdir() if not p.name.startswith("."))
    except OSError:
        return None
    for directory in candidates:
        profile = directory / "profile.json"
        try:
            if profile.is_file() and not profile.is_symlink() and _key_of(profile) == key:
                return str(directory)
        except OSError:
            continue
    return None


def _key_of(profile: Path) -> str | None:
    try:
        source = json.loads(profile.read_bytes()).get("source")
    except (ValueError, AttributeError):
        return None
    return source.get("import_key") if isinstance(source, dict) else None


def new_run() -> str:
    """The id of one bulk import run, part of every import key it publishes."""
    return uuid.uuid4().hex[:16]


def run_bulk(work, tasks: list[tuple], as_json: bool, jobs: int, scheduler: str | None) -> int:
    """work(*task) for every task (importer.import_one: the input first), one line (or one JSON entry) per
    input; 0 when all went in, else 1."""
    if scheduler:
        from libreyolo_profile.dask_import import run_dask

        results = run_dask(work, tasks, scheduler)
    elif min(jobs, len(tasks)) == 1:
        results = [work(*task) for task in tasks]
    else:
        from libreyolo_profile.worker_pool import run_pool

        results = run_pool(work, tasks, min(jobs, len(tasks)), _worker_died)
    _report(results, as_json)
    return EXIT_UNANALYSABLE if any(not r["ok"] for r in results) else EXIT_OK


def _worker_died(task: tuple, how: str) -> dict:
    return {
        "trace": task[0],
        "ok": False,
        "exit_code": EXIT_UNANALYSABLE,
        "error": f"its worker process died while importing it ({how}), also when tried again",
    }


def _report(results: list[dict], as_json: bool) -> None:
    failed = [r for r in results if not r["ok"]]
    if as_json:
        from libreyolo_profile.output.json_out import emit_json

        emit_json(
            {
                "imported": len(results) - len(failed),
                "failed": len(failed),
                "imports": [{k: v for k, v in r.items() if k != "wanted"} for r in results],
            }
        )
        return
    from libreyolo_profile.output.textsafe import safe_line

    def say(text: str) -> None:  # paths and trace-derived text: escape sequences in them stay inert
        sys.stdout.write(safe_line(text) + "\n")

    for r in results:
        say(f"imported {r['trace']} → {r['profile']}" if r["ok"] else f"failed {r['trace']}: {r['error']}")
    say(f"{len(results) - len(failed)} imported, {len(failed)} failed")
