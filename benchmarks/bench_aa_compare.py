"""A/A check of `libreyolo profile compare`'s significance rule, plus an A/B control.

A/A: the same small CPU configuration is measured twice (`profile infer --repeat 3`) and the two
profiles are compared; over many pairs, the share called significant is the rule's false-positive
rate *on this machine*. With n = 3 trials per side and normal, independent trials, |Δ| > 2·SE_comb
fires about 12% of the time (|t| > 2 with 4 degrees of freedom: 11.6%); clearly more (> 20%) means
the trials are noisier than their own error bars say (drift, other load on the machine), so a
"significant" verdict from compare must be read with that in mind.

A/B: --imgsz A vs --imgsz B (default 320 vs 640), which should be significant every time.

Measurements are interleaved (A1, A2, A1, A2 …; A/B pairs alternate which side goes first) and
each is a fresh process. Every pair is printed; the summary gives the rates per metric.

    python benchmarks/bench_aa_compare.py                  # 10 A/A pairs + 3 A/B pairs
    python benchmarks/bench_aa_compare.py --pairs 4 --ab-pairs 1 --budget-s 900

--budget-s stops before a pair that would end past that much wall time (at the pace so far); the
pairs done are still reported, and the report says it stopped early. So does Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

METRICS = ("step_ms", "throughput_img_s", "latency_p50_ms", "latency_p90_ms")


def t_tail_two_sided(t: float, df: int) -> float:
    """P(|T| > t) for Student's t with `df` degrees of freedom (regularized incomplete beta by
    continued fraction: stdlib only)."""
    x = df / (df + t * t)
    a, b = df / 2, 0.5

    def betacf(a, b, x, iterations=200, eps=1e-14):
        qab, qap, qam = a + b, a + 1, a - 1
        c, d = 1.0, 1 - qab * x / qap
        d = 1 / d
        h = d
        for m in range(1, iterations):
            m2 = 2 * m
            aa = m * (b - m) * x / ((qam + m2) * (a + m2))
            d = 1 / (1 + aa * d)
            c = 1 + aa / c
            h *= d * c
            aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
            d = 1 / (1 + aa * d)
            c = 1 + aa / c
            h *= d * c
            if abs(d * c - 1) < eps:
                break
        return h

    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x))
    return front * betacf(a, b, x) / a


def measure(cli: list[str], project: Path, imgsz: int, args, env: dict | None = None) -> tuple[Path, float]:
    """One `infer --repeat` measurement into `project` (bench_gate_aa.py uses it too): (profile dir, seconds).
    `args` without `overhead`/`same_process` measures the overhead in fresh processes, as `infer` does."""
    command = (
        [
            *cli,
            "infer",
            "--device",
            "cpu",
            "--imgsz",
            str(imgsz),
            "--runs",
            str(args.runs),
            "--warmup",
            str(args.warmup),
            "--repeat",
            str(args.repeat),
            "--project",
            str(project),
            "--no-trace",
            "--no-report",
        ]
        + ([] if getattr(args, "overhead", True) else ["--no-overhead"])
        + (["--same-process"] if getattr(args, "same_process", False) else [])
    )
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"measurement failed (exit {result.returncode}): {' '.join(command)}\n{result.stderr[-2000:]}")
    return project / "infer", seconds


def compare(cli: list[str], before: Path, after: Path) -> dict:
    result = subprocess.run([*cli, "compare", str(before), str(after), "--json"], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"compare failed (exit {result.returncode}): {result.stderr}")
    return json.loads(result.stdout)


def pair_line(label: str, report: dict) -> str:
    cells = []
    for metric in METRICS:
        r = next(x for x in report["metrics"] if x["metric"] == metric)
        if r["delta"] is None:
            cells.append(f"{metric} null")
            continue
        flag = "SIG" if r["significant"] else "ns"
        cells.append(
            f"{metric} {r['before']:.1f}±{r['before_std'] or 0:.1f} → {r['after']:.1f}±{r['after_std'] or 0:.1f} "
            f"(Δ {r['delta_pct']:+.1f}%, 2·SE {r['threshold']:.1f}, {flag})"
        )
    return f"{label}: " + "; ".join(cells)


def rates(reports: list[dict]) -> dict[str, tuple[int, int]]:
    out = {}
    for metric in METRICS:
        judged = [next(x for x in r["metrics"] if x["metric"] == metric)["significant"] for r in reports]
        judged = [j for j in judged if j is not None]
        out[metric] = (sum(judged), len(judged))
    return out


def spread(values: list[float]) -> str:
    if not values:
        return "none"
    return f"median {statistics.median(values):.1f} s, min {min(values):.1f}, max {max(values):.1f} (n={len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10, help="A/A pairs (default 10)")
    parser.add_argument("--ab-pairs", type=int, default=3, help="A/B pairs (default 3)")
    parser.add_argument("--imgsz", type=int, default=320, help="the A configuration's --imgsz")
    parser.add_argument("--imgsz-b", type=int, default=640, help="the B configuration's --imgsz")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--no-overhead",
        dest="overhead",
        action="store_false",
        help="time no unprofiled calls: the headline is then the profiled window's (the old way)",
    )
    parser.add_argument(
        "--same-process",
        action="store_true",
        help="all trials of a measurement in one process (the old way; default: a fresh process each)",
    )
    parser.add_argument(
        "--budget-s", type=float, default=None, help="stop starting new measurements after this many seconds"
    )
    parser.add_argument("--workdir", type=Path, default=None, help="where profiles go (default: a temporary dir)")
    parser.add_argument("--keep", action="store_true", help="keep the profiles")
    args = parser.parse_args()

    cli = [sys.executable, "-m", "libreyolo_profile"]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-aa-"))
    started = time.perf_counter()
    seconds: list[float] = []

    def over_budget() -> bool:
        """True when the next pair (two measurements at the median pace so far) would end past the budget."""
        if args.budget_s is None:
            return False
        pace = statistics.median(seconds) if seconds else 0.0
        return time.perf_counter() - started + 2 * pace > args.budget_s

    aa_reports, ab_reports = [], []
    stopped_early = False
    n = args.repeat
    expected = t_tail_two_sided(2.0, 2 * n - 2)
    config = (
        f"--runs {args.runs} --warmup {args.warmup} --repeat {n}"
        + ("" if args.overhead else " --no-overhead")
        + (" --same-process" if args.same_process else "")
    )
    print(
        f"A/A: {args.pairs} pairs of infer --device cpu --imgsz {args.imgsz} {config}, measured twice per pair, "
        f"interleaved; A/B: {args.ab_pairs} pairs of --imgsz {args.imgsz} vs {args.imgsz_b}; "
        "rule |Δ| > 2·√(SE_b² + SE_a²)"
    )
    print(f"expected false-positive rate on ideal data (normal trials, n={n} per side): {100 * expected:.1f}%")
    try:
        for i in range(args.pairs):
            if over_budget():
                stopped_early = True
                break
            first, t1 = measure(cli, workdir / f"aa{i}" / "first", args.imgsz, args)
            second, t2 = measure(cli, workdir / f"aa{i}" / "second", args.imgsz, args)
            seconds += [t1, t2]
            report = compare(cli, first, second)
            aa_reports.append(report)
            print(pair_line(f"A/A {i + 1}", report), flush=True)
        for i in range(args.ab_pairs):
            if over_budget():
                stopped_early = True
                break
            order = [("a", args.imgsz), ("b", args.imgsz_b)]
            if i % 2:
                order.reverse()
            done = {}
            for side, size in order:
                done[side], t = measure(cli, workdir / f"ab{i}" / side, size, args)
                seconds.append(t)
            report = compare(cli, done["a"], done["b"])
            ab_reports.append(report)
            print(pair_line(f"A/B {i + 1} (imgsz {args.imgsz} → {args.imgsz_b})", report), flush=True)
    except KeyboardInterrupt:
        stopped_early = True
        print("interrupted: reporting the pairs finished so far", flush=True)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)

    print()
    print(f"measurement wall time (one `infer --repeat {n}` process): {spread(seconds)}")
    if stopped_early:
        print(
            f"stopped early after {len(aa_reports)} of {args.pairs} A/A and {len(ab_reports)} of {args.ab_pairs} "
            f"A/B pairs ({time.perf_counter() - started:.0f} s; --budget-s {args.budget_s})"
        )
    print(
        f"A/A pairs: {len(aa_reports)} — share called significant (expected ≈{100 * expected:.0f}% on ideal data; "
        "> 20% means noisier than the error bars say):"
    )
    for metric, (hits, judged) in rates(aa_reports).items():
        share = f"{100 * hits / judged:.0f}%" if judged else "n/a"
        print(f"  {metric:<18} {hits}/{judged} = {share}")
    print(f"A/B pairs: {len(ab_reports)} — share called significant (should be 100%):")
    for metric, (hits, judged) in rates(ab_reports).items():
        share = f"{100 * hits / judged:.0f}%" if judged else "n/a"
        print(f"  {metric:<18} {hits}/{judged} = {share}")


if __name__ == "__main__":
    main()
