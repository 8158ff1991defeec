"""The Python API (libreyolo_profile.api, docs/PYTHON.md): on every shared trace without torch, and equal
to what the CLI prints with --json for the same profile (issue 31)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO, cli_json, require_module, require_traces, run_cli

H100 = "h100_vit_image_classifier.json.gz"
BEFORE, AFTER = "v100_resnet50_workers0.json.gz", "v100_resnet50_workers4.json.gz"


def _plain(document):
    """A document as the CLI's --json carries it (strict JSON: NaN/Infinity become null)."""
    from libreyolo_profile.output.textsafe import strict_json

    return json.loads(strict_json(document))


def _rows(relation) -> list[dict]:
    return _plain([dict(zip(relation.columns, row, strict=False)) for row in relation.fetchall()])


SNIPPET = textwrap.dedent("""
    import json, sys
    import libreyolo_profile as lp
    out = {}
    for path in sys.argv[1:]:
        p = lp.open(path)
        step_ms = p.metrics["step_ms"]
        verdict = p.verdict
        counted = p.sql("SELECT count(*) AS n FROM kernels").df()
        gemm = p.kernels(category="gemm", top=5)
        out[path] = {"step_ms": step_ms, "bound": verdict.bound, "next_step": verdict.next_step,
                     "kernels_counted": int(counted["n"][0]), "columns": gemm.columns,
                     "gemm": [list(r) for r in gemm.fetchall()]}
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "libreyolo", "torchvision"))
    print(json.dumps({"profiles": out, "heavy": heavy}, default=str))
""")


def test_snippet_on_every_shared_trace_without_torch(trace):
    require_module("pandas", "notebook")
    # through the `trace` fixture: the snippet's process finds each analysed in the test's cache
    traces = [trace(p.name) for p in sorted(require_traces().glob("*.json.gz"))]
    assert traces, "no shared traces"
    run = subprocess.run(
        [sys.executable, "-c", SNIPPET, *map(str, traces)], capture_output=True, text=True, timeout=1200, cwd=REPO
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["heavy"] == [], "the Python API imported torch or libreyolo"
    for path in map(str, traces):
        got = result["profiles"][path]
        doc = cli_json("get", path, "step_ms")
        assert got["step_ms"] == doc["value"]
        summary = cli_json("summary", path)
        assert got["bound"] == summary["verdict"]["bound"] and got["next_step"] == summary["verdict"]["next_step"]
        rows = [dict(zip(got["columns"], r, strict=False)) for r in got["gemm"]]
        assert len(rows) <= 5 and all("gemm" in r["category"] for r in rows)
        cli = cli_json("kernels", path, "--category", "gemm", "--top", "5")["kernels"]
        assert [r["name"] for r in rows] == [r["name"] for r in cli]
        assert got["kernels_counted"] >= len(rows)


@pytest.fixture(scope="module")
def h100(tmp_path_factory, analysed_traces):
    """The H100 trace opened once for the module, through a cache holding the suite's analysis of it."""
    import libreyolo_profile as lp

    path = require_traces() / H100
    cache = analysed_traces.seeded(tmp_path_factory.mktemp("h100-cache"))
    with pytest.MonkeyPatch.context() as env:
        env.setenv("XDG_CACHE_HOME", str(cache))
        analysed_traces.provide(path, cache)
        return lp.open(path)


def test_metrics_and_verdict_equal_summary_json(h100):
    summary = cli_json("summary", str(h100.path))
    assert _plain(dict(h100.metrics)) == summary["metrics"]
    assert h100.metrics.null_reasons == summary["null_reasons"]
    assert h100.verdict.to_dict() == summary["verdict"]
    assert h100.marks == summary["marks"] and _plain(h100.blame) == summary["blame"]
    assert h100.metrics.unit("step_ms") == "ms"
    assert h100.metrics.null_reason("step_ms") is None
    with pytest.raises(KeyError, match="did you mean step_ms"):
        h100.metrics["step_mss"]


@pytest.mark.parametrize(
    "args, method",
    [
        (["kernels", "--top", "7"], lambda p: p.kernels(top=7)),
        (
            ["kernels", "--sort", "count", "--top", "4", "--grep", "gemm|Kernel"],
            lambda p: p.kernels(sort="count", top=4, grep="gemm|Kernel"),
        ),
        (
            ["kernels", "--tensorcore", "--phase", "forward"],
            lambda p: p.kernels(tensorcore=True, phase="forward", top=20),
        ),
        (["ops", "--top", "6"], lambda p: p.ops(top=6)),
        (["phases"], lambda p: p.phases()),
        (["modules", "--depth", "1"], lambda p: p.modules(depth=1)),
    ],
)
def test_relations_equal_the_cli_json(h100, args, method):
    key = args[0]
    cli = cli_json(args[0], str(h100.path), *args[1:])[key]
    assert _rows(method(h100)) == cli
    assert cli, "a comparison of empty results would prove nothing"


def test_every_kernel_without_top(h100):
    everything = h100.kernels().fetchall()
    assert len(everything) == h100.con.execute("SELECT count(DISTINCT name) FROM kernels").fetchall()[0][0]


def test_bad_filters_are_the_cli_errors(h100):
    import libreyolo_profile as lp

    for call, message in [
        (lambda: h100.kernels(sort="speed"), "--sort must be one of"),
        (lambda: h100.kernels(top=0), "--top must be at least 1"),
        (lambda: h100.kernels(category="gem_typo"), "unknown kernel category"),
        (lambda: h100.kernels(grep="("), "invalid --grep"),
        (lambda: h100.ops(phase="backwrd"), "unknown phase"),
        (lambda: h100.modules(phase="sideways"), "expected forward or backward"),
        (lambda: h100.table("kernel"), "did you mean kernels"),
    ]:
        with pytest.raises(lp.UsageError, match=message):
            call()


def test_relations_take_more_sql(h100):
    top = h100.kernels(top=5)
    total = top.aggregate("sum(ms_per_step) AS ms").fetchall()[0][0]
    assert total == pytest.approx(sum(r[4] for r in top.fetchall()))
    assert top.query("k", "SELECT count(*) FROM k").fetchall()[0][0] == len(top.fetchall())
    assert (
        h100.table("kernels").arrow().read_all().num_rows
        == h100.con.execute("SELECT count(*) FROM kernels").fetchall()[0][0]
    )


@pytest.mark.parametrize(
    "sql, message",
    [
        ("COPY (SELECT 1) TO 'leak.csv'", "only SELECT"),
        ("SELECT 1; SELECT 2", "exactly one SQL statement"),
        ("SELECT * FROM read_csv('/etc/passwd')", "disabled"),
        ("SET enable_external_access = true", "only SELECT"),
    ],
)
def test_profile_sql_is_read_only(h100, sql, message, tmp_path, monkeypatch):
    import libreyolo_profile as lp

    monkeypatch.chdir(tmp_path)
    with pytest.raises(lp.UsageError, match=message):
        h100.sql(sql).fetchall()
    assert list(tmp_path.iterdir()) == []
    assert (
        h100.sql("SELECT count(*) FROM kernels").fetchall()
        == h100.con.execute("SELECT count(*) FROM kernels").fetchall()
    )


def test_compare_equals_the_cli_json(trace):
    import libreyolo_profile as lp

    before, after = str(trace(BEFORE)), str(trace(AFTER))
    rules = ["step_ms:+1%", "gpu_util_pct:-1pp"]
    c = lp.compare(before, after, fail_on=rules)
    run = run_cli("compare", before, after, *[arg for rule in rules for arg in ("--fail-on", rule)], "--json")
    assert _plain(c.to_dict()) == json.loads(run.stdout)
    assert c.exit_code == run.returncode
    assert _plain(dict(c)) == _plain(c.to_dict())
    assert c.metric("step_ms")["metric"] == "step_ms"
    assert len(c.table().fetchall()) == len(c.rows)
    assert "step_ms" in c._repr_html_()
    # an opened profile is a side as well as a path
    assert _plain(lp.compare(lp.open(before), after).to_dict()) == cli_json("compare", before, after)


def test_what_if_equals_the_cli_json(h100):
    import libreyolo_profile as lp

    cli = cli_json("what-if", str(h100.path), "--remove-category", "elementwise")
    assert _plain(lp.what_if(h100, remove_category="elementwise")) == cli
    assert _plain(h100.what_if(remove_category="elementwise")) == cli


def test_query_and_connect_equal_the_cli(tmp_path, trace):
    import libreyolo_profile as lp

    for name in (H100, BEFORE):  # through `trace`: the import finds each analysed in the test's cache
        assert run_cli("import", str(trace(name)), "--project", str(tmp_path / name.split(".")[0])).returncode == 0
    sql = "SELECT profile, kind, step_ms FROM profiles ORDER BY profile"
    assert _rows(lp.query(tmp_path, sql)) == cli_json("query", sql, str(tmp_path))
    sql = "SELECT p.profile, count(*) AS n FROM kernels k JOIN profiles p USING (profile_id) GROUP BY 1 ORDER BY 1"
    assert _rows(lp.query([tmp_path], sql)) == cli_json("query", sql, str(tmp_path))
    con = lp.connect(tmp_path)
    assert con.execute("SELECT count(*) FROM profiles").fetchall()[0][0] == 2
    with pytest.raises(Exception, match="disabled"):
        con.execute(f"COPY profiles TO '{tmp_path / 'leak.csv'}'")
    assert not (tmp_path / "leak.csv").exists()
    with pytest.raises(lp.UsageError, match="only SELECT"):
        lp.query(tmp_path, f"COPY (SELECT 1) TO '{tmp_path / 'leak.csv'}'")


def test_html_escapes_what_comes_from_files(tmp_path):
    import shutil

    import libreyolo_profile as lp

    hostile = tmp_path / "<script>x&y.json.gz"
    shutil.copyfile(require_traces() / H100, hostile)
    page = lp.open(hostile)._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;x&amp;y" in page
    assert lp.open(hostile).verdict.bound in page


def test_a_missing_file_is_the_cli_error(tmp_path):
    import libreyolo_profile as lp

    with pytest.raises(lp.UsageError, match="no such file or directory"):
        lp.open(tmp_path / "absent.json")


def test_import_loads_nothing_but_the_package():
    """`import libreyolo_profile` must stay cold: the API, DuckDB and pyarrow come on first use (PEP 562).
    (The time itself is measured with `python -X importtime`, never asserted here: timings are noisy.)"""
    code = (
        "import sys, libreyolo_profile as lp; heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('duckdb', 'pyarrow', 'torch', 'libreyolo', 'rich', 'msgspec') or m.startswith('libreyolo_profile.')); "
        "print(heavy); assert callable(lp.open) and 'libreyolo_profile.api' in sys.modules"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_every_public_name_is_documented():
    import inspect

    import libreyolo_profile as lp

    missing = []
    for name in lp.__all__:
        if name == "__version__":
            continue
        thing = getattr(lp, name)
        if not inspect.getdoc(thing):
            missing.append(name)
        if inspect.isclass(thing) and thing.__module__.startswith("libreyolo_profile.api"):
            for member, value in vars(thing).items():
                if not member.startswith("_") and not inspect.getdoc(value):
                    missing.append(f"{name}.{member}")
    assert missing == []


# Issue 54: every connection the API hands out reads no file and writes none (old: `p.con` was unlocked,
# so COPY … TO, read_csv('/etc/passwd') and `relation.write_csv(path)` all worked); a dropped or replaced
# table is one line (old: DuckDB's CatalogException from deep inside a reader).
WRITES = [
    lambda p, out: p.con.execute(f"COPY kernels TO '{out}'"),
    lambda p, out: p.con.execute("SELECT * FROM read_csv('/etc/passwd')").fetchall(),
    lambda p, out: p.con.execute("SELECT * FROM sniff_csv('/etc/passwd')").fetchall(),
    lambda p, out: p.con.execute(f"ATTACH '{out}' AS leak"),
    lambda p, out: p.con.execute(f"EXPORT DATABASE '{out.parent / 'dump'}'"),
    lambda p, out: p.con.execute("SET enable_external_access = true"),
    lambda p, out: p.kernels().write_csv(str(out)),
    lambda p, out: p.table("ops").to_parquet(str(out)),
    lambda p, out: p.con.cursor().execute(f"COPY (SELECT 1) TO '{out}'"),
]


@pytest.mark.parametrize("attempt", range(len(WRITES)))
def test_the_profile_connection_reads_and_writes_no_file(h100, attempt, tmp_path, monkeypatch):
    import duckdb

    monkeypatch.chdir(tmp_path)
    with pytest.raises(duckdb.Error):
        WRITES[attempt](h100, tmp_path / "leak.csv")
    assert list(tmp_path.iterdir()) == []


def test_a_comparison_table_writes_no_file(h100, tmp_path):
    import duckdb

    import libreyolo_profile as lp

    comparison = lp.compare(h100, h100)
    with pytest.raises(duckdb.Error):
        comparison.table().write_csv(str(tmp_path / "c.csv"))
    assert list(tmp_path.iterdir()) == []
    written = comparison.export(tmp_path / "c.parquet")
    assert written.is_file() and comparison.table().fetchall() == duckdb.sql(f"FROM '{written}'").fetchall()


def test_export_writes_where_it_is_told_and_replaces_only_when_asked(h100, tmp_path):
    import libreyolo_profile as lp

    top = h100.kernels(top=3)
    out = h100.export(top, tmp_path / "top.csv")
    first = out.read_text()
    assert first.splitlines()[0].replace('"', "").split(",") == top.columns and len(first.splitlines()) == 4
    with pytest.raises(lp.UsageError, match="exists"):
        h100.export("ops", out)
    assert out.read_text() == first  # kept
    h100.export("ops", out, force=True)
    assert len(out.read_text().splitlines()) == 1 + h100.con.execute("SELECT count(*) FROM ops").fetchall()[0][0]
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "elsewhere.csv")
    with pytest.raises(lp.UsageError, match="symbolic link"):
        h100.export(top, link, force=True)
    with pytest.raises(lp.UsageError, match=r"\.csv or \.parquet"):
        h100.export(top, tmp_path / "top.txt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "top.csv"]


def test_a_dropped_or_replaced_table_is_one_line(trace):
    import libreyolo_profile as lp

    p = lp.open(trace(H100))
    assert p.kernels(top=1).fetchall()
    p.con.execute("DROP TABLE kernels")
    with pytest.raises(lp.UsageError, match="table kernels was dropped .* lp.open"):
        p.kernels()
    p.con.execute("CREATE TABLE kernels AS SELECT 1 AS one")
    with pytest.raises(lp.UsageError, match="table kernels was replaced"):
        p.summary()


def _python_blocks(after_heading: str) -> list[str]:
    """The ```python blocks of docs/PYTHON.md's section under `after_heading`, up to the next section."""
    import re

    text = (REPO / "docs" / "PYTHON.md").read_text()
    section = text.split(f"## {after_heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


@pytest.mark.parametrize("heading", ["The daily analyses, one line each", "Comparisons and what-if"])
def test_the_documented_examples_run(heading, tmp_path, trace):
    """docs/PYTHON.md's examples run as written, from a directory beside the shared traces (their paths are
    ../shared/traces/…; what import_job writes goes under it, never into the checkout)."""
    import re

    require_module("pandas", "notebook")
    traces = require_traces()
    (tmp_path / "shared").symlink_to(traces.parent, target_is_directory=True)
    work = tmp_path / "work"
    work.mkdir()
    code = "\n".join(_python_blocks(heading))
    assert "lp." in code, "the section lost its examples"
    # the trace files they open are found analysed in the test's cache, as every reader test finds them
    for named in re.findall(r"\.\./shared/traces/([^\"']+)", code):
        if (traces / named).is_file():
            trace(named)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900, cwd=work)
    assert run.returncode == 0, run.stderr[-3000:]


def test_comparison_says_what_the_gate_said(trace):
    """An inconclusive gate (one run a side: no spread to judge by) reads INCONCLUSIVE in the repr and the HTML,
    as `compare` prints it, never 'passed'; ops and kernels are compare --ops/--kernels."""
    import libreyolo_profile as lp

    before, after = str(trace(BEFORE)), str(trace(AFTER))
    c = lp.compare(before, after, fail_on=["step_ms:+5%"], ops=True, kernels=True)
    run = run_cli("compare", before, after, "--fail-on", "step_ms:+5%", "--ops", "--kernels", "--json")
    cli = json.loads(run.stdout)
    assert cli["gate"]["status"].startswith("INCONCLUSIVE") and c.status == "INCONCLUSIVE"
    assert c.inconclusive == ["step_ms:+5%"] and not c.failed and c.exit_code == run.returncode == 0
    assert repr(c).endswith("gate INCONCLUSIVE>") and "pass" not in repr(c)
    assert "<b>gate: INCONCLUSIVE" in c._repr_html_()
    for what in ("ops", "kernels"):
        assert _rows(getattr(c, what)) == _plain(cli[what]["rows"])
    passed = lp.compare(before, after, fail_on=["step_ms:+5000%"])
    assert passed.status in ("pass", "INCONCLUSIVE") and repr(passed).endswith(f"gate {passed.status}>")
    assert repr(lp.compare(before, after)).endswith("'>")  # no rule, no gate
    with pytest.raises(lp.UsageError, match="ops=True"):
        _ = lp.compare(before, after).ops
