"""`lp.compare`'s result: the document `compare --json` prints, as a read-only mapping with typed
accessors and an HTML view for notebooks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from libreyolo_profile.errors import EXIT_OK


class Comparison(Mapping[str, object]):
    """Before vs after. ``dict(c)`` (or ``c.to_dict()``) is exactly the JSON document `compare --json`
    prints; the properties name its parts."""

    def __init__(self, document: dict):
        self._doc = document

    def __getitem__(self, key: str):
        return self._doc[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._doc)

    def __len__(self) -> int:
        return len(self._doc)

    def to_dict(self) -> dict:
        """The comparison as `compare --json` prints it."""
        return self._doc

    @property
    def kind(self) -> str:
        """ "train" or "infer" (both sides are one kind)."""
        return self._doc["kind"]

    @property
    def rows(self) -> list[dict]:
        """One row per metric: before/after means, change, significance, unit and a note where null."""
        return self._doc["metrics"]

    def metric(self, name: str) -> dict:
        """The row of one metric (KeyError when the comparison has none)."""
        for row in self.rows:
            if row["metric"] == name:
                return row
        raise KeyError(f"no metric '{name}' in this comparison")

    @property
    def significance(self) -> dict:
        """Whether a significance test ran (both sides repeated), its rule and the trial counts."""
        return self._doc["significance"]

    @property
    def verdict(self) -> dict:
        """Each side's verdict and whether it changed."""
        return self._doc["verdict"]

    @property
    def gate(self) -> dict | None:
        """The --fail-on / strict-noise decision, None when no rule was given."""
        return self._doc["gate"]

    @property
    def status(self) -> str | None:
        """The gate's outcome as `compare` prints it: "pass", "FAIL" or "INCONCLUSIVE" (an inconclusive
        gate exits 0 unless require_conclusive, but proves nothing); None when no rule was given."""
        return None if self.gate is None else self.gate["status"].split(" ", 1)[0]

    @property
    def inconclusive(self) -> list[str]:
        """The rules whose evidence cannot tell (empty when every rule decided, or no rule was given)."""
        return list(self.gate["inconclusive"]) if self.gate is not None else []

    @property
    def failed(self) -> bool:
        """Whether the gate failed (the CLI would exit 4)."""
        return bool(self.gate and self.gate["failed"])

    @property
    def exit_code(self) -> int:
        """The exit code `compare` ends with for this result: 4 on a gate failure, 5 on an inconclusive
        rule under require_conclusive, else 0."""
        return self.gate["exit_code"] if self.gate is not None else EXIT_OK

    def table(self):
        """The metric rows as a DuckDB relation (.df(), .pl(), .arrow()) on a locked connection of their own
        (lp.export writes it to a file)."""
        import duckdb
        import pyarrow as pa

        from libreyolo_profile.api.readonly import locked

        con = duckdb.connect(":memory:")
        con.from_arrow(pa.Table.from_pylist(self.rows)).to_table("comparison")
        return locked(con).table("comparison")

    @property
    def ops(self):
        """Per op, the change in self CPU time and calls per step, the largest first, as `compare --ops` prints
        it: a relation (lp.compare(…, ops=True) computes it)."""
        return self._items("ops")

    @property
    def kernels(self):
        """Per kernel (memcpy and memset too), the change in device time and executions per step, the largest
        first, as `compare --kernels` prints it: a relation (lp.compare(…, kernels=True) computes it)."""
        return self._items("kernels")

    def _items(self, what: str):
        import pyarrow as pa

        from libreyolo_profile.api.analyses import arrow_relation
        from libreyolo_profile.errors import UsageError

        if what not in self._doc:
            raise UsageError(f"this comparison holds no {what} diff: lp.compare(before, after, {what}=True)")
        rows = self._doc[what]["rows"]
        return arrow_relation(
            pa.Table.from_pylist(rows) if rows else pa.table({"name": pa.array([], pa.string())}), what
        )

    def export(self, path, *, force: bool = False):
        """The metric rows written to `path` as CSV or Parquet (api/files_out.py); the path written."""
        from libreyolo_profile.api.files_out import export

        return export(self.table(), path, force=force)

    def _repr_html_(self) -> str:
        from libreyolo_profile.api.html import comparison_html

        return comparison_html(self)

    def __repr__(self) -> str:
        b, a = self._doc["before"], self._doc["after"]
        # the gate's own word: an inconclusive rule proves nothing, so it never reads as passed
        gate = "" if self.gate is None else f" gate {self.status}"
        return f"<Comparison {self.kind} {b.get('path')!r} → {a.get('path')!r}{gate}>"
