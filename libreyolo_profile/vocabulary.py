"""The vocabulary the SQL defines, read once per process: blame causes (sql/blame_causes.sql), verdicts
(sql/verdicts.sql), thresholds (sql/verdict_thresholds.sql), colours (sql/palette.sql), the metrics
(sql/metric_catalog.sql) and the sidecar tables' columns (sql/sidecar_columns.sql). Python never spells a
cause, a verdict, a metric's unit or a column's meaning: it reads them here, so renaming one, or adding one,
is a change to one row.

Reading a table through DuckDB costs a fresh process ~100 ms (its import and first database), and `get`
answers in ~50 ms without DuckDB: the rows are kept as JSON, named by a checksum of the module's SQL (an
edited module is read again, a cached one costs a file read), beside the SQL as Python keeps bytecode
(sql/__pycache__/, so every user and every cache directory shares them) or, where the package cannot be
written, in the user's cache (the store's cache root, $XDG_CACHE_HOME/libreyolo-profile, under
vocabulary/). Where neither can be written, each process reads the SQL: slower, never wrong.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import zlib
from functools import cache
from pathlib import Path

from libreyolo_profile.sqlfiles import sql_directory, sql_text

# table → the module that creates it
_MODULES = {
    "blame_causes": "blame_causes.sql",
    "verdicts": "verdicts.sql",
    "verdict_thresholds": "verdict_thresholds.sql",
    "report_palette": "palette.sql",
    "terminal_palette": "palette.sql",
    "metric_catalog": "metric_catalog.sql",
    "metric_units": "metric_catalog.sql",
    "sidecar_tables": "sidecar_columns.sql",
    "sidecar_columns": "sidecar_columns.sql",
}
_LOCK = threading.Lock()
_CACHE_FORMAT = "1"  # bump when the cached files' layout changes


def _cache_directories() -> tuple[Path, Path]:
    """Where the rows are kept, the first that can be written: beside the SQL, else the store's cache root
    (store/workdir.py configured_root; the ground floor cannot import the store), under vocabulary/."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return sql_directory() / "__pycache__", Path(base) / "libreyolo-profile" / "vocabulary"


def _from_sql(module: str) -> dict[str, list[dict]]:
    """Every table the module creates, as rows (dicts) in the order it lists them, read through DuckDB."""
    from libreyolo_profile.connections import scratch_connection
    from libreyolo_profile.sqlmodules import run_module

    with _LOCK:
        con = scratch_connection()
        try:
            run_module(con, module)
            found = {}
            for table in (t for t, m in _MODULES.items() if m == module):
                cursor = con.execute(f"SELECT * FROM {table} ORDER BY rowid")
                names = [d[0] for d in cursor.description]
                found[table] = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            return found
        finally:
            con.close()


@cache
def _module_rows(module: str) -> dict[str, list[dict]]:
    """The module's tables, from the cache when it holds this version of the module, else from DuckDB (and
    then kept there). Either way the rows are what JSON carries, so a hit and a miss give the same values."""
    text = sql_text(module)  # a vocabulary module requires nothing (tests/test_metric_catalog.py): its own SQL
    key = f"{_CACHE_FORMAT}-{zlib.crc32(text.encode()):08x}-{len(text):x}"  # is all its rows depend on
    paths = [directory / f"vocabulary-{module.removesuffix('.sql')}-{key}.json" for directory in _cache_directories()]
    for path in paths:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    found = json.dumps(_from_sql(module), ensure_ascii=False)
    for path in paths:  # another version's file stays: two installs sharing a cache must not evict each other's
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # a fresh name opened exclusively: a planted symlink or a concurrent process cannot take it over
            handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(found)
                os.replace(temporary, path)  # readers see the whole file or none
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
            break
        except OSError:
            continue
    return json.loads(found)


def rows(table: str) -> tuple[dict, ...]:
    """Every row of one vocabulary table, as dicts, in the order its module lists them."""
    return tuple(_module_rows(_MODULES[table])[table])


@cache
def causes() -> dict[str, dict]:
    """cause → its row (priority, profile, side, gpu_verdict, cpu_verdict, runs_ops, words)."""
    return {row["cause"]: row for row in rows("blame_causes")}


@cache
def verdicts() -> dict[str, dict]:
    """verdict → its row (advice, device_work, what_if_model, stage_metric, stage_order, yields_to_stage,
    untrusted_step)."""
    return {row["verdict"]: row for row in rows("verdicts")}


@cache
def thresholds() -> dict[str, float | int]:
    """name → value (counts as integers), in the order sql/verdict_thresholds.sql lists them."""
    return {
        row["name"]: int(row["value"]) if row["unit"] == "count" else row["value"] for row in rows("verdict_thresholds")
    }


def causes_running_ops(on_gpu: bool) -> tuple[str, ...]:
    """The causes in which the device (on a CPU, the CPU) was executing ops, in priority order."""
    profile = "gpu" if on_gpu else "cpu"
    return tuple(c for c, row in causes().items() if row["runs_ops"] and row["profile"] in (profile, "any"))


def what_if_modelled() -> frozenset[str]:
    """The verdicts what-if models directly (launches, GPU work, CPU ops) rather than capping by their share."""
    return frozenset(v for v, row in verdicts().items() if row["what_if_model"])


@cache
def report_meanings() -> dict[str, tuple[str, tuple[str, ...]]]:
    """meaning → (its report colour, the names that carry it), in sql/palette.sql's order."""
    found: dict[str, tuple[str, list[str]]] = {}
    for row in rows("report_palette"):
        found.setdefault(row["meaning"], (row["colour"], []))[1].append(row["name"])
    return {meaning: (colour, tuple(names)) for meaning, (colour, names) in found.items()}


@cache
def terminal_colours(kind: str) -> dict[str, str]:
    """name → the terminal charts' colour for one kind of name (phase | category | cause)."""
    return {row["name"]: row["colour"] for row in rows("terminal_palette") if row["kind"] == kind}
