"""Help texts that several command modules share (cli.py, cli_measure.py, cli_crossrun.py), written once
so an option reads the same in every command's --help, and the what-if floor, which both `what-if --help` and
its screen (readers/what_if.py) state. Plain constants: the CLI imports this at start."""

from __future__ import annotations

TRACE_HELP = (
    "profile.json, profile_repeat.json, profile_trace.json, a profile directory, "
    "or any PyTorch profiler trace (.json/.json.gz)"
)
JSON_HELP = "print one JSON document on stdout and nothing else"
EXIST_OK_HELP = "replace the profile in <project>/<kind> instead of writing the next free <kind>2, <kind>3, …"

# How a what-if projection is bounded: `what-if --help` and the reader's screen and JSON say the same words.
WHAT_IF_FLOOR = (
    "The projected step never falls below the critical path that remains: the larger of the device work left "
    "(device-busy time less the time the removed work alone held the device) and the host's recorded work per "
    "step that does not wait on the device (host_work_ms: ops, runtime calls, Python frames and ranges on every "
    "host thread, less its syncs, blocking copies and polls of the device, and less the removed work's launch calls)."
)
WHAT_IF_HELP = "Estimate what removing work would buy, by the model the profile's verdict picks.\n\n" + WHAT_IF_FLOOR
