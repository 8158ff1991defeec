"""Which profiles make one side of `compare`: every profile under a baseline directory, each
once (a copy has its generation, a symlink its file), all of one setup (readers/compare.py loads
them; this module only decides)."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.store.disk.loader import Loaded
from libreyolo_profile.store.schema import PROFILE_FILE, REPEAT_FILE


def as_mapping(value) -> dict:
    return value if isinstance(value, dict) else {}


def plain(value):
    """A value from a file as a dictionary key: a string or None as it is, anything else as its JSON."""
    return value if value is None or isinstance(value, str) else json.dumps(value, default=str)


# What must match for profiles to be pooled: the `profiles` columns of `query` that fix the setup,
# the weights (a file, or random initialization) and the autocast dtype.
SAME_SETUP = (
    "kind",
    "model_family",
    "model_size",
    "imgsz",
    "batch",
    "device_type",
    "device_name",
    "half",
    "amp",
    "model_weights",
    "random_weights",
    "amp_dtype",
)


def profile_file(loaded: Loaded) -> str:
    """The file a profile was read from, every symlink resolved: one profile has one, however named."""
    path = Path(loaded.path)
    if path.is_dir():
        path = path / PROFILE_FILE if (path / PROFILE_FILE).is_file() else path / REPEAT_FILE
    return os.path.realpath(path)


def same_profile_keys(loaded: Loaded) -> set[tuple[str, str]]:
    """What makes two loaded profiles one: the same file, or the same generation (a copy)."""
    keys = {("file", profile_file(loaded))}
    keys.add(("generation", loaded.head.generation))  # the head check holds it to a non-empty string
    return keys


def profile_files(directory: Path) -> list[Path]:
    """Every profile under `directory` at any depth, hidden directories skipped (as `query` does):
    per directory its profile.json, or its profile_repeat.json when it has no profile.json (both
    files of a repeated profile describe the same trials, so only one is read)."""
    from libreyolo_profile.store.crossrun.discover import walk_visible

    found = []
    for folder, filenames in walk_visible(directory):
        for name in (PROFILE_FILE, REPEAT_FILE):
            if name in filenames and os.path.isfile(os.path.join(folder, name)):
                found.append(Path(folder) / name)
                break
    return found


def created_order(loaded: Loaded) -> tuple[float, str]:
    try:
        return datetime.fromisoformat(str(loaded.head.created)).timestamp(), str(loaded.path)
    except (TypeError, ValueError, OverflowError):
        return float("-inf"), str(loaded.path)


def setup_of(head) -> dict:
    """The SAME_SETUP fields of a profile's head (Loaded.head)."""
    from libreyolo_profile.store.crossrun.columns import profile_row

    row = profile_row(head)
    row["random_weights"] = "random_weights" in head.marks
    row["amp_dtype"] = head.settings.amp_dtype
    return {key: row[key] for key in SAME_SETUP}


def check_same_setup(directory: Path, members: list[Loaded]) -> None:
    rows = [setup_of(m.head) for m in members]
    for member, row in zip(members[1:], rows[1:], strict=False):
        for key in SAME_SETUP:
            if row[key] != rows[0][key]:
                raise UsageError(
                    f"cannot pool the profiles under {directory} into one side: {key} differs "
                    f"({rows[0][key]} in {members[0].path}, {row[key]} in {member.path}); "
                    f"keep one setup per baseline directory"
                )


def once_each(members: list[Loaded]) -> tuple[list[Loaded], list[dict]]:
    """The members with every repeat of one profile (a copy: same generation; a symlink: same file)
    left out after its first appearance, and what was left out, with why."""
    kept, seen, left_out = [], {}, []
    for member in members:
        keys = same_profile_keys(member)
        first = next((seen[key] for key in keys if key in seen), None)
        if first is None:
            kept.append(member)
            seen.update((key, member) for key in keys)
        else:
            how = "the same file" if ("file", profile_file(member)) in keys & set(seen) else "a copy (same generation)"
            left_out.append({"path": str(member.path), "reason": f"{how} as {first.path}: each profile is pooled once"})
    return kept, left_out


def verdict_change(before, after) -> dict:
    """Each side's verdict (a pool's own, or its mix) and whether it changed (readers/compare.py's Side)."""
    (bound_b, reason_b), (bound_a, reason_a) = before.verdict(), after.verdict()
    return {
        "before": bound_b,
        "after": bound_a,
        "changed": bound_b != bound_a,
        "before_reason": reason_b,
        "after_reason": reason_a,
    }
