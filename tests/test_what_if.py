"""`libreyolo profile what-if` through the real CLI on the real V100 and A100 traces: the printed
saving is checked against SPEC §6's formula, computed here from inputs read independently
(the metrics from `get --json`, the category's launches and GPU time straight from the kernels
parquet with pyarrow), plus the model for a GPU-bound verdict and every exit-2 case."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import require_traces, run_cli

UTIL_THRESHOLD = 80.0  # SPEC §5/§6: below it launches, at or above it GPU work
# SPEC §11: with a blame, the bottleneck of an indirect verdict is the blame share of its causes, and the
# step never shrinks below the device work left on its critical path (the device-busy causes of the blame)
BOTTLENECK_CAUSES = {
    "sync": ("sync_bubble",),
    "dataloader": ("dataload",),
    "cold-start": ("allocator", "module_loading", "startup"),
    "idle-window": ("unexplained_idle",),
}
DEVICE_CAUSES = ("gemm_conv", "attention", "memory_bound", "device_other", "communication", "memcpy_memset")


@pytest.fixture(scope="module")
def traces():
    return require_traces()


@pytest.fixture(scope="module")
def inputs(traces, reader_cache_env):
    """Per trace: its metrics (`get --json`), its kernels table (the parquet the ingest wrote, read
    with pyarrow) and its ingested document; the reader cache is shared with test_compare.py."""
    from libreyolo_profile.store.disk.cache import trace_key

    env = reader_cache_env
    cache = Path(env["XDG_CACHE_HOME"])
    found = {}

    def read(name: str) -> dict:
        if name not in found:
            path = traces / f"{name}.json.gz"
            listing = run_cli("get", str(path), "--json", env=env)
            assert listing.returncode == 0, listing.stderr
            home = cache / "libreyolo-profile" / "traces" / trace_key(path)
            found[name] = {
                "env": env,
                "path": path,
                "metrics": {k: v["value"] for k, v in json.loads(listing.stdout).items()},
                "kernels": pq.read_table(home / "kernels.parquet").to_pylist(),
                "doc": json.loads((home / "profile.json").read_text()),
            }
        return found[name]

    return read


def expected(metrics: dict, kernels: list[dict], category: str | None, launches: int | None) -> dict:
    """SPEC §6 as §11 and issue 24 amend it, for the verdicts these traces carry: removing a category frees
    the time it alone held its device (category_exclusive_ms_per_step, one figure per device), plus under the
    launch model its launches at the steady-state launch cost (cold first launches left out), at most the
    blame's launching time; N launches removed, at most their share (N ÷ launches per step) of it; an indirect
    verdict caps the saving at step − its blamed time; no saving goes past the device work that remains
    (device-busy blame − the exclusive time removed) nor past the host's work that does not wait on the device
    (issue 50: host_work_ms, a category's launches out by host_work_without_launches, N launches at
    launch_api_us each; absent where the profile does not carry it). The blame's shares are ms of the blame's
    own step."""
    bound, util = metrics["bound"], metrics["gpu_util_pct"]
    gap, step, blame_step = metrics["kernel_gap_us"], metrics["step_ms"], metrics["blame_step_ms"]
    launching_ms = metrics["blame_launching_pct"] * blame_step / 100
    launch_cost = metrics["steady_launch_us"]
    if launch_cost is None:
        launch_cost = metrics["blame_launching_pct"] * blame_step * 10 / metrics["launches_per_step"]  # µs/launch
    launch_model = bound == "host-launch" or (bound not in ("gpu-compute", "gpu-memory") and util < UTIL_THRESHOLD)
    parts, gpu_removed = [], 0.0
    if category is not None:
        rows = [k for k in kernels if k["category"] == category]
        calls = sum(k["calls_per_step"] for k in rows)
        exclusive = sum({k["device"]: k["category_exclusive_ms_per_step"] for k in rows}.values())
        parts.append(exclusive + min(calls * launch_cost / 1000, launching_ms) if launch_model else exclusive)
        gpu_removed += exclusive
    if launches is not None:
        own_share = launching_ms * launches / metrics["launches_per_step"]
        parts.append(min(launches * launch_cost / 1000, own_share) if launch_model else launches * gap / 1000)
        gpu_removed += 0.0 if launch_model else launches * gap / 1000
    cap = step
    if bound in BOTTLENECK_CAUSES:
        cap = step - blame_step * sum(metrics[f"blame_{c}_pct"] or 0 for c in BOTTLENECK_CAUSES[bound]) / 100
    device_busy = blame_step * sum(metrics[f"blame_{c}_pct"] or 0 for c in DEVICE_CAUSES) / 100
    remaining_device = max(device_busy - gpu_removed, 0.0)
    host = metrics.get("host_work_ms")
    if host is not None and category is not None:
        host = json.loads(metrics["host_work_without_launches"])[category]
    if host is not None and launches is not None:
        host -= launches * metrics["launch_api_us"] / 1000
    host = None if host is None else max(host, 0.0)
    floor = remaining_device if host is None else max(remaining_device, host)
    cap = max(min(cap, step - floor), 0.0)  # a saving is never negative
    saved = min(sum(parts), cap)
    return {
        "parts": parts,
        "saved": saved,
        "cap": cap,
        "capped": sum(parts) > cap,
        "remaining": remaining_device,
        "host": host,
        "floor": floor,
        "model": "launches" if launch_model else "gpu-work",
        "projected_step": step - saved,
        "projected_throughput": (
            None
            if metrics["throughput_img_s"] is None  # h100: no images per step
            else metrics["throughput_img_s"] * step / (step - saved)
        ),
    }


def what_if(data: dict, *args: str) -> dict:
    result = run_cli("what-if", str(data["path"]), *args, "--json", env=data["env"])
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


CASES = [  # trace, its verdict from the blame (a precondition), the options
    ("v100_resnet50_workers0", "dataloader", ("elementwise", None)),
    ("v100_resnet50_workers0", "dataloader", (None, 100)),
    ("v100_resnet50_workers4", "host-launch", ("elementwise", 100)),
    ("a100_cutlass_adam_rank0", "sync", ("elementwise", None)),
    ("a100_cutlass_adam_rank0", "sync", (None, 100)),
    ("h100_vit_image_classifier", "host-launch", (None, 100)),
    ("mi250_rocm_minitoy", "cold-start", (None, 5)),
]


@pytest.mark.parametrize("name, bound, options", CASES)
def test_saving_follows_the_formula_of_the_profiles_verdict(inputs, name, bound, options):
    data = inputs(name)
    category, launches = options
    assert data["metrics"]["bound"] == bound
    args = (["--remove-category", category] if category else []) + (
        ["--remove-launches", str(launches)] if launches else []
    )
    got = what_if(data, *args)
    want = expected(data["metrics"], data["kernels"], category, launches)
    assert got["model"]["name"] == want["model"]
    assert [p["saved_ms"] for p in got["parts"]] == pytest.approx(want["parts"])
    assert got["saved_ms"] == pytest.approx(want["saved"])
    assert got["capped"] is want["capped"]
    assert got["inputs"]["cap_ms"] == pytest.approx(want["cap"])
    assert got["baseline"]["step_ms"] == pytest.approx(data["metrics"]["step_ms"])
    assert got["projected"]["step_ms"] == pytest.approx(want["projected_step"])
    assert got["projected"]["throughput_img_s"] == pytest.approx(want["projected_throughput"])
    assert got["saved_pct"] == pytest.approx(100 * want["saved"] / data["metrics"]["step_ms"])
    assert got["inputs"]["per_launch_host_us"] == pytest.approx(data["metrics"]["per_launch_host_us"])
    assert got["inputs"]["remaining_device_ms"] == pytest.approx(want["remaining"])
    assert got["inputs"]["host_floor_ms"] == pytest.approx(want["host"])
    assert got["projected"]["step_ms"] >= want["remaining"] - 1e-9  # never below the device work left
    assert got["inputs"]["kernel_gap_us"] == pytest.approx(data["metrics"]["kernel_gap_us"])
    if category:
        part = got["parts"][0]
        assert part["launches_removed"] == pytest.approx(
            sum(k["calls_per_step"] for k in data["kernels"] if k["category"] == category)
        )
    caveat = got["caveat"]
    assert "approximation" in caveat and "second measurement" in caveat
    if bound not in ("host-launch", "gpu-compute", "gpu-memory"):
        assert f"{bound}-bound" in caveat  # an indirect verdict: the caveat names the bottleneck


def test_sync_bound_text_output_prints_the_projection(inputs):
    """The cutlass trace is sync-bound by its blame: the text prints the saving, the projection and a
    caveat naming the sync bottleneck and the device work that remains."""
    data = inputs("a100_cutlass_adam_rank0")
    want = expected(data["metrics"], data["kernels"], "elementwise", 100)
    result = run_cli(
        "what-if", str(data["path"]), "--remove-category", "elementwise", "--remove-launches", "100", env=data["env"]
    )
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert f"saving: {want['saved']:.3f} ms per step" in text
    assert (f"capped from {sum(want['parts']):.3f} ms" in text) is want["capped"]
    projected = next(line for line in result.stdout.splitlines() if line.startswith("projected"))
    assert float(projected.split()[2]) == pytest.approx(want["projected_step"], abs=0.0011)  # printed to 3 places
    assert "remove category elementwise" in text and "remove 100 launches" in text
    binding = "device work left on its critical path" if want["floor"] == want["remaining"] else "host work per step"
    assert "caveat:" in text and "sync-bound" in text and binding in text


def test_a_gpu_bound_verdict_models_gpu_work_removed(inputs, tmp_path):
    """The same real tables under a gpu-memory verdict: category → the time it alone held the device,
    N → N × kernel_gap_us."""
    from libreyolo_profile.store.disk.writer import write_directory

    data = inputs("v100_resnet50_workers4")
    doc = copy.deepcopy(data["doc"])
    doc["verdict"] = {**doc["verdict"], "bound": "gpu-memory"}
    doc["metrics"]["bound"] = "gpu-memory"
    doc["generation"] = uuid.uuid4().hex
    write_directory(doc, tmp_path / "gpu")
    result = run_cli(
        "what-if",
        str(tmp_path / "gpu"),
        "--remove-category",
        "elementwise",
        "--remove-launches",
        "100",
        "--json",
        env=data["env"],
    )
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    m = data["metrics"]
    # the time elementwise kernels alone held the device (issue 24: overlap with other work is kept)
    elementwise_ms = next(
        k["category_exclusive_ms_per_step"] for k in data["kernels"] if k["category"] == "elementwise"
    )
    assert got["model"]["name"] == "gpu-work"
    assert [p["saved_ms"] for p in got["parts"]] == pytest.approx([elementwise_ms, 100 * m["kernel_gap_us"] / 1000])
    assert got["parts"][1]["gpu_ms_removed"] == pytest.approx(100 * m["kernel_gap_us"] / 1000)
    assert got["saved_ms"] == pytest.approx(elementwise_ms + 100 * m["kernel_gap_us"] / 1000)
    assert got["capped"] is False


def test_usage_errors_exit_2_with_what_would_be_valid(inputs, traces):
    data = inputs("v100_resnet50_workers4")
    launches = int(data["metrics"]["launches_per_step"])

    def fails(*args: str, path=None) -> str:
        result = run_cli("what-if", str(path or data["path"]), *args, env=data["env"])
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert result.stdout == "" and "Traceback" not in result.stderr
        return result.stderr

    assert "--remove-category" in fails()
    message = fails("--remove-category", "no-such-category")
    for category in {k["category"] for k in data["kernels"]}:
        assert category in message
    assert f"between 1 and {launches}" in fails("--remove-launches", str(launches + 1))
    assert f"between 1 and {launches}" in fails("--remove-launches", "0")
    cpu = traces / "cpu_only_rank34.json.gz"
    assert "CPU profile has no kernel categories" in fails("--remove-category", "gemm", path=cpu)
    assert "no launches" in fails("--remove-launches", "1", path=cpu)


GPU_TRACES = [
    "a100_alexnet_no_profilerstep",
    "a100_cutlass_adam_rank0",
    "h100_vit_image_classifier",
    "mi250_rocm_minitoy",
    "v100_resnet50_workers0",
    "v100_resnet50_workers4",
    "v100_resnet_ddp_ns_resolution",
]


@pytest.mark.parametrize("name", GPU_TRACES)
def test_projection_never_goes_below_the_device_work_that_remains(inputs, name):
    """SPEC §11 / issue 12 item 4: remove the heaviest category and every launch of the step — the most
    any change can ask — and the projected step still holds the device-busy time of the blame, less the
    GPU time removed."""
    data = inputs(name)
    m, kernels = data["metrics"], data["kernels"]
    by_category: dict[str, float] = {}
    for k in kernels:
        by_category[k["category"]] = by_category.get(k["category"], 0.0) + k["ms_per_step"]
    heaviest = max(by_category, key=by_category.get)
    launches = int(m["launches_per_step"])
    got = what_if(data, "--remove-category", heaviest, "--remove-launches", str(launches))
    want = expected(m, kernels, heaviest, launches)
    device_busy = m["blame_step_ms"] * sum(m[f"blame_{c}_pct"] or 0 for c in DEVICE_CAUSES) / 100
    assert device_busy > 0
    assert got["inputs"]["remaining_device_ms"] == pytest.approx(want["remaining"])
    assert got["projected"]["step_ms"] >= want["remaining"] - 1e-6
    assert got["saved_ms"] == pytest.approx(want["saved"])


# --- issue 24 (f): the invariants, against the raw events ------------------------------------------------


def _union(intervals: list[tuple[int, int]]) -> int:
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total, end = total + (e - s), e
        elif e > end:
            total, end = total + (e - end), e
    return total


@pytest.mark.parametrize("name", GPU_TRACES)
def test_removing_a_category_frees_at_most_its_exclusive_time(inputs, name):
    """For every category of every shared GPU trace: the projection never goes below the union of the device
    work that remains, and never more is saved than the time the removed work alone held the device (plus,
    under the launch model, its launches at the steady-state launch cost). Both figures come from the raw
    events (tests/blame_reference.py's steps and device intervals); only the name → category mapping is the
    product's kernels table."""
    from tests import blame_reference

    data = inputs(name)
    category_of = {k["name"]: k["category"] for k in data["kernels"]}
    windows, device = blame_reference.steps_and_device_work(data["path"])

    def busy_ms(keep) -> float:
        ns = sum(
            _union([(max(s, ws), min(e, we)) for s, e, n in device if keep(n) and s < we and e > ws])
            for ws, we in windows
        )
        return ns / 1e6 / len(windows)

    everything = busy_ms(lambda n: True)
    for category in sorted({k["category"] for k in data["kernels"] if k["activity"] == "kernel"}):
        got = what_if(data, "--remove-category", category)
        remaining = busy_ms(lambda n, removed=category: category_of.get(n) != removed)
        exclusive = everything - remaining
        part = got["parts"][0]
        launch_part = (
            part["launches_removed"] * (got["inputs"]["steady_launch_us"] or 0) / 1000
            if got["model"]["name"] == "launches"
            else 0.0
        )
        assert got["projected"]["step_ms"] >= remaining - 1e-6, (category, got["projected"], remaining)
        assert got["saved_ms"] <= exclusive + launch_part + 1e-6, (category, got["saved_ms"], exclusive)


@pytest.mark.parametrize("name", GPU_TRACES)
def test_removing_launches_frees_at_most_their_exclusive_time(inputs, name):
    """Remove 1, half and every launch of the step on every shared GPU trace: the projection never goes below
    the union of the device work (launches removed, the work stays), and never more is saved than the removed
    launches held the step alone: under the launch model their share of the host's launching time while the
    device idled, under the GPU-work model the device's idle time. Both from the raw events
    (tests/blame_reference.py's blame and device intervals)."""
    from tests import blame_reference

    data = inputs(name)
    windows, device = blame_reference.steps_and_device_work(data["path"])
    blamed = blame_reference.blame(data["path"])
    steps = len(windows)
    busy = sum(_union([(max(s, ws), min(e, we)) for s, e, _ in device if s < we and e > ws]) for ws, we in windows)
    busy_ms = busy / 1e6 / steps
    launching_ms = sum(b["causes"].get("launching", 0) for b in blamed.values()) / 1e6 / steps
    blame_step_ms = sum(b["wall_ns"] for b in blamed.values()) / 1e6 / steps
    per_step = int(data["metrics"]["launches_per_step"])
    for launches in sorted({1, max(per_step // 2, 1), per_step}):
        got = what_if(data, "--remove-launches", str(launches))
        assert got["saved_ms"] >= 0
        assert got["projected"]["step_ms"] >= busy_ms - 1e-6, (launches, got["projected"], busy_ms)
        if got["model"]["name"] == "launches":
            most = launching_ms * launches / data["metrics"]["launches_per_step"]
        else:
            most = blame_step_ms - busy_ms
        assert got["saved_ms"] <= most + 1e-6, (launches, got["model"]["name"], got["saved_ms"], most)


def test_help_states_the_floor_without_loading_the_reader():
    """`what-if --help` states the floor model (the larger of the device work left and the host's recorded work
    that does not wait on the device), the same words the screen and --json give, and the CLI that prints it
    never imports the reader (a cold start pays for the help alone)."""
    import subprocess
    import sys

    from libreyolo_profile.cli_help import WHAT_IF_FLOOR
    from libreyolo_profile.readers.what_if import FLOOR

    assert FLOOR == WHAT_IF_FLOOR and "host_work_ms" in FLOOR and "never falls below" in FLOOR
    probe = (
        "import sys; from typer.testing import CliRunner; from libreyolo_profile.cli import app; "
        "r = CliRunner().invoke(app, ['what-if', '--help'], env={'COLUMNS': '2000'}); "
        "print(r.output); print('READER_LOADED' if 'libreyolo_profile.readers.what_if' in sys.modules else 'lazy')"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120).stdout
    assert " ".join(WHAT_IF_FLOOR.split()) in " ".join(out.split())
    assert out.split()[-1] == "lazy"
