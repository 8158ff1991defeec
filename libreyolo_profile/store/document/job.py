"""One job from its ranks' traces: `import --job` analyses each rank's trace as a one-trace import does,
then writes one profile whose every table carries the rank, with the collectives matched across the
ranks (sql/collectives.sql), the ranks side by side and the straggler (sql/job_ranks.sql), and the job's
verdict (store/document/job_verdict.py).

Which trace is which rank: the trace's distributedInfo, else a number in its file name (rank3, worker_3 …),
else the order given; the profile's job.rank_source says which. A set that is not one whole job — a rank
twice, a rank missing, mixed world sizes, different jobs — is refused with one line (exit 2).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa

from libreyolo_profile.errors import UsageError
from libreyolo_profile.sqlmodules import run_module
from libreyolo_profile.store.document import marks as mark
from libreyolo_profile.store.document.assemble import build_document
from libreyolo_profile.store.document.job_verdict import job_verdict
from libreyolo_profile.store.ingest.analyse import analyse_trace
from libreyolo_profile.store.ingest.timeline import open_connection
from libreyolo_profile.store.schema import JOB_TABLES, TABLES, TRACE_FILE

TRACE_SUFFIXES = (".json", ".json.gz")
# a rank number in a file name: rank3, rank_3, worker-3, proc3, gpu3, local_rank3 …
RANK_IN_NAME = re.compile(r"(?:rank|worker|proc|process|gpu|device)[-_]?(\d+)", re.IGNORECASE)


def job_traces(inputs: list[Path]) -> list[Path]:
    """The rank traces: each file given, and every trace file (*.json, *.json.gz) of a directory given."""
    traces = []
    for path in inputs:
        path = Path(path)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(TRACE_SUFFIXES))
            if not found:
                raise UsageError(f"{path}: the directory holds no trace files (*.json, *.json.gz)")
            traces.extend(found)
        elif path.is_file():
            traces.append(path)
        else:
            raise UsageError(f"{path}: no such file or directory")
    resolved = [t.resolve() for t in traces]
    for i, trace in enumerate(resolved):
        if trace in resolved[:i]:
            raise UsageError(f"{traces[i]}: given twice (one trace is one rank)")
    if len(traces) < 2:
        raise UsageError("a job needs the traces of at least two ranks (import one trace without --job)")
    return traces


def resolve_ranks(traces: list[Path], analyses: list[dict]) -> tuple[list[int], int, str]:
    """(rank of each trace, world size, where the ranks came from); a set that is not one whole job raises."""
    _same_job(traces, analyses)
    recorded = [a["rank"] for a in analyses]
    worlds = {a["world_size"] for a in analyses if a["world_size"] is not None}
    if len(worlds) > 1:
        sizes = ", ".join(f"{t.name}: {a['world_size']}" for t, a in zip(traces, analyses, strict=True))
        raise UsageError(f"mixed world sizes ({sizes}): the traces are not of one job")
    if all(r is not None for r in recorded):
        ranks, source = recorded, "distributedInfo"
    else:
        named = [RANK_IN_NAME.findall(t.name) for t in traces]
        if all(len(n) == 1 for n in named) and len({int(n[0]) for n in named}) == len(named):
            ranks, source = [int(n[0]) for n in named], "file name"
        else:
            ranks, source = list(range(len(traces))), "order given"
    world = worlds.pop() if worlds else len(traces)
    for i, rank in enumerate(ranks):
        if rank in ranks[:i]:
            first = traces[ranks.index(rank)].name
            raise UsageError(f"rank {rank} appears twice ({first} and {traces[i].name}, from the {source})")
    missing = sorted(set(range(world)) - set(ranks))
    outside = sorted(r for r in ranks if not 0 <= r < world)
    if missing or outside:
        what = f"rank {', '.join(map(str, missing))} missing" if missing else ""
        extra = f"rank {', '.join(map(str, outside))} outside 0–{world - 1}" if outside else ""
        raise UsageError(
            f"{'; '.join(x for x in (what, extra) if x)}: a job of world size {world} needs one trace per rank "
            f"(given {len(traces)}, ranks from the {source})"
        )
    return ranks, world, source


def _same_job(traces: list[Path], analyses: list[dict]) -> None:
    """Traces of one job agree on the kind of work and on what distributedInfo says of the job. A trace that
    records no distributedInfo (or not that part of it) says nothing to disagree with: unknown is no
    difference (it read "differ in backend (nccl vs None)")."""
    for what, of in (
        ("kind", lambda a: a["kind"]),
        ("backend", lambda a: (a.get("distributed") or {}).get("backend")),
        (
            "process groups (distributedInfo pg_config)",
            lambda a: _groups((a.get("distributed") or {}).get("pg_config")),
        ),
    ):
        said = [(trace, value) for trace, value in zip(traces, map(of, analyses), strict=True) if value is not None]
        other = next(((trace, value) for trace, value in said[1:] if value != said[0][1]), None)
        if other is not None:
            raise UsageError(
                f"different jobs: {said[0][0].name} and {other[0].name} differ in {what} "
                f"({_short(said[0][1])} vs {_short(other[1])})"
            )


def _groups(pg_config: str | None) -> tuple | None:
    """The process groups a trace's pg_config names, as (name, size) pairs: the same on every rank of a
    job (the rest, such as each group's description, may be recorded differently); None when unreadable."""
    try:
        groups = json.loads(pg_config) if pg_config else None
    except ValueError:
        return None
    if not isinstance(groups, list):
        return None
    return tuple(sorted((str(g.get("pg_name")), str(g.get("pg_size"))) for g in groups if isinstance(g, dict)))


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "…"


def _with_rank(table: dict, rank: int) -> dict:
    at = table["columns"].index("rank")
    return {"columns": table["columns"], "rows": [[*r[:at], rank, *r[at + 1 :]] for r in table["rows"]]}


def job_tables(analyses: list[dict], ranks: list[int], verdicts: dict[int, str]) -> tuple[dict, dict]:
    """(the collectives and ranks tables, the straggler row or None) from every rank's timeline and blame."""
    con = open_connection()
    try:
        timeline = [{**row, "rank": rank} for a, rank in zip(analyses, ranks, strict=True) for row in a["timeline"]]
        con.register("job_timeline", _arrow(timeline, TIMELINE_TYPES))
        blame = [
            dict(zip(a["tables"]["blame"]["columns"], r, strict=True))
            for a in analyses
            for r in a["tables"]["blame"]["rows"]
        ]
        con.register("job_blame", _arrow(blame, {c: t for c, t, *_ in TABLES["blame"]}))
        con.register("job_rank_verdicts", pa.table({"rank": list(verdicts), "bound": list(verdicts.values())}))
        tables = {}
        for name in JOB_TABLES:
            cursor = run_module(con, f"table_{name}.sql")
            columns = [d[0] for d in cursor.description]
            assert columns == [c[0] for c in TABLES[name]], f"table_{name}.sql columns {columns} differ from schema"
            tables[name] = {"columns": columns, "rows": [list(r) for r in cursor.fetchall()]}
        # the straggler row with the job's verdict and its next step (sql/straggler_verdict.sql)
        cursor = run_module(con, "straggler_verdict.sql")
        names = [d[0] for d in cursor.description]
        straggler = next((dict(zip(names, row, strict=True)) for row in cursor.fetchall()), None)
        cursor = con.execute("SELECT rank FROM job_rank_overlap WHERE NOT shares_time ORDER BY rank")
        apart = [row[0] for row in cursor.fetchall()]
    finally:
        con.close()
    if apart:
        raise UsageError(
            f"different jobs: the steps of rank {', '.join(map(str, apart))} share no time with any other rank's "
            "(the traces are of different runs)"
        )
    return tables, straggler


def _job_damage(doc: dict, analyses: list[dict], ranks: list[int]) -> None:
    """The job's trace_damaged mark: what reading each rank's trace repaired or left out, rank by rank (the
    document is the slowest rank's, whose own mark would hide a cut-off or repaired trace of another rank)."""
    notes = [f"rank {rank}: {note}" for a, rank in zip(analyses, ranks, strict=True) for note in a.get("damage") or []]
    marks = doc.setdefault("marks", {})
    if notes:
        marks[mark.DAMAGE_MARK] = mark.trace_damaged(notes)
    else:
        marks.pop(mark.DAMAGE_MARK, None)


TIMELINE_TYPES = {
    "rank": "BIGINT",
    "what": "VARCHAR",
    "grp": "VARCHAR",
    "step": "BIGINT",
    "step_mark": "BIGINT",
    "op": "VARCHAR",
    "seq": "BIGINT",
    "nelems": "BIGINT",
    "name": "VARCHAR",
    "start_ns": "BIGINT",
    "end_ns": "BIGINT",
}
_ARROW = {"BIGINT": pa.int64(), "VARCHAR": pa.string(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_()}


def _arrow(rows: list[dict], types: dict[str, str]) -> pa.Table:
    return pa.table({c: pa.array([r.get(c) for r in rows], _ARROW[t]) for c, t in types.items()})


def job_document(inputs: list[Path]) -> dict:
    """The job profile of the rank traces in `inputs` (files, or directories of them)."""
    traces = job_traces(inputs)
    analyses = [analyse_trace(t, sections=("ranks",)) for t in traces]  # the job reads each rank's timeline
    ranks, world, source = resolve_ranks(traces, analyses)
    doc, ordered = assemble_job(
        traces,
        analyses,
        ranks,
        world,
        source,
        lambda a, _rank, trace: build_document([a], [None], source={"type": "trace", "path": str(trace.resolve())}),
    )
    doc["source"] = {"type": "job", "paths": [str(t.resolve()) for t in ordered]}
    doc["job"]["traces"] = {str(r): str(t.resolve()) for r, t in zip(doc["job"]["ranks"], ordered, strict=True)}
    return doc


def measured_job_document(traces: list[Path], captures: list, *, kind: str, measured: dict) -> tuple[dict, Path]:
    """The job profile of ranks measured here (measure/ranks.py): each rank's trace and capture, and the
    setup's records (`measured`: command, settings, environment, model, marks); with the trace the
    profile keeps, the metrics rank's."""
    analyses = [
        analyse_trace(t, kind, c.images_per_step, cpu_peak=measured["environment"].get("cpu_peak"), sections=("ranks",))
        for t, c in zip(traces, captures, strict=True)
    ]
    ranks, world, source = resolve_ranks(traces, analyses)
    by_trace = {t: c for t, c in zip(traces, captures, strict=True)}
    device_type = "cpu" if str(measured["settings"].get("device", "")).startswith("cpu") else None
    doc, ordered = assemble_job(
        traces,
        analyses,
        ranks,
        world,
        source,
        lambda a, _rank, trace: build_document(
            [a], [by_trace[trace]], source={"type": "measured"}, device_type=device_type, **measured
        ),
    )
    kept = ordered[doc["job"]["ranks"].index(doc["job"]["metrics_rank"])]
    doc["source"] = {"type": "measured"}
    doc["job"]["traces"] = {str(doc["job"]["metrics_rank"]): TRACE_FILE}
    doc["job"]["notes"].append(
        f"rank {doc['job']['metrics_rank']}'s trace is kept as {TRACE_FILE}; every rank is in the tables"
    )
    return doc, kept


def assemble_job(
    traces: list[Path], analyses: list[dict], ranks: list[int], world: int, source: str, rank_document
) -> tuple[dict, list[Path]]:
    """(One job profile, its rank traces in rank order) from each rank's analysis:
    `rank_document(analysis, rank, trace)` builds a rank's own profile; the job takes its tables (each
    row with its rank), the collectives and ranks tables, the straggler, and its slowest rank's figures."""
    order = sorted(range(len(traces)), key=lambda i: ranks[i])
    traces, analyses, ranks = [traces[i] for i in order], [analyses[i] for i in order], [ranks[i] for i in order]
    for analysis, rank in zip(analyses, ranks, strict=True):
        analysis["tables"] = {n: _with_rank(t, rank) for n, t in analysis["tables"].items()}
        analysis["rank"] = rank
    per_rank = [rank_document(a, r, t) for a, r, t in zip(analyses, ranks, traces, strict=True)]
    verdicts = {rank: doc["verdict"]["bound"] for rank, doc in zip(ranks, per_rank, strict=True)}
    extra_tables, straggler = job_tables(analyses, ranks, verdicts)
    # the job's figures are its slowest rank's: the job's step lasts as long as that rank's
    slowest = max(range(len(ranks)), key=lambda i: (per_rank[i]["metrics"].get("step_ms") or 0, -ranks[i]))
    doc = per_rank[slowest]
    doc["tables"] = {
        name: {
            "columns": per_rank[0]["tables"][name]["columns"],
            "rows": [row for d in per_rank for row in d["tables"][name]["rows"]],
        }
        for name in TABLES
        if name not in JOB_TABLES
    } | extra_tables
    doc["rank"], doc["world_size"] = None, world
    _job_damage(doc, analyses, ranks)
    rank_rows = [dict(zip(extra_tables["ranks"]["columns"], r, strict=True)) for r in extra_tables["ranks"]["rows"]]
    doc["verdict"] = job_verdict(doc["verdict"], ranks[slowest], world, straggler, rank_rows)
    doc["metrics"].update(bound=doc["verdict"]["bound"], bound_reason=doc["verdict"]["reason"])
    doc["job"] = {
        "world_size": world,
        "ranks": ranks,
        "rank_source": source,
        "metrics_rank": ranks[slowest],
        # the straggler as sql/job_ranks.sql decided it (its verdict and advice are in doc["verdict"])
        "straggler": straggler
        and {k: v for k, v in straggler.items() if k not in ("straggler_verdict", "straggler_advice")},
        "clock": [{k: r[k] for k in ("rank", "clock_offset_ms", "clock_method")} for r in rank_rows],
        "notes": [
            f"ranks from the {source}"
            + {
                "distributedInfo": " (each trace's distributedInfo)",
                "file name": " (a number in each trace's name; the traces record no distributedInfo rank)",
                "order given": " (the traces record no rank and their names none: the order they were given)",
            }[source],
            f"the job's metrics are rank {ranks[slowest]}'s, the longest step of the {world} ranks",
        ],
    }
    return doc, traces
