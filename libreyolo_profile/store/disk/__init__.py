"""Profiles on disk: atomic publishing, parquet sidecars, the reader cache, writing and loading."""
