"""docs/SCHEMA.md stays true: its generated blocks match the vocabulary and the code (sql/sidecar_columns.sql
through store/schema.py, sql/metric_catalog.sql through metric_catalog.py, store/crossrun/columns.py), its
profile.json keys match a real document, the views have the documented columns, and every ```sql example
runs through the DuckDB Python client on real profile directories.

Regenerate the blocks after a schema change:  python tests/test_schema_docs.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "SCHEMA.md"
sys.path.insert(0, str(REPO))  # run as a script too

from libreyolo_profile.metric_catalog import METRICS  # noqa: E402
from libreyolo_profile.store.crossrun.columns import IDENTITY_COLUMNS, PROFILE_COLUMNS, metric_columns  # noqa: E402
from libreyolo_profile.store.schema import (  # noqa: E402
    BUILTIN_SCHEMA,
    PROFILE_SCHEMA,
    REPEAT_SCHEMA,
    SCHEMA_VERSION,
    TABLES,
    TABLES_VERSION,
)

PARQUET_TYPES = {
    "BIGINT": "INT64",
    "INTEGER": "INT32",
    "DOUBLE": "DOUBLE",
    "VARCHAR": "BYTE_ARRAY (UTF8 string)",
    "BOOLEAN": "BOOLEAN",
}


def _cell(text: str) -> str:
    return (text or "").replace("|", "\\|")


def render_versions() -> str:
    return "\n".join(
        [
            "| what | value |",
            "| --- | --- |",
            f"| `profile.json` schema id | `{PROFILE_SCHEMA}` |",
            f"| `profile_repeat.json` schema id | `{REPEAT_SCHEMA}` |",
            f"| `schema_version` (profile.json layout) | {SCHEMA_VERSION} |",
            f"| `tables_version` (parquet tables below) | {TABLES_VERSION} |",
            f"| LibreYOLO built-in profile, read and converted | `{BUILTIN_SCHEMA}` |",
        ]
    )


def render_tables() -> str:
    parts = []
    for table, columns in TABLES.items():
        parts.append(f"### `{table}` — `{table}.parquet`\n")
        parts.append("| column | type | parquet physical type | unit | meaning |")
        parts.append("| --- | --- | --- | --- | --- |")
        for name, sql_type, unit, meaning in columns:
            parts.append(f"| `{name}` | {sql_type} | {PARQUET_TYPES[sql_type]} | {unit or '—'} | {_cell(meaning)} |")
        parts.append("")
    return "\n".join(parts).rstrip()


def render_metrics() -> str:
    lines = ["| metric | type | unit | kinds | device | meaning |", "| --- | --- | --- | --- | --- | --- |"]
    types = {name: sql_type for name, sql_type, _, _ in metric_columns()}
    for name, (unit, kinds, device, meaning) in METRICS.items():
        lines.append(f"| `{name}` | {types[name]} | {unit or '—'} | {', '.join(kinds)} | {device} | {_cell(meaning)} |")
    return "\n".join(lines)


def render_ranges() -> str:
    from libreyolo_profile.metric_catalog import metric_row
    from libreyolo_profile.vocabulary import rows

    lines = ["| unit | lowest | highest plausible | metrics with a range of their own |", "| --- | --- | --- | --- |"]
    for unit in rows("metric_units"):
        own = [
            f"`{name}`: {metric_row(name)['lowest']:g} … {metric_row(name)['highest']:g}"
            for name, (metric_unit, _, _, _) in METRICS.items()
            if metric_unit == unit["unit"] and metric_row(name)["lowest"] is not None
        ]
        lines.append(f"| {unit['unit']} | {unit['lowest']:g} | {unit['highest']:g} | {'; '.join(own) or '—'} |")
    return "\n".join(lines)


def _columns_table(columns) -> str:
    lines = ["| column | type | unit | meaning |", "| --- | --- | --- | --- |"]
    for name, sql_type, unit, meaning in columns:
        lines.append(f"| `{name}` | {sql_type} | {unit or '—'} | {_cell(meaning)} |")
    return "\n".join(lines)


def render_identity() -> str:
    return _columns_table(IDENTITY_COLUMNS)


def render_profiles() -> str:
    return _columns_table(PROFILE_COLUMNS)


BLOCKS = {
    "versions": render_versions,
    "tables": render_tables,
    "metrics": render_metrics,
    "ranges": render_ranges,
    "identity": render_identity,
    "profiles": render_profiles,
}


def _block_pattern(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- generated:{name}:begin -->\n)(.*?)(\n<!-- generated:{name}:end -->)", re.S)


def regenerate(text: str) -> str:
    for name, render in BLOCKS.items():
        pattern = _block_pattern(name)
        if not pattern.search(text):
            raise SystemExit(f"docs/SCHEMA.md lacks the markers of generated block '{name}'")
        text = pattern.sub(lambda m, render=render: m.group(1) + render() + m.group(3), text)
    return text


# ---------------------------------------------------------------------------------------------
# the generated blocks and the documented keys


@pytest.mark.parametrize("name", list(BLOCKS))
def test_generated_block_matches_the_code(name):
    match = _block_pattern(name).search(DOC.read_text(encoding="utf-8"))
    assert match, f"docs/SCHEMA.md lacks <!-- generated:{name}:begin/end --> markers"
    assert match.group(2) == BLOCKS[name](), (
        f"docs/SCHEMA.md block '{name}' is out of date: run `python tests/test_schema_docs.py`"
    )


def _documented_keys() -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    section = re.search(r"<!-- profile-json-keys:begin -->(.*?)<!-- profile-json-keys:end -->", text, re.S)
    assert section, "docs/SCHEMA.md lacks the profile.json keys table"
    return set(re.findall(r"^\| `([a-z_]+)` \|", section.group(1), re.M))


def test_profile_json_keys_are_the_documented_ones(trace, analysed_traces):
    from libreyolo_profile.store.document.builtin import builtin_document

    doc = analysed_traces.document(trace("h100_vit_image_classifier"))
    assert set(doc) == _documented_keys()
    builtin = REPO.parent / "shared" / "libreyolo_builtin_profiles" / "infer_profile.json"
    if builtin.is_file():  # a converted built-in profile has exactly the same keys
        assert set(builtin_document(builtin)) == set(doc)


# ---------------------------------------------------------------------------------------------
# real profile directories and the examples


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, analysed_traces):
    """runs/profile/{train,infer,a/train,old/train}: three real GPU traces and one built-in profile."""
    from conftest import require_traces

    from libreyolo_profile.importer import imported_document
    from libreyolo_profile.store.disk.writer import write_directory

    traces = require_traces()
    root = tmp_path_factory.mktemp("schema-docs")
    runs = root / "runs" / "profile"
    for name, target in (
        ("v100_resnet50_workers0", runs),
        ("h100_vit_image_classifier", runs),
        ("v100_resnet50_workers4", runs / "a"),
    ):
        doc = analysed_traces.document(traces / f"{name}.json.gz")
        write_directory(doc, target / doc["kind"])
    builtin = REPO.parent / "shared" / "libreyolo_builtin_profiles" / "run_profile.json"
    if builtin.is_file():
        doc = imported_document(builtin)
        write_directory(doc, runs / "old" / doc["kind"])
    return root


def _examples() -> list[tuple[str, str]]:
    """(how to run, SQL) for every ```sql block; each must be preceded by <!-- run: … -->."""
    text = DOC.read_text(encoding="utf-8")
    examples = []
    for match in re.finditer(r"```sql\n(.*?)```", text, re.S):
        before = text[: match.start()].rstrip().splitlines()[-1]
        tag = re.fullmatch(r"<!-- run: ([a-z-]+)(?: .*)? -->", before.strip())
        assert tag, f"```sql block without a <!-- run: duckdb|query|db|no … --> tag before it: {match.group(1)[:60]}"
        examples.append((tag.group(1), match.group(1).strip()))
    return examples


def test_every_sql_example_is_tagged_and_some_run():
    examples = _examples()
    assert len([e for e in examples if e[0] != "no"]) >= 8


def _statements(con, sql: str) -> list[str]:
    return [str(s.query) for s in con.extract_statements(sql)]


@pytest.mark.parametrize("index", range(len(_examples())))
def test_sql_example_runs(index, workdir, monkeypatch, capsys):
    import duckdb

    from libreyolo_profile.readers import query

    how, sql = _examples()[index]
    if how == "no":
        pytest.skip("marked not runnable here (needs object storage credentials)")
    monkeypatch.chdir(workdir)
    if how == "duckdb":
        con = duckdb.connect(":memory:")
    elif how == "query":
        con, _, files = query.open_cross_run([Path("runs/profile")])
        query.lock_down(con, files)
    elif how == "db":
        query.write_database(Path("runs/profile.duckdb"), [Path("runs/profile")], True)
        capsys.readouterr()
        con = duckdb.connect("runs/profile.duckdb", read_only=True)
    else:
        pytest.fail(f"unknown run tag {how}")
    try:
        for statement in _statements(con, sql):
            if how == "query":
                columns, rows = query.run_query(con, statement)
            else:
                rows = con.execute(statement).fetchall()
            assert rows, f"the example returned no rows on real profiles: {statement}"
    finally:
        con.close()


def test_sidecars_use_the_documented_plain_parquet_types(workdir):
    import pyarrow.parquet as pq

    for table, columns in TABLES.items():
        for file in sorted((workdir / "runs" / "profile").rglob(f"{table}.parquet")):
            schema = pq.read_metadata(file).schema
            assert [schema.column(i).name for i in range(len(schema))] == [c[0] for c in columns]
            for i, (name, sql_type, _, _) in enumerate(columns):
                column = schema.column(i)
                assert column.physical_type == PARQUET_TYPES[sql_type].split()[0], (file, name)
                assert column.max_definition_level <= 1 and column.max_repetition_level == 0, (file, name)  # flat
                assert str(column.logical_type) in ("None", "String"), (file, name, column.logical_type)


def test_views_have_the_documented_columns(workdir, monkeypatch):
    from libreyolo_profile.readers import query

    monkeypatch.chdir(workdir)
    con, found, _ = query.open_cross_run([Path("runs/profile")])
    try:
        described = {
            view: [(r[0], r[1]) for r in con.execute(f"DESCRIBE {view}").fetchall()] for view in ("profiles", *TABLES)
        }
    finally:
        con.close()
    duck = {"TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE"}
    expected_profiles = [(n, duck.get(t, t)) for n, t, _, _ in PROFILE_COLUMNS + metric_columns()]
    assert described["profiles"] == expected_profiles
    identity = [(n, duck.get(t, t)) for n, t, _, _ in IDENTITY_COLUMNS]
    for table, columns in TABLES.items():
        assert described[table] == identity + [(n, t) for n, t, _, _ in columns]


if __name__ == "__main__":
    DOC.write_text(regenerate(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"regenerated {DOC}")
