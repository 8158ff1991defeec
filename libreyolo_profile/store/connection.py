"""What every DuckDB connection of ours needs before its first query, analysis and readers alike."""

from __future__ import annotations


def without_progress_bar(con):
    """`con` with DuckDB's progress bar off: past its 2 s wait a query draws the bar on stdout, pipe or not,
    and stdout is --json's, the tables' and the Python API's caller's. In a Jupyter kernel without
    ipywidgets DuckDB refuses to touch the setting, and draws no bar there."""
    import duckdb

    try:
        con.execute("SET enable_progress_bar = false")
    except duckdb.InvalidInputException:
        pass
    return con
