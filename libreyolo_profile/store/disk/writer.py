"""Write a measured profile: profile.json, the parquet sidecars, the trace and the repeat file,
published atomically into <project>/<kind>/, or, where that is taken, the next free <kind>2, <kind>3, …
(`exist_ok` replaces it in place instead)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from libreyolo_profile.store.disk.atomic import claim, publish, staging_dir
from libreyolo_profile.store.disk.kept_sections import ASKED, keep_section
from libreyolo_profile.store.disk.owned import OWNED_FILES, refuse_unless_ours
from libreyolo_profile.store.disk.sidecars import write_sidecars
from libreyolo_profile.store.document.assemble import build_document, repeat_document
from libreyolo_profile.store.document.capture import TrialCapture
from libreyolo_profile.store.document.finite import settle_non_finite
from libreyolo_profile.store.document.verdict import disown_saving
from libreyolo_profile.store.ingest.analyse import analyse_trace
from libreyolo_profile.store.schema import PROFILE_FILE, REPEAT_FILE, TRACE_FILE


def dump_json(doc: dict, path: Path) -> None:
    path.write_text(json.dumps(doc, indent=1, allow_nan=False, default=str), encoding="utf-8")


def write_directory(
    doc: dict,
    target: Path,
    trace: Path | None = None,
    repeat: bool = False,
    exist_ok: bool = True,
    link_trace: bool = False,
) -> Path:
    """Stage profile.json (+ repeat file, sidecars, trace copy) and publish it; returns where it went.

    exist_ok: replace `target` in place (the reader cache rebuilds its entries so), but only a profile
    of ours (store/disk/owned.py; anything else exits 2 untouched). Otherwise an occupied `target` is
    kept and the profile goes to the first free `target2`, `target3`, …"""
    if exist_ok:
        refuse_unless_ours(target)
    settle_non_finite(doc)  # the last line of defence: a NaN that reached here is null, and the marks say where
    staged = staging_dir(target)
    try:
        write_sidecars(doc, staged)
        if trace is not None and not (link_trace and _linked(trace, staged / TRACE_FILE)):
            shutil.copyfile(trace, staged / TRACE_FILE)
        if repeat:
            dump_json(repeat_document(doc), staged / REPEAT_FILE)
        dump_json(doc, staged / PROFILE_FILE)
        if not exist_ok:
            return claim(staged, target)
        refuse_unless_ours(target)  # again: it may have changed while the profile was staged
        publish(staged, target, keep=OWNED_FILES)
        return target
    finally:
        if staged.exists():
            shutil.rmtree(staged, ignore_errors=True)


def _linked(source: Path, dest: Path) -> bool:
    """`dest` as a second name of `source` (a measured trace, in the run's own workspace that is removed after):
    ~200 MB a training trace not written twice. False where the filesystem cannot link (then it is copied)."""
    try:
        os.link(source, dest)
    except OSError:
        return False
    return True


def analyse_trials(trials: list[TrialCapture], kind: str, keep_trace: bool, cpu_peak: dict | None) -> list[dict]:
    """Each trial's trace analysed against the CPU roof `cpu_peak`; the last one's kept sections (a report's
    timeline) computed in the same pass where its trace is kept."""
    asked = ASKED.get() if keep_trace else ()
    return [
        analyse_trace(
            t.trace_path, kind, t.images_per_step, cpu_peak=cpu_peak, sections=asked if t is trials[-1] else ()
        )
        for t in trials
    ]


def write_profile(
    out_dir: Path,
    *,
    kind: str,
    trials: list[TrialCapture],
    keep_trace: bool,
    command: list[str],
    settings: dict,
    environment: dict,
    model: dict,
    marks: dict,
    exist_ok: bool = False,
    analyses: list[dict] | None = None,
) -> tuple[dict, Path]:
    """Analyse every trial's trace (unless `analyses`, analyse_trials' answer for the same trials and roof, is
    handed over) and publish the profile into `out_dir` (or the next free name beside it, unless exist_ok);
    returns the document and the directory it went to."""
    if analyses is None:
        analyses = analyse_trials(trials, kind, keep_trace, environment.get("cpu_peak"))
    device_type = "cpu" if str(settings.get("device", "")).startswith("cpu") else None
    doc = build_document(
        analyses,
        list(trials),
        source={"type": "measured"},
        command=command,
        settings=settings,
        environment=environment,
        model=model,
        marks=marks,
        device_type=device_type,
    )
    doc["verdict"] = disown_saving(doc["verdict"], doc.get("marks"))  # a noisy or contended measurement
    written = write_directory(
        doc,
        Path(out_dir),
        trials[-1].trace_path if keep_trace else None,
        repeat=len(trials) > 1,
        exist_ok=exist_ok,
        link_trace=True,
    )
    for name, files in analyses[-1]["kept"].items():
        keep_section(doc, name, None, files)
    return doc, written
