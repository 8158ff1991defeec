"""The profile store: schemas, trace ingest, and profile.json/parquet writing and loading.
Shared by the writers (`run`, `infer`) and every reader."""
