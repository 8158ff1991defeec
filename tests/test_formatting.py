"""Issue #15 (part b): what a person reads. Counts are whole numbers, flags show no value type in
--help, a typo gets a "did you mean", templated CUDA kernel names are shortened readably (the full
name stays in --json), headers are never cut at 80 columns, and `report A --vs B` judges A against
the baseline B. Every test runs the real CLI on the shared traces."""

from __future__ import annotations

import html
import re

import pytest
from conftest import cli_json, run_cli, run_cli_in_process

from libreyolo_profile.launcher import MEASURING

A100 = "a100_cutlass_adam_rank0"
V100_W0, V100_W4 = "v100_resnet50_workers0", "v100_resnet50_workers4"


# ---------------------------------------------------------------------------------------------
# reading rich tables back from the terminal text


def tables(text: str) -> list[dict]:
    """Every table in `text`: its headers (a header wrapped over lines joined again) and its rows,
    split at the column boundaries the ━━╇━━ rule under the header shows."""
    lines = text.splitlines()
    found = []
    for at, line in enumerate(lines):
        if "╇" not in line:
            continue
        cuts = [i for i, ch in enumerate(line) if ch == "╇"]

        def cells(row: str, cuts=cuts, line=line) -> list[str]:  # this table's column edges
            edges = [-2] + cuts + [len(line) + 2]
            return [row[a + 2 : b - 1].strip() for a, b in zip(edges, edges[1:], strict=False)]

        head = at
        while head > 0 and "┃" in lines[head - 1]:
            head -= 1
        parts = [cells(row) for row in lines[head:at]]
        headers = [" ".join(p[i] for p in parts if p[i]) for i in range(len(cuts) + 1)]
        rows = []
        for row in lines[at + 1 :]:
            if "│" not in row:
                break
            rows.append(cells(row))
        found.append({"headers": headers, "rows": rows, "lines": lines[head : at + 1 + len(rows)]})
    return found


def terminal(*args: str, columns: int) -> str:
    result = run_cli(*args, env={"COLUMNS": str(columns)})
    assert result.returncode == 0, result.stderr
    return result.stdout


# ---------------------------------------------------------------------------------------------
# counts


def test_counts_print_as_whole_numbers(trace):
    path = str(trace(A100))
    doc = cli_json("kernels", path, "--top", "8")
    (kernels,) = tables(terminal("kernels", path, "--top", "8", columns=200))
    calls = kernels["headers"].index("calls/step")
    for row, record in zip(kernels["rows"], doc["kernels"], strict=False):
        shown = row[calls]
        assert "." not in shown or record["calls_per_step"] < 10, shown  # 706, never 706.00
        if record["calls_per_step"] >= 10:
            assert int(shown.replace(",", "")) == round(record["calls_per_step"])
    # the summary's headline says how many steps in a whole number
    steps = cli_json("summary", path)["window"]["steps"]
    head = terminal("summary", path, columns=200).splitlines()[1]
    assert f" {steps} steps " in head and f" {float(steps)} steps " not in head


def test_report_counts_are_whole_numbers(trace, tmp_path):
    path = trace(A100)
    launches = cli_json("summary", str(path))["metrics"]["launches_per_step"]
    assert launches >= 10  # a count with decimals would show them
    run_cli("report", str(path), "--out", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    card = re.search(r'data-metric="launches_per_step">.*?<div class="v">([^<]*)<', page)
    assert card and card.group(1) == f"{round(launches):,}"


# ---------------------------------------------------------------------------------------------
# --help


def subcommands() -> list[str]:
    import typer

    from libreyolo_profile.cli import app

    return sorted(typer.main.get_command(app).commands)


@pytest.mark.parametrize("command", subcommands())
def test_flags_show_no_value_type_in_help(command):
    # a help screen measures and imports nothing: in this process, but `infer` and `run` in a fresh interpreter
    # (not the warm parent of torch and LibreYOLO, ~9 s for a help alone): a measuring command leaves through
    # os._exit once torch is loaded (launcher._leave), which in this process would end the test worker
    if command in MEASURING:
        result = run_cli(command, "--help", env={"COLUMNS": "200"}, subprocess=True)
    else:
        result = run_cli_in_process(command, "--help", env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "--help" in result.stdout and "<bool>" not in result.stdout


def test_options_with_values_keep_their_type_and_flags_lose_theirs():
    text = terminal("kernels", "--help", columns=200)
    top = next(line for line in text.splitlines() if "--top" in line)
    json_flag = next(line for line in text.splitlines() if "--json" in line)
    assert "<int>" in top and "<" not in json_flag


def test_report_help_names_the_baseline():
    text = " ".join(terminal("report", "--help", columns=200).split())
    assert "the baseline" in text and "TRACE minus the baseline" in text


# ---------------------------------------------------------------------------------------------
# close matches


def test_get_suggests_the_nearest_metric(trace):
    result = run_cli("get", str(trace(A100)), "step_msx")
    assert result.returncode == 2 and "did you mean step_ms?" in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_unknown_category_is_a_usage_error_with_a_suggestion(trace):
    path = str(trace(A100))
    result = run_cli("kernels", path, "--category", "gemn")
    assert result.returncode == 2 and "did you mean gemm?" in result.stderr
    assert "communication" in result.stderr and "elementwise" in result.stderr  # the valid categories
    assert result.stdout == ""
    # a substring of a real category still filters
    rows = cli_json("kernels", path, "--category", "gem", "--top", "50")["kernels"]
    assert rows and {r["category"] for r in rows} == {"gemm"}


def test_unknown_phase_suggests_the_nearest(trace):
    result = run_cli("kernels", str(trace(A100)), "--phase", "forwrd")
    assert result.returncode == 2 and "did you mean forward?" in result.stderr


def test_empty_query_over_cpu_profiles_says_why(trace, tmp_path):
    from libreyolo_profile.store.disk.writer import write_directory
    from libreyolo_profile.store.document.from_trace import profile_from_trace

    doc = profile_from_trace(trace("cpu_only_rank34"))
    write_directory(doc, tmp_path / "cpu" / "infer")
    result = run_cli("query", "SELECT name, sum(ms_per_step) FROM kernels GROUP BY 1", str(tmp_path))
    assert result.returncode == 0 and "no GPU profiles under the roots" in result.stderr
    # an empty answer whose reason is not known says nothing
    quiet = run_cli("query", "SELECT name FROM ops WHERE false", str(tmp_path))
    assert quiet.returncode == 0 and quiet.stderr == ""


# ---------------------------------------------------------------------------------------------
# kernel names and headers


def test_templated_kernel_name_is_shortened_and_json_keeps_it(trace):
    path = str(trace(A100))
    doc = cli_json("kernels", path, "--top", "20")
    full = next(r["name"] for r in doc["kernels"] if r["name"].startswith("void multi_tensor_apply_kernel<"))
    assert "AdamFunctor<float>" in full and "(int" in full  # --json keeps the whole signature
    # by hand: `void ` and the parameter list go, the template arguments collapse
    expected = full[len("void ") : full.index("<")] + "<…>"
    (table,) = tables(terminal("kernels", path, "--top", "20", columns=120))
    names = [row[0] for row in table["rows"]]
    assert expected in names
    assert not any(name.startswith("void ") or "(int" in name for name in names)


def test_kernel_rows_stay_one_line_at_80_columns(trace):
    path = str(trace(A100))
    top = len(cli_json("kernels", path, "--top", "12")["kernels"])
    (table,) = tables(terminal("kernels", path, "--top", "12", columns=80))
    assert len(table["rows"]) == top  # a row that wrapped would add lines
    assert all(len(line) <= 80 for line in table["lines"])
    assert all("…" in row[0] or len(row[0]) <= 40 for row in table["rows"])


@pytest.mark.parametrize(
    "args",
    [
        ("kernels", A100, "--top", "12"),
        ("summary", A100),
        ("summary", A100, "--full"),
        ("summary", "cpu_only_rank34", "--full"),
        ("ops", A100, "--top", "8"),
        ("phases", V100_W0),
        # eleven columns: the rates' inputs left out, each shape cut at its end, not folded a line per dimension
        ("roofline", V100_W0, "--top", "8"),
        ("roofline", A100, "--top", "8"),
        ("modules", "h100_vit_image_classifier"),  # a deep tree: its names cut shorter, its numbers whole
        ("launches", A100),
    ],
)
def test_headers_are_never_cut_at_80_columns(trace, args):
    """Each table at 80 columns has the headers it has at 200 (some left out, none cut), and the
    numbers in its rows are the same."""
    command, name, *rest = args
    narrow = tables(terminal(command, str(trace(name)), *rest, columns=80))
    wide = tables(terminal(command, str(trace(name)), *rest, columns=200))
    assert len(narrow) == len(wide) and narrow
    for small, big in zip(narrow, wide, strict=True):
        assert set(small["headers"]) <= set(big["headers"]), (small["headers"], big["headers"])
        assert all(len(line) <= 80 for line in small["lines"])
        # a row folded over lines goes on in rows with an empty first cell: words may go on there, no digit
        folded = [row for row in small["rows"] if row[0] == "" and any(re.search(r"\d", cell) for cell in row)]
        assert not folded, folded
        for header in small["headers"]:
            i, j = small["headers"].index(header), big["headers"].index(header)
            numbers = [row[i] for row in small["rows"] if re.fullmatch(r"-?[\d,]+(\.\d+)?", row[i] or "x")]
            assert numbers == [row[j] for row in big["rows"] if re.fullmatch(r"-?[\d,]+(\.\d+)?", row[j] or "x")]


def test_a_text_column_takes_its_cells_before_a_name_is_cut_to_the_floor(trace):
    """launches' outliers at 80 columns: each row's reasons ("delay, slow call, short") on at most two lines;
    at their longest word's width they took one line a word while the kernel name kept 36 cells."""
    text = terminal("launches", str(trace(A100)), columns=80)
    outliers = [t for t in tables(text) if "why" in t["headers"]]
    assert outliers and outliers[0]["rows"]
    rows = outliers[0]["rows"]
    starts = [i for i, row in enumerate(rows) if row[0]] + [len(rows)]
    assert max(b - a for a, b in zip(starts, starts[1:], strict=False)) <= 2, "\n".join(outliers[0]["lines"])


# ---------------------------------------------------------------------------------------------
# report A --vs B


def _compare_row(page: str, metric: str) -> list[tuple[str, str]]:
    """(class, text) of each cell in the compare table's row for `metric`."""
    row = re.search(rf'<tr><td class="l"><code>{metric}</code></td>(.*?)</tr>', page)
    assert row, metric
    return re.findall(r'<td class="([^"]*)">([^<]*)</td>', row.group(1))


@pytest.mark.parametrize("judged, baseline", [(V100_W0, V100_W4), (V100_W4, V100_W0)])
def test_report_vs_judges_the_positional_profile_against_the_baseline(
    trace, tmp_path, judged, baseline, reader_cache_env
):
    # the session's reader cache: each trace's timeline (~1.7 CPU-s, the page's dearest part) is drawn once
    # for both orders, not once per test in its own cache
    out = tmp_path / "vs.html"
    result = run_cli(
        "report", str(trace(judged)), "--vs", str(trace(baseline)), "--out", str(out), env=reader_cache_env
    )
    assert result.returncode == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    assert "this profile (after)" in page and "baseline, --vs (before)" in page
    assert "left (before)" not in page and "right (after)" not in page
    # the page names which file is which
    judged_line = re.search(r'<p class="sub">this profile \(after\): <code>([^<]*)</code>', page)
    baseline_line = re.search(r'<p class="sub">baseline, --vs \(before\): <code>([^<]*)</code>', page)
    assert html.unescape(judged_line.group(1)).endswith(trace(judged).name)
    assert html.unescape(baseline_line.group(1)).endswith(trace(baseline).name)
    # step_ms, lower is better: the delta is judged minus baseline, red (worse) when the judged one is slower
    step_judged = cli_json("summary", str(trace(judged)), env=reader_cache_env)["metrics"]["step_ms"]
    step_baseline = cli_json("summary", str(trace(baseline)), env=reader_cache_env)["metrics"]["step_ms"]
    cells = _compare_row(page, "step_ms")
    before, after, delta = cells[1], cells[2], cells[3]
    assert before[1] == f"{step_baseline:.2f}" and after[1] == f"{step_judged:.2f}"
    assert delta[1] == f"{step_judged - step_baseline:.2f}"
    assert delta[0] == ("worse" if step_judged > step_baseline else "better")
    assert ".worse{color:var(--worse)" in page  # the class is the red one


def test_compare_prints_count_deltas_whole(trace):
    """compare's table prints launches per step and its change as whole numbers, like every other screen."""
    result = run_cli("compare", str(trace("v100_resnet50_workers0")), str(trace("v100_resnet50_workers4")))
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("launches_per_step"))
    cells = [cell.strip() for cell in row.split("│")]
    assert cells[1:4] == ["1,516", "1,543", "27"], row  # counts from the traces' ProfilerSteps (test_real_traces)


@pytest.mark.parametrize(
    "value, shown",
    [
        (1730.2, "1,730"),  # never 1.73e+03
        (173.02, "173"),
        (99.96, "100"),  # three digits after rounding, not 100.0
        (9.996, "10.0"),
        (1.7302, "1.73"),
        (0.908, "0.908"),
        (-0.0123, "-0.0123"),
        (6.66e-06, "0.000007"),  # six decimals at most, never 6.66e-06
        (4e-09, "<0.000001"),  # below six decimals: its bound, not a false 0
        (0.0, "0"),
        (None, "—"),
    ],
)
def test_quantities_that_span_decades_print_in_plain_notation(value, shown):
    from libreyolo_profile.output.terminal import fmt_sig

    assert fmt_sig(value) == shown


def test_ranks_fit_80_columns_leaving_columns_out_never_cutting_a_number(monkeypatch, capsys):
    """`ranks` in a CI log: eleven columns of a DLRM-like job at 80 columns (the figures as the 8-rank
    trace's job shows them), the listed columns left out in order and named, every number whole."""
    from libreyolo_profile.readers.ranks import NARROW_LEAVES_OUT, SHOWN, render_ranks

    figures = [14.46, 45.59, 1.03, 5.54, 38.31, 5.58, 1.09, 5.47]
    rows = [
        {
            **{key: value + rank for (_, _, key), value in zip(SHOWN[1:-2], figures, strict=True)},
            "rank": rank,
            "last_arrivals": rank % 3,
            "verdict": "communication",
            "clock_method": "aligned",
        }
        for rank in range(8)
    ]
    job = {"world_size": 8, "rank_source": "distributedInfo", "metrics_rank": 1, "ranks": rows}
    monkeypatch.setenv("COLUMNS", "80")
    render_ranks({**job, "straggler": None, "verdict": {}})
    text = capsys.readouterr().out
    assert max(len(line) for line in text.splitlines()) <= 80
    (shown,) = tables(text)
    assert "rank" in shown["headers"] and "step ms" in shown["headers"] and "verdict" in shown["headers"]
    hidden = [h for h, _, _ in SHOWN if h not in shown["headers"]]
    left_out = list(NARROW_LEAVES_OUT[: len(hidden)])  # the first ones listed, and only those
    assert hidden and set(hidden) == set(left_out)
    assert f"({', '.join(left_out)} hidden: narrow terminal; see --json)" in text
    step = shown["headers"].index("step ms")
    assert [row[step] for row in shown["rows"]] == [f"{14.46 + rank:.2f}" for rank in range(8)]
