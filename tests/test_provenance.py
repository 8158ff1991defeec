"""One screen, one story (issue #25): every time figure says whether it was timed without the profiler
(the headline) or under it (the attribution), a repeated run's tables are the last trial's and divide by
that trial's own step, the report's latency bars are the calls its percentile lines come from, and
`compare` names every setting the two sides were measured with that differs.

Real CPU profiles of LibreYOLO9-t (random weights, 64 px, two calls a trial): one repeated twice at
batch 1, one at batch 2 — the seed's batch 1 vs batch 4 example, smaller. Expected figures come from
the raw trace events (profile_trace.json) and the unprofiled call times profile.json keeps, never from
our SQL.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import statistics
import subprocess
from pathlib import Path

import pytest

from libreyolo_profile.metric_catalog import UNPROFILED_HEADLINE
from libreyolo_profile.store.document.capture import UnprofiledTiming
from libreyolo_profile.store.document.headline import unprofiled_metrics
from libreyolo_profile.store.document.verdict import advice_findings
from libreyolo_profile.store.ingest.analyse import analyse_trace
from libreyolo_profile.vocabulary import thresholds, verdicts
from tests.conftest import run_cli, run_measurement
from tests.scalar_lists_reference import complete_scalar_lists

REPO = Path(__file__).resolve().parents[1]
WIDTHS = (80, 120)


def test_the_headline_set_is_what_the_unprofiled_calls_overwrite():
    # store/document/headline.py writes these figures from the unprofiled calls; the catalogue's set,
    # which every reader labels "unprofiled", must name each of them and nothing the calls do not give
    timing = UnprofiledTiming(
        call_ms=[10.0, 12.0, 11.0],
        block_wall_ms=[33.0],
        stage_ms={s: [1.0, 1.0, 1.0] for s in ("preprocess", "forward", "postprocess", "dataload", "to_device")},
        images_per_call=1,
        clock="host perf_counter",
        where="test",
    )
    written = set(unprofiled_metrics("infer", timing)) | set(unprofiled_metrics("train", timing))
    assert written == UNPROFILED_HEADLINE


# ------------------------------------------------------------------------------------------------
# two real CPU profiles, measured once for the module


def _cli(cwd: Path, env: dict, *args: str, columns: int = 200) -> subprocess.CompletedProcess:
    return run_measurement(*args, cwd=cwd, env={**env, "COLUMNS": str(columns)})


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    root = tmp_path_factory.mktemp("provenance")
    (root / "home").mkdir()
    env = dict(os.environ, HOME=str(root / "home"), LIBREYOLO_PROFILE_OFFLINE="1", PYTHONPATH=str(REPO))
    env["XDG_CACHE_HOME"] = str(root / "cache")
    common = ("--device", "cpu", "--imgsz", "64", "--warmup", "1", "--runs", "2")
    first = _cli(root, env, "infer", *common, "--repeat", "2", "--project", "a")
    assert first.returncode == 0, first.stderr
    second = _cli(root, env, "infer", *common, "--batch", "2", "--project", "b")
    assert second.returncode == 0, second.stderr
    return {
        "root": root,
        "env": env,
        "a": root / "a" / "infer" / "profile.json",
        "b": root / "b" / "infer" / "profile.json",
        "a_stderr": first.stderr,
    }


def _read(measured, *args, columns: int = 200) -> str:
    """A reader's output on the measured profiles, run in this process as the rest of the suite runs readers."""
    result = run_cli(*args, cwd=measured["root"], env={**measured["env"], "COLUMNS": str(columns)})
    assert result.returncode == 0, result.stderr
    return result.stdout


def _trace_events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        data = json.load(handle)
    return data["traceEvents"] if isinstance(data, dict) else data


def _stage_shares_from_the_trace(trace: Path) -> dict[str, float]:
    """Each stage's share of the profiled calls, % — straight from the trace's ranges, by the rule
    docs/SCHEMA.md states: a step's time that no `## stage ##` range covers counts as forward."""
    events = [e for e in _trace_events(trace) if e.get("ph") == "X"]
    steps = [e for e in events if e["name"].startswith("ProfilerStep#")]
    total = sum(s["dur"] for s in steps)

    def inside_steps(stage: str) -> float:
        ranges = [e for e in events if e["name"] == f"## {stage} ##"]
        return sum(
            max(0.0, min(r["ts"] + r["dur"], s["ts"] + s["dur"]) - max(r["ts"], s["ts"])) for r in ranges for s in steps
        )

    shares = {stage: 100.0 * inside_steps(stage) / total for stage in ("preprocess", "postprocess")}
    shares["forward"] = 100.0 - sum(shares.values())
    return shares


def test_a_repeated_run_warns_once(measured):
    assert measured["a_stderr"].count("RANDOMLY INITIALIZED") == 1


@pytest.mark.parametrize("columns", WIDTHS)
def test_summary_says_where_each_figure_comes_from(measured, columns):
    # the first screen: its second line says which calls the headline is from, which the attribution is from
    first = _read(measured, "summary", str(measured["a"]), columns=columns)
    assert max(len(line) for line in first.splitlines()) <= columns
    flowing = " ".join(first.split())
    assert "headline: 2 unprofiled calls × 2 trials (mean)" in flowing
    assert "attribution: 2 profiled calls over" in flowing and "(last of 2 trials)" in flowing
    assert "verdict · profiled: 2 calls × 2 trials, mean" in flowing
    # every table and its title is behind --full: each title says where its figures come from
    text = _read(measured, "summary", str(measured["a"]), "--full", columns=columns)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= columns
    flowing = " ".join(text.split())
    assert "headline: 2 unprofiled calls × 2 trials (mean)" in flowing
    assert "attribution: 2 profiled calls over" in flowing and "(last of 2 trials)" in flowing
    titles = [line for line in lines if line.startswith(("Metrics", "Stage split", "Top ops", "Modules", "Blame"))]
    assert any(t.startswith("Metrics · headline, unprofiled: 2 calls × 2 trials, mean") for t in titles)
    assert any(t.startswith("Metrics · attribution, profiled: 2 calls × 2 trials, mean") for t in titles)
    for prefix in ("Stage split per call", "Top ops per call", "Blame", "Modules, forward pass"):
        # a title may wrap at 80 columns: read it with the line breaks undone
        assert "profiled: last of 2 trials, 2 calls" in flowing.split(prefix, 1)[1][:120], prefix
    # the verdict quotes profiled shares of the profiled call (an infer profile's unit), and its method
    # stays out of the text
    assert re.search(r"of a [\d.]+ ms profiled call\b", flowing) and "sql/blame.sql" not in flowing
    # piped, the blame bars carry a fill per cause, not colour alone
    assert any(ch in text for ch in "▓▒░")
    stage = _stage_table(text)
    assert all(0 <= share <= 100 for share in stage.values()) and sum(stage.values()) == pytest.approx(100, abs=1)


def _stage_table(text: str) -> dict[str, float]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Stage split per call"))
    header = next(i for i in range(start, len(lines)) if "┃" in lines[i])
    columns = [c.strip() for c in lines[header].split("┃")]
    share = columns.index("% of call")
    rows = {}
    for line in lines[header + 2 :]:
        if "│" not in line:
            break
        cells = [c.strip() for c in line.split("│")]
        rows[cells[0]] = float(cells[share])
    return rows


def test_the_last_trials_stage_split_is_of_its_own_step(measured):
    # the tables hold the last trial's trace (profile_trace.json): its stages divide by its own calls
    shown = _stage_table(_read(measured, "summary", str(measured["a"]), "--full", columns=120))
    expected = _stage_shares_from_the_trace(measured["a"].parent / "profile_trace.json")
    for stage, share in expected.items():
        assert shown[stage] == pytest.approx(share, abs=1.0), stage


def test_report_histogram_draws_the_calls_of_its_percentiles(measured):
    out = measured["root"] / "a.html"
    _read(measured, "report", str(measured["a"]), "--out", str(out))
    page = out.read_text()
    doc = json.loads(measured["a"].read_text())
    calls = [v for e in doc["extra"] for v in e["unprofiled_latency_ms"]]
    assert len(calls) == 4  # 2 unprofiled calls in each of 2 trials
    assert "Latency distribution (4 unprofiled calls)" in page
    # p50 is the mean of each trial's median of those very calls
    medians = [statistics.median(e["unprofiled_latency_ms"]) for e in doc["extra"]]
    p50 = re.search(r"p50 ([\d,.]+) ms", page).group(1).replace(",", "")
    assert float(p50) == pytest.approx(statistics.fmean(medians), rel=1e-3)  # as printed (3 digits)
    assert "data-provenance>headline: 2 unprofiled calls" in page


@pytest.mark.parametrize("columns", WIDTHS)
def test_compare_names_the_settings_that_differ(measured, columns):
    a, b = str(measured["a"]), str(measured["b"])
    text = _read(measured, "compare", a, b, columns=columns)
    assert max(len(line) for line in text.splitlines()) <= columns
    flowing = " ".join(text.split())
    assert re.search(r"before: \S+ \(cpu, 2 trials; batch 1\b", flowing), flowing[:300]
    assert re.search(r"after: \S+ \(cpu, 1 trial; batch 2\b", flowing), flowing[:300]
    assert "measured differently" in flowing
    # the rows sit under the group that says where they were measured (the labels as readers/compare.py's
    # PROVENANCE_GROUPS, shortened to fit 80 columns); ± is the standard error of the 2 trials' mean
    lines = text.splitlines()
    assert any(line.startswith("metric ") and "before ± SE" in line for line in lines)
    row = {line.split()[0]: i for i, line in enumerate(lines) if line.strip()}
    headline = next(i for i, line in enumerate(lines) if line.startswith("headline · unprofiled "))
    attribution = next(i for i, line in enumerate(lines) if line.startswith("attribution · profiled "))
    assert headline < row["step_ms"] < attribution < row["launches_per_step"]
    document = json.loads(_read(measured, "compare", a, b, "--json"))
    assert document["settings_differ"]["batch"] == [1, 2]
    assert {r["metric"]: r["measured"] for r in document["metrics"]}["step_ms"] == "unprofiled"
    assert {r["metric"]: r["measured"] for r in document["metrics"]}["launches_per_step"] == "profiled"
    markdown = _read(measured, "compare", a, b, "--markdown")
    assert "± is the standard error" in markdown and "| `batch` | `1` | `2` |" in markdown
    assert re.search(r"\| launches_per_step \| \d+ ", markdown)  # a count prints whole
    out = measured["root"] / "vs.html"
    _read(measured, "report", b, "--vs", a, "--out", str(out))
    assert "<code>batch</code>" in out.read_text()


# ------------------------------------------------------------------------------------------------
# a shared GPU trace: summary and kernels, piped, at 80 and 120 columns


def _shares_within_their_whole(text: str) -> None:
    """Every cell under a `% of …` header is at most 100 (a whole holds its parts)."""
    from tests.test_first_screen import tables

    for title, (headers, rows) in tables(text).items():
        for column, header in enumerate(headers):
            if not header.startswith("% of") or "inclusive" in header:
                continue
            for row in rows:
                cell = row[column].replace(",", "")
                if cell not in ("", "—"):
                    assert float(cell) <= 100.0, (title, header, cell)


@pytest.mark.parametrize("columns", WIDTHS)
def test_gpu_trace_screens_say_they_are_profiled(trace, columns):
    from tests.test_first_screen import tables

    path = str(trace("a100_cutlass_adam_rank0"))
    summary = run_cli("summary", path, env={"COLUMNS": str(columns)})
    assert summary.returncode == 0, summary.stderr
    text = summary.stdout
    assert max(len(line) for line in text.splitlines()) <= columns
    assert text.splitlines()[1] == "every figure from the profiled trace: 5 steps over 1,232 ms"
    for title in tables(text):
        if title.startswith(("Metrics", "Phases", "Device time", "Top kernels")):
            assert "profiled trace: 5 steps" in title, title
    _shares_within_their_whole(text)
    assert any(ch in text for ch in "▓▒░")  # piped: the blame bars are told apart by fill
    kernels = run_cli("kernels", path, "--top", "12", env={"COLUMNS": str(columns)})
    assert kernels.returncode == 0, kernels.stderr
    assert max(len(line) for line in kernels.stdout.splitlines()) <= columns
    (headers, rows), *_ = tables(kernels.stdout).values()
    names = [row[0] for row in rows]
    assert len(set(names)) == len(names), names  # shortened, still distinct
    _shares_within_their_whole(kernels.stdout)


def test_an_inference_profiles_tiny_window_mark_counts_calls(measured):
    # two profiled calls are a tiny window; an infer profile measures calls, and its mark says so
    doc = json.loads(measured["a"].read_text())
    mark = doc["marks"]["tiny_window"]
    assert mark.startswith("tiny window: 2 profiled calls over") and "step" not in mark, mark


def _pytorch_keeps_native(event: dict, threads: int) -> bool:
    """PyTorch's own choice of its native convolution over oneDNN for one recorded call (use_mkldnn in
    aten/src/ATen/native/ConvUtils.h, written out here from its source): `event` is a `_slow_conv2d_forward`
    (stride at argument 5) or a `mkldnn_convolution` (stride 5, dilation 6, groups 7)."""
    dims, concrete = event["args"]["Input Dims"], event["args"]["Concrete Inputs"]
    x, w = dims[0], dims[1]
    onednn = event["name"] == "aten::mkldnn_convolution"
    stride = json.loads(concrete[4])
    dilation = json.loads(concrete[5]) if onednn else [1]
    groups = int(concrete[6]) if onednn else 1
    strided, dilated = max(stride) > 1, max(dilation) > 1
    # "for 1x1 filters, MKLDNN is faster than THNN when multi-threaded, but THNN is faster when single-threaded"
    faster_native_1x1 = not (strided or dilated or x[0] >= 16 or w[-1] != 1 or w[-2] != 1 or threads > 1)
    # "for some case, native is faster"
    faster_native_small = not (groups > 1 or (w[-1] > 3 and w[-2] > 3) or x[0] > 1 or x[0] * x[1] * x[2] * x[3] > 20480)
    return faster_native_1x1 or faster_native_small


@pytest.mark.parametrize("side", ["a", "b"])
def test_advice_on_a_real_libreyolo_cpu_profile_follows_pytorchs_own_choices(measured, side):
    """LibreYOLO9-t on the CPU runs most convolutions through PyTorch's native kernel, by PyTorch's own
    choice (small batch-1 inputs; 1×1 kernels single-threaded): the advice must not call them a miss of
    oneDNN. Checked against the raw trace: PyTorch's rule explains every native and every oneDNN call, the
    profile gives no slow-convolution advice, and its BatchNorm advice counts the trace's own calls."""
    doc = json.loads(measured[side].read_text())
    events = [e for e in _trace_events(measured[side].parent / "profile_trace.json") if e.get("ph") == "X"]
    complete_scalar_lists(events)  # the strides: recorded in the first profiled call only
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in events if e["name"].startswith("ProfilerStep#")]

    def in_steps(name: str) -> list[dict]:
        return [e for e in events if e["name"] == name and any(s <= e["ts"] < t for s, t in steps)]

    threads = doc["settings"]["torch_threads"]
    native, onednn = in_steps("aten::_slow_conv2d_forward"), in_steps("aten::mkldnn_convolution")
    assert native, "the run recorded no native convolution: the case this test is about is gone"
    assert all(_pytorch_keeps_native(e, threads) for e in native)
    assert not any(_pytorch_keeps_native(e, threads) for e in onednn)
    verdict = doc["verdict"]
    assert verdict["evidence"].get("advice_rule") != "slow_convolution", verdict["next_step"]
    assert "miss oneDNN" not in verdict["next_step"]
    # every rule the trace's evidence fired (sql/advice.sql), whichever verdict's next step quotes it
    trace = measured[side].parent / "profile_trace.json"
    fired = {f["rule"]: f for f in advice_findings(analyse_trace(trace, kind_hint="infer")["metrics"])}
    assert "slow_convolution" not in fired, fired["slow_convolution"]
    # BatchNorm is unfolded (LibreYOLO's predict does not fuse): its rule fires, counting the trace's own calls
    batchnorm = len(in_steps("aten::native_batch_norm")) / len(steps)
    counted = f"{round(batchnorm)} aten BatchNorm ops per call (aten::native_batch_norm)"
    assert counted in fired["batchnorm_not_folded"]["evidence"], fired["batchnorm_not_folded"]
    # a CPU inference: its verdict is the one whose causes hold the most of the call. At 64 px the model's
    # Python (LibreYOLO's preprocessing, the modules' Python between ops: the python cause) holds about half
    # of it, more than the ops (cpu-compute) or their dispatch (cpu-overhead); that host work is host-cpu's,
    # or the dominant stage's where one holds stage_pct of the unprofiled call (sql/verdict_blame.sql)
    m = doc["metrics"]
    stages = sorted((v["stage_order"], name, v["stage_metric"]) for name, v in verdicts().items() if v["stage_metric"])
    dominant = [name for _, name, metric in stages if (m.get(metric) or 0) >= thresholds()["stage_pct"]]
    host = dominant[0] if dominant else "host-cpu"
    held = {
        host: m["blame_python_pct"],
        "cpu-compute": m["blame_cpu_gemm_conv_pct"] + m["blame_cpu_other_ops_pct"],
        "cpu-overhead": m["blame_framework_overhead_pct"],
    }
    assert verdict["bound"] == max(held, key=held.get), (held, verdict)
    if verdict["bound"] == host:  # its own advice: no rule names host-cpu or a stage among its bounds
        assert verdict["next_step"].startswith(verdicts()[host]["advice"] + " — because python"), verdict
    else:
        assert verdict["evidence"].get("advice_rule") == "batchnorm_not_folded", verdict
        assert counted in verdict["next_step"]
