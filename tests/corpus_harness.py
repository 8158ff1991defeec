"""The corpus tests itself (issue 49): every reader on every trace under the traces folder, at any depth (a file
dropped in is one more case; the ranks of a job are traces too), held to the invariants that hold for ANY
trace. No trace is named here.

Each reader answers with exit 0 and one JSON document free of NaN/Infinity; `get` answers every metric as
`summary` states it; each step's blame adds up to the step the plain-Python reference measures from the raw
events (tests/blame_reference.py); every table holds the device time of the headline, which is the reference's
kernel time in the window; shares that partition a whole add up to 100 and no share leaves 0..100; no roofline
row is above its roof without the reason in the row; what-if never projects a step below the device work that
remains, nor below the critical path (device and host) the reference bounds. Each multi-rank job folder is
imported as a job and read by `ranks`.

Each trace is analysed once per suite (tests/trace_analyses.py) and each reader runs once per trace, in
process; the tests of one trace share those answers, so one trace's failures read as a row of invariants.

The harness is here; the test files run it: tests/test_corpus.py, test_corpus_2.py … each on one part of the
traces (PARTS, balanced by size: pytest-xdist gives a whole file to one worker, and the whole corpus in one file
kept one core busy for minutes while the other had finished), tests/test_corpus_jobs.py on the job folders. A
part's file says which it is (CORPUS_PART); `pytest_generate_tests` gives each test its part's traces."""

from __future__ import annotations

import json
import math
import re

import pytest

from tests import blame_reference
from tests.conftest import TRACES, job_folders, require_traces, run_cli, run_cli_in_process, trace_files, trace_id

# what a part's file takes (`from tests.corpus_harness import *`): the per-trace tests, their fixtures and the hook
# that parametrizes them; the job folders' test is tests/test_corpus_jobs.py's
__all__ = [
    "answers",
    "reports",
    "pytest_generate_tests",
    "test_every_reader_answers_with_one_strict_json_document",
    "test_summary_states_a_verdict_with_its_reason_and_prints_it",
    "test_get_answers_every_metric_as_summary_states_it",
    "test_each_steps_blame_adds_up_to_the_step_the_raw_events_give",
    "test_every_table_holds_the_headline_device_time",
    "test_shares_partition_their_whole_and_stay_within_it",
    "test_no_roofline_row_is_above_its_roof_without_the_reason_in_the_row",
    "test_what_if_never_projects_below_the_device_work_that_remains",
    "test_what_if_never_projects_below_the_independent_critical_path",
]
CORPUS = trace_files()
PARTS = 4  # the files that run the harness on the traces: tests/test_corpus.py, test_corpus_2.py … _4.py


# what a trace costs the harness, roughly: a fixed part (~90 commands, most of them `get`) as much as a MB of
# gzipped trace, then its size (the analysis and the reference's pass over every event)
FIXED_BYTES = 1_000_000


def corpus_part(part: int) -> list:
    """The traces of part `part` (1..PARTS): the costliest first, each to the part that costs least so far (the
    first such), so the parts take about as long; in the corpus' order within the part."""
    held, parts = [0] * PARTS, [[] for _ in range(PARTS)]
    for path in sorted(CORPUS, key=lambda p: -p.stat().st_size):
        lightest = held.index(min(held))
        held[lightest] += FIXED_BYTES + path.stat().st_size
        parts[lightest].append(path)
    return sorted(parts[part - 1], key=CORPUS.index)


def pytest_generate_tests(metafunc):
    """Each per-trace test of a part's file on that part's traces (the file's CORPUS_PART), every test of one
    trace before the next trace's (module scope groups them): the reference's parsed events and the trace's
    answers are kept for one trace at a time. No trace at all is one case, which fails under CI=true."""
    if "path" not in metafunc.fixturenames:
        return
    paths = corpus_part(metafunc.module.CORPUS_PART) if CORPUS else [None]
    ids = [trace_id(p) if p is not None else "no-traces" for p in paths]
    metafunc.parametrize("path", paths, ids=ids, scope="module")


JOB_CASES = [pytest.param(p, id=trace_id(p)) for p in job_folders()] or [pytest.param(None, id="no-jobs")]
ALL_ROWS = "1000000000"  # --top: every row, so the shares of a reader's list can be added up
# the readers on one trace and their arguments (what-if and compare get theirs from the trace's own answers)
READERS = {
    "summary": ["summary", "{trace}"],
    "get": ["get", "{trace}"],
    "phases": ["phases", "{trace}"],
    "kernels": ["kernels", "{trace}", "--top", ALL_ROWS],
    "ops": ["ops", "{trace}", "--top", ALL_ROWS],
    "modules": ["modules", "{trace}"],
    "roofline": ["roofline", "{trace}", "--top", ALL_ROWS],
    "memory": ["memory", "{trace}"],
    "report": ["report", "{trace}", "--out", "{out}"],
    "what-if-roofline": ["what-if", "{trace}", "--op-at-roofline", "70"],
}
# every table's device time, and the blame per step, in one query (the tables' names and columns: docs/SCHEMA.md)
TOTALS = (
    "SELECT 'kernels' AS tbl, device, sum(total_ms) AS ms FROM kernels WHERE activity = 'kernel' GROUP BY device "
    "UNION ALL SELECT 'phases', NULL, sum(gpu_ms) FROM phases "
    "UNION ALL SELECT 'steps', NULL, sum(kernel_ms + outside_kernel_ms) FROM steps "
    "UNION ALL SELECT 'phases_outside', NULL, sum(gpu_ms) FILTER (WHERE launched_outside_steps) FROM phases "
    "UNION ALL SELECT 'kernels_outside', NULL, sum(total_ms) FILTER (WHERE launched_outside_steps) FROM kernels "
    "WHERE activity = 'kernel' "
    # the roofline holds every execution (kernels, memcpys, memsets): its op rows and the work no op launched
    "UNION ALL SELECT 'roofline', NULL, sum(device_ms_per_step) * (SELECT count(*) FROM steps) FROM roofline "
    # the modules' roots: the kernel time launched inside the model
    "UNION ALL SELECT 'modules', NULL, sum(device_ms) FROM modules WHERE depth = 0"
)
BLAME_STEPS = (
    "SELECT step, sum(ns) AS ns, max(step_ms) AS step_ms, min(step_ms) AS min_step_ms, sum(share_pct) AS share, "
    "count(*) FILTER (WHERE whole IS DISTINCT FROM 'step_ms') AS unnamed_whole FROM blame GROUP BY step"
)
BLAME_PER_RANK = "SELECT rank, step, sum(ns) AS ns, max(step_ms) AS step_ms FROM blame GROUP BY rank, step"
ABOVE_ROOF = "SELECT * FROM roofline WHERE pct_of_roofline > 100"
# the three in one `query` (each costs a command): one row, a list of each one's rows
CHECKS = (
    f"SELECT (SELECT list(t) FROM ({TOTALS}) t) AS totals, "
    f"(SELECT list(b ORDER BY b.step) FROM ({BLAME_STEPS}) b) AS blame_steps, "
    f"(SELECT list(r) FROM ({ABOVE_ROOF}) r) AS above_roof"
)
# ratios named *_pct that are not a share of a whole: a slowdown, a spread, a change, a distance to a roof
# (the roofline rows above 100% are held to their own rule below)
NOT_SHARES = {"profiler_overhead_pct", "timing_cv_pct", "delta_pct", "pct_of_roofline"}
# the categories each kernel-share metric adds up (docs/SCHEMA.md, "Kernel categories")
SHARE_OF = {
    "gemm_pct": ("gemm",),
    "communication_pct": ("communication",),
    "memory_bound_pct": ("elementwise", "layout", "norm", "reduce", "embedding"),
}
# a few ns per execution of rounding between the reference's Decimal µs and the product's ns is not a miss
NS_PER_EXECUTION = 1e-6
SHARE_SUM_TOLERANCE = 1e-6  # points of %


def _reject_constant(token: str):
    raise ValueError(f"{token} in a JSON document")


def strict_json(text: str) -> object:
    """One JSON document, as a strict parser reads it: NaN, Infinity and anything after the document refused."""
    return json.loads(text, parse_constant=_reject_constant)


class Answers:
    """One trace's reader answers, each run once per worker and kept (the tests of the trace share them)."""

    def __init__(self, path, out_dir, analysed):
        self.path, self.out = path, out_dir / (trace_id(path).replace("/", "__") + ".html")
        # the analysis was this very command, run in the worker's shared cache
        self.runs: dict[tuple[str, ...], object] = {("summary", str(path)): analysed.summary(path)}
        self.opened = None

    def run(self, *args: str):
        if args not in self.runs:
            self.runs[args] = run_cli(*args, "--json")
        return self.runs[args]

    def document(self, *args: str) -> object:
        """The JSON document a command answers with; the test fails with the command's error where it has none."""
        result = self.run(*args)
        if result.returncode != 0:
            pytest.fail(f"`{' '.join(args[:1])}` exit {result.returncode}: {result.stderr.strip()[-600:]}")
        return strict_json(result.stdout)

    def of(self, name: str) -> object:
        return self.document(*(a.format(trace=self.path, out=self.out) for a in READERS[name]))

    def checks(self, part: str) -> list[dict]:
        """One part of the CHECKS query's answer: its rows."""
        return self.document("query", CHECKS, str(self.path))[0][part] or []

    @property
    def summary(self) -> dict:
        return self.of("summary")

    def categories(self) -> list[str]:
        """The kernel categories present (the kernels table's, where kernels ran)."""
        return sorted({k["category"] for k in self.of("kernels")["kernels"] if k["activity"] == "kernel"})

    def what_ifs(self) -> list[tuple[str, ...]]:
        """What-if for each kernel category present, and for removing one launch per step where there is one."""
        cases = [("what-if", str(self.path), "--remove-category", c) for c in self.categories()]
        if (self.summary["metrics"].get("launches_per_step") or 0) >= 1:
            cases.append(("what-if", str(self.path), "--remove-launches", "1"))
        return cases

    def what_if(self, args: tuple[str, ...]) -> dict:
        """A what-if's document. The first case runs as the command; the others as the document it prints
        (readers/what_if.what_if_document) on the profile opened once: opening it was half of each command."""
        if args == self.what_ifs()[0]:
            return self.document(*args)
        if args not in self.runs:
            from libreyolo_profile.errors import ProfileError
            from libreyolo_profile.readers.common import open_profile
            from libreyolo_profile.readers.what_if import what_if_document

            if self.opened is None:
                self.opened = open_profile(self.path)
            category = args[3] if args[2] == "--remove-category" else None
            launches = int(args[3]) if args[2] == "--remove-launches" else None
            try:
                self.runs[args] = strict_json(json.dumps(what_if_document(self.opened, category, launches)))
            except (ProfileError, ValueError) as exc:
                self.runs[args] = exc
        if isinstance(self.runs[args], Exception):
            pytest.fail(f"`{' '.join(args[2:])}`: {self.runs[args]}")
        return self.runs[args]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return tmp_path_factory.mktemp("corpus-reports")


@pytest.fixture(scope="module")
def answers(path, reports, analysed_traces):
    """The answers of the trace the tests are parametrized with (the traces folder required: CI=true fails)."""
    require_traces()
    if path is None:
        pytest.fail(f"no trace file under {TRACES}")
    return Answers(path, reports, analysed_traces)


def _partner(answers: Answers, analysed, part: list) -> str:
    """The trace compare reads this one against: the next one of the same kind (compare refuses a train against
    an infer profile) among its part's traces (analysed in this file anyway), else among all, else the trace
    itself."""
    kind = answers.summary["profile"]["kind"]
    at = part.index(answers.path)
    for other in part[at + 1 :] + part[:at] + [p for p in CORPUS if p not in part]:
        result = analysed.summary(other)
        if result.returncode == 0 and strict_json(result.stdout)["profile"]["kind"] == kind:
            return str(other)
    return str(answers.path)


def test_every_reader_answers_with_one_strict_json_document(answers, analysed_traces, request):
    commands = [tuple(a.format(trace=answers.path, out=answers.out) for a in args) for args in READERS.values()]
    commands.append(("query", CHECKS, str(answers.path)))
    failures = []
    if answers.run(*commands[0]).returncode == 0:
        commands += answers.what_ifs()[:1]
        part = corpus_part(request.module.CORPUS_PART)
        commands.append(("compare", _partner(answers, analysed_traces, part), str(answers.path)))
        for args in answers.what_ifs()[1:]:
            try:
                answers.what_if(args)
            except pytest.fail.Exception as exc:
                failures.append(str(exc))
    for args in commands:
        result = answers.run(*args)
        try:
            assert result.returncode == 0, f"exit {result.returncode}: {result.stderr.strip()[-400:]}"
            assert "Traceback" not in result.stderr, result.stderr[-400:]
            strict_json(result.stdout)
        except (AssertionError, ValueError) as exc:
            failures.append(f"{' '.join(args[:1] + args[2:])}: {exc}")
    assert not failures, f"{len(failures)} of {len(commands)} commands: " + " | ".join(failures)


def test_summary_states_a_verdict_with_its_reason_and_prints_it(answers):
    summary = answers.summary
    assert summary["verdict"]["bound"] and summary["verdict"]["reason"]
    assert summary["metrics"]["step_ms"] > 0 and summary["window"]["steps"] >= 1
    text = run_cli("summary", str(answers.path))  # the first screen, as a terminal user reads it
    assert text.returncode == 0 and "Traceback" not in text.stderr, text.stderr[-600:]
    assert summary["verdict"]["bound"] in text.stdout
    # every "cause N% (M ms" the reason quotes is the blame's share of that cause, of the blame table's step
    steps = summary["blame"]["steps"]
    table_step_ms = sum(s["step_ms"] for s in steps) / len(steps)
    shares = summary["blame"]["total"]
    for cause, pct, ms in re.findall(r"([a-z_]+) ([0-9.]+)% \(([0-9.]+) ms", summary["verdict"]["reason"]):
        assert float(pct) == pytest.approx(shares[cause], abs=0.05), cause
        assert float(ms) == pytest.approx(shares[cause] * table_step_ms / 100, abs=0.006), cause


def test_get_answers_every_metric_as_summary_states_it(answers):
    listing = answers.of("get")
    metrics, reasons = answers.summary["metrics"], answers.summary.get("null_reasons") or {}
    assert listing and set(metrics) <= set(listing)
    for name in listing:
        got = answers.document("get", str(answers.path), name)
        assert got["field"] == name and got["value"] == listing[name]["value"], name
        if name in metrics:
            assert got["value"] == metrics[name], name
        if got["value"] is None and name in metrics:
            assert got["reason"] and reasons.get(name), f"{name} is null without a reason"


def test_each_steps_blame_adds_up_to_the_step_the_raw_events_give(answers):
    """The blame table's rows add up to each step's wall time to the ns, their shares to 100, every row names
    its whole; the step is the reference's (host start to the later of host end and its device work's end)."""
    summary = answers.summary
    rows = answers.checks("blame_steps")
    reference = blame_reference.blame(answers.path)
    assert [r["step"] for r in rows] == sorted(reference), "the blame's steps are the reference's"
    for r in rows:
        assert r["step_ms"] == r["min_step_ms"], f"step {r['step']}: one step_ms per step"
        assert r["ns"] == pytest.approx(r["step_ms"] * 1e6, abs=1), f"step {r['step']}: causes add up to the step"
        assert r["ns"] == pytest.approx(reference[r["step"]]["wall_ns"], abs=1), f"step {r['step']}: the step's wall"
        assert r["share"] == pytest.approx(100.0, abs=SHARE_SUM_TOLERANCE), f"step {r['step']}: shares"
        assert r["unnamed_whole"] == 0, f"step {r['step']}: a blame row that names no whole"
    for step in summary["blame"]["steps"]:
        # the summary prints ms to 3 decimals: each cause within half a µs of rounding
        tolerance = 5e-4 * max(len(step["causes"]), 1)
        assert sum(step["causes"].values()) == pytest.approx(step["step_ms"], abs=tolerance), step["step"]


def test_every_table_holds_the_headline_device_time(answers):
    """The headline's kernel time per device is the reference's kernel time inside the window (every execution
    clipped to it); the kernels, phases and steps tables hold exactly it, the roofline every execution's time,
    the modules' roots at most it."""
    summary = answers.summary
    reference = {int(dev): ns / 1e6 for dev, ns in blame_reference.window_kernel_ns(answers.path).items()}
    headline = {d["device"]: d["kernel_ms"] for d in summary["devices"]}
    tolerance = NS_PER_EXECUTION * max(sum(d["kernels"] for d in summary["devices"]), 1)
    assert headline == pytest.approx(reference, abs=tolerance), "headline kernel_ms per device vs the raw events"
    whole = sum(headline.values())
    totals = {(r["tbl"], r["device"]): r["ms"] for r in answers.checks("totals")}
    for device, ms in headline.items():
        assert (totals.get(("kernels", device)) or 0) == pytest.approx(ms, abs=tolerance), f"kernels, device {device}"
    assert (totals[("phases", None)] or 0) == pytest.approx(whole, abs=tolerance), "phases"
    assert (totals[("steps", None)] or 0) == pytest.approx(whole, abs=tolerance), "steps"
    outside = (totals[("phases_outside", None)] or 0, totals[("kernels_outside", None)] or 0)
    assert outside[0] == pytest.approx(outside[1], abs=tolerance), "launched outside the steps: phases vs kernels"
    executions = sum(blame_reference.window_kernel_ns(answers.path, kinds=("kernel", "copy")).values()) / 1e6
    if summary["profile"]["device_type"] != "cpu":  # a CPU profile's roofline holds its ops' own time instead
        assert (totals[("roofline", None)] or 0) == pytest.approx(executions, abs=tolerance), "roofline vs executions"
    assert (totals[("modules", None)] or 0) <= whole + tolerance, "the modules' roots hold more than the headline"
    # the readers as printed: phases per step, kernels per step, times the steps
    steps = summary["window"]["steps"]
    phases = answers.of("phases")["phases"]
    assert sum(p["gpu_ms"] or 0 for p in phases) * steps == pytest.approx(whole, abs=tolerance), "phases reader"
    kernels = [k for k in answers.of("kernels")["kernels"] if k["activity"] == "kernel"]
    assert sum(k["ms_per_step"] for k in kernels) * steps == pytest.approx(whole, abs=tolerance), "kernels reader"
    for device in summary["devices"]:
        assert device["busy_ms"] <= device["kernel_ms"] + 1e-9, "a device busier than the sum of its kernels"
    if len(summary["devices"]) == 1:
        shares = {c["category"]: c["kernel_share_pct"] or 0 for c in summary["categories"]}
        for metric, categories in SHARE_OF.items():
            share = sum(shares.get(c, 0) for c in categories)
            assert share == pytest.approx(summary["metrics"][metric] or 0, abs=SHARE_SUM_TOLERANCE), metric


def _shares(document: object, where: str = "") -> list[tuple[str, float]]:
    """Every number under a key named *_pct (a `get` listing's {value} too), with where it sits."""
    found = []
    if isinstance(document, dict):
        for key, value in document.items():
            at = f"{where}.{key}"
            if isinstance(value, dict) and set(value) >= {"value", "unit"} and value["unit"] == "%":
                value = value["value"]  # a `get` field
            if str(key).endswith("_pct") and key not in NOT_SHARES and isinstance(value, (int, float)):
                found.append((at, value))
            else:
                found += _shares(value, at)
    elif isinstance(document, list):
        for i, value in enumerate(document):
            found += _shares(value, f"{where}[{i}]")
    return found


def _adds_up(values: list, what: str) -> str | None:
    values = [v for v in values if v is not None]
    if values and not math.isclose(sum(values), 100.0, abs_tol=SHARE_SUM_TOLERANCE):
        return f"{what} add up to {sum(values)!r}, not 100"
    return None


def test_shares_partition_their_whole_and_stay_within_it(answers):
    summary = answers.summary
    blame_total = summary["blame"]["total"]
    metrics = {name: field["value"] for name, field in answers.of("get").items()}
    partitions = {
        "summary categories share_pct": [c["share_pct"] for c in summary["categories"]],
        "summary categories kernel_share_pct": [c["kernel_share_pct"] for c in summary["categories"]],
        "summary phases wall_pct": [p["wall_pct"] for p in summary["phases"]],
        "summary blame total": list(blame_total.values()),
        "blame_<cause>_pct metrics": [metrics.get(f"blame_{c}_pct") for c in blame_total],
        "phases wall_pct": [p["wall_pct"] for p in answers.of("phases")["phases"]],
        "kernels share_pct": [k["share_pct"] for k in answers.of("kernels")["kernels"]],
        "ops self_pct": [o["self_pct"] for o in answers.of("ops")["ops"]],
        "roofline time_share_pct": [r["time_share_pct"] for r in answers.of("roofline")["roofline"]],
    }
    failures = [f for what, values in partitions.items() if (f := _adds_up(values, what))]
    for cause, share in blame_total.items():
        if metrics.get(f"blame_{cause}_pct") != pytest.approx(share, abs=SHARE_SUM_TOLERANCE):
            failures.append(f"blame_{cause}_pct is not the blame's {cause} share {share!r}")
    for reader in ("summary", "get", "phases", "kernels", "ops", "modules", "roofline", "memory"):
        failures += [f"{reader}{at} = {v!r}" for at, v in _shares(answers.of(reader)) if not 0 <= v <= 100 + 1e-9]
    assert not failures, f"{len(failures)}: " + " | ".join(failures[:12])


def test_no_roofline_row_is_above_its_roof_without_the_reason_in_the_row(answers):
    rows = answers.checks("above_roof")
    unexplained = [
        f"{r['phase']} {r['op']} {r['input_dims']} {r['pct_of_roofline']:.1f}%"
        for r in rows
        if not any(value for column, value in r.items() if column.endswith(("_reason", "_cause")))
    ]
    assert not unexplained, f"{len(unexplained)} rows above 100% of their roof, no reason: " + "; ".join(
        unexplained[:6]
    )


def test_what_if_never_projects_below_the_device_work_that_remains(answers):
    """For each kernel category present, the projected step holds at least the device work left without it
    (unless it projects no saving at all); removing launches leaves all the device work. The work left per
    step is measured from the raw events (tests/blame_reference.py's steps and device executions); only the
    name → category mapping is the product's kernels table."""
    category_of = {k["name"]: k["category"] for k in answers.of("kernels")["kernels"]}
    windows, device = blame_reference.steps_and_device_work(answers.path)
    # each window's executions clipped to it once (not once per what-if case)
    in_windows = [[(max(s, ws), min(e, we), n) for s, e, n in device if s < we and e > ws] for ws, we in windows]

    def busy_ms(keep) -> float:
        ns = sum(blame_reference.union_ns([(s, e) for s, e, n in clipped if keep(n)]) for clipped in in_windows)
        return ns / 1e6 / len(windows)

    failures = []
    for args in answers.what_ifs():
        removed = args[3] if args[2] == "--remove-category" else None
        remaining = busy_ms(lambda n, removed=removed: removed is None or category_of.get(n) != removed)
        got = answers.what_if(args)
        # a what-if that saves nothing keeps the measured baseline: an inference call's headline ends with the
        # host, the device work it queued may run on past it (tests/test_what_if.py holds the same rule)
        floor = min(remaining, got["baseline"]["step_ms"])
        if not got["projected"]["step_ms"] >= floor - 1e-6:
            failures.append(f"{' '.join(args[2:])}: {got['projected']['step_ms']!r} ms < {remaining!r} ms left")
    assert not failures, "; ".join(failures)


def test_what_if_never_projects_below_the_independent_critical_path(answers):
    """Issue 50: for every kernel category present, the projected step is never below the larger of the device
    work left and the host's recorded work that does not wait on the device, both computed from the raw events
    in plain Python (tests/blame_reference.py critical_path_bounds) — unless no saving is projected at all (a
    bound above the baseline: an inference call's headline ends with the host, the blame's step with the
    device). Only the kernel-name → category vocabulary comes from the product: it says what a category removes."""
    category_of = {k["name"]: k["category"] for k in answers.of("kernels")["kernels"]}
    removals = [args for args in answers.what_ifs() if args[2] == "--remove-category"]
    if not removals:
        pytest.skip("no kernel category to remove")
    bounds = blame_reference.critical_path_bounds(answers.path, category_of)
    failures = []
    for args in removals:
        got, bound = answers.what_if(args), bounds[args[3]]
        # 1 µs: the projection is a model's, rounded; the bound and the product read the trace to the ns
        if not got["projected"]["step_ms"] >= min(bound, got["baseline"]["step_ms"]) - 1e-3:
            failures.append(f"{' '.join(args[2:])}: {got['projected']['step_ms']!r} ms < bound {bound!r} ms")
    assert not failures, "; ".join(failures)


@pytest.mark.parametrize("job", JOB_CASES)
def test_a_job_folder_imports_as_a_job_and_every_rank_reads(job, tmp_path):
    """Each folder of multirank/ is one job: `import --job` answers with one strict JSON document, and `ranks`
    and `summary` read the job: a row per rank trace, its shares within 0..100."""
    require_traces()
    if job is None:
        pytest.skip(f"no job folder under {TRACES / 'multirank'}")
    ranks = trace_files(job)
    imported = run_cli_in_process("import", "--job", str(job), "--project", str(tmp_path / "job"), "--json")
    assert imported.returncode == 0, imported.stderr
    profile = strict_json(imported.stdout)["profile"]
    assert len(strict_json(imported.stdout)["job"]["ranks"]) == len(ranks)
    for reader in ("ranks", "summary"):
        result = run_cli(reader, profile, "--json")
        assert result.returncode == 0, f"{reader}: {result.stderr}"
        document = strict_json(result.stdout)
        failures = [f"{at} = {v!r}" for at, v in _shares(document) if not 0 <= v <= 100 + 1e-9]
        assert not failures, f"{reader}: " + " | ".join(failures[:12])
    rows = strict_json(run_cli("ranks", profile, "--json").stdout)
    assert len(rows["ranks"]) == len(ranks), "a row per rank trace"
    # each rank's blame adds up to each of its steps, as a single trace's does
    blamed = strict_json(run_cli("query", BLAME_PER_RANK, profile, "--json").stdout)
    assert {r["rank"] for r in blamed} == set(strict_json(imported.stdout)["job"]["ranks"])
    for r in blamed:
        assert r["ns"] == pytest.approx(r["step_ms"] * 1e6, abs=1), f"rank {r['rank']} step {r['step']}"
