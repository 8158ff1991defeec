"""Profiles on object storage: `import --project s3://…` and `query … s3://…` against a local
S3-compatible server (moto's server mode, started here on 127.0.0.1), credentials and endpoint taken from
AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_DEFAULT_REGION / AWS_ENDPOINT_URL. Checks that the answers
equal the same query over a local import and plain Python over the uploaded parquet objects, that the SQL
still cannot read anything else or write, and that a profile appears whole or not at all.

Needs the `[s3]` extra (s3fs) and moto[server] (test-only); skipped without them, a failure under CI=true.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import socket
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import ON_CI, REPO, TRACES, cli_json, require_traces, run_cli

BUCKET = "my-bucket"  # the name docs/SCHEMA.md's snippet uses
PREFIX = f"s3://{BUCKET}/runs/profile"
INPUTS = ("h100_vit_image_classifier", "mi250_rocm_minitoy")
TOP = (
    "SELECT name, count(DISTINCT profile_id) AS runs, sum(ms_per_step) AS ms FROM kernels "
    "GROUP BY name ORDER BY ms DESC, name LIMIT 10"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3_env():
    try:
        import boto3  # noqa: F401
        import s3fs  # noqa: F401
        from moto.server import ThreadedMotoServer
    except ImportError as exc:
        if ON_CI:
            pytest.fail(f"CI=true but the S3 test needs the [s3] extra and moto[server]: {exc}")
        pytest.skip(f"needs the [s3] extra and moto[server]: {exc}")
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {
        "AWS_ACCESS_KEY_ID": "test-key",
        "AWS_SECRET_ACCESS_KEY": "test-secret",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the in-process checks below use the same environment as the CLI
    try:
        import boto3

        boto3.client("s3").create_bucket(Bucket=BUCKET)
        yield env
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


@pytest.fixture(scope="module")
def uploaded(s3_env, tmp_path_factory):
    """The same traces imported twice by the real CLI: to the bucket, and to a local project."""
    require_traces()
    traces = [str(TRACES / f"{name}.json.gz") for name in INPUTS]
    remote = cli_json("import", *traces, "--project", PREFIX, "--jobs", "2", env=s3_env)
    assert remote["failed"] == 0, remote
    local = tmp_path_factory.mktemp("local-import")
    assert cli_json("import", *traces, "--project", str(local))["failed"] == 0
    return local


def _objects(prefix: str, suffix: str = "") -> dict[str, bytes]:
    """The objects under `prefix` whose names end with `suffix`, read."""
    import boto3

    s3 = boto3.client("s3")
    bucket, _, key = prefix.removeprefix("s3://").partition("/")
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=key).get("Contents", [])
    return {
        f"s3://{bucket}/{o['Key']}": s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
        for o in listed
        if o["Key"].endswith(suffix)
    }


def _keys(prefix: str) -> set[str]:
    """The objects under `prefix`, by name only (one listing, no object read): what the checks of what is
    there need."""
    import boto3

    bucket, _, key = prefix.removeprefix("s3://").partition("/")
    listed = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix=key).get("Contents", [])
    return {f"s3://{bucket}/{o['Key']}" for o in listed}


def test_query_over_s3_equals_the_local_query_and_the_objects(uploaded, s3_env):
    import pyarrow.parquet as pq

    remote = cli_json("query", TOP, PREFIX, env=s3_env)
    local = cli_json("query", TOP, str(uploaded))
    assert remote == local and len(remote) == 10
    sums, runs = defaultdict(float), defaultdict(set)
    # independent: every kernels.parquet object, read by pyarrow
    for key, data in _objects(PREFIX, "/kernels.parquet").items():
        for row in pq.read_table(io.BytesIO(data), columns=["name", "ms_per_step"]).to_pylist():
            sums[row["name"]] += row["ms_per_step"]
            runs[row["name"]].add(key)
    expected = sorted(sums, key=lambda n: (-sums[n], n))[:10]
    assert [r["name"] for r in remote] == expected
    assert [r["runs"] for r in remote] == [len(runs[n]) for n in expected]
    assert [r["ms"] for r in remote] == pytest.approx([sums[n] for n in expected], rel=1e-12)
    profiles = cli_json(
        "query", "SELECT profile, profile_json, kind FROM profiles ORDER BY profile", PREFIX, env=s3_env
    )
    assert [p["profile"] for p in profiles] == [
        f"{PREFIX}/{name}/{kind}" for name, kind in zip(INPUTS, ("infer", "train"), strict=True)
    ]


@pytest.mark.parametrize(
    "sql",
    [
        f"SELECT count(*) FROM read_parquet('{PREFIX}/**/kernels.parquet')",  # past the loaded tables
        f"SELECT * FROM read_text('{PREFIX}/h100_vit_image_classifier/infer/profile.json')",
        f"COPY (SELECT 1) TO '{PREFIX}/x.csv'",
        "SELECT count(*) FROM kernels, read_csv('/etc/passwd')",
    ],
)
def test_sql_over_s3_reads_only_the_loaded_tables_and_writes_nothing(uploaded, s3_env, sql):
    before = _keys(PREFIX)
    result = run_cli("query", sql, PREFIX, env=s3_env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert _keys(PREFIX) == before


def test_a_profile_appears_whole_or_not_at_all(uploaded, s3_env, monkeypatch, trace):
    """Uploads go sidecars first and profile.json last; an upload cut short leaves no profile, and a
    profile.json whose sidecars belong to another generation (a replacement under way) is skipped."""
    from libreyolo_profile.errors import UsageError
    from libreyolo_profile.importer import imported_document
    from libreyolo_profile.store.crossrun import upload

    real = upload.filesystem
    order: list[str] = []

    class CutShort:
        def __init__(self, fs, fail_at):
            self.fs, self.fail_at = fs, fail_at

        def __getattr__(self, name):
            return getattr(self.fs, name)

        def put_file(self, local, remote, **kwargs):
            order.append(remote.rsplit("/", 1)[-1])
            if len(order) == self.fail_at:
                raise OSError("connection reset (planted)")
            return self.fs.put_file(local, remote, **kwargs)

    doc = imported_document(trace("mi250_rocm_minitoy"))
    monkeypatch.setattr(upload, "filesystem", lambda: CutShort(real(), fail_at=0))
    target, replaced = upload.upload(doc, f"{PREFIX}/whole/{doc['kind']}", exist_ok=False)
    from libreyolo_profile.store.schema import TABLES

    assert order[-1] == "profile.json" and sorted(order[:-1]) == sorted(f"{t}.parquet" for t in TABLES)
    assert target == f"{PREFIX}/whole/train" and not replaced
    assert not any(k.endswith(".libreyolo-profile-claim") for k in _keys(PREFIX))

    order.clear()
    monkeypatch.setattr(upload, "filesystem", lambda: CutShort(real(), fail_at=4))
    with pytest.raises(UsageError, match="connection reset"):
        upload.upload(doc, f"{PREFIX}/cut/{doc['kind']}", exist_ok=False)
    assert "profile.json" not in order
    assert not [k for k in _keys(PREFIX) if "/cut/" in k]  # what it had uploaded, and its claim, are gone
    found = cli_json("query", "SELECT profile FROM profiles ORDER BY profile", PREFIX, env=s3_env)
    assert f"{PREFIX}/whole/train" in [r["profile"] for r in found]
    assert not any("/cut/" in r["profile"] for r in found)

    # a replacement caught half-way: new sidecars under the old profile.json
    import boto3

    stale = dict(doc, generation="0" * 32)
    stale_json = json.dumps({k: v for k, v in stale.items()}).encode()
    boto3.client("s3").put_object(Bucket=BUCKET, Key="runs/profile/whole/train/profile.json", Body=stale_json)
    result = run_cli("query", "SELECT profile FROM profiles ORDER BY profile", PREFIX, "--json", env=s3_env)
    assert result.returncode == 0, result.stderr
    assert f"{PREFIX}/whole/train" not in [r["profile"] for r in json.loads(result.stdout)]
    assert re.search(r"skipped s3://my-bucket/runs/profile/whole/train/profile.json: its sidecars", result.stderr)


def test_the_documented_s3_commands_run(uploaded, s3_env):
    """docs/SCHEMA.md's object-storage block is run as written (the bucket is the local server's)."""
    text = (REPO / "docs" / "SCHEMA.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- test: tests/test_object_storage.py -->\s*```sh\n(.*?)```", text, re.S)
    assert match, "docs/SCHEMA.md lost its tested object-storage snippet"
    commands = [
        line for line in match.group(1).replace("\\\n", " ").splitlines() if line.startswith("libreyolo profile ")
    ]
    assert any(" import " in c for c in commands) and any(" query " in c for c in commands)
    for command in commands:
        args = shlex.split(command)[2:]
        args = [str(TRACES / Path(a).name) if a.endswith(".json.gz") else a for a in args]
        result = run_cli(*args, env=s3_env)
        assert result.returncode == 0, (command, result.stderr)
        assert result.stdout.strip()


@pytest.mark.parametrize("case", ["missing bucket", "no credentials"])
def test_object_storage_failures_are_one_line_usage_errors(s3_env, tmp_path, case):
    require_traces()
    env = dict(s3_env)
    root = PREFIX
    if case == "missing bucket":
        root = "s3://no-such-bucket/runs"
    else:  # nothing in the environment or in files: botocore finds no credentials
        env.update(
            AWS_ACCESS_KEY_ID="",
            AWS_SECRET_ACCESS_KEY="",
            AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
            AWS_CONFIG_FILE=str(tmp_path / "none"),
            AWS_EC2_METADATA_DISABLED="true",
        )
    for args in (["query", "SELECT 1", root], ["import", str(TRACES / f"{INPUTS[1]}.json.gz"), "--project", root]):
        result = run_cli(*args, env=env)
        assert result.returncode == 2, (args, result.stderr)
        assert re.fullmatch(r"libreyolo-profile: error: cannot (list|write to) s3://\S+: .+\n", result.stderr), (
            result.stderr
        )
