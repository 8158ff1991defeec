"""How many calls `infer`'s profiled window holds by default (its own module, so the CLI's help can
name it without importing the document builders)."""

# The profiled window is at most this many calls unless --profiled-runs says otherwise. Every call is
# the same work, so its attribution settles within a few calls: on the seed example (CPU, 640 px) the
# blame's shares over 3 calls were within 2.4 points of those over 20, two 10-call windows differed by up
# to 1.6 points, and the top ops' shares over 3 calls lay inside the spread of 10-call windows. Each call
# left out of the window is ~0.3 s of a ~12 s command there. The headline keeps all --runs unprofiled calls.
PROFILED_RUNS = 3
