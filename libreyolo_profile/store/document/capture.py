"""What a measurement hands to the store: one captured trial.

The writers (`measure/`) only measure. Everything a reader shows is derived by the store from the
trial's Chrome trace, with the same ingest and SQL that read a foreign trace, so a profile of
ours and a trace from elsewhere are analysed by one definition of every metric.

Trace contract for our writers (torch.profiler + record_function):
- each measured step or call is one `ProfilerStep#<n>` range; warmup is not in the trace;
- phases are `## <phase> ##` ranges inside it: train `dataload`, `to_device`, `forward`,
  `backward`, `optimizer`; infer `preprocess`, `forward`, `postprocess`.
Anything the trace cannot carry (images per step, allocator peaks, the unprofiled timing that makes the
headline, the machine's load) rides here.

Plain data, JSON-safe (`to_json`/`from_json`): a trial measured in its own process hands its capture to
the parent this way.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class UnprofiledTiming:
    """The same work timed without the profiler, in blocks: the headline's source (store/document/headline.py)."""

    call_ms: list[float]  # each unprofiled call's or step's time, in order
    block_wall_ms: list[float]  # each block's host wall time, ending when the device is done
    stage_ms: dict[str, list[float]]  # per phase, each call's host time in it
    images_per_call: int
    clock: str  # what timed call_ms: "host perf_counter" or CUDA events
    where: str  # which calls, in words (blocks, their place around the profiled window)

    @classmethod
    def of_blocks(cls, blocks: list, images_per_call: int, where: str) -> "UnprofiledTiming":
        stages: dict[str, list[float]] = {}
        for block in blocks:
            for name, values in block.stage_ms.items():
                stages.setdefault(name, []).extend(values)
        return cls(
            call_ms=[v for b in blocks for v in b.call_ms],
            block_wall_ms=[b.wall_ms for b in blocks],
            stage_ms=stages,
            images_per_call=images_per_call,
            clock=blocks[0].clock,
            where=where,
        )


@dataclass
class TrialCapture:
    trace_path: Path  # the trial's Chrome trace (torch.profiler export_chrome_trace)
    images_per_step: int  # images consumed by one measured step or call
    peak_vram_mb: float | None = None  # torch.cuda.max_memory_allocated over the window (CUDA)
    peak_reserved_mb: float | None = None  # torch.cuda.max_memory_reserved over the window (CUDA)
    device_total_mb: float | None = None  # total device memory (CUDA)
    num_alloc_retries: int | None = None  # torch.cuda.memory_stats()["num_alloc_retries"] in the window
    peak_mem_mb: float | None = None  # peak allocated memory on the profiled device, any device
    profiled_step_ms: float | None = None  # the profiled window's mean call time (infer) or wall ÷ steps (train)
    profiled_window_ms: float | None = None  # the profiled window's host wall time
    unprofiled: UnprofiledTiming | None = None  # the headline's calls; None with --no-overhead
    machine: dict | None = None  # what else the machine did meanwhile (measure/noise.py)
    process: dict | None = None  # the process the trial ran in: pid, fresh (its own process) or not
    extra: dict = field(default_factory=dict)  # anything else measured, kept verbatim in profile.json

    def to_json(self) -> dict:
        data = asdict(self)
        data["trace_path"] = str(self.trace_path)
        return data

    @classmethod
    def from_json(cls, data: dict) -> "TrialCapture":
        data = dict(data)
        data["trace_path"] = Path(data["trace_path"])
        if data.get("unprofiled") is not None:
            data["unprofiled"] = UnprofiledTiming(**data["unprofiled"])
        return cls(**data)
