"""Help texts that several command modules share (cli.py, cli_measure.py, cli_crossrun.py), written once
so an option reads the same in every command's --help."""

from __future__ import annotations

TRACE_HELP = (
    "profile.json, profile_repeat.json, profile_trace.json, a profile directory, "
    "or any PyTorch profiler trace (.json/.json.gz)"
)
JSON_HELP = "print one JSON document on stdout and nothing else"
EXIST_OK_HELP = "replace the profile in <project>/<kind> instead of writing the next free <kind>2, <kind>3, …"
