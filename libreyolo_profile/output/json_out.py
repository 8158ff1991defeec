"""The one JSON document a --json command prints: strict JSON (RFC 8259), NaN and Infinity as null."""

from __future__ import annotations

import sys

from libreyolo_profile.output.textsafe import strict_json


def emit_json(document) -> None:
    """The one JSON document of a --json command: strict JSON, NaN and Infinity as null."""
    sys.stdout.write(strict_json(document, indent=2) + "\n")
