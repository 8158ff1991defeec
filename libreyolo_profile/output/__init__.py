"""The ground floor for what the user sees: terminal-safe text, strict JSON, tables and progress.
Imports nothing above it, so store, measure, readers and cli can all use it."""
