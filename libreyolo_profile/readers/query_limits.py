"""The memory `libreyolo profile query` lets DuckDB use. DuckDB's own default is 80% of the machine, and
`query` cannot spill to disk (its connection opens no file), so one SELECT could take most of a shared
machine; `query` sets memory_limit before it loads the tables, and a query that needs more fails with
one line (exit 1, readers/query.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from libreyolo_profile.errors import UsageError

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.IGNORECASE)
_DEFAULT_CAP = 4 << 30  # 4 GiB
_DEFAULT_SHARE = 4  # ... or a quarter of the machine's memory (or its cgroup's), whichever is less


def memory_limit_setting(text: str | None) -> str:
    """The memory_limit `query` gives DuckDB: `text` (a size with a unit, e.g. 2GB, 512MiB) in DuckDB's
    spelling, or the default min(4 GiB, 25% of memory)."""
    if text is None:
        return f"{default_memory_limit() >> 20}MiB"
    match = _SIZE.fullmatch(text.strip())
    if match is None or float(match.group(1)) <= 0:
        raise UsageError(
            f"--memory-limit takes a size with a unit (KB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. 2GB, not {text!r}"
        )
    unit = {u.lower(): u for u in ("KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB")}[match.group(2).lower()]
    return f"{match.group(1)}{unit}"


def default_memory_limit() -> int:
    """min(4 GiB, a quarter of the memory this process may use), in bytes."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:  # a container's cgroup (v2) may allow less than the machine has
        text = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        total = min(total, int(text)) if text.isdigit() else total
    except (OSError, ValueError):
        pass
    return max(min(_DEFAULT_CAP, total // _DEFAULT_SHARE), 64 << 20)
