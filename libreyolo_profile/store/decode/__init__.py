"""Trace decoding: the bytes of a Kineto .json/.json.gz trace into Arrow columns, bounded in time and memory.
The entry point is parse.py (`parse_trace`); this package imports nothing on its own, so a caller that
only needs a light piece (source.special_file_kind) pays for nothing else."""
