"""The reader lenses: each runs one SQL file from sql/ through DuckDB and renders the rows.
Readers never import torch or libreyolo."""
