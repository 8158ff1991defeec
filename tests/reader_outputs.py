"""Every reader's `--json` output on the shared traces and on a measured CPU profile, as a fixture that
holds the SQL renovation (issue 23) to "no behaviour change": tests/test_reader_outputs.py compares
today's outputs with the ones recorded in tests/reader_outputs/.

Regenerate (only for a change meant to change an output, named in its commit):

    python tests/reader_outputs.py            # rewrites tests/reader_outputs/recorded.json.gz

One file holds every recording, keyed by the trace's name (files named after the shared traces would
read as copies of them; none is: the traces stay in ../shared/traces).

The measured profile (tests/reader_outputs/measured_cpu_infer/, its trace left out: readers read the
tables) was written once by `libreyolo profile infer --device cpu --imgsz 96 --warmup 1 --runs 3
--no-report` with random LibreYOLO9-t weights.
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUTS = HERE / "reader_outputs"
MEASURED = OUTPUTS / "measured_cpu_infer"
RECORDED = OUTPUTS / "recorded.json.gz"
MEASURED_NAME = "measured_cpu_infer"
# each reader with the arguments that make it answer (what-if needs a change to model)
READERS = {
    "summary": [],
    "get": [],
    "phases": [],
    "kernels": [],
    "ops": [],
    "modules": [],
    "memory": [],
    "roofline": [],
    "what-if-category": ["what-if", "--remove-category", "elementwise"],
    "what-if-launches": ["what-if", "--remove-launches", "100"],
    "what-if-roofline": ["what-if", "--op-at-roofline", "70"],
}
COMPARED_WITH = {"v100_resnet50_workers0": "v100_resnet50_workers4"}  # a before/after pair


def outputs_of(target: Path, run, baseline: Path | None = None) -> dict:
    """{reader: its JSON document, or {"exit_code", "stderr"} where it refuses} for one trace or profile;
    `run(*args)` is the CLI (a CompletedProcess)."""
    found = {}
    for name, args in READERS.items():
        command = args[:1] or [name]
        found[name] = _answer(run(*command, str(target), *args[1:], "--json"))
    if baseline is not None:
        found["compare"] = _answer(run("compare", str(baseline), str(target), "--json"))
    return found


def _answer(result) -> object:
    if result.returncode == 0:
        return json.loads(result.stdout)
    return {"exit_code": result.returncode, "stderr": result.stderr.strip()}


def normalised(document: object, places: dict[str, str]) -> object:
    """The document with each absolute path of `places` (path → placeholder) replaced, inside any string."""
    if isinstance(document, dict):
        return {k: normalised(v, places) for k, v in document.items()}
    if isinstance(document, list):
        return [normalised(v, places) for v in document]
    if isinstance(document, str):
        for path, placeholder in places.items():
            document = document.replace(path, placeholder)
    return document


def differences(recorded: object, now: object, where: str = "") -> list[str]:
    """Where two documents differ; floats agree to 1e-9 relative (DuckDB's parallel sums may reorder)."""
    if isinstance(recorded, dict) and isinstance(now, dict):
        out = [f"{where}.{k}: only in the recording" for k in recorded.keys() - now.keys()]
        out += [f"{where}.{k}: new" for k in now.keys() - recorded.keys()]
        for k in recorded.keys() & now.keys():
            out += differences(recorded[k], now[k], f"{where}.{k}")
        return out
    if isinstance(recorded, list) and isinstance(now, list):
        if len(recorded) != len(now):
            return [f"{where}: {len(recorded)} items recorded, {len(now)} now"]
        return [
            d for i, (a, b) in enumerate(zip(recorded, now, strict=True)) for d in differences(a, b, f"{where}[{i}]")
        ]
    both_numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (recorded, now))
    if both_numbers and math.isclose(recorded, now, rel_tol=1e-9, abs_tol=1e-12):
        return []
    if type(recorded) is not type(now) and not both_numbers or recorded != now:
        return [f"{where}: recorded {recorded!r}, now {now!r}"]
    return []


@functools.cache
def _recorded() -> dict:
    return json.loads(gzip.decompress(RECORDED.read_bytes()))


def read_fixture(name: str) -> dict:
    return _recorded()[name]


def recorded_names() -> list[str]:
    """What the recording holds: the traces at the top of the traces folder when it was made, and the
    measured profile (a trace dropped in since is recorded by the next regeneration)."""
    return sorted(_recorded())


def shared_traces(traces: Path) -> list[str]:
    """The trace files at the top of the traces folder, by name (a job's ranks and the corpus below are left
    to tests/test_corpus.py)."""
    return sorted(p.name.removesuffix(".json.gz") for p in traces.glob("*.json.gz"))


def targets(traces: Path, names: list[str]) -> dict[str, tuple[Path, Path | None, dict[str, str]]]:
    """name → (what the readers read, the baseline compare reads it against, the paths to normalise), for
    the trace names and the measured profile."""
    places = {str(traces.resolve()): "<traces>", str(traces): "<traces>"}
    found = {
        name: (traces / f"{name}.json.gz", traces / f"{COMPARED_WITH[name]}.json.gz" if name in COMPARED_WITH else None)
        for name in names
        if name != MEASURED_NAME
    }
    found = {name: (target, baseline, places) for name, (target, baseline) in found.items()}
    found[MEASURED_NAME] = (MEASURED, MEASURED, {str(MEASURED): "<profile>"})
    return found


def main() -> int:
    sys.path[:0] = [str(HERE), str(HERE.parent)]  # conftest imports its sibling modules as `tests.…`
    from conftest import TRACES, run_cli_in_process

    recorded = {
        name: normalised(outputs_of(target, run_cli_in_process, baseline), places)
        for name, (target, baseline, places) in targets(TRACES, shared_traces(TRACES)).items()
    }
    RECORDED.write_bytes(gzip.compress(json.dumps(recorded, indent=1, sort_keys=True).encode(), mtime=0))
    print(f"wrote {RECORDED}: {', '.join(recorded)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
