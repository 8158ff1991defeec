"""libreyolo profile: measure where the time goes in LibreYOLO training and inference, store it
as parquet-backed profiles, and read it back through DuckDB SQL.

Importing this package is cheap on purpose: readers never pull in torch or libreyolo.
"""

__version__ = "0.1.0"
