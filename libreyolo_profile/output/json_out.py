"""The one JSON document a --json command prints: strict JSON (RFC 8259), NaN and Infinity as null."""

from __future__ import annotations

from libreyolo_profile.output.textsafe import print_document


def emit_json(document) -> None:
    """The one JSON document of a --json command: strict JSON, NaN and Infinity as null."""
    print_document(document, indent=2)
