"""Object storage under concurrency, interruption and a silent server: the real CLI against moto's S3 server
on 127.0.0.1 with one request held at a chosen point (tests/s3_faults.py), so each race happens every time.

- two importers racing for one free name get two names (neither profile overwritten);
- two --exist-ok replacements racing leave one whole profile (the last profile.json's, with its own
  sidecars), never one writer's profile.json over the other's sidecars;
- an import stopped by SIGTERM removes what it uploaded, its claim and its local staging; one killed by
  SIGKILL leaves them, and the next import to that name sweeps them and takes the name;
- an endpoint that accepts and never answers: `query --timeout 2` and `import` end with one line, exit 1.

Needs the `[s3]` extra (s3fs) and moto[server]; skipped without them, a failure under CI=true.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import ON_CI, TRACES, require_traces, run_cli

from tests.synthetic_traces import write_trace
from tests.test_sql_diff import cpu_inference_events

BUCKET = "fault-bucket"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "test-key",
    "AWS_SECRET_ACCESS_KEY": "test-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}
LIMIT_S = 180  # every CLI call and wait here is bounded


@pytest.fixture(scope="module")
def gated():
    try:
        import boto3  # noqa: F401
        import moto.server  # noqa: F401
        import s3fs  # noqa: F401
    except ImportError as exc:
        if ON_CI:
            pytest.fail(f"CI=true but the S3 fault tests need the [s3] extra and moto[server]: {exc}")
        pytest.skip(f"needs the [s3] extra and moto[server]: {exc}")
    from s3_faults import gated_moto_server

    server = gated_moto_server()
    env = {
        **CREDENTIALS,
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{server._port}",
        # a held answer must not be retried past: the races below are about ordering, not timeouts
        "LIBREYOLO_PROFILE_S3_TIMEOUT_S": str(LIMIT_S),
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        import boto3

        boto3.client("s3").create_bucket(Bucket=BUCKET)
        server.env = env
        yield server
    finally:
        server.release_all()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


def _prefix() -> tuple[str, str]:
    key = f"t-{uuid.uuid4().hex[:8]}"
    return key, f"s3://{BUCKET}/{key}"


def _keys(key: str) -> list[str]:
    """The objects under `key`/, by name (one listing, none read)."""
    import boto3

    return [o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket=BUCKET, Prefix=f"{key}/").get("Contents", [])]


def _generation(key: str) -> str:
    """The generation the profile.json object `key` names."""
    import boto3

    return json.loads(boto3.client("s3").get_object(Bucket=BUCKET, Key=key)["Body"].read())["generation"]


def _start_import(trace: str | Path, prefix: str, *extra: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "libreyolo_profile",
            "import",
            str(trace if isinstance(trace, Path) else TRACES / f"{trace}.json.gz"),
            "--project",
            prefix,
            "--json",
            *extra,
        ],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    return process.returncode, out, err


def _profiles(prefix: str) -> list[dict]:
    result = run_cli(
        "query",
        "SELECT profile, device_type, sidecar_dir FROM profiles ORDER BY profile",
        prefix,
        "--json",
        timeout=LIMIT_S,
    )
    assert result.returncode == 0, result.stderr
    assert "skipped" not in result.stderr, result.stderr  # no profile.json over another writer's sidecars
    return json.loads(result.stdout)


def test_two_importers_racing_for_one_name_each_get_their_own(gated):
    """The later importer's check that the name is free is answered before the earlier one publishes and
    reaches it after the earlier one is done (the old claim was gone by then): it must not take the name."""
    require_traces()
    key, prefix = _prefix()
    hold = gated.hold("HEAD", rf"^/{BUCKET}/{key}/train/profile\.json$")
    late = _start_import("mi250_rocm_minitoy", prefix)
    try:
        assert hold.arrived.wait(LIMIT_S), "the late importer never asked whether the name is free"
        early = run_cli(
            "import", str(TRACES / "mi250_rocm_minitoy.json.gz"), "--project", prefix, "--json", timeout=LIMIT_S
        )
    finally:
        hold.release.set()
    code, out, err = _finish(late)
    assert early.returncode == 0 and code == 0, (early.stderr, err)
    directories = [json.loads(early.stdout)["directory"], json.loads(out)["directory"]]
    assert sorted(directories) == [f"{prefix}/train", f"{prefix}/train2"], directories
    assert [p["profile"] for p in _profiles(prefix)] == [f"{prefix}/train", f"{prefix}/train2"]
    assert not [k for k in _keys(key) if k.endswith(".libreyolo-profile-claim")]  # released once published


def test_replacements_racing_leave_one_whole_profile(gated, tmp_path):
    """Two --exist-ok imports onto one profile: the first one's profile.json is held until the second has
    finished, so it lands last. Readers must then see the first one's profile whole."""
    require_traces()
    key, prefix = _prefix()
    assert (
        run_cli(
            "import", str(TRACES / "h100_vit_image_classifier.json.gz"), "--project", prefix, timeout=LIMIT_S
        ).returncode
        == 0
    )
    hold = gated.hold("PUT", rf"^/{BUCKET}/{key}/infer/profile\.json$", when="request")
    # a CPU inference trace (cpu_only_rank34 is a training rank since issue 24), so the two sides differ
    first = _start_import(write_trace(tmp_path / "cpu_infer.json", cpu_inference_events()), prefix, "--exist-ok")
    try:
        assert hold.arrived.wait(LIMIT_S), "the first replacement never wrote its profile.json"
        second = run_cli(
            "import",
            str(TRACES / "h100_vit_image_classifier.json.gz"),
            "--project",
            prefix,
            "--exist-ok",
            timeout=LIMIT_S,
        )
    finally:
        hold.release.set()
    code, out, err = _finish(first)
    assert code == 0 and second.returncode == 0, (err, second.stderr)
    found = _profiles(prefix)
    assert [(p["profile"], p["device_type"]) for p in found] == [(f"{prefix}/infer", "cpu")]  # the last written
    current = _generation(f"{key}/infer/profile.json")
    assert found[0]["sidecar_dir"].endswith(f"/infer/.libreyolo-profile-generations/{current}")
    assert not [k for k in _keys(key) if k.endswith("/.owner")]  # no upload still marked in progress


def _leftover_work(cache, pid: int) -> list:
    work = cache / "libreyolo-profile" / "work"
    return [p.name for p in work.iterdir() if p.name.startswith(f"{pid}-")] if work.is_dir() else []


def test_sigterm_mid_upload_removes_what_was_uploaded(gated, tmp_path, private_cache):
    require_traces()
    key, prefix = _prefix()
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    hold = gated.hold("PUT", rf"^/{BUCKET}/{key}/train/.*kernels\.parquet$")  # uploaded; its answer held
    process = _start_import("mi250_rocm_minitoy", prefix, env={"TMPDIR": str(temporary)})
    try:
        assert hold.arrived.wait(LIMIT_S), "the import never uploaded its kernels sidecar"
        assert _keys(key)  # the claim and the first sidecars are there now
        process.send_signal(signal.SIGTERM)
        code, out, err = _finish(process)
    finally:
        hold.release.set()
    assert code == 143 and err.endswith("terminated\n") and "Traceback" not in err, (code, err)
    assert _keys(key) == []  # claim, sidecars, owner: all removed
    assert list(temporary.iterdir()) == [] and _leftover_work(private_cache, process.pid) == []
    again = run_cli(
        "import", str(TRACES / "mi250_rocm_minitoy.json.gz"), "--project", prefix, "--json", timeout=LIMIT_S
    )
    assert again.returncode == 0 and json.loads(again.stdout)["directory"] == f"{prefix}/train"


def test_a_killed_import_is_swept_by_the_next_one_to_that_name(gated, private_cache):
    require_traces()
    key, prefix = _prefix()
    hold = gated.hold("PUT", rf"^/{BUCKET}/{key}/train/.*kernels\.parquet$")
    process = _start_import("mi250_rocm_minitoy", prefix)
    try:
        assert hold.arrived.wait(LIMIT_S), "the import never uploaded its kernels sidecar"
        process.kill()  # SIGKILL: nothing of ours runs
        _finish(process)
    finally:
        hold.release.set()
    left = _keys(key)
    assert any(k.endswith(".libreyolo-profile-claim") for k in left) and any(k.endswith(".parquet") for k in left)
    again = run_cli(
        "import", str(TRACES / "mi250_rocm_minitoy.json.gz"), "--project", prefix, "--json", timeout=LIMIT_S
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["directory"] == f"{prefix}/train"  # the dead claim no longer blocks it
    current = _generation(f"{key}/train/profile.json")
    stray = [
        k
        for k in _keys(key)
        if k != f"{key}/train/profile.json"
        and not k.startswith(f"{key}/train/.libreyolo-profile-generations/{current}/")
    ]
    assert stray == []  # the dead import's claim and sidecars are gone
    assert _leftover_work(private_cache, process.pid) == []  # its local staging too


@pytest.fixture
def silent():
    from s3_faults import SilentEndpoint

    endpoint = SilentEndpoint()
    try:
        yield endpoint
    finally:
        endpoint.close()


def test_query_against_a_silent_endpoint_ends_at_its_timeout(silent):
    pytest.importorskip("s3fs")
    env = {**CREDENTIALS, "AWS_ENDPOINT_URL": silent.url}
    # a short --timeout: the same deadline and the same line, without waiting out a longer one
    result = run_cli("query", "SELECT 1", f"s3://{BUCKET}/runs", "--timeout", "2", env=env, timeout=90)
    assert result.returncode == 1, result.stderr
    assert result.stderr.count("\n") == 1 and "did not answer before --timeout ran out" in result.stderr
    # the query's deadline ends with it: a later call in the same process (the Python API, a test) is not
    # refused for a timeout that was another command's
    from libreyolo_profile.store.crossrun import objectstore

    assert objectstore._deadline is None


def test_import_to_a_silent_endpoint_ends_with_one_line(silent):
    pytest.importorskip("s3fs")
    require_traces()
    # half a second a request (any seconds above 0 are taken): the three attempts, not the wait, are the point
    env = {**CREDENTIALS, "AWS_ENDPOINT_URL": silent.url, "LIBREYOLO_PROFILE_S3_TIMEOUT_S": "0.5"}
    result = run_cli(
        "import", str(TRACES / "mi250_rocm_minitoy.json.gz"), "--project", f"s3://{BUCKET}/runs", env=env, timeout=90
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "did not answer within 0.5 s, 3 attempts (LIBREYOLO_PROFILE_S3_TIMEOUT_S" in result.stderr


def test_a_retried_input_is_not_published_twice_on_s3(gated):
    """A bulk-import attempt that finds its key's profile (an earlier attempt published it, then its worker
    died) reports that one instead of uploading another."""
    from libreyolo_profile.importer import import_one

    require_traces()
    key, prefix = _prefix()
    trace = str(TRACES / "mi250_rocm_minitoy.json.gz")
    first = import_one(trace, prefix, False, "mi250", "run-a")
    again = import_one(trace, prefix, False, "mi250", "run-a")
    assert first["ok"] and again["ok"], (first, again)
    assert again["directory"] == first["directory"] == f"{prefix}/mi250/train"
    assert again["published_by_earlier_attempt"] is True
    assert sorted(k for k in _keys(key) if k.endswith("/profile.json")) == [f"{key}/mi250/train/profile.json"]
