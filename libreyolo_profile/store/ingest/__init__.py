"""Trace ingest: decoded events through sql/ingest.sql and sql/metrics.sql into one trace's analysis."""
