"""The report's step timeline on big traces: the page stays bounded whatever the trace's size.

    python benchmarks/bench_report_timeline.py [--steps 1000] [--size-mb 240] [--keep]

Two traces, written under /tmp/libreyolo-profile-bench (never into the repository) and deleted at the end
unless --keep:
  - a 1,000-step trace (--steps): each step a ProfilerStep range, one op and 100 launches of 2 µs kernels on
    two streams (~200 k events), the shape of a long training run;
  - a ~1 M-event trace (--size-mb 240: the A100 trace's 5 steps, 109 k events in 25.8 MB, replicated by
    bench_ingest.py's build_trace, ~1 M events), the shape of a long capture.
For each, `report --json` in a fresh process with an empty cache (the analysis, then the timeline reading
the trace again) and once more with the analysis cached (the timeline's own cost, the parse and blame SQL
again): wall seconds, the page's bytes, the timeline's drawn runs and steps, and the steps in the trace.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ingest import OUT, build_trace  # noqa: E402

T0_US = 1_700_000_000_000_000


def many_steps_trace(steps: int, out: Path) -> Path:
    """`steps` steps of 1 ms: a ProfilerStep, an op, 100 launches and their 2 µs kernels on streams 7 and 9."""
    lines = []
    corr = 0
    for i in range(steps):
        t = T0_US + i * 1000
        lines.append(
            f'{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{i}", "pid": 1, "tid": 1, '
            f'"ts": {t}, "dur": 990}}'
        )
        lines.append(
            f'{{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": {t + 2}, "dur": 900}}'
        )
        for k in range(100):
            corr += 1
            start = t + 5 + 8 * k
            stream = 7 if k % 4 else 9
            lines.append(
                f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, '
                f'"ts": {start}, "dur": 3, "args": {{"correlation": {corr}}}}}'
            )
            lines.append(
                f'{{"ph": "X", "cat": "kernel", "name": "void at::native::elementwise_kernel<128, 2>(int)", '
                f'"pid": 0, "tid": {stream}, "ts": {start + 4}, "dur": 2, '
                f'"args": {{"correlation": {corr}, "device": 0, "stream": {stream}}}}}'
            )
    out.write_text('{"schemaVersion": 1, "deviceProperties": [], "traceEvents": [\n  ' + ",\n  ".join(lines) + "\n]}\n")
    return out


def _events(trace: Path) -> int:
    """The trace's events: a `"ph":` per event (both traces write it once in each)."""
    count, tail = 0, b""
    with open(trace, "rb") as f:
        while chunk := f.read(1 << 24):
            count += (tail + chunk).count(b'"ph":') - tail.count(b'"ph":')
            tail = chunk[-8:]
    return count


def report(trace: Path, cache: Path, page: Path) -> dict:
    env = {"XDG_CACHE_HOME": str(cache), "PATH": "/usr/bin:/bin"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "libreyolo_profile", "report", str(trace), "--out", str(page), "--json", "--force"],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"report failed on {trace}: {done.stderr.strip()[-400:]}")
    html = page.read_text(encoding="utf-8")
    timeline = re.search(r'<svg class="chart" data-chart="timeline".*?</svg>', html, re.S)
    drawn = re.search(r"(\d+) of ([\d,]+) (?:step|call)s drawn", html)
    return {
        "wall_s": wall,
        "page_bytes": len(html.encode()),
        "timeline_bytes": len(timeline.group(0).encode()) if timeline else 0,
        "runs": html.count('class="lane-run"'),
        "drawn": drawn.group(0) if drawn else "every step drawn",
        "charts": json.loads(done.stdout)["charts"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="steps of the many-steps trace")
    parser.add_argument("--size-mb", type=int, default=240, help="size of the replicated A100 trace, MB")
    parser.add_argument("--keep", action="store_true", help=f"keep the built traces in {OUT}")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    traces = [
        (f"{args.steps:,} steps", many_steps_trace(args.steps, OUT / f"steps_{args.steps}.json")),
        (f"A100 × {args.size_mb} MB", build_trace(args.size_mb, OUT / f"trace_{args.size_mb}mb.json")),
    ]
    try:
        for label, trace in traces:
            events = _events(trace)
            home = Path(tempfile.mkdtemp(prefix="bench-report-timeline-"))
            try:
                cold = report(trace, home / "cache", home / "cold.html")
                warm = report(trace, home / "cache", home / "warm.html")
            finally:
                shutil.rmtree(home, ignore_errors=True)
            print(
                f"{label}: {trace.stat().st_size / 1e6:,.0f} MB, {events:,} events; {cold['drawn']}; "
                f"timeline {cold['runs']:,} runs, {cold['timeline_bytes'] / 1e3:,.0f} kB of a "
                f"{cold['page_bytes'] / 1e3:,.0f} kB page; report {cold['wall_s']:.1f} s uncached, "
                f"{warm['wall_s']:.1f} s with the analysis cached (the timeline reads the trace again)"
            )
    finally:
        if not args.keep:
            for _, trace in traces:
                trace.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
