"""The corpus harness (tests/corpus_harness.py) on each multi-rank job folder: imported as a job, read by
`ranks` and `summary`; the traces themselves, ranks included, are tests/test_corpus.py's and its parts'."""

from tests.corpus_harness import test_a_job_folder_imports_as_a_job_and_every_rank_reads  # noqa: F401
