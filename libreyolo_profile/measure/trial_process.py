"""One trial of `run` or `infer` in its own process: the child side of measure/isolated.py.

`python -m libreyolo_profile.measure.trial_process <trialN/spec.json>` measures the trial the spec
names and writes `trial.json` beside it (or `error.json`: the one-line error and its exit code). A spec
with a `job` is one rank of a measured DDP job (measure/ranks.py): the rank joins the process group first.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

from libreyolo_profile.errors import ProfileError
from libreyolo_profile.measure import common
from libreyolo_profile.measure.isolated import ERROR, options_from_json, write_reserved


def main(spec_path: Path) -> int:
    spec = json.loads(spec_path.read_text())
    out = spec_path.parent
    try:
        opts = options_from_json(spec["kind"], spec["options"])
        opts = dataclasses.replace(opts, project=out)
        common.quiet_libreyolo_logging()
        if spec["kind"] == "infer":
            from libreyolo_profile.measure.infer import profile_infer

            profile_infer(opts, spec["argv"], only_trial=spec["trial"], hand_off_to=out)
        elif "job" in spec:  # one rank of a measured DDP job (measure/ranks.py)
            from libreyolo_profile.measure import ranks
            from libreyolo_profile.measure.train import profile_run

            ranks.join_job(spec["job"], opts.device)
            try:
                profile_run(opts, spec["argv"], only_trial=0, hand_off_to=out, job=spec["job"])
            finally:
                ranks.leave_job()
        else:
            from libreyolo_profile.measure.train import profile_run

            profile_run(opts, spec["argv"], only_trial=spec["trial"], hand_off_to=out)
    except ProfileError as exc:
        return _report(out, str(exc), exc.exit_code)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the parent prints it as one line, as the CLI would
        if os.environ.get("LIBREYOLO_PROFILE_DEBUG"):
            raise
        full = common.disk_error(exc, out) if isinstance(exc, OSError) else None
        if full is not None:
            return _report(out, full.message, full.exit_code)
        return _report(out, f"unexpected error in trial {spec['trial'] + 1}'s process: {type(exc).__name__}: {exc}", 3)
    return 0


def _report(out: Path, message: str, exit_code: int) -> int:
    """The error for the parent, in the room it reserved (measure/isolated.py); never a traceback."""
    try:
        write_reserved(out / ERROR, {"error": message, "exit_code": exit_code})
    except OSError:
        pass  # nowhere to say it: the parent reports the exit code
    return exit_code


if __name__ == "__main__":
    from libreyolo_profile.collector import pause_for_startup

    pause_for_startup()  # as the command line does for `run` and `infer` (collector.py)
    sys.exit(main(Path(sys.argv[1])))
