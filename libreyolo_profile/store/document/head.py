"""The head of a profile document (profile.json and profile_repeat.json without their `tables`), as
typed msgspec Structs, and the one check every reader runs on it before reading it.

A profile.json is a file anyone can edit: `"created": "yesterday"`, a batch above 2^63 or a metric
that is an object would otherwise fail deep inside a reader (a DuckDB cast of the `profiles` view, a
KeyError in a renderer). `check_head` validates the head once, where it is read (store/disk/loader.py
for one profile, store/crossrun/index.py for the profiles under query roots): a bad one is refused in
one line naming the field, or skipped with a note under roots.

The Structs name what readers read; fields they never read stay `Any` and unknown fields are allowed,
so a later writer may add fields without breaking older readers. Integers are bounded to what the
`profiles` view stores them in (BIGINT).
"""

from __future__ import annotations

import datetime as _dt
from functools import cache
from typing import Annotated, Any, Literal

import msgspec

from libreyolo_profile.metric_catalog import METRICS, metric_sql_type

# DuckDB's BIGINT, which the `profiles` view casts every integer field into
Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
Count = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]
# an integer stays an integer and a float a float, as the JSON has them, so a field read by attribute is the
# value the file holds (a float field would turn 10 into 10.0); never a bool or a string, and never an integer
# past int64, which no figure of ours is and which turns into an infinity in arithmetic
Number = Int64 | float
Text = Annotated[str, msgspec.Meta(max_length=1 << 20)]
Kind = Literal["train", "infer"]


class _Open(msgspec.Struct, forbid_unknown_fields=False, omit_defaults=True):
    """A part of the head: the fields readers read are typed, any other field is kept unread."""


class Source(_Open):
    type: Text | None = None
    path: Text | None = None


class Settings(_Open):
    device: Text | Int64 | None = None
    batch: Int64 | None = None
    imgsz: Int64 | None = None
    workers: Int64 | None = None
    warmup: Int64 | None = None
    runs: Int64 | None = None
    steps: Int64 | None = None
    repeat: Int64 | None = None
    half: bool | None = None
    amp: bool | None = None
    weights: Text | None = None
    size: Text | None = None
    amp_dtype: Text | None = None  # the autocast dtype (a pooled compare side holds one)


class Environment(_Open):
    device_name: Text | None = None
    cpu: Text | None = None
    torch: Text | None = None
    libreyolo: Text | None = None
    cuda: Text | None = None


class Model(_Open):
    family: Text | None = None
    size: Text | None = None
    weights: Text | None = None
    weights_source: Text | None = None
    format: Text | None = None
    runtime: Text | None = None
    execution_provider: Text | None = None
    parameter_count: Int64 | None = None
    flops: Int64 | None = None


class Window(_Open):
    steps: Number | None = None
    wall_ms: Number | None = None
    source: Text | None = None
    images_per_step_source: Text | None = None


class Device(_Open):
    device: Int64 | Text | None = None
    name: Text | None = None
    busy_ms: Number | None = None
    kernel_ms: Number | None = None
    kernels: Int64 | None = None
    gpu_util_pct: Number | None = None


class Verdict(_Open):
    bound: Text | None  # indexed by readers: the key must be there
    reason: Text | None = None
    next_step: Text | None = None
    evidence: dict[str, Number | Text | bool | None] | None = None
    method: Text | None = None  # how the verdict was decided (verdict.py's method())


class Timing(_Open):
    headline: Text | None = None
    why: Text | None = None
    overhead_method: Text | None = None
    unprofiled_calls_per_trial: list[Int64 | None] | None = None  # the calls timed without the profiler


class RepeatStat(_Open):
    mean: Number | None = None
    std: Number | None = None
    n: Count | None = None
    values: list[Number | None] | None = None


def _metric_type(name: str):
    """A metric's type in the head: the column type it lands in (metric_catalog.metric_sql_type)."""
    return {"BOOLEAN": bool | None, "VARCHAR": Text | None}.get(metric_sql_type(name), Number | None)


@cache
def metrics_struct(trial: bool = False) -> type:
    """Every metric of metric_catalog.METRICS, typed; built from the catalogue so a new metric is checked
    without touching this file. The profile's own metrics must hold `steps`, which readers index (the
    per-step figures divide by it); a trial's (`trials`) may lack it."""
    required = () if trial else _REQUIRED_METRICS
    return msgspec.defstruct(
        "Trial" if trial else "Metrics",
        [(name, _metric_type(name)) if name in required else (name, _metric_type(name), None) for name in METRICS],
        bases=(_Open,),
        forbid_unknown_fields=False,
        kw_only=True,
    )


_REQUIRED_METRICS = ("steps",)


def _empty(kind):
    return msgspec.field(default_factory=kind)


# a rank as a key of a JSON object (job.traces): its decimal digits, so int() of it never fails
RankKey = Annotated[str, msgspec.Meta(pattern=r"^-?[0-9]{1,18}$")]


class Job(_Open, forbid_unknown_fields=False, kw_only=True):
    """A job profile's `job` (store/document/job.py): what the readers index in it, typed. A job is its
    ranks: `ranks` must be there, so `head.job is not None` is what makes a profile a job's."""

    ranks: list[Int64]
    metrics_rank: Int64 | None = None
    rank_source: Text | None = None
    world_size: Int64 | None = None
    straggler: dict[str, Any] | None = None
    traces: dict[RankKey, Text] | None = None  # {rank: its trace}: a path, or a name in the profile's directory


@cache
def head_struct() -> type:
    """The whole head: one Struct with the parts above."""
    metrics = metrics_struct()
    fields = [
        ("schema", Text),
        ("schema_version", Int64),
        ("kind", Kind),
        ("metrics", metrics),
        ("verdict", Verdict),
        ("generation", Annotated[str, msgspec.Meta(min_length=1, max_length=256)]),  # names the sidecars
        ("tables_version", Int64 | None, None),
        ("kind_inferred", bool | None, None),
        ("device_type", Text | None, None),
        ("created", Text | None, None),  # as written; an RFC 3339 time (_check_created)
        ("producer", Text | None, None),
        ("command", list[Text] | Text | None, None),
        ("rank", Int64 | None, None),
        ("world_size", Int64 | None, None),
        ("job", Job | None, None),
        ("extra", Any, None),
        # objects and lists readers take apart: absent or null reads as empty (check_head), any other type is refused
        ("source", Source, _empty(Source)),
        ("settings", Settings, _empty(Settings)),
        ("environment", Environment, _empty(Environment)),
        ("model", Model, _empty(Model)),
        ("window", Window, _empty(Window)),
        ("devices", list[Device], _empty(list)),
        ("timing", Timing, _empty(Timing)),
        ("null_reasons", dict[str, Text], _empty(dict)),
        ("thresholds", dict[str, Number], _empty(dict)),
        ("marks", dict[str, Text], _empty(dict)),
        ("trials", list[metrics_struct(trial=True)], _empty(list)),
        ("repeat", dict[str, RepeatStat], _empty(dict)),
    ]
    return msgspec.defstruct(
        "ProfileHead",
        fields,
        bases=(_Open,),
        forbid_unknown_fields=False,
        namespace={"__post_init__": _check_created},
    )


def _check_created(head) -> None:
    """`created` is kept as the file writes it (the report shows it so, the `profiles` view casts it), and
    must be an RFC 3339 time: checked here, as a datetime field would be, without keeping the datetime."""
    if head.created is not None:
        try:
            msgspec.convert(head.created, _dt.datetime)
        except msgspec.ValidationError as exc:
            raise ValueError(f"created: {exc}") from None


class BadHead(ValueError):
    """A head that does not have the shape readers read; str() is one line naming the field."""


_EMPTY_WHEN_NULL = {
    "source": dict,
    "settings": dict,
    "environment": dict,
    "model": dict,
    "window": dict,
    "devices": list,
    "timing": dict,
    "null_reasons": dict,
    "thresholds": dict,
    "marks": dict,
    "trials": list,
    "repeat": dict,
}


def check_head(doc: dict):
    """The head of `doc` (a decoded profile document) as a ProfileHead; BadHead when a field has the
    wrong type, is out of range or a required one is missing. `tables` is not looked at here.

    An object or list field that is null is set to its empty value in `doc` itself, as if it were absent:
    readers take those apart, and a head decoder that lists every field (store/crossrun/index.py) gives
    null for an absent one, so the same file must read the same under a root and named alone."""
    for key, empty in _EMPTY_WHEN_NULL.items():
        if key in doc and doc[key] is None:
            doc[key] = empty()
    head = {key: value for key, value in doc.items() if key != "tables"}
    try:
        return msgspec.convert(head, head_struct())
    except msgspec.ValidationError as exc:
        raise BadHead(_message(exc)) from None


def _message(exc: msgspec.ValidationError) -> str:
    """msgspec's message, its `$.a.b` path spelled as the field: `settings.batch: Expected int …`."""
    text = str(exc).splitlines()[0] if str(exc) else "invalid"
    detail, _, where = text.partition(" - at `")
    key, _, where = where.rpartition("` in `")  # a key of an object: "at `key` in `$.job.traces`"
    field = where.rstrip("`").removeprefix("$").lstrip(".")
    return f"{field}: {detail}{' (a key)' if key else ''}" if field else detail


def tables_problem(doc: dict) -> str | None:
    """Why the embedded `tables` cannot be turned into sidecars (None: they can): a mapping of table
    name to {columns: [names], rows: [[values] of that length]}."""
    tables = doc.get("tables")
    if not isinstance(tables, dict):
        return "tables: not an object"
    for name, table in tables.items():
        if not isinstance(table, dict):
            return f"tables.{name}: not an object"
        columns, rows = table.get("columns"), table.get("rows")
        if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
            return f"tables.{name}.columns: not a list of names"
        if not isinstance(rows, list) or not all(isinstance(r, list) and len(r) == len(columns) for r in rows):
            return f"tables.{name}.rows: not a list of rows of {len(columns)} values"
    return None
