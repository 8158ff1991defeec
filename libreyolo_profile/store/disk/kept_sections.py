"""Where the lazy analysis sections (store/ingest/lazy_sections.py: the report's step timeline, the launches)
are kept once computed: <cache>/sections/<key>, the key naming the analysis code and SQL (cache.bytes_key),
the profile's generation (a new one for every conversion or measurement, so a rewritten profile never reads
an old section), the section and the rank whose trace it was computed from. An entry is built whole in a
private work directory and renamed into place (cache.publish_entry), so a concurrent reader sees nothing or
all of it; a cache that cannot be written degrades to the process's temporary one (workdir.writing).

Imports nothing heavy: a read of a kept section needs neither DuckDB nor pyarrow.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from libreyolo_profile.store.workdir import cache_root

AREA = "sections"
# the kept sections a measurement's own analysis computes in its pass (store/disk/writer.py write_profile),
# as the CLI asks: `run` and `infer` ask for the report's timeline when they write a report
# as do the readers that need a section (`asking`), for a trace's first read
ASKED: ContextVar[tuple[str, ...]] = ContextVar("kept_sections_asked", default=())


@contextmanager
def asking(*names: str):
    """Within: a trace read for the first time computes these kept sections in the same pass (a second parse of
    the trace for the section was most of a first `launches` or `report`)."""
    token = ASKED.set(names)
    try:
        yield
    finally:
        ASKED.reset(token)


def _key(doc: dict, name: str, rank: int | None) -> str:
    from libreyolo_profile.store.disk.cache import bytes_key

    return bytes_key(json.dumps([doc.get("generation"), doc.get("kind"), name, rank], default=str).encode())


def _complete(home: Path, name: str) -> bool:
    from libreyolo_profile.store.disk.cache import is_entry
    from libreyolo_profile.store.ingest.lazy_sections import SECTION_FILES

    return is_entry(home) and all((home / file).is_file() for file in SECTION_FILES[name])


def kept_section(doc: dict, name: str, rank: int | None = None) -> Path | None:
    """The directory holding section `name` of the profile `doc` (for `rank`'s trace), or None: not computed
    yet (or by another version of the analysis)."""
    if not doc.get("generation"):
        return None  # nothing names this profile apart from another: never shared
    home = cache_root() / AREA / _key(doc, name, rank)
    return home if _complete(home, name) else None


def keep_section(doc: dict, name: str, rank: int | None, files: dict[str, bytes]) -> Path:
    """Keep the section's files (lazy_sections.section_files) for the profile `doc`; the directory they are
    in (a concurrent reader's equal entry, where it published first). A profile without a generation keeps
    them in a private work directory of this process only."""
    from libreyolo_profile.store.disk.cache import publish_entry
    from libreyolo_profile.store.workdir import scratch, work_dir, writing

    def stage(directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        for file, data in files.items():
            (directory / file).write_bytes(data)

    if not doc.get("generation"):
        home = work_dir(AREA) / "entry"
        stage(home)
        return home
    key = _key(doc, name, rank)

    def publish(root: Path) -> Path:
        home = root / AREA / key
        with scratch(AREA) as work:
            staged = work / "entry"
            stage(staged)
            publish_entry(staged, home, lambda entry: _complete(entry, name), retired=work)
        return home

    return writing(publish)
