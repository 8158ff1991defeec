"""What a profile document is assembled from, as one typed msgspec Struct: the writer's side of profile.json.

`assemble` (store/document/assemble.py) lays a DocumentParts out as the one layout of profile.json
(docs/SCHEMA.md); `build_document` (our measurements and foreign traces) and `builtin_document` (a converted
LibreYOLO built-in profile) fill one in. The reader's side is store/document/head.py's ProfileHead, which
store/disk/loader.py decodes once when a profile is opened.

A Struct does not check its field types when built in Python (only a decode does): this names and types
what a document is made of, it costs nothing at construction.
"""

from __future__ import annotations

from typing import Any

import msgspec


class DocumentParts(msgspec.Struct, kw_only=True):
    """Everything `assemble` needs to lay out a profile.json; the document's own fields unless noted."""

    kind: str  # "train" or "infer"
    kind_inferred: bool  # the kind was inferred from the trace, not given
    device_type: str  # "gpu" or "cpu"
    metrics: dict[str, Any]  # sql/metrics.sql's columns, internal ones included (assemble leaves those out)
    verdict: dict[str, Any]  # store/document/verdict.py's decide()
    thrashing: bool | None  # the device ran under memory pressure (None: cannot be told)
    marks: dict[str, str]  # the source's own marks; assemble adds the ones every profile shares
    null_reasons: dict[str, str]
    trials: list[dict[str, Any]]  # each trial's metrics (assemble keeps the catalogue's)
    repeat: dict[str, Any]  # the spread over trials (headline.trial_spread)
    window_source: Any  # where the measured window came from (window.source)
    images_per_step_source: Any  # where the images per step came from (window.images_per_step_source)
    devices: list[Any]
    rank: Any
    world_size: Any
    tables: dict[str, Any]  # the embedded tables ({name: {columns, rows}}) the sidecars are written from
    source: dict[str, Any]
    command: Any
    settings: dict[str, Any]
    environment: dict[str, Any]
    model: dict[str, Any]
    generation: str  # names the sidecars written for this document
    created: str  # ISO 8601
    producer: str
    extra: Any
    timing: dict[str, Any] | None = None  # None: the headline is the trace's, no overhead measured
    non_finite: dict[str, int] | None = None  # the metrics computed as NaN or Infinity (store/document/finite.py)
