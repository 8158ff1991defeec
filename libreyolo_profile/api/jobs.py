"""`lp.import_job`: the ranks of one distributed job as one job profile, from Python."""

from __future__ import annotations

from pathlib import Path

from libreyolo_profile.api.profile import Profile
from libreyolo_profile.api.profile import open as open_profile
from libreyolo_profile.errors import UsageError


def import_job(
    traces: str | Path | list[str | Path], project: str | Path = "runs/profile", *, exist_ok: bool = False
) -> Profile:
    """The ranks of one distributed job as one job profile, as `libreyolo profile import --job TRACE…` writes
    it: `traces` a folder of rank traces, or a list of trace files (or folders of them); written under
    <project>/<kind> (the next free <kind>2, <kind>3 … unless exist_ok), then opened. Returns the job's
    Profile: `table("ranks")` and `table("collectives")` hold every rank, `overlap()` reads every rank's
    trace, and the other tables show the rank whose figures the headline is (the slowest)."""
    from libreyolo_profile.importer import write_job
    from libreyolo_profile.store.crossrun.objectstore import is_remote

    if is_remote(str(project)):
        raise UsageError(
            f"lp.import_job writes a local project, not {project}: "
            "use `libreyolo profile import --job` for object storage"
        )
    inputs = [traces] if isinstance(traces, (str, Path)) else list(traces)
    if not inputs:
        raise UsageError("lp.import_job needs the job's rank traces: a folder of them, or a list of files")
    result = write_job([Path(t) for t in inputs], str(project), exist_ok)
    return open_profile(result["directory"])
