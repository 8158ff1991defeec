"""Foreign input into our profile form: a PyTorch profiler trace from any machine, or a profile.json
written by LibreYOLO's built-in profiler. `libreyolo profile import` writes it as a profile directory
of ours, <project>/<kind>/ (or the next free <kind>2, <kind>3, … where that is taken: an import never
replaces a profile unless --exist-ok), so old measurements join the same readers and cross-run queries.

Many inputs at once (bulk import): each goes to <project>/<input name>/<kind>, imported by --jobs local
processes or, with --scheduler, on a Dask distributed cluster. Every input is imported or fails on its
own: a failure is reported for that input, the others still go in, and nothing is half-written (each
profile is staged and published whole by store/disk/atomic.py, or uploaded sidecars first and
profile.json last to object storage, store/crossrun/objectstore.py). The project may be an s3:// URL.
"""

from __future__ import annotations

import os
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

from libreyolo_profile.errors import EXIT_OK, EXIT_UNANALYSABLE, ProfileError, UsageError


def imported_document(path: Path) -> dict:
    """Our document for whatever `path` is: a trace (analysed), a built-in profile (converted), or one
    of our own profiles (taken as it is). The loader decides, so import accepts what readers accept."""
    from libreyolo_profile.store.disk.loader import load_document

    loaded = load_document(Path(path))
    doc = dict(loaded.doc)
    doc["generation"] = uuid.uuid4().hex  # a new profile write: its sidecars are written with it
    doc["source"] = {**(doc.get("source") or {}),
                     "imported": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                     "imported_from": str(Path(path).resolve())}
    return doc


def input_name(path: Path) -> str:
    """The directory a bulk import gives an input: its file name without .json/.json.gz (a file named
    profile.json, as LibreYOLO writes them, by its directory's name instead)."""
    path = Path(os.path.abspath(path))
    if path.name in ("profile.json", "profile_repeat.json") and path.parent.name:
        path = path.parent
    name = path.name
    for suffix in (".gz", ".json"):
        name = name.removesuffix(suffix)
    return name.lstrip(".") or "import"  # never a hidden directory: the readers skip those


def write_imported(trace: str, project: str, exist_ok: bool, subdirectory: str | None = None) -> dict:
    """Import one input into <project>[/<subdirectory>]/<kind>; the facts `import` reports about it."""
    from libreyolo_profile.store.crossrun.objectstore import is_remote
    from libreyolo_profile.store.schema import PROFILE_FILE

    doc = imported_document(Path(trace))
    base = project if subdirectory is None else f"{project.rstrip('/')}/{subdirectory}"
    if is_remote(project):
        from libreyolo_profile.store.crossrun.objectstore import upload_profile

        wanted = f"{base.rstrip('/')}/{doc['kind']}"
        target, replaced = upload_profile(doc, wanted, exist_ok=exist_ok)
        profile = f"{target}/{PROFILE_FILE}"
    else:
        from libreyolo_profile.store.disk.writer import write_directory

        wanted = Path(base) / doc["kind"]
        replaced = exist_ok and (wanted / PROFILE_FILE).is_file()
        target = write_directory(doc, wanted, exist_ok=exist_ok)
        profile = str(target / PROFILE_FILE)
    return {"trace": str(trace), "ok": True, "profile": profile, "directory": str(target), "wanted": str(wanted),
            "kind": doc["kind"], "device_type": doc.get("device_type"), "source": doc["source"],
            "replaced": replaced, "verdict": {"bound": doc["verdict"]["bound"], "reason": doc["verdict"]["reason"]},
            "marks": doc.get("marks", {}), "rows": {name: len(table["rows"]) for name, table in doc["tables"].items()}}


def import_profile(trace: Path, project: str, as_json: bool, exist_ok: bool = False) -> None:
    """`libreyolo profile import TRACE`: write the profile directory, then say where it went."""
    from libreyolo_profile.output.json_out import emit_json
    from libreyolo_profile.output.terminal import stderr_note

    result = write_imported(str(trace), str(project), exist_ok)
    if result["directory"] != result["wanted"]:
        stderr_note(f"note: {result['wanted']} is taken and was kept; this profile went to {result['directory']} "
                    f"(--exist-ok replaces it instead)")
    if as_json:
        emit_json({k: v for k, v in result.items() if k not in ("trace", "ok", "wanted")})
        return
    say = _say()
    say(f"imported {trace} → {result['profile']}{' (replaced the profile there)' if result['replaced'] else ''}")
    say(f"{result['kind']} profile · {result['device_type']} · source {result['source'].get('type')} · "
        + ", ".join(f"{n} {c} rows" for n, c in result["rows"].items()))
    say(f"verdict: {result['verdict']['bound']} — {result['verdict']['reason']}")
    for name, text in result["marks"].items():
        say(f"mark {name}: {text}")


def _say():
    from libreyolo_profile.output.textsafe import safe_line

    # paths and trace-derived text: safe_line keeps escape sequences in them inert on a terminal
    return lambda text: sys.stdout.write(safe_line(text) + "\n")


# ---------------------------------------------------------------------------------------------
# bulk import


def import_one(trace: str, project: str, exist_ok: bool, subdirectory: str) -> dict:
    """One input of a bulk import, in a worker process or on a Dask worker: its result, or its failure
    as {"ok": false, "error": one line, "exit_code": …}; never raises, so one bad input stops no other."""
    try:
        return write_imported(trace, project, exist_ok, subdirectory)
    except ProfileError as exc:
        return {"trace": trace, "ok": False, "error": exc.message, "exit_code": exc.exit_code}
    except Exception as exc:  # a worker has no terminal: the failure travels back as a line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return {"trace": trace, "ok": False, "error": f"{type(exc).__name__}: {first}", "exit_code": EXIT_UNANALYSABLE}


def _run_local(tasks: list[tuple], jobs: int) -> list[dict]:
    if jobs == 1:
        return [import_one(*task) for task in tasks]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # spawn: a fresh interpreter per worker, never a fork of a parent that holds threads or DuckDB state
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(import_one, *zip(*tasks)))


def _run_dask(tasks: list[tuple], scheduler: str) -> list[dict]:
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs Dask: pip install 'libreyolo-profile[dask]'") from None
    try:
        client = Client(scheduler, timeout="10s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    try:
        # pure=False: every task runs (two identical inputs are two imports), and a retry never replays a write
        futures = client.map(import_one, *zip(*tasks), pure=False)
        results = []
        for task, future in zip(tasks, futures):
            try:
                results.append(future.result())
            except Exception as exc:  # the worker died, or the task could not reach it
                results.append({"trace": task[0], "ok": False, "exit_code": EXIT_UNANALYSABLE,
                                "error": f"lost on the Dask cluster: {type(exc).__name__}: {exc}"})
        return results
    finally:
        client.close()


def import_traces(traces: list[Path], project: str, as_json: bool, exist_ok: bool = False, jobs: int = 1,
                  scheduler: str | None = None) -> int:
    """`libreyolo profile import TRACE…`: one input as before; several (or --jobs/--scheduler) in bulk.
    Exit code: 0 when every input was imported, 1 when any failed (each failure has its own line)."""
    if jobs < 1:
        raise UsageError(f"--jobs takes 1 or more processes, not {jobs}")
    if scheduler is not None and jobs != 1:
        raise UsageError("give --jobs or --scheduler, not both (the Dask cluster has its own workers)")
    if len(traces) == 1 and jobs == 1 and scheduler is None:
        import_profile(traces[0], project, as_json, exist_ok=exist_ok)
        return EXIT_OK
    # absolute paths: a worker process or a Dask worker may run in another directory
    tasks = [(os.path.abspath(t), project if _remote(project) else os.path.abspath(project), exist_ok, input_name(t))
             for t in traces]
    results = _run_dask(tasks, scheduler) if scheduler else _run_local(tasks, min(jobs, len(tasks)))
    failed = [r for r in results if not r["ok"]]
    if as_json:
        from libreyolo_profile.output.json_out import emit_json

        emit_json({"imported": len(results) - len(failed), "failed": len(failed),
                   "imports": [{k: v for k, v in r.items() if k != "wanted"} for r in results]})
    else:
        say = _say()
        for r in results:
            say(f"imported {r['trace']} → {r['profile']}" if r["ok"] else f"failed {r['trace']}: {r['error']}")
        say(f"{len(results) - len(failed)} imported, {len(failed)} failed")
    return EXIT_UNANALYSABLE if failed else EXIT_OK


def _remote(project: str) -> bool:
    from libreyolo_profile.store.crossrun.objectstore import is_remote

    return is_remote(project)
