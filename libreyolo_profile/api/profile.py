"""`lp.open(path)`: one profile in Python, its tables as DuckDB relations.

A Profile is the readers' own opened profile (readers/common.OpenProfile) with names a notebook wants:
the methods call the readers' filter functions (kernels.kernel_relation, ops.op_relation …), so the CLI
and Python share one definition of each. Relations are lazy DuckDB queries on the profile's in-memory
connection: `.df()` (pandas), `.pl()` (polars), `.arrow()`, `.fetchall()`, or more SQL via
``relation.query("name", "SELECT … FROM name")``.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from libreyolo_profile.api.metrics import Metrics, Verdict
from libreyolo_profile.errors import UsageError
from libreyolo_profile.readers.common import OpenProfile, open_profile, profile_identity
from libreyolo_profile.store.schema import TABLES


def open(path: str | Path) -> "Profile":  # noqa: A001 - `lp.open` is the name the issue asks for
    """Open anything a reader takes: profile.json, profile_repeat.json, profile_trace.json, a profile
    directory, or any PyTorch profiler (Kineto) trace, .json or .json.gz. A missing or unreadable file is
    a UsageError and a trace that cannot be analysed an UnanalysableError (both ProfileError), with the
    one-line message the CLI prints."""
    from libreyolo_profile.api.readonly import locked

    opened = open_profile(Path(path))
    return Profile(opened.loaded, locked(opened.con))


class Profile(OpenProfile):
    """One opened profile. Its document is read once; its tables (kernels, ops, phases, steps, blame,
    modules) sit in an in-memory DuckDB connection (``con``) that every relation here reads. The connection
    opens no file and changes no setting (api/readonly.py); a table dropped or replaced through it is
    reported in one line by the next method that reads the tables."""

    @property
    def path(self) -> Path:
        """What was opened, as given."""
        return self.loaded.path

    @property
    def identity(self) -> dict:
        """path, kind, device_type, source and steps: the "profile" block of every --json output."""
        return profile_identity(self.loaded)

    @property
    def kind(self) -> str:
        """ "train" or "infer"."""
        return self.loaded.head.kind

    @cached_property
    def metrics(self) -> Metrics:
        """The headline metrics `summary --json` prints, with units and null reasons."""
        from libreyolo_profile.readers.summary import headline_metrics

        return Metrics(*headline_metrics(self.loaded))

    @property
    def verdict(self) -> Verdict:
        """What bounds the step, why, what to try next, and the evidence."""
        v = self.loaded.head.verdict
        return Verdict(
            bound=v.bound, reason=v.reason, next_step=v.next_step, evidence=dict(v.evidence or {}), method=v.method
        )

    @property
    def marks(self) -> dict[str, str]:
        """{mark: sentence}: what to keep in mind reading this profile (tiny window, inferred phases …)."""
        return dict(self.loaded.head.marks)

    @cached_property
    def blame(self) -> dict:
        """What held each step's critical path: {"steps": [{step, step_ms, causes: {cause: ms}}], "total":
        {cause: % of all steps' wall time}}, as `summary --json` prints it (table("blame") has the rows)."""
        from libreyolo_profile.readers.summary import blame_by_step

        self._intact()
        return blame_by_step(self.con)

    @property
    def settings(self) -> dict:
        """The measurement's settings (batch, imgsz, device …); empty for a foreign trace."""
        # as the file writes them, every key: the head types only the ones readers read
        return dict(self.doc.get("settings") or {})

    @property
    def model(self) -> dict:
        """The model measured (family, size, parameters …); empty for a foreign trace."""
        return dict(self.doc.get("model") or {})

    def table(self, name: str):
        """One of the profile's tables (docs/SCHEMA.md) as a DuckDB relation."""
        if name not in TABLES:
            from libreyolo_profile.output.terminal import close_match_hint

            raise UsageError(
                f"unknown table '{name}'{close_match_hint(name, list(TABLES))}; tables: {', '.join(TABLES)}"
            )
        self._intact()
        return self.con.table(name)

    def kernels(
        self,
        *,
        category: str | None = None,
        phase: str | None = None,
        grep: str | None = None,
        tensorcore: bool = False,
        top: int | None = None,
        sort: str = "time",
    ):
        """GPU kernels per measured step, as `kernels` shows them (readers/kernels.py, sql/kernels.sql):
        category is a substring of a category name, grep a regular expression on the kernel name, top
        None keeps every kernel; sort is time, count or name."""
        from libreyolo_profile.readers.kernels import kernel_relation

        self._intact()
        return kernel_relation(
            self, top=top, category=category, grep=grep, tensorcore=tensorcore, sort=sort, phase=phase
        )

    def ops(self, *, phase: str | None = None, top: int | None = None):
        """Framework ops by self CPU time per measured step, as `ops` shows them (sql/ops.sql)."""
        from libreyolo_profile.readers.ops import op_relation

        self._intact()
        return op_relation(self, top=top, phase=phase)

    def phases(self):
        """GPU ms, wall ms, kernels and ops per phase per measured step, as `phases` shows them."""
        from libreyolo_profile.readers.phases import phase_relation

        self._intact()
        return phase_relation(self.loaded, self.con)

    def modules(self, *, depth: int | None = None, phase: str | None = None):
        """Host and device time per module of the model, in tree order, as `modules` shows them; phase is
        forward or backward."""
        from libreyolo_profile.readers.modules import module_relation

        self._intact()
        return module_relation(self, depth, phase)

    # -- the daily analyses (api/analyses.py): each a DuckDB relation ------------------------------------

    def temporal_breakdown(self, *, per_step: bool = False):
        """Where the step's wall time went, as HTA's temporal breakdown: per rank (per_step: per step too),
        compute, non-compute (collectives and copies no compute hid) and idle ms per step and their % of
        the wall time (sql/time_breakdown.sql over the blame, so they add up to step_ms)."""
        from libreyolo_profile.api.analyses import table_macro

        self._intact()
        call = "temporal_breakdown_steps()" if per_step else "temporal_breakdown()"
        return table_macro(self.con, "time_breakdown.sql", call)

    def idle_breakdown(self):
        """The idle time of temporal_breakdown split by the cause that held the step while the device idled
        (sync, launching, dataload, Python …): ms per step, % of the idle time and of the step."""
        from libreyolo_profile.api.analyses import table_macro

        self._intact()
        return table_macro(self.con, "time_breakdown.sql", "idle_breakdown()")

    def kernel_breakdown(self, top: int | None = 5):
        """Device time by category, each category's `top` kernels by name and the rest in one row, with
        their share of the device time, as HTA's kernel breakdown (sql/kernel_breakdown.sql); top None:
        every kernel."""
        from libreyolo_profile.api.analyses import table_macro

        if top is not None and top < 1:
            raise UsageError(f"top must be at least 1, not {top}")
        self._intact()
        return table_macro(self.con, "kernel_breakdown.sql", "kernel_breakdown($top)", {"top": top})

    def overlap(self):
        """Per rank and device, how much of the communication compute hid (HTA's comm/compute overlap):
        collective, compute, overlapped and exposed ms per step and overlap_pct (sql/comm_overlap.sql over
        the trace's timeline; a job profile: every rank's trace)."""
        from libreyolo_profile.api.analyses import timeline_relation

        return timeline_relation(self._timelines, None, "comm_overlap", "overlap")  # a table of the section

    def launch_outliers(self, *, delay_cutoff_us: float = 100.0, call_cutoff_us: float = 50.0, stats: bool = False):
        """The kernels launched in the measured steps that stand out, as HTA's cuda_kernel_launch_stats: a
        launch-to-start delay over delay_cutoff_us, a launch call over call_cutoff_us, a kernel shorter
        than its launch call, or one far longer than its name's usual run; the longest delay first
        (sql/launches.sql, as `launches` reads it). stats: per stream, the delay percentiles and the
        count of each kind of outlier instead."""
        from libreyolo_profile.api.analyses import cutoffs, timeline_relation

        params = cutoffs(delay_cutoff_us, call_cutoff_us)
        call = "launch_stats($delay, $call)" if stats else "launch_outliers($delay, $call)"
        return timeline_relation(self._timelines, "launches.sql", call, "launch_outliers", params)

    def queue_length(self, *, timeline: bool = False):
        """Per stream, the executions launched and not yet finished (HTA's queue length): the deepest queue,
        the time-weighted mean and the share of the window with work outstanding; timeline: the count at
        every instant it changes, ms from the window start (sql/launches.sql)."""
        from libreyolo_profile.api.analyses import timeline_relation

        if timeline:
            call = "(SELECT device, stream, ts_ns / 1e6 AS ts_ms, queued FROM queue_length ORDER BY ALL)"
            return timeline_relation(self._timelines, "launches.sql", call, "queue_length")
        return timeline_relation(self._timelines, "launches.sql", "queue_summary", "queue_length")

    def diff(self, other: "Profile | str | Path", what: str = "kernels"):
        """Per kernel (what="kernels") or op ("ops"), this profile (before) against `other` (after): time
        and calls per step on each side and the change, the largest first, as `compare --kernels/--ops`
        prints them (sql/compare_kernels.sql, sql/compare_ops.sql)."""
        from libreyolo_profile.api.analyses import diff_relation

        return diff_relation(self, other if isinstance(other, OpenProfile) else open(other), what)

    @cached_property
    def _timelines(self):
        """The launches section (every launch, the window, the comm/compute overlap), from the profile's trace
        the first time an analysis needs it, kept with the profile after (readers/launches.py)."""
        from libreyolo_profile.readers.launches import Timelines

        return Timelines(self.loaded)

    def sql(self, query: str):
        """One read-only SELECT over this profile's tables, under `query`'s rules (readers/query.py): one
        SELECT (or EXPLAIN of one), no file access, settings locked. Runs on a connection of its own, so
        it cannot change the tables the other methods read. Returns a DuckDB relation."""
        from libreyolo_profile.api.readonly import read_only_relation

        return read_only_relation(self._locked, query)

    @cached_property
    def _locked(self):
        from libreyolo_profile.api.readonly import locked_profile_connection

        return locked_profile_connection(self.loaded, list(TABLES))

    def summary(self) -> dict:
        """Everything `summary --json` prints for this profile."""
        from libreyolo_profile.readers.summary import summary_document

        self._intact()
        return summary_document(self)

    def what_if(self, *, remove_category: str | None = None, remove_launches: int | None = None) -> dict:
        """What removing work would buy, as `what-if --json` prints it (lp.what_if)."""
        from libreyolo_profile.api.cross import what_if

        self._intact()
        return what_if(self, remove_category=remove_category, remove_launches=remove_launches)

    def export(self, what, path: str | Path, *, force: bool = False) -> Path:
        """Write a relation (from this profile's methods, or any of the API's) or one of the tables, named, to
        `path` as CSV or Parquet (api/files_out.py: the one way a relation reaches a file); the path written."""
        from libreyolo_profile.api.files_out import export

        return export(self.table(what) if isinstance(what, str) else what, path, force=force)

    def _intact(self) -> None:
        """Refuse, in one line, to read tables that SQL on `con` dropped or replaced: the readers' SQL would
        fail deep inside with DuckDB's catalog error, or answer from other rows."""
        rows = self.con.execute(
            "SELECT table_name, list(column_name ORDER BY column_index) FROM duckdb_columns() "
            "WHERE schema_name = 'main' AND database_name = current_database() GROUP BY table_name"
        ).fetchall()
        present = dict(rows)
        for name, columns in TABLES.items():
            if present.get(name) != [column[0] for column in columns]:
                what = "dropped" if name not in present else "replaced by other columns"
                raise UsageError(
                    f"table {name} was {what} on this profile's connection (p.con): open the profile again "
                    f"with lp.open({str(self.path)!r})"
                )

    def _repr_html_(self) -> str:
        from libreyolo_profile.api.html import profile_html

        return profile_html(self)

    def __repr__(self) -> str:
        ident = self.identity
        return f"<Profile {ident['kind']} {ident['device_type']} {self.verdict.bound} {str(self.path)!r}>"
