"""Nothing a trace, a file name or a bad argument holds can act on the user's terminal, and the
JSON/exit-code contract of SPEC §1 holds at its edges (issue #10, part E).

The hostile trace is the clean synthetic Kineto trace of tests/bad_inputs with three names
replaced: an OSC 52 clipboard write, a CSI clear-screen plus a one-byte C1 CSI (U+009B), and a
kernel name holding both. Every reader runs over it through the real CLI entry (`launcher._run`,
what the console script calls) in this process, so the sweep costs imports once; the exit-code
and pipe cases that depend on the process boundary run as real subprocesses.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import shutil
import threading

import pytest

from libreyolo_profile import launcher
from tests.bad_inputs.make_bad_inputs import clean_events, kineto_text
from tests.conftest import run_cli

OSC52 = "\x1b]52;c;aGk=\x07"  # "write 'hi' to the clipboard"
CLEAR = "\x1b[2J"
C1_CSI = "\x9b"
RELU = f"aten::relu{OSC52}evil"
LINEAR = f"aten::linear{CLEAR}{C1_CSI}cls"
KERNEL = f"elementwise{OSC52}kernel{C1_CSI}31m"
# what a terminal would act on: ESC, BEL, the C1 CSI
ACTIVE = re.compile("[\x1b\x07\x9b]")
WIDE = {"COLUMNS": "400"}  # rich folds cells at 80 columns off a terminal; whole names are easier to find


def visible(name: str) -> str:
    """The name as the sanitizer shows it: each control character as a `\\xNN` escape."""
    return re.sub("[\x00-\x1f\x7f-\x9f]", lambda m: f"\\x{ord(m.group()):02x}", name)


def hostile_events() -> list[dict]:
    renamed = {"aten::relu": RELU, "aten::linear": LINEAR, "vectorized_elementwise_kernel": KERNEL}
    events = clean_events(steps=4)
    for event in events:
        event["name"] = renamed.get(event["name"], event["name"])
    return events


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The hostile trace, a copy whose file name holds OSC 52, and an imported profile directory."""
    root = tmp_path_factory.mktemp("hostile")
    trace = root / "hostile.json"
    trace.write_bytes(kineto_text(hostile_events()))
    evil_name = root / f"evil{OSC52}{CLEAR}.json"
    shutil.copy(trace, evil_name)
    project = root / "project"
    done = run_cli("import", str(trace), "--project", str(project), "--json", env={"XDG_CACHE_HOME": str(root / "c")})
    assert done.returncode == 0, done.stderr
    return {
        "root": root,
        "trace": trace,
        "evil_name": evil_name,
        "project": project,
        "profile": project / json.loads(done.stdout)["kind"],
    }


@pytest.fixture
def cli(capsys, monkeypatch):
    """(exit code, stdout, stderr) of one command through the console script's entry."""
    for key, value in WIDE.items():
        monkeypatch.setenv(key, value)

    def call(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = launcher._run([str(a) for a in args], "libreyolo-profile")
        out, err = capsys.readouterr()
        return code, out, err

    return call


def reader_commands(h: dict, tmp) -> list[list]:
    t, evil = h["trace"], h["evil_name"]
    return [
        ["summary", t],
        ["summary", t, "--full"],  # the top kernels table names the hostile kernel (the first screen: its top one)
        ["phases", t],
        ["kernels", t],
        ["ops", t],
        ["roofline", t],
        ["get", h["profile"]],
        ["get", h["profile"], "step_ms"],
        ["what-if", evil, "--remove-launches", "1"],
        ["what-if", t, "--remove-category", "elementwise"],
        ["compare", evil, t],
        ["query", "SELECT name FROM ops UNION ALL SELECT name FROM kernels", h["project"]],
        ["report", evil, "--out", tmp / f"report{OSC52}.html"],
        ["import", evil, "--project", tmp / "imported"],
    ]


def error_commands(h: dict) -> list[list]:
    """Failures whose one error line quotes a hostile file name, option value or field name."""
    t = h["trace"]
    return [
        ["summary", h["root"] / f"missing{OSC52}.json"],
        ["what-if", t, "--remove-category", f"x{OSC52}"],
        ["kernels", t, "--phase", f"{CLEAR}{C1_CSI}"],
        ["get", h["profile"], f"no{OSC52}field"],
        ["kernels", t, f"--no-such{CLEAR}"],
    ]


def test_human_output_never_carries_an_escape_sequence(hostile, cli, tmp_path):
    outputs = {}
    for args in reader_commands(hostile, tmp_path):
        code, out, err = cli(*args)
        where = f"{args[0]}: rc={code}\nstdout: {out[-800:]!r}\nstderr: {err!r}"
        assert code == 0, where
        assert not ACTIVE.search(out) and not ACTIVE.search(err), where
        outputs[args[0]] = outputs.get(args[0], "") + out + err
    # escaped, not dropped: the names and the file name stay recognisable
    for command in ("ops", "query"):
        assert visible(RELU) in outputs[command] and visible(LINEAR) in outputs[command], command
    for command in ("kernels", "summary"):
        assert visible(KERNEL) in outputs[command], command
    for command in ("compare", "what-if", "import"):
        assert visible(f"evil{OSC52}{CLEAR}.json") in outputs[command], command
    assert visible(f"report{OSC52}.html") in outputs["report"]


def test_error_lines_are_one_line_and_inert(hostile, cli):
    for args in error_commands(hostile):
        code, out, err = cli(*args)
        where = f"{args}: rc={code}\nstderr: {err!r}"
        assert code == 2, where
        assert out == "" and err.count("\n") == 1 and "error:" in err, where
        assert not ACTIVE.search(err), where
        assert "\\x1b" in err, where  # the hostile part is shown, escaped


def _strict(text: str):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_json_output_is_strict_and_keeps_names_exact(hostile, cli, tmp_path):
    for args in reader_commands(hostile, tmp_path):
        code, out, err = cli(*args, "--json")
        where = f"{args[0]}: rc={code}\nstderr: {err!r}"
        assert code == 0, where
        assert not ACTIVE.search(out) and not ACTIVE.search(err), where  # JSON escapes them as \u001b
        document = _strict(out)
        if args[0] == "query":
            assert {RELU, LINEAR, KERNEL} <= {row["name"] for row in document}
        if args[0] == "ops":
            assert {RELU, LINEAR} <= {row["name"] for row in document["ops"]}
    # a failure is one strict JSON document too, its message exact (the escapes are JSON's)
    for args in error_commands(hostile):
        code, out, err = cli(*args, "--json")
        assert code == 2 and not ACTIVE.search(out) and not ACTIVE.search(err), (args, out, err)
        error = _strict(out)
        # the hostile part is in the message (click itself already shows a bad option escaped)
        assert error["exit_code"] == 2 and re.search(r"[\x1b\x9b]|\\x1b|\\x9b", error["error"]), error


def test_get_json_turns_nan_and_infinity_into_null_with_a_reason(hostile, tmp_path):
    profile = tmp_path / "train"
    shutil.copytree(hostile["profile"], profile)
    text = (profile / "profile.json").read_text()
    # a bare NaN / Infinity where a writer (or a hand edit) left a non-finite number
    edited = re.sub(r'("step_ms": )[-0-9.eE+]+', r"\1NaN", text, count=1)
    edited = re.sub(r'("launches_per_step": )[-0-9.eE+]+', r"\1Infinity", edited, count=1)
    assert edited.count("NaN") == 1 and edited.count("Infinity") == 1
    (profile / "profile.json").write_text(edited)
    for field, spelled in (("step_ms", "NaN"), ("launches_per_step", "Infinity")):
        result = run_cli("get", str(profile), field, "--json")
        assert result.returncode == 0, result.stderr
        got = _strict(result.stdout)
        assert got["value"] is None and spelled in got["reason"], got
        text_mode = run_cli("get", str(profile), field)
        assert text_mode.stdout.strip() == "null" and spelled in text_mode.stderr
    listing = _strict(run_cli("get", str(profile), "--json").stdout)
    assert listing["step_ms"]["value"] is None and listing["launches_per_step"]["value"] is None
    summary = _strict(run_cli("summary", str(profile), "--json").stdout)
    assert summary["metrics"]["step_ms"] is None


def test_an_integer_beyond_64_bits_is_a_usage_error(hostile):
    for value in (str(2**64), str(-(2**64))):
        result = run_cli("kernels", str(hostile["trace"]), "--top", value)
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.splitlines()) == 1 and "--top" in result.stderr and "out of range" in result.stderr
        assert "Traceback" not in result.stderr
    # the largest 64-bit value itself is a valid (if generous) --top
    biggest = run_cli("kernels", str(hostile["trace"]), f"--top={2**63 - 1}", "--json")
    assert biggest.returncode == 0, biggest.stderr
    device_work = {e["name"] for e in hostile_events() if e["cat"] in ("kernel", "gpu_memcpy")}
    assert {k["name"] for k in _strict(biggest.stdout)["kernels"]} == device_work


def test_equals_signs_in_option_values_and_file_names(hostile, tmp_path):
    trace = str(hostile["trace"])
    for args in (["--grep", "a=b"], ["--grep=a=b"]):
        result = run_cli("kernels", trace, *args, "--json")
        assert result.returncode == 0, (args, result.stderr)
        assert _strict(result.stdout)["kernels"] == []  # no kernel name contains `a=b`
    # `x=y` is part of no category (issue #15: a usage error), and the message quotes it whole
    result = run_cli("kernels", trace, "--category", "x=y", "--json")
    assert result.returncode == 2 and "unknown kernel category 'x=y'" in result.stderr
    named = tmp_path / "lr=0.1.json.gz"
    named.write_bytes(gzip.compress(hostile["trace"].read_bytes()))
    result = run_cli("phases", named.name, "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert _strict(result.stdout)["profile"]["path"] == named.name
    refused = run_cli("kernels", trace, "weights=x.pt", cwd=tmp_path)
    assert refused.returncode == 2 and "--weights x.pt" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1


def test_an_error_under_json_also_prints_a_json_object(tmp_path):
    missing = tmp_path / "missing.json"
    result = run_cli("summary", str(missing), "--json")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1 and "no such file" in result.stderr
    error = _strict(result.stdout)
    assert error == {"error": error["error"], "exit_code": 2} and str(missing) in error["error"]
    # the fast `get` path and a click usage error answer the same way
    for args, code in ((["get", str(missing), "step_ms", "--json"], 2), (["kernels", "--json", "--top"], 2)):
        result = run_cli(*args)
        assert result.returncode == code and _strict(result.stdout)["exit_code"] == code, (args, result.stdout)
    # without --json stdout stays empty
    assert run_cli("summary", str(missing)).stdout == ""


def test_duckdb_interrupt_exits_130(hostile, cli, monkeypatch):
    """Ctrl-C during DuckDB work arrives as duckdb.InterruptException, not KeyboardInterrupt."""
    import duckdb

    from libreyolo_profile.errors import UsageError
    from libreyolo_profile.readers import kernels

    def interrupted(*args, **kwargs):
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")

    monkeypatch.setattr(kernels, "print_kernels", interrupted)
    code, out, err = cli("kernels", hostile["trace"], "--json")
    assert code == 130 and err.strip() == "libreyolo-profile: interrupted"
    assert _strict(out) == {"error": "interrupted", "exit_code": 130}

    # a reader that turns DuckDB's errors into a usage error (`raise UsageError(…) from None` inside
    # `except duckdb.Error`, as query does) still exits 130: the interrupt is in the context chain
    def wrapped(*args, **kwargs):
        con = duckdb.connect(":memory:")
        stop = threading.Event()

        def keep_interrupting():  # until the endless query below gives up
            while not stop.wait(0.02):
                con.interrupt()

        threading.Thread(target=keep_interrupting, daemon=True).start()
        try:
            con.execute("SELECT count(*) FROM range(1000000000000) a, range(1000) b").fetchall()
        except duckdb.Error as exc:
            raise UsageError(f"query failed: {exc}") from None
        finally:
            stop.set()

    monkeypatch.setattr(kernels, "print_kernels", wrapped)
    code, out, err = cli("kernels", hostile["trace"])
    assert code == 130 and err.strip() == "libreyolo-profile: interrupted" and out == "", err


def test_sanitizer_escapes_c0_c1_and_del_but_keeps_layout_where_it_belongs():
    from libreyolo_profile.output.textsafe import finite_or_none, safe_line, safe_text, strict_json

    every_control = "".join(chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)])
    assert not re.search("[\x00-\x1f\x7f-\x9f]", safe_line(every_control))
    assert safe_line(every_control).count("\\x") == len(every_control)
    assert safe_text("a\tb\nc\x1bd") == "a\tb\nc\\x1bd"
    assert safe_line("a\tb\nc") == "a\\x09b\\x0ac"
    assert safe_line("µs ▕█▏ café") == "µs ▕█▏ café"  # printable non-ASCII passes through
    assert finite_or_none({"a": [math.nan, 1.0, -math.inf]}) == {"a": [None, 1.0, None]}
    assert _strict(strict_json({"x": math.inf, "name": OSC52})) == {"x": None, "name": OSC52}
