"""The trials-needed figure of `compare --fail-on` (issue #26) against a simulation with known spread.

Each case is a pilot measurement (3 trials a side) whose sample means and standard deviations are
exact by construction. The gate, through the real CLI, says how many trials per side would resolve
the rule (sql/gate.sql; the formula is in docs/SCHEMA.md). The simulation (numpy, seeded) then
measures many experiments whose trials are normal with exactly the pilot's means and spreads, n
trials per side, and judges each by the gate's definitions, rewritten here from the issue's words:
pass when the watched end of Δ ± 2·SE is within the limit, fail when Δ passes the limit and
|Δ| > 2·SE. The documented promise: at n the rule resolves in about 80 % of such experiments; with
half as many trials clearly less often, with twice as many clearly more often.
"""

from __future__ import annotations

import json
import math

import pytest
from conftest import require_traces, run_cli
from test_compare import ingested, with_trials, write

EXPERIMENTS = 20_000


@pytest.fixture(scope="module")
def cache(reader_cache_env):
    return reader_cache_env


@pytest.fixture(scope="module")
def v100_doc(cache):
    return ingested(require_traces() / "v100_resnet50_workers0.json.gz", cache)


def resolved_share(
    rule: tuple[float, bool], before: tuple[float, float], after: tuple[float, float], n: int, seed: int
) -> float:
    """The share of simulated experiments (n normal trials per side) in which a '+' rule resolves."""
    import numpy as np

    limit, relative = rule
    rng = np.random.default_rng(seed)
    b = rng.normal(before[0], before[1], (EXPERIMENTS, n))
    a = rng.normal(after[0], after[1], (EXPERIMENTS, n))
    delta = a.mean(axis=1) - b.mean(axis=1)
    se = np.sqrt(b.var(axis=1, ddof=1) / n + a.var(axis=1, ddof=1) / n)
    scale = 100 / np.abs(b.mean(axis=1)) if relative else 1.0
    passed = delta * scale + 2 * se * scale <= limit
    failed = (delta * scale > limit) & (np.abs(delta) > 2 * se)
    return float((passed | failed).mean())


# (rule, before mean ± s, after mean ± s): a pilot with 3 trials per side, mean ± s exactly
CASES = {
    "inside the limit, absolute": ("step_ms:+5ms", (100.0, 4.0), (102.0, 4.0)),
    "past the limit, absolute": ("step_ms:+5ms", (100.0, 4.0), (106.0, 4.0)),
    "inside the limit, relative": ("step_ms:+5%", (200.0, 8.0), (204.0, 8.0)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_trials_needed_resolve_the_rule_in_four_of_five_simulated_experiments(v100_doc, tmp_path, cache, case):
    rule, before, after = CASES[case]
    pilots = []
    for name, (mean, s) in (("before", before), ("after", after)):
        pilots.append(write(with_trials(v100_doc, {"step_ms": [mean - s, mean, mean + s]}), tmp_path / name))
    result = run_cli("compare", *map(str, pilots), "--fail-on", rule, "--json", env=cache)
    assert result.returncode == 0, result.stderr
    judged = json.loads(result.stdout)["gate"]["rules"][0]
    assert judged["outcome"] == "inconclusive"  # 3 trials a side cannot tell: that is why the figure matters
    n = judged["trials_needed"]
    assert n is not None and f"use --repeat {n} on both sides" in judged["reason"]

    limit = float(rule.split("+")[1].rstrip("ms%"))
    setup = (limit, rule.endswith("%"))
    at_n = resolved_share(setup, before, after, n, seed=1)
    assert at_n == pytest.approx(0.80, abs=0.03), (n, at_n)
    half = resolved_share(setup, before, after, math.ceil(n / 2), seed=2)
    double = resolved_share(setup, before, after, 2 * n, seed=3)
    assert half < 0.76 and double > 0.84, (n, half, at_n, double)
