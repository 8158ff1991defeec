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
# batch to batch, so a shorter window leaves the shares noisy). Every step past it in the profiled pass was a
# profiled step and its share of the trace to analyse; the headline keeps all --steps steps, unprofiled.
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
