"""One trial of `run` or `infer` in its own process: the child side of measure/isolated.py.

`python -m libreyolo_profile.measure.trial_process <trialN/spec.json>` measures the trial the spec
names and writes `trial.json` beside it (or `error.json`: the one-line error and its exit code).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

from libreyolo_profile.errors import ProfileError
from libreyolo_profile.measure import common
from libreyolo_profile.measure.isolated import ERROR, options_from_json


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
        else:
            from libreyolo_profile.measure.train import profile_run

            profile_run(opts, spec["argv"], only_trial=spec["trial"], hand_off_to=out)
    except ProfileError as exc:
        (out / ERROR).write_text(json.dumps({"error": str(exc), "exit_code": exc.exit_code}))
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the parent prints it as one line, as the CLI would
        if os.environ.get("LIBREYOLO_PROFILE_DEBUG"):
            raise
        message = f"unexpected error in trial {spec['trial'] + 1}'s process: {type(exc).__name__}: {exc}"
        (out / ERROR).write_text(json.dumps({"error": message, "exit_code": 3}))
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
