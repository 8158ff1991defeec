"""What a measurement hands to the store: one captured trial.

The writers (`measure/`) only measure. Everything a reader shows is derived by the store from the
trial's Chrome trace, with the same ingest and SQL that read a foreign trace, so a profile of
ours and a trace from elsewhere are analysed by one definition of every metric.

Trace contract for our writers (torch.profiler + record_function):
- each measured step or call is one `ProfilerStep#<n>` range; warmup is not in the trace;
- phases are `## <phase> ##` ranges inside it: train `dataload`, `to_device`, `forward`,
  `backward`, `optimizer`; infer `preprocess`, `forward`, `postprocess`.
Anything the trace cannot carry (images per step, allocator peaks, profiler overhead) rides here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class TrialCapture:
    trace_path: Path  # the trial's Chrome trace (torch.profiler export_chrome_trace)
    images_per_step: int  # images consumed by one measured step or call
    peak_vram_mb: float | None = None  # torch.cuda.max_memory_allocated over the window (CUDA)
    peak_reserved_mb: float | None = None  # torch.cuda.max_memory_reserved over the window (CUDA)
    device_total_mb: float | None = None  # total device memory (CUDA)
    num_alloc_retries: int | None = None  # torch.cuda.memory_stats()["num_alloc_retries"] in the window
    peak_mem_mb: float | None = None  # peak allocated memory on the profiled device, any device
    profiler_overhead_pct: float | None = None  # (profiled - unprofiled) / unprofiled * 100
    overhead_method: str | None = None  # how profiler_overhead_pct was measured, in words
    extra: dict = field(default_factory=dict)  # anything else measured, kept verbatim in profile.json
