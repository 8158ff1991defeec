"""Profiles on object storage: an s3:// root read by `query`, an s3:// project written by `import`.

Reading: the catalogue (every profile.json under the prefix, hidden path segments skipped, its head read
and its sidecars' footers checked against its generation, as for local roots) comes from one listing and
batched concurrent reads; DuckDB then reads the parquet sidecars through the fsspec S3 filesystem
registered on the connection (s3fs). DuckDB's own httpfs extension is not used: it is downloaded from
DuckDB's extension site at run time, and no package on PyPI ships it for the DuckDB this project installs.

Credentials and endpoint come from the usual environment (botocore's chain): AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_DEFAULT_REGION, and AWS_ENDPOINT_URL (or
AWS_ENDPOINT_URL_S3) for an S3-compatible server. Needs the `[s3]` extra.

Writing (`import --project s3://…`) is store/crossrun/upload.py: a profile's sidecars go under its
generation's own prefix, <profile>/.libreyolo-profile-generations/<generation>/, and profile.json, naming
that generation, last; readers take the sidecars from there (or, for profiles uploaded before, from
beside profile.json), so a reader sees a profile old or new, whole or not at all, never a mix.

Every call to object storage is bounded: a connect and a read time out after LIBREYOLO_PROFILE_S3_TIMEOUT_S
seconds (default 15), a request is tried three times at most, and `query --timeout` sets a deadline that
every remote call made for the query keeps (`deadline`). Past either, one line and exit 1.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import time
from functools import cache
from typing import Iterator

from libreyolo_profile.errors import ProfileError, UnanalysableError, UsageError
from libreyolo_profile.store.crossrun.discover import skip_note
from libreyolo_profile.store.crossrun.footers import footer_length, footer_matches
from libreyolo_profile.store.schema import PROFILE_FILE, TABLES

SCHEMES = ("s3://",)
GENERATIONS = ".libreyolo-profile-generations"  # <profile>/GENERATIONS/<generation>/<table>.parquet; hidden
TIMEOUT_ENV = "LIBREYOLO_PROFILE_S3_TIMEOUT_S"
_DEFAULT_TIMEOUT_S = 15.0  # s3fs's own read timeout; botocore's 60 s, tried 5 × 5 times, made a hang last minutes
_ATTEMPTS = 3  # tries of one request, all told (botocore's standard retry mode, with its backoff)
_deadline: float | None = None  # time.monotonic() by which every remote call must have answered


def is_remote(root) -> bool:
    return isinstance(root, str) and root.startswith(SCHEMES)


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Inside the block, every call to object storage in this process fails once `seconds` have passed
    (`query --timeout`: the listing and reads before the SQL count against it too); 0: no deadline.
    Afterwards the deadline before it holds again, so one timed-out query leaves later calls unbounded."""
    global _deadline
    before = _deadline
    _deadline = time.monotonic() + seconds if seconds and seconds > 0 else None
    try:
        yield
    finally:
        _deadline = before


def request_timeout() -> float:
    """Seconds one request may wait to connect, and for each read (LIBREYOLO_PROFILE_S3_TIMEOUT_S)."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return _DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 86400:
        raise UsageError(f"{TIMEOUT_ENV} takes seconds above 0, not {text!r}")
    return value


def filesystem():
    """The S3 filesystem, configured from the environment (a fresh one: no listing cached across calls),
    with bounded timeouts and attempts (see the module's docstring)."""
    try:
        import s3fs  # noqa: F401
    except ImportError:
        raise UsageError("s3:// roots need the S3 support: pip install 'libreyolo-profile[s3]'") from None
    timeout = request_timeout()
    config = {
        "connect_timeout": timeout,
        "read_timeout": timeout,
        "retries": {"max_attempts": _ATTEMPTS, "mode": "standard"},
    }
    fs = _bounded_filesystem()(skip_instance_cache=True, use_listings_cache=False, config_kwargs=config)
    fs.retries = 1  # s3fs's own retry loop would multiply botocore's attempts
    return fs


class DeadlinePassed(Exception):
    """A remote call was asked for, or still running, after the deadline of `deadline`."""


@cache
def _bounded_filesystem():
    """s3fs's filesystem whose every request keeps the deadline (asyncio.wait_for around s3fs's one entry
    point for requests), so a server that accepts and never answers cannot outlast `query --timeout`."""
    import asyncio

    import s3fs
    from fsspec.asyn import sync_wrapper

    class BoundedS3FileSystem(s3fs.S3FileSystem):
        async def _call_s3(self, method, *args, **kwargs):
            if _deadline is None:
                return await super()._call_s3(method, *args, **kwargs)
            left = _deadline - time.monotonic()
            if left <= 0:
                raise DeadlinePassed("object storage did not answer before --timeout ran out")
            try:
                return await asyncio.wait_for(super()._call_s3(method, *args, **kwargs), left)
            except asyncio.TimeoutError:
                raise DeadlinePassed("object storage did not answer before --timeout ran out") from None

        call_s3 = sync_wrapper(_call_s3)  # s3fs's own was made from the unbounded _call_s3

    return BoundedS3FileSystem


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


def is_timeout(exc: BaseException) -> bool:
    """Whether a failed call is object storage not answering in time (a connect or read timeout after
    every attempt, or the deadline), rather than refusing."""
    try:
        from botocore.exceptions import ConnectTimeoutError, ReadTimeoutError
        from fsspec.exceptions import FSTimeoutError
    except ImportError:
        return isinstance(exc, (TimeoutError, DeadlinePassed))
    return isinstance(exc, (TimeoutError, DeadlinePassed, FSTimeoutError, ConnectTimeoutError, ReadTimeoutError))


def remote_error(exc: Exception, doing: str) -> ProfileError:
    """One line for a failed call: exit 1 when object storage did not answer in time, else exit 2 (a
    missing bucket, no credentials, a refused request: the user's to fix)."""
    if not is_timeout(exc):
        return UsageError(f"{doing}: {_describe(exc)}")
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or "S3"
    if isinstance(exc, DeadlinePassed) or (_deadline is not None and time.monotonic() >= _deadline):
        return UnanalysableError(
            f"{doing}: {endpoint} did not answer before --timeout ran out (give it more, or --timeout 0 for no limit)"
        )
    return UnanalysableError(
        f"{doing}: {endpoint} did not answer within {request_timeout():g} s, "
        f"{_ATTEMPTS} attempts ({TIMEOUT_ENV} sets the wait)"
    )


def _raise_timeouts(results, doing: str) -> None:
    """Batched reads return their failures one per object: a timeout among them is the whole call's."""
    for value in results:
        if isinstance(value, Exception) and is_timeout(value):
            raise remote_error(value, doing)


def _listing(fs, root: str) -> tuple[dict[str, int], list[str]]:
    """Every object under the root (s3://bucket/key → size), and the profile.json objects among them
    (those under a hidden path segment left out; a generation's sidecars sit under one)."""
    prefix = root.rstrip("/")
    try:
        found = fs.find(prefix, detail=True)
    except (*_failures(), DeadlinePassed) as exc:
        raise remote_error(exc, f"cannot list {root}") from None
    objects = {"s3://" + key: int(info.get("size") or 0) for key, info in found.items()}
    profiles = []
    for key in objects:
        below = [part for part in key[len(prefix) :].split("/") if part]  # none: the root names the object
        if posixpath.basename(key) == PROFILE_FILE and not any(part.startswith(".") for part in below):
            profiles.append(key)
    return objects, sorted(profiles)


def sidecar_prefix(profile_dir: str, generation: str) -> str:
    """Where the sidecars of `generation` of the profile at `profile_dir` are uploaded."""
    return f"{profile_dir}/{GENERATIONS}/{generation}"


def _sidecars_of(item, objects: dict[str, int]) -> str:
    """Where a profile's sidecars are: under its generation's prefix (what import writes), or beside its
    profile.json (what imports before that wrote)."""
    versioned = sidecar_prefix(item.display, item.head.generation)
    return versioned if all(f"{versioned}/{t}.parquet" in objects for t in TABLES) else item.display


def _footers_match(fs, files: list[str], sizes: dict[str, int], generations: list[str]) -> list[bool]:
    """For each parquet object, whether its footer carries the given generation and its table's schema
    (store/crossrun/footers.py, as for local sidecars): two batched range reads
    (the 8-byte tails, then the footers), each concurrent over all the files."""
    tails = fs.cat_ranges(files, [max(sizes[f] - 8, 0) for f in files], [sizes[f] for f in files], on_error="return")
    _raise_timeouts(tails, "cannot read the sidecars")
    lengths = [footer_length(t, sizes[f]) if isinstance(t, bytes) else None for f, t in zip(files, tails, strict=False)]
    wanted = [i for i, n in enumerate(lengths) if n]
    bodies = (
        fs.cat_ranges(
            [files[i] for i in wanted],
            [sizes[files[i]] - 8 - lengths[i] for i in wanted],
            [sizes[files[i]] - 8 for i in wanted],
            on_error="return",
        )
        if wanted
        else []
    )
    _raise_timeouts(bodies, "cannot read the sidecars")
    matched = [False] * len(files)
    for i, body in zip(wanted, bodies, strict=False):
        table = files[i].rsplit("/", 1)[-1].removesuffix(".parquet")
        matched[i] = isinstance(body, bytes) and footer_matches(body, generations[i], table)
    return matched


def collect_remote(fs, root: str) -> list:
    """The Found of every readable profile of ours under an s3:// root, sidecars used in place."""
    import msgspec

    from libreyolo_profile.store.crossrun.columns import profile_row
    from libreyolo_profile.store.crossrun.index import Found, head_decoder, is_ours

    objects, profiles = _listing(fs, root)
    try:
        heads = fs.cat(profiles, on_error="return") if profiles else {}
    except (*_failures(), DeadlinePassed) as exc:
        raise remote_error(exc, f"cannot read {root}") from None
    _raise_timeouts(heads.values(), f"cannot read {root}")
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
    where = {item.json_path: _sidecars_of(item, objects) for item in candidates}
    files = [f"{where[item.json_path]}/{t}.parquet" for item in candidates for t in TABLES]
    present = [f for f in files if f in objects]
    generations = {
        f: item.head.generation for item in candidates for f in (f"{where[item.json_path]}/{t}.parquet" for t in TABLES)
    }
    try:
        matched = dict(
            zip(present, _footers_match(fs, present, objects, [generations[f] for f in present]), strict=False)
        )
    except (*_failures(), DeadlinePassed) as exc:
        raise remote_error(exc, f"cannot read {root}") from None
    result = []
    for item in candidates:
        if all(matched.get(f"{where[item.json_path]}/{t}.parquet") for t in TABLES):
            item.sidecars, item.row = where[item.json_path], profile_row(item.head)
            result.append(item)
        else:  # not rebuilt from object storage: the importer writes sidecars that match
            skip_note(
                f"skipped {item.json_path}: its sidecars are missing or were written for another "
                f"profile.json (being replaced now, or re-import it)"
            )
    return result
