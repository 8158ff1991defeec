"""The shared traces analysed by the product itself (`summary`), each at most once per test worker and only
when a test asks for it (issue 51: analysing all of them before the first test made a 4-check static file
cost 11.5 s of CPU).

A test asks by naming a trace through the `trace` fixture or by passing its path to `run_cli`: the analysis
runs once in this worker's shared cache and its entry is linked into the cache the command reads (the
test's private one, or a file's shared reader cache). So do the entries measuring commands remember (a
model's FLOP count, the CPU's roof: measure/remembered.py), gathered from each test's cache after it. A
test marked `cold_cache` gets none of it.

The analyses themselves live in one cache all the workers of a session share (`shared`): a trace is analysed
once per suite, not once per worker that reads it (the corpus, the first screen and many files read every
trace), the first worker to ask analysing it under a lock the others wait on; the later ones read the entry
it published (the product's own cached read). The remembered entries stay the worker's own.

The analysis computes the kept sections (the launches, the report's timeline) in its pass, and they are linked
too: the readers needing them would otherwise parse and ingest the trace again in every test's cache.

One module, imported once per worker (conftest.py is imported twice, as `conftest` and `tests.conftest`),
holds the worker's store in CURRENT.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from libreyolo_profile.store.disk.kept_sections import AREA, _key, asking
from libreyolo_profile.store.ingest.lazy_sections import SECTION_FILES

REMEMBERED_AREAS = ("flops", "cpu_peak")


class AnalysedTraces:
    """One worker's analyses of the traces under `traces`, in the cache at `root`; `run(*args, env=...)` is
    the in-process CLI."""

    def __init__(
        self, root: Path, traces: Path, run: Callable[..., subprocess.CompletedProcess], shared: Path | None = None
    ):
        """`root`: this worker's cache (the remembered entries); `shared`: the cache (an XDG_CACHE_HOME) holding
        the analyses, which the session's other workers may share (default: `root`)."""
        self.root, self.traces, self.run = root, traces, run
        self.shared = root if shared is None else shared
        self.results: dict[Path, subprocess.CompletedProcess] = {}
        self.kept: dict[Path, list[Path]] = {}
        self.caches: set[Path] = set()  # the caches that take an analysis as soon as a command reads its trace

    @property
    def entries(self) -> Path:
        return self.shared / "libreyolo-profile" / "traces"

    def summary(self, path: Path) -> subprocess.CompletedProcess:
        """`summary --json` of a trace run once per worker in the shared cache: its analysis, failed or not. A
        worker holds the trace's lock while it runs, so another worker asking meanwhile waits and then reads the
        published entry instead of analysing the trace a second time."""
        path = Path(path)
        if path not in self.results:
            locks = self.shared / "locks"
            locks.mkdir(parents=True, exist_ok=True)
            name = hashlib.sha256(str(path.absolute()).encode()).hexdigest()[:16]
            with open(locks / f"{name}.lock", "w") as lock, asking(*SECTION_FILES):
                fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
                self.results[path] = self.run("summary", str(path), "--json", env={"XDG_CACHE_HOME": str(self.shared)})
        return self.results[path]

    def analyse(self, path: Path) -> None:
        result = self.summary(path)
        assert result.returncode == 0, result.stderr

    def document(self, path: Path) -> dict:
        """The profile document the product's analysis of a trace wrote in the cache."""
        from libreyolo_profile.store.disk.cache import trace_key

        self.analyse(path)
        return json.loads((self.entries / trace_key(path) / "profile.json").read_text())

    def provide(self, path: Path, cache: Path) -> None:
        """The trace's analysis linked into `cache` (an XDG_CACHE_HOME). One that failed is not: the test's own
        command then meets the failure and says it."""
        from libreyolo_profile.store.disk.cache import trace_key

        if self.summary(path).returncode != 0:
            return
        key = trace_key(path)
        target = cache / "libreyolo-profile" / "traces" / key
        if (self.entries / key).is_dir() and not target.exists():
            # linked, not copied: the product replaces a cache entry whole through a rename and never writes
            # into one, so a test's cache never changes the shared files
            shutil.copytree(self.entries / key, target, copy_function=_link_or_copy)
            for section in self.sections(path):
                kept = cache / "libreyolo-profile" / AREA / section.name
                if not kept.exists():
                    shutil.copytree(section, kept, copy_function=_link_or_copy)

    def sections(self, path: Path) -> list[Path]:
        """The kept sections (store/disk/kept_sections.py) the trace's analysis computed in its pass, as
        the product names them for its profile."""
        if path not in self.kept:
            doc = self.document(path)
            homes = (
                self.shared / "libreyolo-profile" / AREA / _key(doc, name, doc.get("rank")) for name in SECTION_FILES
            )
            self.kept[path] = [home for home in homes if home.is_dir()]
        return self.kept[path]

    def provide_for(self, args: tuple[str, ...], cwd: Path | str | None, env: dict | None) -> None:
        """Before a command: every trace among its arguments analysed and linked into the cache it will read,
        when that cache is one of those registered (never a cold one)."""
        cache = (env or {}).get("XDG_CACHE_HOME") or os.environ.get("XDG_CACHE_HOME")
        if not cache or Path(cache).resolve() not in self.caches:
            return
        for arg in args:
            path = _trace_argument(arg, Path(cwd or os.getcwd()), self.traces)
            if path is not None:
                self.provide(path, Path(cache))

    def seeded(self, cache: Path) -> Path:
        """`cache` registered to take the analyses on demand, holding the remembered entries now."""
        for area in REMEMBERED_AREAS:
            _copy_entries(self.root / "libreyolo-profile" / area, cache / "libreyolo-profile" / area)
        self.caches.add(cache.resolve())
        return cache

    def release(self, cache: Path) -> None:
        """After a test: its cache no longer taken care of, what it remembered kept for the next ones."""
        self.caches.discard(cache.resolve())
        for area in REMEMBERED_AREAS:
            _copy_entries(cache / "libreyolo-profile" / area, self.root / "libreyolo-profile" / area)


CURRENT: AnalysedTraces | None = None


def _trace_argument(arg: str, cwd: Path, traces: Path) -> Path | None:
    """The trace file under `traces` an argument names, if it names one."""
    if not arg or arg.startswith("-") or "\0" in arg:
        return None
    path = Path(arg) if Path(arg).is_absolute() else cwd / arg
    try:
        if not path.is_file() or not path.resolve().is_relative_to(traces.resolve()):
            return None
    except (OSError, ValueError):
        return None
    return path


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _copy_entries(source: Path, target: Path) -> None:
    """The regular *.json files of `source` into `target` (a test may plant links or other files there, or
    leave its cache unreadable: then nothing is shared, which only costs the next test a measurement)."""
    try:
        for entry in source.glob("*.json") if source.is_dir() else ():
            if entry.is_file() and not entry.is_symlink():
                target.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(entry, target / entry.name)
    except OSError:
        pass
