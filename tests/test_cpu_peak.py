"""The CPU's roof remembered per machine for a day (measure/cpu_peak.py, issue 27): measured once, then the
same figures with the time they were measured; measured again when a day has passed, when the thread count
differs, when the probe failed, whenever the remembered entry is damaged, planted or not a file, and when a
quick check now beats it by more than its spread (issue 50: a roof probed on a busy machine). The roof is the
best of several probes, their spread recorded."""

from __future__ import annotations

import json
import os
import time

import pytest

from libreyolo_profile.measure import cpu_peak

pytestmark = pytest.mark.cold_cache  # counts the probes: nothing remembered by earlier tests

FIGURES = {"fp32_tflops": 0.25, "tb_per_s": 0.02}
SPREADS = {"fp32_spread_pct": 10.0, "copy_spread_pct": 5.0}
CPU = "Test CPU @ 1.00GHz"


class Runs(list):
    """The times of the full probes, and what the next quick check measures."""

    quick = FIGURES


@pytest.fixture
def probes(monkeypatch):
    """The probe replaced by one that counts its full runs (the real one is run by every CPU measurement); the
    quick check of a remembered roof (one round of one repeat) reads `quick`, the remembered figures unless a
    test sets it."""
    runs = Runs()

    torch = pytest.importorskip("torch")  # here, not at collection: 1.5 s and its memory in every test worker

    def probe(probes=cpu_peak.PROBES, repeats=cpu_peak.REPEATS // cpu_peak.PROBES):
        if probes == 1 and repeats == 1:
            return {**runs.quick, **SPREADS, "threads": torch.get_num_threads(), "method": "quick"}
        runs.append(time.time())
        return {**FIGURES, **SPREADS, "threads": torch.get_num_threads(), "method": f"measured: probe {len(runs)}"}

    monkeypatch.setattr(cpu_peak, "measure_cpu_peak", probe)
    return runs


def only_entry(cache) -> os.PathLike:
    (entry,) = (cache / "libreyolo-profile" / "cpu_peak").iterdir()
    return entry


def test_measured_once_then_remembered_with_when(probes, private_cache):
    first = cpu_peak.cpu_peak(CPU)
    again = cpu_peak.cpu_peak(CPU)
    assert len(probes) == 1
    assert first["method"] == "measured: probe 1" and first["measured_at"].endswith("Z")
    assert {k: again[k] for k in FIGURES} == FIGURES and again["measured_at"] == first["measured_at"]
    assert again["method"].startswith("measured: probe 1, at " + first["measured_at"])
    assert "by an earlier command on this machine" in again["method"]


@pytest.mark.parametrize("hours_ago", [25, -1])  # older than a day, or a time still to come
def test_a_roof_from_another_day_is_measured_again(probes, private_cache, hours_ago):
    cpu_peak.cpu_peak(CPU)
    entry = only_entry(private_cache)
    kept = json.loads(entry.read_text())
    entry.write_text(json.dumps(dict(kept, measured_at=time.time() - hours_ago * 3600)))
    assert cpu_peak.cpu_peak(CPU)["method"] == "measured: probe 2"


def test_another_thread_count_is_another_roof(probes, private_cache):
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    cpu_peak.cpu_peak(CPU)
    try:
        torch.set_num_threads(threads + 1)
        assert cpu_peak.cpu_peak(CPU)["method"] == "measured: probe 2"
    finally:
        torch.set_num_threads(threads)
    assert cpu_peak.cpu_peak(CPU)["method"].startswith("measured: probe 1, at ")
    assert len(list((private_cache / "libreyolo-profile" / "cpu_peak").iterdir())) == 2


def test_a_failed_probe_is_not_remembered(monkeypatch, private_cache):
    monkeypatch.setattr(cpu_peak, "measure_cpu_peak", lambda: {"null_reason": "the CPU peak probe failed (x)"})
    assert cpu_peak.cpu_peak(CPU) == {"null_reason": "the CPU peak probe failed (x)"}
    assert not (private_cache / "libreyolo-profile" / "cpu_peak").exists()


@pytest.mark.parametrize(
    "damage",
    [
        "not json",
        '{"fp32_tflops": -1, "tb_per_s": 0.02, "threads": 1, "method": "m", "measured_at": 0, '
        '"fp32_spread_pct": 1, "copy_spread_pct": 1}',
        '{"fp32_tflops": "0.25"}',
        '{"fp32_tflops": 1e999, "tb_per_s": 0.02, "threads": 1, "method": "m", "measured_at": 0, '
        '"fp32_spread_pct": 1, "copy_spread_pct": 1}',
        '{"fp32_tflops": 0.25, "tb_per_s": 0.02, "threads": 1, "method": "m", "measured_at": 0, '
        '"fp32_spread_pct": -5, "copy_spread_pct": 1}',
        "[" * 5000,  # larger than any entry of ours
    ],
)
def test_a_damaged_entry_is_measured_again_and_replaced(probes, private_cache, damage):
    cpu_peak.cpu_peak(CPU)
    entry = only_entry(private_cache)
    entry.write_text(damage.replace('"measured_at": 0', f'"measured_at": {time.time()}'))
    assert cpu_peak.cpu_peak(CPU)["method"] == "measured: probe 2"
    assert json.loads(entry.read_text())["method"] == "measured: probe 2"


def test_a_planted_link_or_fifo_is_not_read_and_not_written_through(probes, private_cache, tmp_path):
    cpu_peak.cpu_peak(CPU)
    entry = only_entry(private_cache)
    good = entry.read_text()
    victim = tmp_path / "victim.json"
    victim.write_text(good)  # a well-formed roof behind the link: still not read
    entry.unlink()
    entry.symlink_to(victim)
    assert cpu_peak.cpu_peak(CPU)["method"] == "measured: probe 2"
    assert victim.read_text() == good and not entry.is_symlink()  # replaced by our own file
    entry.unlink()
    os.mkfifo(entry)
    assert cpu_peak.cpu_peak(CPU)["method"] == "measured: probe 3"  # read without blocking, then replaced
    assert entry.is_file()


@pytest.mark.parametrize("beaten", ["fp32_tflops", "tb_per_s"])
def test_a_remembered_roof_a_quick_check_beats_beyond_its_spread_is_measured_again(probes, private_cache, beaten):
    cpu_peak.cpu_peak(CPU)
    spread = SPREADS["fp32_spread_pct" if beaten == "fp32_tflops" else "copy_spread_pct"]
    probes.quick = {**FIGURES, beaten: FIGURES[beaten] * (1 + spread / 100) * 0.99}  # within the spread
    assert cpu_peak.cpu_peak(CPU)["method"].startswith("measured: probe 1, at ")
    probes.quick = {**FIGURES, beaten: FIGURES[beaten] * (1 + spread / 100) * 1.01}  # beyond it
    assert cpu_peak.cpu_peak(CPU)["method"] == "measured: probe 2"


def test_the_roof_is_the_best_probe_with_the_spread_said(monkeypatch):
    pytest.importorskip("torch")
    # per probe, its best seconds: matmul 0.1 s at best, its worst probe at a rate 23 % lower; copies 1 % apart
    timings = iter([[0.13, 0.1, 0.11, 0.12, 0.1], [0.0101, 0.01, 0.01, 0.01, 0.01]])
    monkeypatch.setattr(cpu_peak, "_probe_seconds", lambda work, probes, repeats: next(timings))
    roof = cpu_peak.measure_cpu_peak()
    assert roof["fp32_tflops"] == pytest.approx(2 * cpu_peak.MATMUL_N**3 / 0.1 / 1e12)
    assert roof["tb_per_s"] == pytest.approx(2 * cpu_peak.COPY_MIB * 2**20 / 0.01 / 1e12)
    assert roof["fp32_spread_pct"] == pytest.approx(300 / 13) and roof["copy_spread_pct"] == pytest.approx(100 / 101)
    assert "spread 23% (matmul) and 1% (copy): the machine was busy" in roof["method"]


def test_a_reprobe_that_beats_the_roof_raises_and_remembers_it(probes, private_cache):
    """After a measurement that doubts its roof (issue 50): a short probe, the roof the higher of the two per
    figure, remembered where raised, and the profile told when, why and what the probe read."""
    roof = cpu_peak.cpu_peak(CPU)
    lower = {**roof, "fp32_tflops": FIGURES["fp32_tflops"] / 2}  # a roof probed on a busy machine
    raised = cpu_peak.reprobe(CPU, lower, "3 op(s) ran faster than the roof")
    assert len(probes) == 2
    assert raised["fp32_tflops"] == FIGURES["fp32_tflops"] and raised["tb_per_s"] == FIGURES["tb_per_s"]
    assert raised["reprobed"]["why"] == "3 op(s) ran faster than the roof"
    assert raised["reprobed"]["fp32_tflops"] == FIGURES["fp32_tflops"] and raised["reprobed"]["at"].endswith("Z")
    assert "probed again after the measurement (3 op(s) ran faster than the roof)" in raised["method"]
    assert "raising the matmul roof" in raised["method"]
    probes.quick = FIGURES
    again = cpu_peak.cpu_peak(CPU)  # the raised roof is the one remembered
    assert again["fp32_tflops"] == FIGURES["fp32_tflops"] and "the higher of an earlier roof" in again["method"]


def test_a_reprobe_below_the_roof_keeps_it_and_says_so(probes, private_cache):
    roof = cpu_peak.cpu_peak(CPU)
    higher = {**roof, "fp32_tflops": FIGURES["fp32_tflops"] * 3, "tb_per_s": FIGURES["tb_per_s"] * 3}
    kept = cpu_peak.reprobe(CPU, higher, "the measurement was marked noisy")
    assert (kept["fp32_tflops"], kept["tb_per_s"]) == (higher["fp32_tflops"], higher["tb_per_s"])  # never lowered
    assert kept["method"].endswith("below the roof, kept") and kept["reprobed"]["why"].endswith("noisy")
    entry = json.loads(only_entry(private_cache).read_text())
    assert entry["fp32_tflops"] == FIGURES["fp32_tflops"]  # the remembered roof untouched
