"""`libreyolo profile roofline` and `what-if --op-at-roofline`: their arguments (cli.py registers them; the
readers do the work)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

TRACE_HELP = (
    "profile.json, profile_repeat.json, profile_trace.json, a profile directory, "
    "or any PyTorch profiler trace (.json/.json.gz)"
)
JSON_HELP = "print one JSON document on stdout and nothing else"
ROOFLINE_WHAT_IF_HELP = "project the step if every costed op ran at PCT% of its roofline (0 < PCT ≤ 100)"


def roofline_cmd(
    trace: Path = typer.Argument(..., help=TRACE_HELP),
    top: int = typer.Option(20, help="show the top N op shapes by device time"),
    op: Optional[str] = typer.Option(
        None, "--op", metavar="REGEX", help="only ops whose name matches this regular expression"
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Per op and shape: FLOPs and bytes per call, achieved TFLOP/s and TB/s, and % of the device's roofline."""
    from libreyolo_profile.readers import roofline

    roofline.print_roofline(trace, top=top, op=op, as_json=as_json)


def what_if_at_roofline(trace: Path, pct: float, remove_category, remove_launches, as_json: bool) -> None:
    """what-if --op-at-roofline PCT: a projection of its own, not combined with the removal models."""
    from libreyolo_profile.errors import UsageError
    from libreyolo_profile.readers import what_if_roofline

    if remove_category is not None or remove_launches is not None:
        raise UsageError("--op-at-roofline is a projection of its own: leave out --remove-category/--remove-launches")
    what_if_roofline.print_op_at_roofline(trace, pct, as_json)
