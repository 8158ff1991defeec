"""One trace in, everything a profile holds out: metrics, tables, devices and window.

The same path serves our own captures and foreign traces, so every number has one definition.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from libreyolo_profile.errors import UnanalysableError
from libreyolo_profile.output.progress import TraceReadingProgress
from libreyolo_profile.sqlmodules import module as sql_module
from libreyolo_profile.sqlmodules import run_module
from libreyolo_profile.store.decode.parse import damage_notes, parse_trace
from libreyolo_profile.store.ingest.timeline import compute_metrics, ingest
from libreyolo_profile.store.schema import JOB_TABLES, TABLES
from libreyolo_profile.store.sections import FIRST_READ, KEPT, OPTIONAL_SECTIONS, Section

# a job's tables need every rank: store/document/job.py builds them; one trace leaves them empty
TABLE_QUERIES = {name: f"table_{name}.sql" for name in TABLES if name not in JOB_TABLES}


# what the sections stand on, run (and failing the profile) before any of them
_SECTION_GROUND = ("blame.sql", "window_executions.sql")


def analyse_trace(
    path: Path,
    kind_hint: str | None = None,
    images_per_step: int | None = None,
    cpu_peak: dict | None = None,
    rank: int | None = None,
    sections: tuple[str, ...] = (),
) -> dict:
    """cpu_peak: the CPU's measured roof (measure/cpu_peak.py), which only run/infer can give.
    rank: the rank a job import decided for this trace (store/document/job.py); else the trace's own.
    sections: the optional sections to compute besides the first read's (store/sections.py FIRST_READ, which
    the metrics and the verdict stand on), e.g. ("ranks",) for a job; the analysis's "sections" lists those
    it holds (computed, or tried: "unavailable" says which failed), and a section it does not hold is no
    figure of its profile."""
    held = _sections_held(sections)
    parsed = parse_trace(path, progress=TraceReadingProgress)
    with _core_stage(path, "reading the trace's events into steps, ops and device work"):
        con = ingest(parsed, kind_hint)  # lets the raw columns go once DuckDB holds what it needs
    unavailable: dict[str, str] = {}
    try:
        durations = con.execute("SELECT duration_events, usable FROM duration_counts").fetchone()
        typing_damage = con.execute("SELECT reason, events, example FROM event_damage").fetchall()
        if con.execute("SELECT count(*) FROM step_ranges").fetchone()[0] == 0:
            damage = "".join(f"; {note}" for note in damage_notes(parsed.stats, typing_damage))
            raise UnanalysableError(
                f"{path}: the trace holds no host ops, annotations or device work to analyse{damage}"
            )
        _one_process(con, path)
        con.execute(
            "CREATE OR REPLACE TEMP TABLE trace_info AS SELECT CAST($rank AS BIGINT) AS rank",
            {"rank": parsed.rank if rank is None else rank},
        )
        register_roofline_inputs(con, parsed.devices, cpu_peak)
        metrics = _metrics_and_sections(con, path, images_per_step, unavailable)
        kind, kind_inferred, phases_annotated = con.execute("SELECT * FROM profile_kind").fetchone()
        tables = _sidecar_tables(con, path, unavailable)
        timeline = []  # a job's rank timeline (store/document/job.py), only where asked for
        if "ranks" in held and _run_section(con, "ranks", OPTIONAL_SECTIONS["ranks"], unavailable, path):
            timeline = _module_rows(con, OPTIONAL_SECTIONS["ranks"].module)
        trace_rank = parsed.rank if rank is None else rank
        kept = {name: _kept_files(con, name, trace_rank, unavailable) for name in KEPT if name in held}
        nesting_cut = _nesting_cut(con)  # read after the tables, since modules.sql runs with table_modules
        with _core_stage(path, "the devices"):
            device_rows = _module_rows(con, "devices.sql")
    finally:
        con.close()
    _name_devices(device_rows, parsed.devices)
    return {
        "kind": kind,
        "kind_inferred": bool(kind_inferred),
        "phases_annotated": bool(phases_annotated),
        "metrics": metrics,
        "tables": tables,
        "devices": device_rows,
        "device_properties": parsed.devices,
        "rank": parsed.rank if rank is None else rank,
        "world_size": parsed.world_size,
        "distributed": parsed.distributed,
        "timeline": timeline,
        "damage": damage_notes(parsed.stats, typing_damage),
        "nesting_cut": [list(row) for row in nesting_cut],
        "duration_events": durations[0],
        "usable_durations": durations[1],
        "unavailable": unavailable,
        "sections": list(held),
        # the asked-for sections kept beside the profile (store/disk/kept_sections.py): {name: {file: bytes}}
        "kept": {name: files for name, files in kept.items() if files is not None},
    }


def _one_process(con, path: Path) -> None:
    """Refuse several processes' traces merged into one file (sql/ingest.sql step_processes): their correlation
    ids and steps clash, so no figure of one timeline would be any process's."""
    pids = [pid for (pid,) in con.execute("SELECT pid FROM step_processes ORDER BY ranges DESC, pid").fetchall()]
    if len(pids) > 1:
        shown = ", ".join(str(pid)[:20] for pid in pids[:4]) + (", …" if len(pids) > 4 else "")
        raise UnanalysableError(
            f"{path}: the trace holds the ProfilerSteps of {len(pids)} processes (pid {shown}): several "
            "processes' traces merged into one file, whose correlation ids and steps clash; read each process's "
            "own trace (a job's ranks together: `libreyolo profile import --job TRACE…`)"
        )


def _kept_files(con, name: str, trace_rank: int | None, unavailable: dict[str, str]) -> dict[str, bytes] | None:
    """A kept section's files (store/ingest/lazy_sections.py); None where it fails on this trace, alone."""
    from libreyolo_profile.store.ingest.lazy_sections import section_files

    try:
        return section_files(con, name, trace_rank)
    except duckdb.Error as error:
        unavailable[name] = f"it could not be computed on this trace ({_one_line(error)})"
        return None


def _sections_held(asked: tuple[str, ...]) -> tuple[str, ...]:
    """The first read's sections and those asked for, in run order; a name that is no section is a bug."""
    unknown = sorted(set(asked) - set(OPTIONAL_SECTIONS))
    assert not unknown, f"no such section: {unknown}"
    return tuple(name for name in OPTIONAL_SECTIONS if name in FIRST_READ or name in asked)


def _metrics_and_sections(con, path: Path, images_per_step: int | None, unavailable: dict[str, str]) -> dict:
    """The metrics, after the core they stand on and the first read's sections, which they read (each failing
    alone: `unavailable` says which did and why, and their metrics are null)."""
    with _core_stage(path, "the blame of each step"):
        for module in _SECTION_GROUND:
            run_module(con, module)
    for name in FIRST_READ:
        _run_section(con, name, OPTIONAL_SECTIONS[name], unavailable, path)
    with _core_stage(path, "the metrics"):
        metrics = compute_metrics(con, images_per_step)
    for name in unavailable:
        metrics.update(dict.fromkeys(OPTIONAL_SECTIONS[name].metrics))  # a stand-in's empty rows give no figure
    return metrics


class _core_stage:
    """A stage of the core: an SQL error in it fails the profile with one line naming the stage and what
    DuckDB said about the trace's data (UnanalysableError, exit 1), never a traceback."""

    def __init__(self, path: Path, what: str):
        self.path, self.what = path, what

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        if isinstance(error, duckdb.Error):
            raise UnanalysableError(f"{self.path}: {self.what} could not be computed: {_one_line(error)}") from error
        return False


def _one_line(error: Exception) -> str:
    """DuckDB's message, its first line (the rest is the statement and a caret)."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _run_section(con, name: str, section: Section, unavailable: dict[str, str], path: Path) -> bool:
    """Run an optional section's module; where it fails on this trace, record why in `unavailable` and leave
    empty stand-ins of the tables it makes, so what reads them (the metrics, the tables) still runs. True
    when it ran."""
    if name in unavailable:
        return False
    module = section.module
    before = _temp_tables(con)
    source = _failed_source(module, unavailable)
    if source is not None:
        unavailable[name] = f"it reads the {source} section, which could not be computed"
    else:
        try:
            run_module(con, module)
            return True
        except duckdb.Error as error:
            unavailable[name] = f"it could not be computed on this trace ({_one_line(error)})"
    with _core_stage(path, f"the {name} section ({unavailable[name]}), or an empty stand-in for it,"):
        _stand_in(con, module, before)
    return False


def _failed_source(module: str, unavailable: dict[str, str]) -> str | None:
    """The unavailable section whose module `module` reads, directly or through what it requires (None: none)."""
    section_of = {s.module: name for name, s in OPTIONAL_SECTIONS.items()}
    seen, pending = set(), [module]
    while pending:
        for needed in sql_module(pending.pop()).requires:
            if section_of.get(needed) in unavailable:
                return section_of[needed]
            if needed not in seen:
                seen.add(needed)
                pending.append(needed)
    return None


def _temp_tables(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()}


def _stand_in(con, module: str, before: set[str]) -> None:
    """Empty tables in place of what `module` (and the requirements it ran) makes, typed as the module types
    them: its own SQL run over every table emptied, in a transaction that is rolled back, gives their columns
    (the failure was the data's, so over no data it runs). A module that fails over no data too is a bug of
    the package: that error fails the profile."""
    con.execute("BEGIN TRANSACTION")
    try:
        for table in _temp_tables(con):
            con.execute(f'DELETE FROM "{table}"')
        run_module(con, module)
        shapes = {t: con.execute(f'DESCRIBE "{t}"').fetchall() for t in sorted(_temp_tables(con) - before)}
    finally:
        con.execute("ROLLBACK")
    for table, columns in shapes.items():
        names = ", ".join(f'"{c[0]}" {c[1]}' for c in columns)
        con.execute(f'CREATE OR REPLACE TEMP TABLE "{table}" ({names})')


def _sidecar_tables(con, path: Path, unavailable: dict[str, str]) -> dict:
    """Every sidecar table of one trace, {name: {columns, rows}}; a job's tables empty, and an optional
    section's empty where it could not be computed (`unavailable` says why). A table query whose columns
    are not the schema's is a bug, caught here."""
    section_of = {table: name for name, s in OPTIONAL_SECTIONS.items() for table in s.tables}
    tables = {}
    for name, query in TABLE_QUERIES.items():
        columns = [c[0] for c in TABLES[name]]
        section = section_of.get(name)
        try:
            cursor = run_module(con, query)
        except duckdb.Error as error:
            if section is None:
                raise UnanalysableError(f"{path}: the {name} table could not be computed: {_one_line(error)}") from None
            unavailable.setdefault(section, f"its table could not be computed on this trace ({_one_line(error)})")
            tables[name] = {"columns": columns, "rows": []}
            continue
        found = [d[0] for d in cursor.description]
        assert found == columns, f"{query} columns {found} differ from schema {columns}"
        tables[name] = {"columns": columns, "rows": [list(r) for r in cursor.fetchall()]}
        if section in unavailable:
            tables[name]["rows"] = []  # a stand-in's rows, if any, are no figures
    for name in JOB_TABLES:
        tables[name] = {"columns": [c[0] for c in TABLES[name]], "rows": []}
    return tables


def _module_rows(con, module: str) -> list[dict]:
    """The rows of a SQL module's last statement, each a dict by column name."""
    cursor = run_module(con, module)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _nesting_cut(con) -> list[tuple]:
    """Ranges nested past sql/ingest.sql's nesting_cap, left out: (what, how many, the cap)."""
    return con.execute(
        "SELECT what, events, (SELECT max_depth FROM nesting_cap) FROM nesting_cut ORDER BY what"
    ).fetchall()


def _name_devices(device_rows: list[dict], devices: list[dict]) -> None:
    """Each device row gets the name and memory the trace's deviceProperties give its device."""
    properties = {d["device"]: d for d in devices}
    for row in device_rows:
        prop = properties.get(str(row["device"]), {})
        row["name"] = prop.get("name")
        row["total_mb"] = prop.get("total_mb")


FOREIGN_CPU_PEAK = "a CPU trace from elsewhere: the CPU's peak was not measured (only run and infer measure it)"


def register_roofline_inputs(con, devices: list[dict], cpu_peak: dict | None) -> None:
    """The inputs sql/roofline.sql reads besides the trace: its deviceProperties and the CPU's measured peak."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE roofline_device_input (device VARCHAR, name VARCHAR, total_mb DOUBLE, "
        "num_sms BIGINT)"
    )
    rows = [(d.get("device"), d.get("name"), d.get("total_mb"), d.get("num_sms")) for d in devices]
    if rows:
        con.executemany("INSERT INTO roofline_device_input VALUES (?, ?, ?, ?)", rows)
    peak = cpu_peak or {}
    con.execute(
        "CREATE OR REPLACE TEMP TABLE roofline_cpu_input AS SELECT CAST($tflops AS DOUBLE) AS tflops, "
        "CAST($bw AS DOUBLE) AS tb_per_s, CAST($method AS VARCHAR) AS method, CAST($why AS VARCHAR) AS null_reason",
        {
            "tflops": peak.get("fp32_tflops"),
            "bw": peak.get("tb_per_s"),
            "method": peak.get("method"),
            "why": peak.get("null_reason") if cpu_peak else FOREIGN_CPU_PEAK,
        },
    )
