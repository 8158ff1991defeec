"""Many profiles at once: discovery under roots and the cross-run DuckDB views behind `query` and `db`."""
