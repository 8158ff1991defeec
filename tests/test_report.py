"""`libreyolo profile report`: the self-contained HTML report, rendered for real profiles and opened
in headless Chromium (skipped where Chromium is not installed) over the DevTools protocol, which
tells us whether the charts laid out, whether the page logged an error, and every request it made.

Screenshots are kept under tests/artifacts/ (gitignored) for a person to look at.
"""

from __future__ import annotations

import base64
import fcntl
import html
import json
import os
import re
import select
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ON_CI, REPO, require_traces, run_cli

ARTIFACTS = REPO / "tests" / "artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


# ---------------------------------------------------------------------------------------------
# a tiny DevTools-protocol client over --remote-debugging-pipe (fd 3: to the browser, fd 4: from it)


class Chromium:
    def __init__(self, profile_dir: Path):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire_pipes():  # runs in the child before exec
            # via fds above 4 first: either pipe end may itself be fd 3 or 4
            high_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            high_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)  # os.dup2 leaves the copy inheritable
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-extensions",
                "--disable-default-apps",
                "--mute-audio",
                f"--user-data-dir={profile_dir}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=wire_pipes,
            close_fds=False,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def close(self) -> str:
        try:
            self.send("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            _, err = self.proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        return err.decode("utf-8", "replace") if err else ""

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30) -> dict:
        self._next_id += 1
        call = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            call["sessionId"] = session
        os.write(self._to_browser, json.dumps(call).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            message = self._read_message(deadline)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        return self.wait_until(lambda event: event.get("method") == method, timeout)

    def wait_until(self, matches, timeout: float = 30) -> dict:
        """The first event (already queued or still to come) that `matches`, taken out of the queue."""
        for i, event in enumerate(self.events):
            if matches(event):
                return self.events.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            message = self._read_message(deadline)
            if matches(message):
                return message
            self.events.append(message)


SETTLED = "libreyolo-profile-test: page settled"


def _is_settled_marker(event: dict) -> bool:
    return event.get("method") == "Runtime.consoleAPICalled" and [
        a.get("value") for a in event.get("params", {}).get("args", [])
    ] == [SETTLED]


def settle_page(browser: Chromium, session: str) -> None:
    """Wait, by a condition and not by a clock, until every console message the page raised while
    loading has arrived: the page logs a marker from a task queued after the load event, and the
    DevTools pipe delivers a session's events in order, so once the marker is read, whatever the
    page printed before it has been read too (and is in browser.events)."""
    browser.send(
        "Runtime.evaluate",
        {"expression": f"setTimeout(() => console.debug({json.dumps(SETTLED)}), 0)"},
        session=session,
    )
    browser.wait_until(_is_settled_marker)


def open_page(browser: Chromium, url: str, width: int = 1280) -> tuple[str, list[dict]]:
    """A fresh tab on `url`, loaded; returns (session id, the events it raised while loading)."""
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(f"{domain}.enable", session=session)
    browser.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
        session=session,
    )
    browser.events.clear()
    browser.send("Page.navigate", {"url": url}, session=session)
    browser.wait_for("Page.loadEventFired")
    settle_page(browser, session)
    events = [e for e in browser.events if e.get("sessionId") == session]
    browser.events.clear()
    return session, events


CHART_PROBE = """JSON.stringify({
  title: document.title,
  charts: [...document.querySelectorAll('svg.chart')].map(svg => {
    const box = svg.getBoundingClientRect();
    const marks = [...svg.querySelectorAll('rect, circle')];  // bars, and the roofline's points
    return {kind: svg.dataset.chart, width: box.width, height: box.height, marks: marks.length,
            drawn: marks.filter(r => {
              const b = r.getBoundingClientRect(); return b.width > 0 && b.height > 0;
            }).length};
  }),
  kernelNames: [...document.querySelectorAll('table.kernels td.name')].map(td => td.textContent),
  scripts: document.querySelectorAll('script').length,
  marks: [...document.querySelectorAll('.marks li')].map(li => li.dataset.mark),
  bound: [...document.querySelectorAll('.verdict')].map(v => v.dataset.bound),
})"""


def probe_and_shoot(browser: Chromium, html: Path, shot: Path) -> tuple[dict, list[dict]]:
    session, events = open_page(browser, html.resolve().as_uri())
    found = json.loads(
        browser.send("Runtime.evaluate", {"expression": CHART_PROBE, "returnByValue": True}, session=session)["result"][
            "value"
        ]
    )
    size = browser.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
    shot.parent.mkdir(parents=True, exist_ok=True)
    picture = browser.send(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 16000), "scale": 1},
        },
        session=session,
        timeout=60,
    )
    shot.write_bytes(base64.b64decode(picture["data"]))
    return found, events


def page_problems(events: list[dict], page_url: str) -> list[str]:
    """Console errors, uncaught exceptions, log errors/warnings, and any request but the page itself."""
    problems = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            problems.append(f"exception: {params.get('exceptionDetails', {}).get('text')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
            problems.append(f"console {params['type']}: {params.get('args')}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
            problems.append(f"log {params['entry']['level']}: {params['entry'].get('text')}")
        elif method in ("Network.requestWillBeSent", "Network.loadingFailed"):
            url = params.get("request", {}).get("url") or params.get("errorText")
            if url != page_url:
                problems.append(f"{method}: {url}")
    return problems


# ---------------------------------------------------------------------------------------------
# the reports


def report(*args: str, cwd: Path, cache: Path) -> dict:
    result = run_cli("report", *args, "--json", cwd=cwd, env={"XDG_CACHE_HOME": str(cache)})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def profile_dir_from_trace(trace: Path, target: Path) -> Path:
    """A profile directory of ours (profile.json + sidecars), written by the store from a real trace."""
    from libreyolo_profile.store.disk.writer import write_directory
    from libreyolo_profile.store.document.from_trace import profile_from_trace

    write_directory(profile_from_trace(trace), target)
    return target


@pytest.fixture(scope="module")
def from_trace(tmp_path_factory):
    """profile_dir_from_trace(trace, target) for the module: each trace's profile written once (its analysis
    is the cost) and copied to every target a test asks for, a profile directory of its own each time."""
    root = tmp_path_factory.mktemp("profiles-from-traces")
    pristine: dict[Path, Path] = {}

    def written(trace: Path, target: Path) -> Path:
        if trace not in pristine:
            pristine[trace] = profile_dir_from_trace(trace, root / str(len(pristine)) / target.name)
        shutil.copytree(pristine[trace], target)
        return target

    return written


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("report")


@pytest.fixture(scope="module")
def cache(tmp_path_factory, analysed_traces) -> Path:
    return analysed_traces.seeded(tmp_path_factory.mktemp("report-cache"))


@pytest.fixture(scope="module")
def reports(work, cache, from_trace) -> dict[str, tuple[Path, dict]]:
    """The reports every browser test looks at, written by the real CLI."""
    traces = require_traces()
    out: dict[str, tuple[Path, dict]] = {}
    cpu_profile = from_trace(traces / "cpu_only_rank34.json.gz", work / "cpu_profile" / "infer")
    doc = report(str(cpu_profile), cwd=work, cache=cache)
    out["cpu_trace"] = (Path(doc["out"]), doc)
    doc = report(
        str(traces / "a100_cutlass_adam_rank0.json.gz"), "--out", str(work / "a100.html"), cwd=work, cache=cache
    )
    out["a100"] = (Path(doc["out"]), doc)
    doc = report(
        str(traces / "v100_resnet50_workers0.json.gz"),
        "--vs",
        str(traces / "v100_resnet50_workers4.json.gz"),
        "--out",
        str(work / "v100_vs.html"),
        cwd=work,
        cache=cache,
    )
    out["v100_vs"] = (Path(doc["out"]), doc)
    return out


def assert_self_contained(page: str) -> None:
    assert "<script" not in page.lower()
    refs = re.findall(r"""(?:src|href|xlink:href|action)\s*=\s*["']?([^"'\s>]+)|url\(\s*["']?([^"')]+)""", page, re.I)
    assert not [r for pair in refs for r in pair if r], f"the page references resources: {refs[:5]}"
    assert not re.search(r"@import|@font-face", page, re.I)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page


def test_reports_are_written_where_expected_and_self_contained(reports, work):
    path, doc = reports["cpu_trace"]
    # a profile of ours in a writable directory: the report goes beside it
    assert path == (work / "cpu_profile" / "infer" / "report.html").resolve()
    # cpu_only_rank34 is a gloo DDP rank: a training step (issue 24 h), so no per-call latency chart
    assert doc["kind"] == "train" and "steps" in doc["charts"] and "latency" not in doc["charts"]
    # the blame bars come first, right under the verdict they decide (issue 12 item 5), then the steps
    a100_charts = reports["a100"][1]["charts"]
    assert a100_charts[0] == "blame" and a100_charts[a100_charts.count("blame")] == "steps"
    assert "categories" in a100_charts
    assert reports["v100_vs"][1]["charts"].count("steps") == 2  # both sides
    for path, doc in reports.values():
        page = path.read_text(encoding="utf-8")
        assert doc["bytes"] == len(page.encode("utf-8"))
        assert_self_contained(page)


def test_report_shows_the_verdict_metrics_and_tables(reports, trace):
    page = reports["a100"][0].read_text(encoding="utf-8")
    summary = json.loads(run_cli("summary", str(trace("a100_cutlass_adam_rank0")), "--json").stdout)
    assert f'data-bound="{summary["verdict"]["bound"]}"' in page
    import html as htmlmod

    assert htmlmod.escape(summary["verdict"]["reason"]) in page
    step = summary["metrics"]["step_ms"]
    assert f"{step:.2f}" in page
    # kernel names carry C++ templates: escaped, never markup
    assert "&lt;" in page and "at::native::" in page
    top = summary["top_kernels"][0]["name"]
    assert htmlmod.escape(top[:60]) in page
    vs = reports["v100_vs"][0].read_text(encoding="utf-8")
    # `report workers0 --vs workers4`: workers0 is judged, workers4 the baseline (tests/test_formatting.py
    # checks the direction both ways round)
    assert "this profile (after)" in vs and "baseline, --vs (before)" in vs and "dataload_pct" in vs
    assert "a single run cannot support a verdict" in vs


def test_trace_strings_are_escaped(trace, cache, monkeypatch):
    """A kernel or op name with markup in it comes out as text."""
    from libreyolo_profile.readers import report, report_sections
    from libreyolo_profile.readers.common import open_profile

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    side = report.report_side(open_profile(trace("a100_cutlass_adam_rank0")))
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)> & "quoted"'
    side["kernels"][0]["name"] = evil
    side["ops"][0]["name"] = evil
    side["summary"]["marks"]["hostile"] = evil
    page = report_sections.single_page(side)
    assert evil not in page and "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page


def test_default_out_never_beside_a_foreign_or_read_only_input(tmp_path, trace, cache, from_trace):
    cpu = trace("cpu_only_rank34")
    run_dir = tmp_path / "cwd"
    run_dir.mkdir()
    doc = report(str(cpu), cwd=run_dir, cache=cache)
    assert Path(doc["out"]) == (run_dir / "report.html").resolve()
    assert not (cpu.parent / "report.html").exists()
    # a read-only profile directory of ours: the report goes to the cwd, the profile stays untouched
    profile = from_trace(cpu, tmp_path / "ro" / "infer")
    before = sorted(p.name for p in profile.iterdir())
    profile.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        (run_dir / "report.html").unlink()
        doc = report(str(profile / "profile.json"), cwd=run_dir, cache=cache)
        assert Path(doc["out"]) == (run_dir / "report.html").resolve()
        assert sorted(p.name for p in profile.iterdir()) == before
    finally:
        profile.chmod(0o755)


def test_vs_with_another_kind_is_a_usage_error(trace, tmp_path, cache):
    # an inference trace against a training one (cpu_only_rank34 is a training rank since issue 24 h)
    result = run_cli(
        "report",
        str(trace("h100_vit_image_classifier")),
        "--vs",
        str(trace("v100_resnet50_workers0")),
        "--out",
        str(tmp_path / "x.html"),
        cwd=tmp_path,
        env={"XDG_CACHE_HOME": str(cache)},
    )
    assert result.returncode == 2, result.stderr
    assert "cannot compare" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.html").exists()


def test_missing_input_and_bad_out(tmp_path, trace, cache):
    result = run_cli("report", str(tmp_path / "nope.json"), cwd=tmp_path)
    assert result.returncode == 2 and "no such file" in result.stderr
    result = run_cli(
        "report",
        str(trace("cpu_only_rank34")),
        "--out",
        str(tmp_path / "no" / "dir" / "r.html"),
        cwd=tmp_path,
        env={"XDG_CACHE_HOME": str(cache)},
    )
    assert result.returncode == 2 and "no such directory" in result.stderr


def test_write_report_for_the_writers(tmp_path, trace, cache, monkeypatch, from_trace):
    from libreyolo_profile.readers.report import write_report

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    profile = from_trace(trace("v100_resnet50_workers4"), tmp_path / "train")
    written = write_report(profile)
    assert written == profile / "report.html"
    page = written.read_text(encoding="utf-8")
    assert 'data-chart="steps"' in page and "dataload" in page
    assert not [p for p in profile.iterdir() if p.name.startswith(".")]  # no temp file left


def test_vs_report_lists_the_ops_and_kernels_that_moved(reports, work, cache):
    """`report A --vs B` shows compare --ops/--kernels's diff of the same two sides (B before, A after): the
    largest changes in its order, and how many got slower, faster, appeared and vanished."""
    traces = require_traces()
    page = reports["v100_vs"][0].read_text()
    done = run_cli(
        "compare",
        str(traces / "v100_resnet50_workers4.json.gz"),
        str(traces / "v100_resnet50_workers0.json.gz"),
        "--ops",
        "--kernels",
        "--json",
        cwd=work,
        env={"XDG_CACHE_HOME": str(cache)},
    )
    assert done.returncode == 0, done.stderr
    compared = json.loads(done.stdout)
    for what in ("ops", "kernels"):
        rows = compared[what]["rows"]
        table = re.search(rf'<table class="items {what}">(.*?)</table>', page, re.S)
        assert table, f"no {what} table"
        shown = [html.unescape(n) for n in re.findall(r'<td class="name" title="([^"]*)"', table.group(1))]
        assert shown == [r["name"] for r in rows[: len(shown)]] and len(shown) == min(len(rows), 15)
        presence = re.findall(r'data-presence="(\w+)"', table.group(1))
        assert presence == [r["presence"] for r in rows[: len(shown)]]
        slower = sum(r["presence"] == "both" and r["delta_ms"] > 0 for r in rows)
        new, gone = (sum(r["presence"] == p for r in rows) for p in ("new", "gone"))
        assert f"{len(rows):,} {what} on either side: {slower} slower" in page
        assert f"{new} new (only in this profile), {gone} gone (only in the baseline)" in page
    assert any(r["presence"] != "both" for what in ("ops", "kernels") for r in compared[what]["rows"])


# ---------------------------------------------------------------------------------------------
# in a real browser


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if CHROMIUM is None:
        if ON_CI:  # .ci/run installs it: a CI run without it would pass without ever opening a report
            pytest.fail("chromium is not installed under CI=true (.ci/run installs the Debian package)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    b = Chromium(tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


def test_settling_collects_a_console_error_raised_after_the_load_event(browser, tmp_path):
    """The page-problem check waits for a condition, not a clock: an error a page logs from a task
    queued by its load handler is collected before open_page returns."""
    page = tmp_path / "late.html"
    page.write_text(
        "<!doctype html><title>late</title><script>addEventListener('load', () => "
        "setTimeout(() => console.error('late error'), 0));</script>"
    )
    _, events = open_page(browser, page.resolve().as_uri())
    assert any("late error" in problem for problem in page_problems(events, page.resolve().as_uri()))
    assert not any(_is_settled_marker(event) for event in events)


@pytest.mark.parametrize("name", ["cpu_trace", "a100", "v100_vs"])
def test_report_renders_in_chromium(browser, reports, name):
    path, doc = reports[name]
    found, events = probe_and_shoot(browser, path, ARTIFACTS / f"report_{name}.png")
    problems = page_problems(events, path.resolve().as_uri())
    assert not problems, problems
    kinds = [c["kind"] for c in found["charts"]]
    assert kinds == doc["charts"]
    for chart in found["charts"]:
        assert chart["width"] > 200 and chart["height"] > 20, chart
        assert chart["drawn"] > 0, chart  # the bars laid out with a size
    assert found["scripts"] == 0
    assert found["bound"] and all(found["bound"])
    if name == "a100":
        # the DOM holds the kernel names as text, with their template brackets
        assert any("<" in n and ">" in n for n in found["kernelNames"])
    if name == "v100_vs":
        assert len(found["bound"]) == 2


TIMELINE_PROBE = """(() => {
  const svg = document.querySelector('svg.chart[data-chart="timeline"]');
  if (!svg) return null;
  svg.scrollIntoView();
  const box = svg.getBoundingClientRect();
  const full = [...svg.querySelectorAll('rect.lane-run')].filter(r => !r.hasAttribute('fill-opacity'));
  return JSON.stringify({x: box.left + scrollX, y: box.top + scrollY, width: box.width, height: box.height,
    runs: svg.querySelectorAll('rect.lane-run').length,
    fills: [...new Set(full.map(r => r.getAttribute('fill')))],
    lanes: [...svg.querySelectorAll('text.tick')].map(t => t.textContent)});
})()"""


def shoot_timeline(browser: Chromium, html: Path, shot: Path):
    """The page's timeline: what the DOM holds, and a screenshot of just its region as a PIL image."""
    from PIL import Image

    session, events = open_page(browser, html.resolve().as_uri(), width=1400)
    value = browser.send("Runtime.evaluate", {"expression": TIMELINE_PROBE, "returnByValue": True}, session=session)
    assert value["result"].get("value"), "the page has no timeline"
    found = json.loads(value["result"]["value"])
    clip = {k: found[k] for k in ("x", "y", "width", "height")}
    picture = browser.send(
        "Page.captureScreenshot",
        {"format": "png", "captureBeyondViewport": True, "clip": {**clip, "scale": 1}},
        session=session,
        timeout=60,
    )
    shot.parent.mkdir(parents=True, exist_ok=True)
    shot.write_bytes(base64.b64decode(picture["data"]))
    return found, Image.open(shot).convert("RGB"), events


@pytest.mark.parametrize("name", ["a100", "cpu_trace"])
def test_timeline_lanes_are_painted_in_their_colours(browser, reports, name):
    """Chromium lays the timeline out and paints its lanes: the region is not blank, and the colours of the
    runs the DOM holds at full strength are on screen as pixels (a lane's cause or category colour)."""
    path, _ = reports[name]
    found, image, events = shoot_timeline(browser, path, ARTIFACTS / f"timeline_{name}.png")
    assert not page_problems(events, path.resolve().as_uri())
    assert found["width"] > 600 and found["height"] > 60 and found["runs"] > 0, found
    assert "critical path (blame)" in found["lanes"] and "host phases" in found["lanes"]
    if name == "a100":
        assert any(lane.startswith("stream ") for lane in found["lanes"]), found["lanes"]
    else:  # a CPU profile: host lanes only
        assert not any("stream" in lane for lane in found["lanes"]), found["lanes"]
    counts = image.getcolors(maxcolors=1 << 20)
    assert counts is not None and len(counts) > 20, "the timeline region is blank"
    white = sum(n for n, colour in counts if colour == (255, 255, 255))
    assert white < 0.9 * image.width * image.height
    on_screen = {"#%02x%02x%02x" % colour for _, colour in counts}
    painted = [fill for fill in found["fills"] if fill.lower() in on_screen]
    assert len(painted) >= min(3, len(found["fills"])) and painted, (found["fills"], len(counts))


@pytest.mark.slow
def test_measured_cpu_profile_report_renders(browser, tmp_path, cache):
    """The whole loop on this machine: measure an inference on the CPU, report it, open it."""
    measured = run_cli(  # forked from the worker's warm parent: the entry `python -m libreyolo_profile` runs
        "infer", "--device", "cpu", "--imgsz", "64", "--warmup", "1", "--runs", "6", "--no-overhead",
        "--project", str(tmp_path / "runs"), "--json",
        cwd=tmp_path, timeout=240, env={"XDG_CACHE_HOME": str(cache)},
    )  # fmt: skip
    assert measured.returncode == 0, measured.stderr[-2000:]
    profile = tmp_path / "runs" / "infer"
    doc = report(str(profile), cwd=tmp_path, cache=cache)
    assert Path(doc["out"]) == (profile / "report.html").resolve()
    assert "latency" in doc["charts"]
    found, events = probe_and_shoot(browser, Path(doc["out"]), ARTIFACTS / "report_cpu_measured.png")
    assert not page_problems(events, Path(doc["out"]).resolve().as_uri())
    assert "cpu_profile" in found["marks"]
    latency = next(c for c in found["charts"] if c["kind"] == "latency")
    assert latency["drawn"] >= 1
    steps = next(c for c in found["charts"] if c["kind"] == "steps")
    assert steps["drawn"] >= 6  # at least one segment per measured call


def test_summary_draws_terminal_charts_that_json_leaves_out(trace):
    path = str(trace("v100_resnet50_workers0"))
    # the phase bar and the category bars are behind --full (the first screen draws the blame's total only)
    text = run_cli("summary", path, "--full", env={"COLUMNS": "120"})
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    step_bar = next(line for line in lines if line.startswith("step ▕"))
    from libreyolo_profile.readers.report_text import PATTERNS

    # the stacked phase bar is always the full width (piped: a fill per phase, not colour alone)
    inside = step_bar.split("▕", 1)[1].split("▏", 1)[0]
    assert sum(inside.count(p) for p in PATTERNS) == 60 and len(set(inside)) > 1
    # its legend, with the dataload share: % of step, the figure the phases table shows (39.6% of the
    # 174.89 ms stopwatch step; 39.0% of the 177.59 ms step before issue 24 moved the drain out of it)
    assert "dataload 40%" in text.stdout
    gemm = next(line for line in lines if line.startswith("gemm "))
    assert "█████████████" in gemm  # 66 % of 20 cells
    doc = run_cli("summary", path, "--json")
    assert doc.returncode == 0 and "█" not in doc.stdout and "▕" not in doc.stdout
    json.loads(doc.stdout)


def test_report_reader_stays_light_and_prints_only_the_path(tmp_path, trace, cache):
    """A reader never imports torch or libreyolo; without --json stdout is the written path alone."""
    probe = (
        "import sys\nfrom pathlib import Path\nfrom libreyolo_profile.readers import report\n"
        "report.write_report_file(Path(sys.argv[1]), out=Path(sys.argv[2]))\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'libreyolo'))\n"
        "sys.stderr.write('HEAVY=' + ','.join(heavy) + '\\n')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, str(trace("cpu_only_rank34")), str(tmp_path / "r.html")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_CACHE_HOME": str(cache)},
    )
    assert result.returncode == 0, result.stderr
    assert "HEAVY=\n" in result.stderr
    assert result.stdout == f"{tmp_path / 'r.html'}\n"


def test_vs_report_goes_beside_the_first_profile_under_its_own_name(tmp_path, trace, cache, from_trace):
    left = from_trace(trace("v100_resnet50_workers0"), tmp_path / "a" / "train")
    right = from_trace(trace("v100_resnet50_workers4"), tmp_path / "b" / "train")
    doc = report(str(left), "--vs", str(right), cwd=tmp_path, cache=cache)
    assert Path(doc["out"]) == (left / "report_vs.html").resolve()
    # by their blame (SPEC §11), below 80% device-busy: workers0 idles waiting for data, workers4 does not
    assert doc["bound"] == "dataloader" and doc["vs_bound"] != "dataloader"
    assert not (right / "report_vs.html").exists() and not (left / "report.html").exists()


def test_each_side_is_opened_once(trace, tmp_path, cache, monkeypatch, from_trace):
    """Issue #11: report --vs reads each profile once (its summary, tables and the comparison share
    it), and after a measurement the report and the summary share one opened profile."""
    from libreyolo_profile.readers import common, compare, report, summary

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    # the traces are named (so analysed into the cache, which opens them) before the opening is counted:
    # run alone, the analysis counted two extra openings; after other tests had analysed them, none
    left, right = trace("v100_resnet50_workers0"), trace("v100_resnet50_workers4")
    cpu_trace = trace("cpu_only_rank34")
    opened = []

    def counted(load):
        def load_document(path):
            opened.append(Path(path).name)
            return load(path)

        return load_document

    monkeypatch.setattr(common, "load_document", counted(common.load_document))
    monkeypatch.setattr(compare, "load_document", counted(compare.load_document))
    report.write_report_file(left, out=tmp_path / "vs.html", vs=right)
    assert sorted(opened) == sorted([left.name, right.name])
    opened.clear()
    directory = from_trace(cpu_trace, tmp_path / "measured" / "infer")
    profile = common.open_profile(directory)
    report.write_report(directory, profile)
    summary.print_summary(profile, as_json=True)
    assert opened == ["infer"]


def test_summary_render_prints_trace_strings_literally(trace, capsys, monkeypatch):
    """Kernel names are C++ and may hold brackets rich would read as markup ('[/x]' would crash it)."""
    from libreyolo_profile.readers import summary

    monkeypatch.setenv("COLUMNS", "250")  # no wrapping inside the name

    s = summary.summary_document(trace("v100_resnet50_workers0"))
    s["top_kernels"][0]["name"] = "void k<float>[with T = float] [/x] [bold]"
    s["marks"]["odd"] = "[red]not a style[/red]"
    summary.show_summary(s)
    out = capsys.readouterr().out
    # the first screen names the top kernel shortened (its template arguments elided), brackets kept literal
    assert "[/x] [bold]" in out and "[red]not a style[/red]" in out
    summary.show_summary(s, full=True)  # the top kernels table, behind --full, names it whole
    out = capsys.readouterr().out
    assert "[with T = float] [/x] [bold]" in out and "[red]not a style[/red]" in out
