"""The profile store, shared by the writers and every reader. Its rooms, lowest first:
schema.py (the versioned layout), decode/ (trace bytes → events), ingest/ (events → one trace's analysis),
document/ (analyses → profile.json), disk/ (publishing, sidecars, cache, loading), crossrun/ (many profiles)."""
