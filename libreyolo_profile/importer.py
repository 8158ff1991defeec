"""Foreign input into our profile form: a PyTorch profiler trace from any machine, or a profile.json
written by LibreYOLO's built-in profiler. `libreyolo profile import` writes it as a profile directory
of ours, <project>/<kind>/ (or the next free <kind>2, <kind>3, … where that is taken: an import never
replaces a profile unless --exist-ok), so old measurements join the same readers and cross-run queries.

Many inputs at once (bulk import, bulk.py): each goes to <project>/<input name>/<kind>, imported by --jobs
local processes or, with --scheduler, on a Dask distributed cluster. Every input is imported or fails on
its own, and nothing is half-written (each profile is staged and published whole by store/disk/atomic.py,
or to object storage by store/crossrun/upload.py). The project may be an s3:// URL. SIGTERM raises
(stopping.py), so an import stopped by a supervisor still removes what it had begun to write.
"""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

from libreyolo_profile.errors import EXIT_OK, EXIT_UNANALYSABLE, ProfileError, UsageError


def imported_document(path: Path, import_key: str | None = None) -> dict:
    """Our document for whatever `path` is: a trace (analysed), a built-in profile (converted), or one
    of our own profiles (taken as it is). The loader decides, so import accepts what readers accept.
    `import_key`: a bulk import's key for this input (bulk.py), recorded so a retry can find it."""
    from libreyolo_profile.store.disk.loader import load_document

    loaded = load_document(Path(path))
    doc = dict(loaded.doc)
    doc["generation"] = uuid.uuid4().hex  # a new profile write: its sidecars are written with it
    doc["source"] = {
        **(doc.get("source") or {}),
        "imported": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "imported_from": str(Path(path).resolve()),
    }
    if import_key is not None:
        doc["source"]["import_key"] = import_key
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


def write_imported(
    trace: str,
    project: str,
    exist_ok: bool,
    subdirectory: str | None = None,
    *,
    import_key: str | None = None,
    stop=None,
) -> dict:
    """Import one input into <project>[/<subdirectory>]/<kind>; the facts `import` reports about it.
    `stop()` true (a cancelled Dask import) stops it after the analysis, before anything is written."""
    doc = imported_document(Path(trace), import_key)
    if stop is not None and stop():
        raise ProfileError("not imported: the import was cancelled", 130)
    return {"trace": str(trace), **publish(doc, project, exist_ok, subdirectory)}


def publish(doc: dict, project: str, exist_ok: bool, subdirectory: str | None = None) -> dict:
    """Write `doc` as <project>[/<subdirectory>]/<kind> (local or object storage); the facts about it."""
    from libreyolo_profile.store.crossrun.objectstore import is_remote
    from libreyolo_profile.store.schema import PROFILE_FILE

    base = project if subdirectory is None else f"{project.rstrip('/')}/{subdirectory}"
    if is_remote(project):
        from libreyolo_profile.store.crossrun.upload import upload as upload_profile

        wanted = f"{base.rstrip('/')}/{doc['kind']}"
        target, replaced = upload_profile(doc, wanted, exist_ok=exist_ok)
        profile = f"{target}/{PROFILE_FILE}"
    else:
        target, wanted, replaced = _write_local(doc, project, base, exist_ok)
        profile = str(target / PROFILE_FILE)
    return {
        "ok": True,
        "profile": profile,
        "directory": str(target),
        "wanted": str(wanted),
        "kind": doc["kind"],
        "device_type": doc.get("device_type"),
        "source": doc["source"],
        "replaced": replaced,
        "job": doc.get("job"),
        "verdict": {"bound": doc["verdict"]["bound"], "reason": doc["verdict"]["reason"]},
        "marks": doc.get("marks", {}),
        "rows": {name: len(table["rows"]) for name, table in doc["tables"].items()},
    }


def _write_local(doc: dict, project: str, base: str, exist_ok: bool) -> tuple[Path, Path, bool]:
    """(where the profile went, where it was wanted, whether it replaced one) under a local --project.
    A --project that is not a directory is exit 2 before anything is written, a full disk exit 1."""
    from libreyolo_profile.store.disk.atomic import no_space, unusable_path
    from libreyolo_profile.store.disk.owned import inside_project, project_directory
    from libreyolo_profile.store.disk.writer import write_directory
    from libreyolo_profile.store.schema import PROFILE_FILE

    project_directory(project)
    # our names only (the kind is checked to be one of ours when read), and under --project after links
    wanted = inside_project(project, Path(base) / doc["kind"])
    replaced = exist_ok and (wanted / PROFILE_FILE).is_file()
    missing = [d for d in (wanted.parent, *wanted.parent.parents) if not os.path.lexists(d)]
    try:
        target = write_directory(doc, wanted, exist_ok=exist_ok)
    except Exception as exc:  # pyarrow's and DuckDB's write errors are not all OSErrors
        for made in missing:  # deepest first: the directories the failed write made, where still empty
            with contextlib.suppress(OSError):
                made.rmdir()
        full = no_space(exc, project, "profile", EXIT_UNANALYSABLE)
        if full is not None:
            raise full from None
        unusable = unusable_path(exc)
        if unusable is not None:
            raise UsageError(f"--project {project}: {unusable.message}") from None
        raise
    return target, wanted, replaced


def import_job(traces: list[Path], project: str, as_json: bool, exist_ok: bool = False) -> int:
    """`libreyolo profile import --job TRACE…`: the ranks of one job as one job profile (store/document/job.py)."""
    from libreyolo_profile.stopping import sigterm_raises

    with sigterm_raises():
        result = write_job(traces, project, exist_ok)
        _tell(result, as_json, what=f"{len(result['job']['ranks'])} rank traces", job=result["job"])
    return EXIT_OK


def write_job(traces: list[Path], project: str, exist_ok: bool = False) -> dict:
    """The ranks' traces (files, or directories of them) as one job profile under <project>/<kind>; the
    facts `import --job` reports about it (lp.import_job calls it too)."""
    from libreyolo_profile.store.document.job import job_document

    _check_project(project)
    doc = job_document([Path(t) for t in traces])
    doc["generation"] = uuid.uuid4().hex
    doc["source"]["imported"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return {"trace": ", ".join(map(str, traces)), **publish(doc, str(project), exist_ok)}


def import_profile(trace: Path, project: str, as_json: bool, exist_ok: bool = False) -> None:
    """`libreyolo profile import TRACE`: write the profile directory, then say where it went."""
    result = write_imported(str(trace), str(project), exist_ok)
    _tell(result, as_json, what=str(trace))


def _tell(result: dict, as_json: bool, what: str, job: dict | None = None) -> None:
    from libreyolo_profile.output.json_out import emit_json
    from libreyolo_profile.output.terminal import stderr_note

    if result["directory"] != result["wanted"]:
        stderr_note(
            f"note: {result['wanted']} is taken and was kept; this profile went to {result['directory']} "
            f"(--exist-ok replaces it instead)"
        )
    if as_json:
        emit_json({k: v for k, v in result.items() if k not in ("trace", "ok", "wanted")})
        return
    say = _say()
    say(f"imported {what} → {result['profile']}{' (replaced the profile there)' if result['replaced'] else ''}")
    say(
        f"{result['kind']} profile · {result['device_type']} · source {result['source'].get('type')} · "
        + ", ".join(f"{n} {c} rows" for n, c in result["rows"].items())
    )
    say(f"verdict: {result['verdict']['bound']} — {result['verdict']['reason']}")
    for name, text in result["marks"].items():
        say(f"mark {name}: {text}")
    for note in (job or {}).get("notes", []):
        say(f"note: {note}")


def _say():
    from libreyolo_profile.output.textsafe import safe_line

    # paths and trace-derived text: safe_line keeps escape sequences in them inert on a terminal
    return lambda text: sys.stdout.write(safe_line(text) + "\n")


# ---------------------------------------------------------------------------------------------
# bulk import


def import_one(trace: str, project: str, exist_ok: bool, subdirectory: str, run: str | None = None, stop=None) -> dict:
    """One input of a bulk import, in a worker process or on a Dask worker: its result, or its failure
    as {"ok": false, "error": one line, "exit_code": …}; never raises, so one bad input stops no other.
    `run` keys the publication, so a retried attempt finds the profile an earlier one published (bulk.py);
    `stop()` true cancels it before anything is written."""
    from libreyolo_profile.bulk import already_imported, import_key

    try:
        key = import_key(run, trace) if run else None
        earlier = already_imported(project, subdirectory, key) if key else None
        if earlier is not None:
            return {
                "trace": trace,
                "ok": True,
                "profile": f"{earlier}/profile.json",
                "directory": earlier,
                "published_by_earlier_attempt": True,
            }
        return write_imported(trace, project, exist_ok, subdirectory, import_key=key, stop=stop)
    except ProfileError as exc:
        return {"trace": trace, "ok": False, "error": exc.message, "exit_code": exc.exit_code}
    except Exception as exc:  # a worker has no terminal: the failure travels back as a line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return {"trace": trace, "ok": False, "error": f"{type(exc).__name__}: {first}", "exit_code": EXIT_UNANALYSABLE}


def import_traces(
    traces: list[Path], project: str, as_json: bool, exist_ok: bool = False, jobs: int = 1, scheduler: str | None = None
) -> int:
    """`libreyolo profile import TRACE…`: one input as before; several (or --jobs/--scheduler) in bulk.
    Exit code: 0 when every input was imported, 1 when any failed (each failure has its own line)."""
    from libreyolo_profile.bulk import new_run, run_bulk
    from libreyolo_profile.stopping import sigterm_raises

    if jobs < 1:
        raise UsageError(f"--jobs takes 1 or more processes, not {jobs}")
    if scheduler is not None and jobs != 1:
        raise UsageError("give --jobs or --scheduler, not both (the Dask cluster has its own workers)")
    _check_project(project)
    with sigterm_raises():  # every `finally` runs: workers stopped, staging and uploads removed
        if len(traces) == 1 and jobs == 1 and scheduler is None:
            import_profile(traces[0], project, as_json, exist_ok=exist_ok)
            return EXIT_OK
        run = new_run()
        # absolute paths: a worker process or a Dask worker may run in another directory
        tasks = [
            (
                os.path.abspath(t),
                project if _remote(project) else os.path.abspath(project),
                exist_ok,
                input_name(t),
                run,
            )
            for t in traces
        ]
        return run_bulk(import_one, tasks, as_json, jobs, scheduler)


def _check_project(project: str) -> None:
    """A local --project that cannot take a profile is refused before any trace is analysed."""
    if not _remote(project):
        from libreyolo_profile.store.disk.owned import project_directory

        project_directory(project)


def _remote(project: str) -> bool:
    from libreyolo_profile.store.crossrun.objectstore import is_remote

    return is_remote(project)
