"""The FLOP count remembered per architecture and input shape (measure/flop_cache.py, issue 27): counted once,
read back after, never shared between architectures or shapes, and never trusted from a damaged entry."""

from __future__ import annotations

import pytest

from libreyolo_profile.measure import families, flop_cache

pytestmark = pytest.mark.cold_cache  # counts what is measured: nothing remembered by earlier tests


def conv(channels: int = 8):
    torch = pytest.importorskip("torch")  # here, not at collection: 1.5 s and its memory in every test worker
    return torch.nn.Sequential(torch.nn.Conv2d(3, channels, 3, padding=1), torch.nn.ReLU())


# one 3×3 conv, 3 → 8 channels, on a 16×16 input: 2 FLOPs per multiply-accumulate × 8·16·16 outputs × 3·3·3
EXPECTED = 2 * 8 * 16 * 16 * 3 * 3 * 3


@pytest.fixture
def counts(monkeypatch):
    calls = []
    real = families.forward_flops

    def counting(module, shape, device):
        calls.append(shape)
        return real(module, shape, device)

    monkeypatch.setattr(families, "forward_flops", counting)
    return calls


def test_counted_once_then_remembered(counts):
    module, shape = conv(), (1, 3, 16, 16)
    assert flop_cache.forward_flops(module, shape, "cpu") == (EXPECTED, None)
    assert flop_cache.forward_flops(conv(), shape, "cpu") == (EXPECTED, None)  # other weights, same architecture
    assert counts == [shape]


def test_another_shape_or_architecture_is_counted_again(counts):
    flop_cache.forward_flops(conv(), (1, 3, 16, 16), "cpu")
    assert flop_cache.forward_flops(conv(), (1, 3, 32, 32), "cpu") == (EXPECTED * 4, None)
    assert flop_cache.forward_flops(conv(16), (1, 3, 16, 16), "cpu") == (EXPECTED * 2, None)
    assert len(counts) == 3


@pytest.mark.parametrize("damage", ['{"flops": -1}', '{"flops": "12"}', "not json", '{"flops": true}'])
def test_a_damaged_entry_is_counted_again(counts, damage):
    module, shape = conv(), (1, 3, 16, 16)
    flop_cache.forward_flops(module, shape, "cpu")
    flop_cache._entry(module, shape).write_text(damage)
    assert flop_cache.forward_flops(module, shape, "cpu") == (EXPECTED, None)
    assert len(counts) == 2


def test_a_planted_link_is_not_read_and_not_written_through(counts, tmp_path):
    module, shape = conv(), (1, 3, 16, 16)
    entry = flop_cache._entry(module, shape)
    entry.parent.mkdir(parents=True, exist_ok=True)
    victim = tmp_path / "victim.json"
    victim.write_text('{"flops": 7}')
    entry.symlink_to(victim)
    assert flop_cache.forward_flops(module, shape, "cpu") == (EXPECTED, None)
    assert victim.read_text() == '{"flops": 7}' and not entry.is_symlink()  # replaced by our own file
