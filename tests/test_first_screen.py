"""The screens a user reads (issues #15, #52): `summary` (the first screen: at most 40 lines at 100 columns,
on every shared trace) and `summary --full` in a terminal of 80 and 120 columns, on a CPU profile and on
a GPU one, through the real CLI.

Snapshot-style: the rendered text is parsed back into its tables and checked for properties, not
compared byte for byte. No count prints as a float, no null sentence repeats, no header is cut, every
share says what it is a share of, the rows fit the device, and the verdict quotes the figure the
tables show. Expected figures come from `--json` of the same CLI or are derived by hand beside the trace.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import cli_json, run_cli, trace_files, trace_id
from tests.synthetic_traces import annotation, op, write_trace

WIDTHS = (80, 120)
COUNT_WORDS = {"calls", "kernels", "ops", "launches"}
# Every header the summary's tables may print, whole; a cut one ("calls/ste") is not among them.
SUMMARY_HEADERS = {
    "metric",
    "value",
    "unit",
    "phase",
    "ms",
    "% of step",
    "% of call",
    "",
    "GPU ms",
    "kernels",
    "ops",
    "op",
    "self ms",
    "% of op self time",
    "calls/call",
    "calls/step",
    "category",
    "ms/step",
    "% of device time",
    "% of kernel time",
    "% on TC",
    "kernel",
    "device",
    "name",
    "busy ms",
    "% of window",
}
A100 = "a100_cutlass_adam_rank0"


# ------------------------------------------------------------------------------------------------
# a CPU inference trace: 3 calls of 1000 µs, each (µs from the call's start)
#   preprocess  0..200    aten::div 50..150 (leaf)
#   forward     200..900  aten::conv2d 210..710 ⊃ aten::mkldnn_convolution 220..700 (leaf);
#                         aten::add 720..750, 760..790, 800..830 (3 leaves)
#   postprocess 900..1000 aten::sigmoid 910..940 (leaf)
# → per call: launches (dispatched leaf ops) preprocess 1, forward 4, postprocess 1 = 6;
#   stage shares of the 1000 µs call: 20 %, 70 %, 10 %.

CALL_US = 1000


def cpu_call(step: int, start: int) -> list[dict]:
    dims = [[1, 3, 64, 64], [16, 3, 3, 3]]
    return [
        annotation(f"ProfilerStep#{step}", start, CALL_US),
        annotation("## preprocess ##", start, 200),
        annotation("## forward ##", start + 200, 700),
        annotation("## postprocess ##", start + 900, 100),
        op("aten::div", start + 50, 100),
        op("aten::conv2d", start + 210, 500, dims),
        op("aten::mkldnn_convolution", start + 220, 480),
        *[op("aten::add", start + at, 30) for at in (720, 760, 800)],
        op("aten::sigmoid", start + 910, 30),
    ]


@pytest.fixture
def cpu_trace(tmp_path):
    return write_trace(tmp_path / "cpu_infer.json", [e for k in range(3) for e in cpu_call(k + 1, k * CALL_US)])


@pytest.fixture
def gpu_trace(trace):
    return trace(A100)


# ------------------------------------------------------------------------------------------------
# reading a rendered screen back


def screen(path, columns: int, full: bool = True) -> str:
    """`summary --full` (every table and figure), or with full=False the first screen."""
    result = run_cli("summary", str(path), *(["--full"] if full else []), env={"COLUMNS": str(columns)})
    assert result.returncode == 0, result.stderr
    return result.stdout


def tables(text: str) -> dict[str, tuple[list[str], list[list[str]]]]:
    """Every table on the screen: its title (the line above its header) → (headers, rows of cells).
    A header broken over lines (between words, where the terminal is narrow) is joined back, so a
    header cut inside a word ("calls/ste" + "p") reads as no header the summary prints."""
    lines = text.splitlines()
    found, i = {}, 0
    while i < len(lines):
        if "┃" not in lines[i]:
            i += 1
            continue
        title, first = lines[i - 1].strip(), i
        while "┃" in lines[i]:
            i += 1
        assert lines[i].startswith("━"), lines[i]
        parts = [[cell.strip() for cell in line.split("┃")] for line in lines[first:i]]
        headers = [" ".join(part for part in column if part) for column in zip(*parts, strict=False)]
        rows = []
        for row in lines[i + 1 :]:
            if "│" not in row:
                break
            rows.append([cell.strip() for cell in row.split("│")])
        found[title] = (headers, rows)
    return found


def table_named(text: str, prefix: str) -> tuple[list[str], list[list[str]]]:
    named = [title for title in tables(text) if title.startswith(prefix)]
    assert len(named) == 1, (prefix, list(tables(text)))
    return tables(text)[named[0]]


def metric_cells(text: str) -> dict[str, tuple[str, str]]:
    """The metric rows of every "Metrics · …" table (the headline's and the attribution's)."""
    cells = {}
    for title, (headers, rows) in tables(text).items():
        if title.startswith("Metrics"):
            assert headers == ["metric", "value", "unit"]
            cells.update({row[0]: (row[1], row[2]) for row in rows if row[0]})
    assert cells, list(tables(text))
    return cells


def flowing(text: str) -> str:
    """The screen's prose with the terminal's line breaks undone, to find a sentence that wrapped."""
    return re.sub(r"\s+", " ", text)


def is_count_header(header: str) -> bool:
    return re.split(r"[/ ]", header)[0] in COUNT_WORDS


def assert_first_screen_rules(text: str, columns: int) -> None:
    """What every first screen keeps to, whatever the device."""
    assert max(len(line) for line in text.splitlines()) <= columns
    assert not re.search(r"\b\d+\.0+ measured", text)  # the headline's count of calls or steps
    for title, (headers, rows) in tables(text).items():
        for header in headers:
            assert header in SUMMARY_HEADERS, f"{title}: header {header!r} is cut or unknown"
            if "%" in header:  # a share names its whole
                assert re.fullmatch(r"% (of|on) \S.*", header), (title, header)
        for column, header in enumerate(headers):
            if not is_count_header(header):
                continue
            for row in rows:
                cell = row[column]
                # whole, with thousands separators; a per-step mean under 10 may keep one decimal
                assert cell == "" or re.fullmatch(r"\d{1,3}(,\d{3})*|\d\.\d", cell), (title, header, cell)
    for name, (value, unit) in metric_cells(text).items():
        if unit.startswith("%"):
            assert re.fullmatch(r"% (of \S.*|slower)", unit), (name, unit)
        if unit == "count" or unit.endswith(("/step", "/call")):
            assert re.fullmatch(r"\d{1,3}(,\d{3})*", value), (name, value)


def assert_nulls_said_once(text: str, document: dict) -> None:
    """Every null metric of `summary --json` is named on the screen exactly once below the verdict (whose
    evidence may quote one: "gemm_conv_peak_pct is null"), and no reason is printed twice."""
    prose = flowing(text.split("\n╰", 1)[-1])
    null = [name for name, value in document["metrics"].items() if value is None]
    for name in null:
        assert len(re.findall(rf"\b{name}\b", prose)) == 1, name
    reason_lines = [
        line for line in re.split(r"\n(?=— |not applicable)", text) if line.startswith(("— ", "not applicable"))
    ]
    reasons = [flowing(line.split(": ", 1)[1]) for line in reason_lines]
    assert len(reasons) == len(set(reasons))
    # the sentence of why a GPU figure cannot apply, once however many metrics it explains
    assert prose.count("no device kernels were recorded") <= 1


# ------------------------------------------------------------------------------------------------
# CPU


@pytest.mark.parametrize("columns", WIDTHS)
def test_cpu_summary_first_screen(cpu_trace, columns):
    text = screen(cpu_trace, columns)
    document = cli_json("summary", str(cpu_trace))
    assert_first_screen_rules(text, columns)
    assert_nulls_said_once(text, document)
    titles = list(tables(text))
    # where the time goes on a CPU: the stage split and the top ops; no GPU table, no GPU column
    assert not any(title.startswith(("Device time", "Top kernels")) for title in titles)
    headers, rows = table_named(text, "Stage split per call")
    assert "GPU ms" not in headers and "kernels" not in headers
    share = headers.index("% of call")
    # stages of the 1000 µs call: 200, 700 and 100 µs
    assert {row[0]: row[share] for row in rows} == {"preprocess": "20.00", "forward": "70.00", "postprocess": "10.00"}
    headers, rows = table_named(text, "Top ops per call, by self CPU time")
    calls = {row[0]: row[headers.index("calls/call")] for row in rows}
    # aten::add runs 3 times a call, every other op once
    assert calls["aten::add"] == "3" and calls["aten::div"] == "1"
    # self time: mkldnn_convolution 480 µs (no child) leads; conv2d's own 20 µs comes later
    assert rows[0][0] == "aten::mkldnn_convolution"
    # the GPU rows collapse into one line that names them and says why
    prose = flowing(text)
    gpu_nulls = [n for n in ("gpu_util_pct", "tensorcore_pct", "peak_vram_mb", "sync_pct") if n in document["metrics"]]
    assert gpu_nulls and all(document["metrics"][n] is None for n in gpu_nulls)
    line = re.search(r"not applicable to a CPU profile \(([^)]*)\): ([^—]*)", prose)
    assert line and "no device kernels were recorded" in line.group(1)
    assert all(name in line.group(2) for name in gpu_nulls)
    # the verdict comes from the blame (SPEC §11) and quotes the blame metric's figure, the same whole:
    # mkldnn_convolution executes 480 µs of the 1000 µs call, so conv/matmul execution is 48.0% of it
    blame_conv = cli_json("get", str(cpu_trace), "blame_cpu_gemm_conv_pct")["value"]
    assert blame_conv == pytest.approx(48.0)
    assert document["verdict"]["bound"] == "cpu-compute"
    assert f"cpu_gemm_conv {blame_conv:.1f}%" in document["verdict"]["reason"]
    leaf = document["metrics"]["leaf_busy_pct"]
    assert metric_cells(text)["leaf_busy_pct"] == (f"{leaf:.2f}", "% of call")  # an inference profile's step is a call


def test_cpu_summary_json_stays_complete(cpu_trace):
    # the terminal condenses; --json keeps every headline metric, each null one with its reason
    document = cli_json("summary", str(cpu_trace))
    for name in ("gpu_util_pct", "tensorcore_pct", "peak_vram_mb", "sync_pct", "memcpy_ms", "preprocess_pct"):
        assert name in document["metrics"], name
    nulls = {name for name, value in document["metrics"].items() if value is None}
    assert nulls and nulls == set(document["null_reasons"])
    assert [row["name"] for row in document["top_ops"]][:1] == ["aten::mkldnn_convolution"]


def test_real_cpu_trace_says_each_reason_once(trace):
    # a real CPU-only trace with no framework ops: four metrics share one reason, and the GPU ones another
    path = trace("cpu_only_rank34")
    text = screen(path, 80)
    assert_first_screen_rules(text, 80)
    assert_nulls_said_once(text, cli_json("summary", str(path)))
    # (the verdict may give the same cause for its own answer; the null rows give it once)
    below_verdict = flowing(text.split("Metrics", 1)[1])
    assert below_verdict.count("the trace records no framework ops inside its steps") == 1


def test_cpu_phases_count_launches_as_the_headline_does(cpu_trace):
    # on a CPU a launch is a dispatched leaf op, in the headline and in every phase row alike
    phases = {row["phase"]: row for row in cli_json("phases", str(cpu_trace))["phases"]}
    launches = cli_json("get", str(cpu_trace), "launches_per_step")["value"]
    assert launches == pytest.approx(6)
    assert {name: row["launches"] for name, row in phases.items()} == {"preprocess": 1, "forward": 4, "postprocess": 1}
    assert sum(row["launches"] for row in phases.values()) == pytest.approx(launches)
    # and the share of the step a stage shows is the stage's own metric
    preprocess = cli_json("get", str(cpu_trace), "preprocess_pct")["value"]
    assert phases["preprocess"]["step_pct"] == pytest.approx(preprocess)
    text = run_cli("phases", str(cpu_trace), env={"COLUMNS": "80"}).stdout
    headers, _ = table_named(text, "Phases per measured step")
    assert "launches (leaf ops)" in headers and "GPU ms" not in headers


# ------------------------------------------------------------------------------------------------
# GPU


@pytest.mark.parametrize("columns", WIDTHS)
def test_gpu_summary_first_screen(gpu_trace, columns):
    text = screen(gpu_trace, columns)
    document = cli_json("summary", str(gpu_trace))
    assert_first_screen_rules(text, columns)
    assert_nulls_said_once(text, document)
    assert "not applicable to a CPU profile" not in text
    titles = list(tables(text))
    assert any(t.startswith("Device time by category") for t in titles)
    assert any(t.startswith("Top kernels per step") for t in titles)
    assert not any(t.startswith("Top ops") for t in titles)
    # kernels per phase print whole: the forward phase launches a whole number of kernels each step
    headers, rows = table_named(text, "Phases per step")
    forward = next(row for row in rows if row[0] == "forward")
    kernels = next(p["kernels"] for p in document["phases"] if p["phase"] == "forward")
    assert forward[headers.index("kernels")] == f"{round(kernels):,}"
    # the verdict's share is the metric row's, the same whole named in both
    m = document["metrics"]
    # the blame (SPEC §11) makes this trace sync-bound: the device idles 45.5% of each step while the host
    # blocks in copies to pageable memory; the reason quotes the blame metric's share, the same whole
    assert document["verdict"]["bound"] == "sync"
    sync_bubble = cli_json("get", str(gpu_trace), "blame_sync_bubble_pct")["value"]
    assert f"sync_bubble {sync_bubble:.1f}%" in document["verdict"]["reason"]
    assert metric_cells(text)["communication_pct"] == (f"{m['communication_pct']:.2f}", "% of kernel time")
    # the composition's share is another whole (copies included), and says so
    headers, rows = table_named(text, "Device time by category")
    share = {row[0]: row[headers.index("% of device time")] for row in rows}
    communication = next(c["share_pct"] for c in document["categories"] if c["category"] == "communication")
    assert share["communication"] == f"{communication:.2f}"


@pytest.mark.parametrize("columns", WIDTHS)
def test_phase_shares_match_the_metrics_they_repeat(trace, columns):
    # v100 workers0 waits for data a third of each step while the device is busy only ~56%: below the 80%
    # threshold the verdict names the largest cause of device idle time, the data wait (blame 33.4%)
    path = trace("v100_resnet50_workers0")
    document = cli_json("summary", str(path))
    text = screen(path, columns)
    assert_first_screen_rules(text, columns)
    dataload = cli_json("get", str(path), "dataload_pct")["value"]
    assert document["verdict"]["bound"] == "dataloader"
    blamed = cli_json("get", str(path), "blame_dataload_pct")["value"]
    assert f"idle time is dataload {blamed:.1f}%" in document["verdict"]["reason"]
    headers, rows = table_named(text, "Phases per step")
    row = next(r for r in rows if r[0] == "dataload")
    assert row[headers.index("% of step")] == f"{dataload:.2f}"


def test_kernels_phase_filter_says_whose_share(gpu_trace):
    result = run_cli("kernels", str(gpu_trace), "--phase", "forward", "--top", "3", env={"COLUMNS": "120"})
    assert result.returncode == 0, result.stderr
    headers, rows = table_named(result.stdout, "GPU kernels per measured step in phase forward")
    assert "% of forward" in headers and len(rows) == 3
    unfiltered = run_cli("kernels", str(gpu_trace), "--top", "3", env={"COLUMNS": "120"})
    headers, _ = table_named(unfiltered.stdout, "GPU kernels per measured step")
    assert "% of device time" in headers


# ------------------------------------------------------------------------------------------------
# the first screen without --full (issue #52), on every shared trace

FIRST_SCREEN_LINES = 40  # at 100 columns
FIGURE = re.compile(r"\S*\d\S*")  # a word holding a digit: a number, with its unit or punctuation
TABLE_GLYPHS = "│┃━╇"


def prose_figures(text: str) -> list[str]:
    """The words holding a digit outside the tables, in order."""
    return [w for line in text.splitlines() if not any(g in line for g in TABLE_GLYPHS) for w in FIGURE.findall(line)]


def rendered(document: dict, columns: int, monkeypatch, capsys) -> str:
    """The first screen of a summary document as the CLI prints it at `columns` (not a terminal)."""
    from libreyolo_profile.readers.summary import show_summary

    monkeypatch.setenv("COLUMNS", str(columns))
    show_summary(document)
    return capsys.readouterr().out


@pytest.mark.parametrize("path", trace_files(), ids=trace_id)
def test_first_screen_fits_and_wraps_words_not_numbers(path, analysed_traces, monkeypatch, capsys):
    import json

    # `summary --json` as the worker's shared analysis ran it (test_corpus reads the same run), rendered at
    # both widths; the CLI's own path through the first screen is test_cpu_first_screen's
    result = analysed_traces.summary(path)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    at_100, at_80 = rendered(document, 100, monkeypatch, capsys), rendered(document, 80, monkeypatch, capsys)
    assert len(at_100.splitlines()) <= FIRST_SCREEN_LINES, at_100
    assert max(len(line) for line in at_100.splitlines()) <= 100
    assert max(len(line) for line in at_80.splitlines()) <= 80
    # one screen at both widths, only wrapped elsewhere: a number cut or wrapped mid-digit at 80 would be
    # two other words, and a figure left out would be missing
    assert prose_figures(at_80) == prose_figures(at_100)
    assert tables(at_80).get("Headline figures") == tables(at_100).get("Headline figures")
    assert not re.search(r"\b\d(\.\d+)?e[+-]\d+\b", at_100), "scientific notation"
    prose = flowing(at_100)
    verdict = document["verdict"]
    assert flowing(f"{verdict['bound']} — {verdict['reason']}") in prose
    assert flowing(f"next: {verdict['next_step']}") in prose
    assert all(mark in prose for mark in document["marks"])
    assert "More, one command each (every table and figure: summary --full" in prose
    for metric, value in document["metrics"].items():
        if re.search(rf"\b{metric}\b", prose) and value is None:
            assert f"— {metric}: " in prose  # a null figure on the screen says why


def test_cpu_first_screen_points_to_the_ops_that_take_the_time(cpu_trace):
    text = screen(cpu_trace, 100, full=False)
    headers, rows = table_named(text, "Headline figures")
    figures = {row[0]: row[1:] for row in rows}
    document = cli_json("summary", str(cpu_trace))
    # the busy share of a CPU profile, not GPU utilization, and the same number as --full's
    assert "gpu_util_pct" not in figures and "gpu_util_pct" not in text
    assert figures["leaf_busy_pct"] == [f"{document['metrics']['leaf_busy_pct']:.2f}", "% of call"]
    # mkldnn_convolution's 480 µs of self time per call lead the ops (see cpu_call)
    assert re.search(r"ops +top by self CPU time: aten::mkldnn_convolution 0\.48 ms/call → ops", text)
    assert "Top ops per call" not in text and "Top ops per call" in screen(cpu_trace, 100)
