"""Trace decoding: the bytes of a Kineto .json/.json.gz trace into Arrow columns, bounded in time and memory."""
