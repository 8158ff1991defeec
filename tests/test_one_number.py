"""One number per concept (issue #25): the same quantity read through summary, get, phases, compare,
report and the summary's own screen is the same figure under the same name, with the same whole; two
quantities with different wholes carry different names (dataload_pct of the step vs wall_pct of the host
wall; gemm_pct of kernel time vs the category's share of device time; gpu_util_pct over the window vs
blame_device_busy_pct over the profiled steps' critical path).

Each reader runs through the real CLI on a real trace; where a whole is claimed, it is recomputed here
from the reader's own rows (the phase shares, the blame shares) rather than taken on trust.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import cli_json, run_cli

TRACE = "v100_resnet50_workers0"


@pytest.fixture(scope="module")
def readers(tmp_path_factory):
    from tests.conftest import require_traces

    path = str(require_traces() / f"{TRACE}.json.gz")
    out = tmp_path_factory.mktemp("report") / "r.html"
    run = run_cli("report", path, "--out", str(out))
    assert run.returncode == 0, run.stderr
    screen = run_cli("summary", path, env={"COLUMNS": "120"})
    assert screen.returncode == 0, screen.stderr
    return {
        "path": path,
        "summary": cli_json("summary", path),
        "phases": {p["phase"]: p for p in cli_json("phases", path)["phases"]},
        "compare": {r["metric"]: r for r in cli_json("compare", path, path)["metrics"]},
        "report": out.read_text(),
        "screen": screen.stdout,
    }


def get(readers, name: str):
    return cli_json("get", readers["path"], name)["value"]


def report_card(page: str, name: str) -> str:
    return re.search(rf'data-metric="{name}">.*?<div class="v">([^<]*)<', page).group(1)


def screen_metric(text: str, name: str) -> tuple[str, str]:
    row = next(line for line in text.splitlines() if line.startswith(f"{name} ") and "│" in line)
    cells = [c.strip() for c in row.split("│")]
    return cells[1], cells[2]


@pytest.mark.parametrize("name", ["step_ms", "gpu_util_pct", "host_overhead_pct", "launches_per_step"])
def test_a_headline_metric_is_one_number_everywhere(readers, name):
    value = readers["summary"]["metrics"][name]
    assert get(readers, name) == pytest.approx(value, rel=1e-12)
    assert readers["compare"][name]["before"] == pytest.approx(value, rel=1e-12)
    if name == "gpu_util_pct":
        assert report_card(readers["report"], name) == f"{value:.2f}"
        assert screen_metric(readers["screen"], name) == (f"{value:.2f}", "% of window")


def test_dataload_share_is_of_the_step_and_wall_pct_is_of_the_host_wall(readers):
    dataload = readers["summary"]["metrics"]["dataload_pct"]
    phases = readers["phases"]
    assert get(readers, "dataload_pct") == pytest.approx(dataload, rel=1e-12)
    assert readers["compare"]["dataload_pct"]["before"] == pytest.approx(dataload, rel=1e-12)
    assert phases["dataload"]["step_pct"] == pytest.approx(dataload, rel=1e-9)  # "% of step"
    # wall_pct divides by the phases' own sum, another whole under another name: it adds up to 100
    assert sum(p["wall_pct"] for p in phases.values()) == pytest.approx(100.0, abs=1e-6)
    assert phases["dataload"]["wall_pct"] != pytest.approx(dataload, abs=1e-3)


def test_gemm_share_of_kernel_time_vs_share_of_device_time(readers):
    gemm = readers["summary"]["metrics"]["gemm_pct"]
    category = next(c for c in readers["summary"]["categories"] if c["category"] == "gemm")
    assert get(readers, "gemm_pct") == pytest.approx(gemm, rel=1e-12)
    assert category["kernel_share_pct"] == pytest.approx(gemm, rel=1e-9)  # "% of kernel time"
    # share_pct counts copies in its whole ("% of device time"): a different name for a different whole
    assert category["share_pct"] < gemm
    assert sum(c["share_pct"] for c in readers["summary"]["categories"]) == pytest.approx(100.0, abs=0.01)


def test_device_busy_of_the_blame_has_its_own_name(readers):
    verdict = readers["summary"]["verdict"]
    busy = verdict["evidence"]["blame_device_busy_pct"]
    device_causes = ("gemm_conv", "attention", "memory_bound", "device_other", "communication", "memcpy_memset")
    assert busy == pytest.approx(sum(get(readers, f"blame_{c}_pct") or 0.0 for c in device_causes), abs=1e-9)
    assert f"device work holds {busy:.1f}% of each profiled step (blame_device_busy_pct" in verdict["reason"]
    # the window's utilization is a different figure and the verdict no longer quotes it as "GPU busy"
    assert "GPU busy" not in verdict["reason"]
