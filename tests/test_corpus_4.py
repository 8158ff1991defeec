"""The corpus harness (tests/corpus_harness.py: every reader on every trace, held to the invariants that hold
for any trace) on part 4 of the traces. The other parts: test_corpus.py, test_corpus_2.py, test_corpus_3.py; the job
folders: test_corpus_jobs.py. A file per part, so that the workers share the corpus."""

from tests.corpus_harness import *  # noqa: F403 (the harness' tests, fixtures and parametrizing hook)

CORPUS_PART = 4
