"""A/A check of the `compare --fail-on` gate (issue #26): how often it says `fail` when nothing changed.

The same small CPU configuration is measured twice per pair (`profile infer --repeat N`, each trial
a fresh process, the two measurements of a pair interleaved) and the gate judges the pair with each
rule. Every outcome is counted: `fail` on an A/A pair is a false alarm, `pass` means the evidence
bounded the change within the threshold, `inconclusive` means it could not tell (and says how many
trials per side would). The false-`fail` share is set beside the rule's nominal rate: with no true
change a rule fails only when Δ is past the threshold AND |Δ| > 2·SE in the watched direction, which
for normal, independent trials happens at most P(T > 2) with 2n − 2 degrees of freedom (5.8 % at
n = 3, 2.6 % at n = 5) — less for any threshold above 0. Clearly more means the trials are noisier
than their own error bars say (drift between runs, other load), and the gate's `fail` is then not
to be trusted on this machine. A side carrying the `noisy` mark makes every rule inconclusive (its
2·SE understates the drift), so the summary also counts what 2·SE alone would have failed.

Optionally one A/B pair (--ab-imgsz) as a control, which should fail the tight rules.

    python benchmarks/bench_gate_aa.py                              # 10 pairs at --imgsz 64
    python benchmarks/bench_gate_aa.py --pairs 3 --imgsz 64 --ab-imgsz 128 --budget-s 1200

--budget-s stops before a pair that would end past that much wall time (at the pace so far); the pairs
done are still reported. So does Ctrl-C. CPU heavy: every measurement runs LibreYOLO on the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_aa_compare import measure, t_tail_two_sided  # noqa: E402  (one measurement; stdlib-only t tail)

OUTCOMES = ("pass", "fail", "inconclusive", "invalid")


def gate(cli: list[str], before: Path, after: Path, rules: list[str], env: dict) -> tuple[int, dict]:
    args = [a for rule in rules for a in ("--fail-on", rule)]
    result = subprocess.run(
        [*cli, "compare", str(before), str(after), *args, "--json"], capture_output=True, text=True, env=env
    )
    if result.returncode not in (0, 4):
        sys.exit(f"compare failed (exit {result.returncode}): {result.stderr}")
    return result.returncode, json.loads(result.stdout)


def pair_line(label: str, report: dict) -> str:
    cells = []
    for r in report["gate"]["rules"]:
        change = "—" if r["change"] is None else f"{r['change']:+.1f}"
        margin = "—" if r["margin"] is None else f"{r['margin']:.1f}"
        cells.append(
            f"{r['rule']} {r['outcome']} [{r['basis']}] (Δ {change} ± {margin}, n to resolve {r['trials_needed']})"
        )
    noisy = len(report["gate"]["noisy"])
    return f"{label}: " + "; ".join(cells) + (f"; {noisy} side(s) marked noisy" if noisy else "")


def summary(reports: list[dict], rules: list[str]) -> dict[str, Counter]:
    """Outcomes per rule; `fail if quiet` also counts the fails the noisy mark turned inconclusive,
    i.e. what 2·SE alone would have said."""
    counts = {rule: Counter() for rule in rules}
    for report in reports:
        for r in report["gate"]["rules"]:
            counts[r["rule"]][r["outcome"]] += 1
            counts[r["rule"]]["fail if quiet"] += r["basis"] in ("significant_past_limit", "significant_but_noisy")
    return counts


def needed(reports: list[dict], rule: str) -> str:
    values = [
        r["trials_needed"]
        for report in reports
        for r in report["gate"]["rules"]
        if r["rule"] == rule and r["trials_needed"] is not None
    ]
    return f"median {statistics.median(values):g} (min {min(values)}, max {max(values)})" if values else "none"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10, help="A/A pairs (default 10)")
    parser.add_argument("--imgsz", type=int, default=64, help="the measured --imgsz (default 64: cheap)")
    parser.add_argument("--ab-imgsz", type=int, default=None, help="also one A/B pair: --imgsz vs this")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--rule",
        dest="rules",
        action="append",
        default=None,
        help="a --fail-on rule, repeatable (default: step_ms:+5%%, step_ms:+10%%, latency_p50_ms:+5%%)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="OMP/MKL threads of each measurement (default 1, as docs/design/gate.md advises on a shared CPU)",
    )
    parser.add_argument("--budget-s", type=float, default=None, help="stop starting new pairs after this many seconds")
    parser.add_argument("--workdir", type=Path, default=None, help="where profiles go (default: a temporary dir)")
    parser.add_argument("--keep", action="store_true", help="keep the profiles")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure nothing: judge the pairs a --keep run left under --workdir again (after a "
        "change to the gate, or with other --rule values)",
    )
    return parser.parse_args()


def reused(cli: list[str], workdir: Path, rules: list[str], env: dict) -> None:
    """Judge the kept pairs again; the same lines and summary as a measuring run."""
    reports = []
    for pair in sorted(workdir.glob("aa*"), key=lambda p: int(p.name[2:])):
        _, report = gate(cli, pair / "first" / "infer", pair / "second" / "infer", rules, env)
        reports.append(report)
        print(pair_line(f"A/A {len(reports)}", report), flush=True)
    if (workdir / "ab" / "b" / "infer").is_dir():
        _, report = gate(cli, workdir / "ab" / "a" / "infer", workdir / "ab" / "b" / "infer", rules, env)
        print(pair_line("A/B", report), flush=True)
    print_summary(reports, rules)


def print_summary(reports: list[dict], rules: list[str]) -> None:
    n = reports[0]["significance"]["n_before"] if reports else 0
    nominal = t_tail_two_sided(2.0, max(2 * n - 2, 1)) / 2
    print(
        f"A/A outcomes per rule over {len(reports)} pairs (a `fail` here is a false alarm; nominal ≤ "
        f"{100 * nominal:.1f}%):"
    )
    for rule, counts in summary(reports, rules).items():
        shares = ", ".join(f"{o} {counts[o]}" for o in OUTCOMES)
        false_fail = f"{100 * counts['fail'] / len(reports):.0f}%" if reports else "n/a"
        print(
            f"  {rule:<22} {shares}; false fail {false_fail} ({counts['fail if quiet']} by 2·SE alone, without "
            f"the noisy mark's veto); trials per side to resolve: {needed(reports, rule)}"
        )


def main() -> None:
    args = parse_args()
    rules = args.rules or ["step_ms:+5%", "step_ms:+10%", "latency_p50_ms:+5%"]
    cli = [sys.executable, "-m", "libreyolo_profile"]
    env = dict(
        os.environ, OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads), LIBREYOLO_PROFILE_OFFLINE="1"
    )
    if args.reuse:
        if args.workdir is None:
            sys.exit("--reuse judges the pairs kept under --workdir: name it")
        return reused(cli, args.workdir, rules, env)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-gate-aa-"))
    started, seconds, reports, stopped = time.perf_counter(), [], [], False
    n = args.repeat
    nominal = t_tail_two_sided(2.0, 2 * n - 2) / 2
    print(
        f"A/A: {args.pairs} pairs of infer --device cpu --imgsz {args.imgsz} --runs {args.runs} --warmup "
        f"{args.warmup} --repeat {n} (OMP_NUM_THREADS={args.threads}); rules: {', '.join(rules)}"
    )
    print(
        f"nominal false-fail rate (normal trials, no true change, threshold 0): ≤ P(T > 2), df {2 * n - 2} "
        f"= {100 * nominal:.1f}%"
    )
    try:
        for i in range(args.pairs):
            pace = statistics.median(seconds) if seconds else 0.0
            if args.budget_s is not None and time.perf_counter() - started + 2 * pace > args.budget_s:
                stopped = True
                break
            first, t1 = measure(cli, workdir / f"aa{i}" / "first", args.imgsz, args, env)
            second, t2 = measure(cli, workdir / f"aa{i}" / "second", args.imgsz, args, env)
            seconds += [t1, t2]
            _, report = gate(cli, first, second, rules, env)
            reports.append(report)
            print(pair_line(f"A/A {i + 1}", report), flush=True)
        if args.ab_imgsz is not None and not stopped:
            a, _ = measure(cli, workdir / "ab" / "a", args.imgsz, args, env)
            b, _ = measure(cli, workdir / "ab" / "b", args.ab_imgsz, args, env)
            _, report = gate(cli, a, b, rules, env)
            print(pair_line(f"A/B (imgsz {args.imgsz} → {args.ab_imgsz})", report), flush=True)
    except KeyboardInterrupt:
        stopped = True
        print("interrupted: reporting the pairs finished so far", flush=True)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)

    print()
    if seconds:
        print(
            f"one measurement: median {statistics.median(seconds):.0f} s; {len(reports)} A/A pairs in "
            f"{time.perf_counter() - started:.0f} s" + (" (stopped early)" if stopped else "")
        )
    print_summary(reports, rules)


if __name__ == "__main__":
    main()
