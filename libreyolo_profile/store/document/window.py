"""How many calls `infer`'s profiled window holds by default, and how many steps `run`'s does (their own
module, so the CLI's help can name them without importing the document builders)."""

# The profiled window is at most this many calls unless --profiled-runs says otherwise. Every call is
# the same work, so its attribution settles within a few calls: on the seed example (CPU, 640 px) the
# blame's shares over 3 calls were within 2.4 points of those over 20, two 10-call windows differed by up
# to 1.6 points, and the top ops' shares over 3 calls lay inside the spread of 10-call windows. Each call
# left out of the window is ~0.3 s of a ~12 s command there. The headline keeps all --runs unprofiled calls.
PROFILED_RUNS = 3

# `run` profiles at most this many of its --steps unless --profiled-steps says otherwise: the fewest
# training steps whose window is not tiny (sql/verdict_thresholds.sql's tiny_steps; training steps differ
# batch to batch, so a shorter window leaves the shares noisy). A longer one costs more than its steps: the
# profiler's records grow with it, ~50 MB a step for LibreYOLO9-t at batch 4, 320 px on a 2-core CPU, and
# ~0.85 GB a step before the scalar lists were recorded in the first step only (measure/profiler.py), when
# 20 profiled steps took 1.45-1.47 s a step against 0.91-1.21 s for 10 (0.77-0.96 s unprofiled) and the
# command with 5 warmup + 20 steps 81 s against 46-52 s. The headline keeps all --steps steps, unprofiled.
PROFILED_STEPS = 10

# profile.json's timing.window_rule, by kind: how the measured command chose its profiled window
WINDOW_RULES = {
    "infer": (
        f"the profiled window is --profiled-runs calls, by default min(--runs, {PROFILED_RUNS}): every call is "
        "the same work, so attribution settles within a few calls; the headline is every --runs call, unprofiled"
    ),
    "train": (
        f"the profiled window is --profiled-steps steps, by default min(--steps, {PROFILED_STEPS}): the fewest "
        "training steps that are not a tiny window, since steps differ batch to batch; the headline is every "
        "--steps step, unprofiled, the profiled ones first on the same batches from the same state"
    ),
}
