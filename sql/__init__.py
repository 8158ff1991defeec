"""The SQL of libreyolo profile: rule tables, the ingest that derives the profile tables from a
trace, the one definition of every metric, and one query per reader."""
