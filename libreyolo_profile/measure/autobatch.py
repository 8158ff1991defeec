"""`libreyolo profile run --batch -1`: the batch that fills about 70% of the device's memory,
measured with a few synthetic training steps, and never more than the dataset can supply."""

from __future__ import annotations

from pathlib import Path

AUTO_FRACTION = 0.70  # --batch -1 targets about 70% of device memory
CPU_AUTO_CAP = 16  # --batch -1 on the CPU never goes above the default batch


def _synthetic_batch(b: int, imgsz: int, device):
    import torch

    g = torch.Generator().manual_seed(1234)
    imgs = torch.rand(b, 3, imgsz, imgsz, generator=g)
    targets = torch.full((b, 300, 5), -1.0)
    for i in range(b):  # a few boxes per image so the assigner and loss do real work
        for j in range(8):
            x1, y1 = torch.rand(2, generator=g) * 0.6
            targets[i, j] = torch.tensor([j % 3, x1, y1, x1 + 0.2, y1 + 0.25])
    return imgs.to(device), targets.to(device)


def _probe_step(model, b: int, imgsz: int, device, autocast_dtype) -> None:
    import torch

    imgs, targets = _synthetic_batch(b, imgsz, device)
    model.train()
    if autocast_dtype is not None:
        with torch.autocast("cuda", dtype=autocast_dtype):
            loss = model(imgs, targets=targets)["total_loss"]
    else:
        loss = model(imgs, targets=targets)["total_loss"]
    loss.backward()
    model.zero_grad(set_to_none=True)


def _current_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise OSError("no VmRSS")


def _available_ram_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    raise OSError("no MemAvailable")


def probe_record(batches, measured_mb, measure: str) -> list[dict]:
    """What the probe measured per batch size, as the profile records it (settings.batch_probe)."""
    pairs = zip(batches, measured_mb, strict=False)
    return [{"batch": b, "memory_mb": round(mb, 1), "measure": measure} for b, mb in pairs]


def auto_batch(model, imgsz: int, device, autocast_dtype, supply_cap: int) -> tuple[int, str, list[dict]]:
    """Pick the batch for --batch -1. Returns (batch, why, the memory measured per probed batch)."""
    if device.type == "cuda":
        return _cuda_auto_batch(model, imgsz, device, autocast_dtype, supply_cap)
    return _cpu_auto_batch(model, imgsz, device, supply_cap)


def _cuda_auto_batch(model, imgsz: int, device, autocast_dtype, supply_cap: int) -> tuple[int, str, list[dict]]:
    """CUDA: the allocator's peak over one training step at batch 1, 2, 4, fitted by a line and solved for
    the batch that fills AUTO_FRACTION of the device, then capped by what the dataset supplies."""
    import torch

    param_mb = sum(p.numel() * p.element_size() for p in model.parameters()) / 2**20
    total = torch.cuda.get_device_properties(device).total_memory / 2**20
    probes, peaks = _cuda_probe_peaks(model, imgsz, device, autocast_dtype)
    if not peaks:
        return 1, "--batch -1: even batch 1 ran out of device memory in the probe; using 1", []
    slope = (peaks[-1] - peaks[0]) / max(probes[len(peaks) - 1] - probes[0], 1) if len(peaks) > 1 else peaks[0]
    slope = max(slope, 1e-3)
    intercept = peaks[0] - slope * probes[0] + 2 * param_mb  # + SGD momentum buffers + the EMA copy
    mem_batch = max(1, int((AUTO_FRACTION * total - intercept) // slope))
    basis = (
        f"CUDA probe: training steps (forward+loss+backward, "
        f"{'autocast ' + str(autocast_dtype).replace('torch.', '') if autocast_dtype else 'fp32'}) at batch "
        f"{', '.join(map(str, probes[: len(peaks)]))} peaked at "
        f"{', '.join(f'{p:.0f}' for p in peaks)} MiB; linear fit {slope:.1f} MiB/image + {intercept:.0f} MiB "
        f"(incl. {2 * param_mb:.0f} MiB momentum + EMA) → {mem_batch} fills {AUTO_FRACTION:.0%} of {total:.0f} MiB"
    )
    picked = min(mem_batch, supply_cap) if supply_cap >= 1 else mem_batch
    if picked < mem_batch:
        basis += f"; capped at {picked} so the dataset supplies warmup+steps full batches in one pass"
    return picked, basis, probe_record(probes, peaks, "torch.cuda.max_memory_allocated over one training step")


def _cuda_probe_peaks(model, imgsz: int, device, autocast_dtype) -> tuple[tuple[int, ...], list[float]]:
    """(the batches probed, the allocator's peak MiB of one training step at each): a batch that runs out
    of memory ends the probe, and only the batches before it are returned (none when batch 1 did)."""
    import torch

    probes = (1, 2, 4)
    peaks = []
    try:
        for b in probes:
            torch.cuda.synchronize(device)
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(device)
            _probe_step(model, b, imgsz, device, autocast_dtype)
            torch.cuda.synchronize(device)
            peaks.append(torch.cuda.max_memory_allocated(device) / 2**20)
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        probes = probes[: len(peaks)]
    finally:
        model.zero_grad(set_to_none=True)
        torch.cuda.empty_cache()
    return probes, peaks


def _cpu_auto_batch(model, imgsz: int, device, supply_cap: int) -> tuple[int, str, list[dict]]:
    """CPU: no allocator statistics without the profiler, so measure the process's resident memory
    right after forward+loss (the autograd graph then holds every activation) at batch 2 and 4,
    after one untimed batch-1 step has grown the allocator's pools."""
    rss = {}
    try:
        _probe_step(model, 1, imgsz, device, None)
        for b in (2, 4):
            base = _current_rss_mb()
            imgs, targets = _synthetic_batch(b, imgsz, device)
            model.train()
            loss = model(imgs, targets=targets)["total_loss"]
            rss[b] = _current_rss_mb() - base
            loss.backward()
            model.zero_grad(set_to_none=True)
            del loss, imgs, targets
        per_image = (rss[4] - rss[2]) / 2
        if per_image <= 0:
            per_image = rss[4] / 4
        per_image = max(per_image, 1.0)
        available = _available_ram_mb()
        mem_batch = max(1, int(AUTO_FRACTION * available // (per_image * 2.0)))  # ×2: grads + backward buffers
        basis = (
            f"CPU rule: resident-memory growth after forward+loss at batch 2, 4 = "
            f"{rss[2]:.0f}, {rss[4]:.0f} MiB → ~{per_image:.0f} MiB/image, doubled for backward; "
            f"{mem_batch} fits {AUTO_FRACTION:.0%} of {available:.0f} MiB available RAM"
        )
    except (OSError, ValueError, KeyError) as exc:
        mem_batch = CPU_AUTO_CAP
        basis = f"CPU rule: memory could not be measured ({exc}); assuming the default"
    picked = min(mem_batch, CPU_AUTO_CAP)
    if picked < mem_batch:
        basis += f"; capped at {CPU_AUTO_CAP} (the default batch) to keep CPU steps short"
    if supply_cap >= 1 and supply_cap < picked:
        picked = supply_cap
        basis += f"; capped at {picked} so the dataset supplies warmup+steps full batches in one pass"
    probed = probe_record(list(rss), list(rss.values()), "growth of the process's resident memory over forward+loss")
    return max(1, picked), basis, probed
