"""The report's colours: one colour per meaning, whichever chart draws it. A phase, a kernel category, a
blame cause and a chart's own marks (the latency bars, the roofline's bounds, a rank's wait) each have a
meaning; names that mean one thing share its entry (the dataload phase and the blame cause that is its
time; the gemm category and the gemm/conv causes), and no colour stands for two meanings, so a hue read
in one chart means the same in every other. tests/test_report_colors.py holds the palette to that: every
meaning's colour differs from every other by at least MIN_DELTA_E (CIE76), and no chart draws a colour
that is not here.
"""

from __future__ import annotations

# meaning: (colour, the names that carry it: train and infer phases, kernel categories, blame causes, marks)
MEANINGS: dict[str, tuple[str, tuple[str, ...]]] = {
    # phases (sql/phases.sql); dataload and optimizer are also a cause and a category of the same work
    "dataload": ("#e8a317", ("dataload",)),
    "to_device": ("#9b59b6", ("to_device",)),
    "forward": ("#3a7bd5", ("forward",)),
    "backward": ("#e0554f", ("backward",)),
    "optimizer": ("#23a56f", ("optimizer",)),
    "preprocess": ("#c49c94", ("preprocess",)),  # the infer phase, and the blame cause that is its time
    "postprocess": ("#8c564b", ("postprocess",)),
    # kernel categories (sql/categories.sql) and the blame causes that are their time
    "matrix maths": ("#17becf", ("gemm", "gemm_conv", "cpu_gemm_conv")),
    "elementwise": ("#ff7f0e", ("elementwise",)),
    "norm": ("#bcbd22", ("norm",)),
    "layout": ("#f7b6d2", ("layout",)),
    "reduce": ("#c5b0d5", ("reduce",)),
    "copies": ("#7f7f7f", ("memcpy", "memcpy_memset")),
    "memset": ("#b4bcc2", ("memset",)),
    "nms/sort": ("#dbdb8d", ("nms/sort",)),
    "embedding": ("#827717", ("embedding",)),
    "communication": ("#8e2c22", ("communication", "cpu_communication", "rank_transfer")),
    "other device work": ("#aec7e8", ("other", "device_other")),
    # blame causes of their own (sql/blame.sql)
    "attention": ("#1f4e79", ("attention",)),
    "memory-bound": ("#ff9896", ("memory_bound", "memory_bound_point")),
    "sync bubble": ("#e377c2", ("sync_bubble",)),
    "module loading": ("#5b2c83", ("module_loading",)),
    "allocator": ("#ffbb78", ("allocator",)),
    "launching": ("#98df8a", ("launching",)),
    "cpu work": ("#7fd6e0", ("cpu_work",)),
    "unexplained idle": ("#e9ecef", ("unexplained_idle",)),
    "cpu other ops": ("#4b6b2f", ("cpu_other_ops",)),
    "framework overhead": ("#b15928", ("framework_overhead",)),
    "python": ("#ad1457", ("python",)),  # recorded Python frames while the device idled
    "startup": ("#00897b", ("startup",)),
    # the charts' own marks
    "compute-bound": ("#0b5345", ("compute_bound_point",)),  # a roofline point above its ridge
    "waiting for the last rank": ("#ffd92f", ("rank_wait",)),
    "skew between ranks": ("#7b1fa2", ("rank_skew",)),
    "calls": ("#56657a", ("latency_calls",)),  # the latency histogram's bars
    "self time share": ("#a3b18a", ("op_self_share",)),  # the ops table's bar
    "a step without phases": ("#efe3cf", ("no_phases",)),
    "GPU kernel time launched by the step": ("#2e2e2e", ("gpu_busy",)),  # drawn over the step's phases
}
MIN_DELTA_E = 12.0  # the least CIE76 distance between two meanings' colours

COLORS = {name: colour for colour, names in MEANINGS.values() for name in names}
# text, axes, grid, roof lines, outlines, markers: the page's ink, not a meaning (a label says what it is)
INK = "#1d2329"
# names the report does not know (a category a later version adds): lighter greys, none a meaning's colour
FALLBACK = ("#d0d3d4", "#c4c9cc", "#dcdde0")


def color_for(name: str) -> str:
    """The colour of a phase, category, cause or mark name; an unknown name gets a fallback grey."""
    if name in COLORS:
        return COLORS[name]
    return FALLBACK[sum(map(ord, str(name))) % len(FALLBACK)]
