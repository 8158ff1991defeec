"""Writing a profile to object storage (`import --project s3://…`): whole or nothing, under concurrency.

Layout: <name>/profile.json names its generation; that generation's sidecars are the objects under
<name>/.libreyolo-profile-generations/<generation>/ (objectstore.sidecar_prefix; readers take them there).

- A new name (<kind>, <kind>2, …) is claimed by an exclusive create (If-None-Match: *) of the hidden
  object <name>/.libreyolo-profile-claim, which names its owner (host, pid, generation, time). The name is
  taken only when the claim is held and no profile.json is there, and the claim stays until the profile
  is published: a concurrent importer can neither hold it too nor find the name free. profile.json is then
  created exclusively as well, so even a claim swept from under a live importer cannot overwrite a profile.
- Sidecars go under the new generation's own prefix, so no two writers ever write one object; each is read
  back (its footer must carry the generation) before profile.json is written, last. Readers see the old
  profile.json with the old sidecars or the new with the new, never a mix; under --exist-ok the last
  profile.json written wins whole, and the generation it replaced is deleted after.
- A failed or interrupted import (SIGTERM and Ctrl-C raise through here) deletes what it uploaded and its
  claim. A killed one (SIGKILL, a lost machine) leaves them behind; the next import to that name sweeps
  them: a claim or an unpublished generation whose owner is dead (this host, no such process) or older
  than six hours (another host).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from pathlib import Path

from libreyolo_profile.store.crossrun.objectstore import (
    GENERATIONS,
    DeadlinePassed,
    _failures,
    _footers_match,
    filesystem,
    remote_error,
    sidecar_prefix,
)
from libreyolo_profile.store.schema import PROFILE_FILE, TABLES

CLAIM = ".libreyolo-profile-claim"  # hidden: readers skip it
OWNER = ".owner"  # inside an unpublished generation's prefix: who is uploading it
STALE_S = 6 * 3600  # an owner on another host is taken for dead after this long (no import runs longer)


class NameLost(Exception):
    """profile.json appeared at the name we claimed (our claim was swept as stale): try the next name."""


def upload(doc: dict, wanted: str, exist_ok: bool) -> tuple[str, bool]:
    """Write `doc` as a profile at the s3:// prefix `wanted` (or the next free name); (where, replaced)."""
    from libreyolo_profile.store.disk.writer import write_directory
    from libreyolo_profile.store.workdir import scratch

    fs = filesystem()
    wanted = wanted.rstrip("/")
    try:
        with scratch("upload") as staging:  # under the cache's work/: a killed import's is swept there
            local = write_directory(doc, Path(staging) / "profile")
            for _ in range(8):  # each lost name costs an importer that swept us as dead: rare
                try:
                    return _upload_once(fs, local, doc["generation"], wanted, exist_ok)
                except NameLost:
                    continue
            raise OSError(f"{wanted}: every name tried was taken while uploading")
    except (*_failures(), DeadlinePassed) as exc:
        raise remote_error(exc, f"cannot write to {wanted}") from None


def _upload_once(fs, local: Path, generation: str, wanted: str, exist_ok: bool) -> tuple[str, bool]:
    owner = _owner(generation)
    target, claim_tag = (wanted, None) if exist_ok else _take_name(fs, wanted, owner)
    prefix = sidecar_prefix(target, generation)
    published = False
    try:
        sweep(fs, target)
        fs.pipe_file(f"{prefix}/{OWNER}", owner, mode="create")  # first: a sweep sees the upload as ours
        names = sorted(p.name for p in local.iterdir() if p.name != PROFILE_FILE)
        for name in names:
            fs.put_file(str(local / name), f"{prefix}/{name}")
        _check_uploaded(fs, prefix, generation)
        previous = _published_generation(fs, target)
        try:
            fs.put_file(
                str(local / PROFILE_FILE), f"{target}/{PROFILE_FILE}", mode="overwrite" if exist_ok else "create"
            )
        except FileExistsError:
            raise NameLost() from None
        published = True
        _remove_quietly(fs, [f"{prefix}/{OWNER}"])
        if previous is not None and previous != generation:
            _retire(fs, target, previous)
        return target, exist_ok and previous is not None
    finally:
        if not published:  # failed, interrupted, or the name lost: nothing of ours stays
            _remove_tree_quietly(fs, prefix)
        if claim_tag is not None:
            _release(fs, f"{target}/{CLAIM}", claim_tag)


def _owner(generation: str) -> bytes:
    return json.dumps(
        {"host": socket.gethostname(), "pid": os.getpid(), "generation": generation, "started": time.time()}
    ).encode()


def _numbered(wanted: str):
    yield wanted
    n = 2
    while True:
        yield f"{wanted}{n}"
        n += 1


def _take_name(fs, wanted: str, owner: bytes) -> tuple[str, str]:
    """The first of wanted, wanted2, … whose claim we hold and that has no profile.json; (name, claim ETag)."""
    for candidate in _numbered(wanted):
        if fs.exists(f"{candidate}/{PROFILE_FILE}"):
            continue  # published: no claim needed to know it is taken
        tag = _create_claim(fs, f"{candidate}/{CLAIM}", owner)
        if tag is None:
            continue  # a live importer holds it
        if fs.exists(f"{candidate}/{PROFILE_FILE}"):  # published before we held the claim
            _release(fs, f"{candidate}/{CLAIM}", tag)
            continue
        return candidate, tag
    raise AssertionError("unreachable: _numbered never ends")


def _create_claim(fs, key: str, owner: bytes) -> str | None:
    """Create the claim exclusively; its ETag, or None when a live owner holds it (a dead owner's claim is
    swept and the create tried again)."""
    for _ in range(3):
        try:
            return _etag(fs.pipe_file(key, owner, mode="create"))
        except FileExistsError:
            if not _sweep_dead_claim(fs, key):
                return None
    return None


def _etag(response) -> str | None:
    return response.get("ETag") if isinstance(response, dict) else None


def _sweep_dead_claim(fs, key: str) -> bool:
    """Delete the claim at `key` if its owner is dead, with the unpublished generation it was uploading."""
    try:
        info = fs.info(key)
        body = fs.cat_file(key)
    except FileNotFoundError:
        return True  # released meanwhile: try again
    owner = _read_owner(body)
    if not _dead(owner, info):
        return False
    if owner.get("generation"):
        _remove_tree_quietly(fs, sidecar_prefix(key.rsplit("/", 1)[0], str(owner["generation"])))
    _release(fs, key, info.get("ETag"))
    return True


def _read_owner(body: bytes) -> dict:
    try:
        owner = json.loads(body)
    except ValueError:
        return {}  # an empty claim, as imports before owners were named wrote: judged by its age
    return owner if isinstance(owner, dict) else {}


def _dead(owner: dict, info: dict) -> bool:
    """An owner on this host whose process is gone, or any owner (or none named) older than STALE_S."""
    if owner.get("host") == socket.gethostname() and isinstance(owner.get("pid"), int):
        if owner["pid"] == os.getpid():
            return False
        try:
            os.kill(owner["pid"], 0)
        except ProcessLookupError:
            return True
        except (PermissionError, OverflowError, ValueError):
            pass
    modified = info.get("LastModified")
    age = time.time() - modified.timestamp() if hasattr(modified, "timestamp") else 0.0
    return age > STALE_S


def _release(fs, key: str, tag: str | None) -> None:
    """Delete a claim only while it is still the one we read or made (If-Match on its ETag)."""
    bucket, name, _ = fs.split_path(key)
    with contextlib.suppress(Exception):
        fs.call_s3("delete_object", Bucket=bucket, Key=name, **({"IfMatch": tag} if tag else {}))


def sweep(fs, target: str) -> None:
    """Delete what killed importers left at the profile `target`: generations no profile.json names whose
    owner is dead, and generations already replaced (no owner left in them)."""
    try:
        found = fs.find(f"{target}/{GENERATIONS}", detail=True)
    except FileNotFoundError:
        return
    # read after the listing: a generation listed without its owner was published before the listing, so
    # profile.json names it now unless a newer one replaced it
    current = _published_generation(fs, target)
    by_generation: dict[str, list[str]] = {}
    for key in found:
        generation = key.split(f"/{GENERATIONS}/", 1)[1].split("/", 1)[0]
        by_generation.setdefault(generation, []).append(key)
    for generation, keys in by_generation.items():
        if generation == current:
            continue
        owner_key = next((k for k in keys if k.endswith(f"/{OWNER}")), None)
        if owner_key is not None:
            try:
                owner = _read_owner(fs.cat_file(owner_key))
            except FileNotFoundError:
                continue  # published just now
            if not _dead(owner, found[owner_key]):
                continue  # being uploaded
        _remove_quietly(fs, ["s3://" + k for k in keys])


def _published_generation(fs, target: str) -> str | None:
    try:
        doc = json.loads(fs.cat_file(f"{target}/{PROFILE_FILE}"))
    except FileNotFoundError:
        return None
    except ValueError:
        return ""  # a damaged profile.json: replaced like any other
    generation = doc.get("generation") if isinstance(doc, dict) else None
    return str(generation) if generation is not None else ""


def _check_uploaded(fs, prefix: str, generation: str) -> None:
    """Every sidecar is there and its footer carries `generation`: read back before profile.json goes up."""
    files = [f"{prefix}/{t}.parquet" for t in TABLES]
    sizes = {f: int(fs.info(f)["size"]) for f in files}
    matched = _footers_match(fs, files, sizes, [generation] * len(files))
    bad = [f for f, ok in zip(files, matched, strict=False) if not ok]
    if bad:
        raise OSError(f"{bad[0]} does not read back as written (its footer lacks generation {generation})")


def _retire(fs, target: str, previous: str) -> None:
    """Delete the generation a replacement superseded: its prefix, or the sidecars beside profile.json that
    imports before generation prefixes wrote."""
    versioned = sidecar_prefix(target, previous) if previous else None
    if versioned and fs.exists(f"{versioned}/{next(iter(TABLES))}.parquet"):
        _remove_tree_quietly(fs, versioned)
    else:
        _remove_quietly(fs, [f"{target}/{t}.parquet" for t in TABLES])


def _remove_tree_quietly(fs, prefix: str) -> None:
    with contextlib.suppress(FileNotFoundError, *_failures(), DeadlinePassed):
        found = fs.find(prefix)
        _remove_quietly(fs, ["s3://" + k for k in found])


def _remove_quietly(fs, keys: list[str]) -> None:
    """Best effort: a cleanup that fails leaves what the next import's sweep removes."""
    if keys:
        with contextlib.suppress(FileNotFoundError, *_failures(), DeadlinePassed):
            fs.rm(keys)


def find_imported(base: str, key: str) -> str | None:
    """The profile under the s3:// prefix `base` (<base>/<kind>…) published by the import keyed `key`, or
    None: a retried bulk-import task asks first, so that its earlier attempt's profile is not published twice."""
    fs = filesystem()
    try:
        found = fs.glob(f"{base.rstrip('/')}/*/{PROFILE_FILE}")
        bodies = fs.cat(["s3://" + k for k in found], on_error="return") if found else {}
    except FileNotFoundError:
        return None
    except (*_failures(), DeadlinePassed) as exc:
        raise remote_error(exc, f"cannot read {base}") from None
    for path, body in sorted(bodies.items()):
        if isinstance(body, bytes) and import_key_of(body) == key:
            return "s3://" + path.removeprefix("s3://").rsplit("/", 1)[0]
    return None


def import_key_of(body: bytes) -> str | None:
    """The bulk-import key a profile.json was published under (source.import_key), if any."""
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    source = doc.get("source") if isinstance(doc, dict) else None
    return source.get("import_key") if isinstance(source, dict) else None
