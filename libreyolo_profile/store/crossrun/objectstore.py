"""Profiles on object storage: an s3:// root read by `query`, an s3:// project written by `import`.

Reading: the catalogue (every profile.json under the prefix, hidden path segments skipped, its head read
and its sidecars' footers checked against its generation, as for local roots) comes from one listing and
batched concurrent reads; DuckDB then reads the parquet sidecars through the fsspec S3 filesystem
registered on the connection (s3fs). DuckDB's own httpfs extension is not used: it is downloaded from
DuckDB's extension site at run time, and no package on PyPI ships it for the DuckDB this project installs.

Credentials and endpoint come from the usual environment (botocore's chain): AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_DEFAULT_REGION, and AWS_ENDPOINT_URL (or
AWS_ENDPOINT_URL_S3) for an S3-compatible server. Needs the `[s3]` extra.

Writing (`import --project s3://…`): the profile is written locally by the real writer, then uploaded
sidecars first and profile.json last. Readers key on profile.json and keep a profile only when every
sidecar's footer carries its generation, so a reader sees a profile whole or not at all: before the last
upload it is not there; while --exist-ok replaces one, the old profile.json and new sidecars disagree and
the profile is skipped with a note until profile.json lands. A free name (<kind>, <kind>2, …) is claimed
with an exclusive create of a hidden claim object, so concurrent importers never share a directory.
"""

from __future__ import annotations

import posixpath
import tempfile
from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.store.crossrun.discover import skip_note
from libreyolo_profile.store.crossrun.footers import footer_length, generation_pattern
from libreyolo_profile.store.schema import PROFILE_FILE, TABLES

SCHEMES = ("s3://",)
_CLAIM = ".libreyolo-profile-claim"  # hidden: readers skip it


def is_remote(root) -> bool:
    return isinstance(root, str) and root.startswith(SCHEMES)


def filesystem():
    """The S3 filesystem, configured from the environment (a fresh one: no listing cached across calls)."""
    try:
        import s3fs
    except ImportError:
        raise UsageError("s3:// roots need the S3 support: pip install 'libreyolo-profile[s3]'") from None
    return s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)


def _failures() -> tuple[type, ...]:
    """What a call to object storage raises when it fails: OS errors as s3fs translates them, and botocore's
    own (no credentials found, endpoint unreachable), which it passes through."""
    try:
        from botocore.exceptions import BotoCoreError, ClientError
    except ImportError:
        return (OSError, ValueError)
    return (OSError, ValueError, BotoCoreError, ClientError)


def _describe(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _listing(fs, root: str) -> dict[str, int]:
    """Every object under the root (s3://bucket/key → size), hidden path segments left out."""
    prefix = root.rstrip("/")
    try:
        found = fs.find(prefix, detail=True)
    except _failures() as exc:
        raise UsageError(f"cannot list {root}: {_describe(exc)}") from None
    objects = {}
    for key, info in found.items():
        below = key[len(prefix.removeprefix("s3://")):].split("/")
        if not any(part.startswith(".") for part in below if part):
            objects["s3://" + key] = int(info.get("size") or 0)
    return objects


def _footers_match(fs, files: list[str], sizes: dict[str, int], generations: list[str]) -> list[bool]:
    """For each parquet object, whether its footer carries the given generation: two batched range reads
    (the 8-byte tails, then the footers), each concurrent over all the files."""
    tails = fs.cat_ranges(files, [max(sizes[f] - 8, 0) for f in files], [sizes[f] for f in files], on_error="return")
    lengths = [footer_length(t, sizes[f]) if isinstance(t, bytes) else None for f, t in zip(files, tails)]
    wanted = [i for i, n in enumerate(lengths) if n]
    bodies = fs.cat_ranges([files[i] for i in wanted], [sizes[files[i]] - 8 - lengths[i] for i in wanted],
                           [sizes[files[i]] - 8 for i in wanted], on_error="return") if wanted else []
    matched = [False] * len(files)
    for i, body in zip(wanted, bodies):
        matched[i] = isinstance(body, bytes) and generation_pattern(generations[i]) in body
    return matched


def collect_remote(fs, root: str) -> list:
    """The Found of every readable profile of ours under an s3:// root, sidecars used in place."""
    import msgspec

    from libreyolo_profile.store.crossrun.columns import profile_row
    from libreyolo_profile.store.crossrun.index import Found, head_decoder, is_ours

    objects = _listing(fs, root)
    profiles = sorted(k for k in objects if posixpath.basename(k) == PROFILE_FILE)
    try:
        heads = fs.cat(profiles, on_error="return") if profiles else {}
    except _failures() as exc:
        raise UsageError(f"cannot read {root}: {_describe(exc)}") from None
    decoder, fields = head_decoder()
    candidates = []
    for key in profiles:
        data = heads.get(key.removeprefix("s3://"), heads.get(key))
        try:
            if not isinstance(data, bytes):
                raise OSError(_describe(data) if isinstance(data, Exception) else "unreadable")
            head = decoder.decode(data)
        except (OSError, msgspec.DecodeError) as exc:
            skip_note(f"skipped {key}: {exc}")
            continue
        item = Found(posixpath.dirname(key), key, {f: getattr(head, f) for f in fields})
        if is_ours(item):
            candidates.append(item)
    files = [f"{item.display}/{t}.parquet" for item in candidates for t in TABLES]
    present = [f for f in files if f in objects]
    generations = {f: str(item.doc.get("generation")) for item in candidates for f in
                   (f"{item.display}/{t}.parquet" for t in TABLES)}
    try:
        matched = dict(zip(present, _footers_match(fs, present, objects, [generations[f] for f in present])))
    except _failures() as exc:
        raise UsageError(f"cannot read {root}: {_describe(exc)}") from None
    result = []
    for item in candidates:
        if all(matched.get(f"{item.display}/{t}.parquet") for t in TABLES):
            item.sidecars, item.row = item.display, profile_row(item.doc)
            result.append(item)
        else:  # not rebuilt from object storage: the importer writes sidecars that match
            skip_note(f"skipped {item.json_path}: its sidecars are missing or were written for another "
                      f"profile.json (being replaced now, or re-import it)")
    return result


# ---------------------------------------------------------------------------------------------
# writing


def _claim(fs, wanted: str, exist_ok: bool) -> str:
    """The name this import writes to: `wanted` under --exist-ok, else the first of wanted, wanted2, … with
    no profile, claimed by an exclusive create so that a concurrent importer takes another."""
    if exist_ok:
        return wanted
    n = 1
    while True:
        candidate = wanted if n == 1 else f"{wanted}{n}"
        n += 1
        if fs.exists(f"{candidate}/{PROFILE_FILE}"):
            continue
        try:
            fs.pipe_file(f"{candidate}/{_CLAIM}", b"", mode="create")
        except FileExistsError:
            continue
        return candidate


def upload_profile(doc: dict, wanted: str, exist_ok: bool) -> tuple[str, bool]:
    """Write `doc` as a profile at the s3:// prefix `wanted` (or the next free name); (where, replaced)."""
    from libreyolo_profile.store.disk.writer import write_directory

    fs = filesystem()
    try:
        target = _claim(fs, wanted.rstrip("/"), exist_ok)
        replaced = exist_ok and fs.exists(f"{target}/{PROFILE_FILE}")
        with tempfile.TemporaryDirectory(prefix="libreyolo-profile-upload-") as staging:
            local = write_directory(doc, Path(staging) / "profile")
            names = sorted(p.name for p in local.iterdir() if p.name != PROFILE_FILE)
            for name in names + [PROFILE_FILE]:  # profile.json last: readers key on it
                fs.put_file(str(local / name), f"{target}/{name}")
        if not exist_ok:
            fs.rm_file(f"{target}/{_CLAIM}")
    except _failures() as exc:
        raise UsageError(f"cannot write to {wanted}: {_describe(exc)}") from None
    return target, replaced
