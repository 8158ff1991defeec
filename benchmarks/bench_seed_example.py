"""Wall time of the seed's first example against the plain work it profiles (target ≤ 2×).

A: `libreyolo profile infer --device cpu --warmup 5 --runs 20` (cold process, writes a profile
   into a temp --project; that includes its unprofiled overhead pass, the trace export and the
   store's analysis, and the summary print).
B: a cold-process plain script that imports LibreYOLO, builds the same model (LibreYOLO9-t, the
   same weights resolution: ./LibreYOLO9t.pt or ./weights/LibreYOLO9t.pt if present, else random
   init in eval mode) and makes the same number of predict calls (5 + 20) on the sample image.

A and B alternate (A B, B A, …); every run is printed, then median and spread and the ratio of
medians.

    python benchmarks/bench_seed_example.py [--rounds 3]
Prints figures; it is not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PLAIN = r"""
import sys
from pathlib import Path
import libreyolo
from libreyolo import LibreYOLO9
local = [p for p in (Path("LibreYOLO9t.pt"), Path("weights/LibreYOLO9t.pt")) if p.is_file()]
if local:
    model = LibreYOLO9(str(local[0].resolve()), size="t", device="cpu")
else:
    import torch
    torch.manual_seed(0)
    model = LibreYOLO9(None, size="t", device="cpu")
model.model.eval()
for _ in range(int(sys.argv[1])):
    model(libreyolo.SAMPLE_IMAGE, conf=0.25, iou=0.45, max_det=300)
"""


def _cmd_a(project: Path) -> list[str]:
    exe = Path(sys.executable).with_name("libreyolo")
    head = [str(exe)] if exe.is_file() else [sys.executable, "-m", "libreyolo_profile.launcher"]
    if head[0].endswith("libreyolo"):
        return head + [
            "profile",
            "infer",
            "--device",
            "cpu",
            "--warmup",
            "5",
            "--runs",
            "20",
            "--project",
            str(project),
        ]
    return [
        sys.executable,
        "-m",
        "libreyolo_profile",
        "infer",
        "--device",
        "cpu",
        "--warmup",
        "5",
        "--runs",
        "20",
        "--project",
        str(project),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description="seed example wall time vs plain predict calls")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        script = tmp / "plain.py"
        script.write_text(PLAIN)
        times = {"A": [], "B": []}
        for r in range(a.rounds):
            for which in ("A", "B") if r % 2 == 0 else ("B", "A"):
                if which == "A":
                    cmd = _cmd_a(tmp / f"p{r}")
                else:
                    cmd = [sys.executable, str(script), "25"]
                t0 = time.perf_counter()
                p = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)
                dt = time.perf_counter() - t0
                if p.returncode != 0:
                    sys.exit(f"{which} failed ({p.returncode}): {p.stderr[-800:]}")
                times[which].append(dt)
                print(f"round {r + 1} {which}: {dt:.2f} s", flush=True)
    ma, mb = statistics.median(times["A"]), statistics.median(times["B"])
    print(
        f"A  libreyolo profile infer --device cpu --warmup 5 --runs 20: median {ma:.2f} s "
        f"(spread {min(times['A']):.2f}..{max(times['A']):.2f})"
    )
    print(
        f"B  plain script, 25 predict calls:                           median {mb:.2f} s "
        f"(spread {min(times['B']):.2f}..{max(times['B']):.2f})"
    )
    print(f"ratio A/B (medians): {ma / mb:.2f}× (target ≤ 2×)")


if __name__ == "__main__":
    main()
