"""`libreyolo profile infer`: the inference path of a LibreYOLO model (any family the factory builds,
or an ONNX Runtime / OpenVINO / TorchScript export: measure/infer_model.py, runtimes.py), stage by stage.

One measured call = LibreYOLO's own three stages for `--batch` images, the way its batched predict
path runs them: `_preprocess` per image (letterbox → tensor) + `torch.cat` + the host→device copy,
one `_forward` under `torch.no_grad()` (and CUDA autocast with --half), then `_postprocess` (NMS)
per image on `slice_batch_outputs(output, i)`, which yields python lists on the host. On CUDA the
forward stage ends with a synchronize, so every call's latency is complete work with results on
the host. Images are decoded once before the window (decoding is not in the latency).

Per trial: warmup calls (not traced; in the first trial a process measures, the first of them is the
preflight call that checks the model runs at this size); half of the `--runs` calls unprofiled; the profiled window —
`--profiled-runs` calls, by default min(--runs, 3) (store/document/window.py) — under torch.profiler, each
one `ProfilerStep#n` with `## preprocess ##`, `## forward ##`, `## postprocess ##` (and the module ranges)
inside; the other half unprofiled — same inputs, same order. The unprofiled
calls are the headline (store/document/headline.py); the profiled window is the attribution, and the
pair gives profiler_overhead_pct. `--repeat N` runs each trial in its own process (measure/isolated.py).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from libreyolo_profile.errors import UsageError
from libreyolo_profile.measure import common, infer_model, preflight, profiler, trials
from libreyolo_profile.measure.common import MeasuredProfile
from libreyolo_profile.measure.modules import ModuleRanges
from libreyolo_profile.measure.noise import LoadSampler
from libreyolo_profile.measure.options import InferOptions
from libreyolo_profile.measure.trials import Block, Call, TrialRunner

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".gif"}


def _source_files(source: str | None) -> tuple[list[Path], str, str]:
    """(files, kind, shown) — exit 2 for a missing path or a directory without images."""
    if source is None:
        import libreyolo

        sample = Path(libreyolo.SAMPLE_IMAGE)
        if not sample.is_file():
            raise UsageError(f"LibreYOLO's bundled sample image {sample} is missing; pass an image or directory")
        return [sample], "sample", f"LibreYOLO sample image {sample}"
    p = Path(source).expanduser()
    if p.is_file():
        return [p.resolve()], "file", str(p.resolve())
    if p.is_dir():
        files = sorted(f.resolve() for f in p.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
        if not files:
            raise UsageError(f"source {source}: directory holds no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
        return files, "directory", str(p.resolve())
    raise UsageError(f"source {source}: no such file or directory")


def _decode(files: list[Path]) -> list:
    from PIL import Image

    images = []
    for f in files:
        try:
            with Image.open(f) as im:
                images.append(im.convert("RGB"))
        except Exception as exc:
            raise UsageError(f"source {f}: not a readable image ({type(exc).__name__}: {exc})") from None
    return images


class InferCall:
    """One inference call over a batch of decoded images, optionally annotated with phases. NMS's
    thresholds (--conf, --iou, --max-det) and the module ranges' depth are read from `opts`."""

    def __init__(self, wrapper, device, imgsz: int, opts: InferOptions, autocast_dtype):
        import torch
        from libreyolo.postprocess.slicing import slice_batch_outputs

        self.torch = torch
        self.slice = slice_batch_outputs
        self.wrapper = wrapper
        self.device = device
        self.imgsz = imgsz
        self.conf, self.iou, self.max_det = opts.conf, opts.iou, opts.max_det
        self.autocast_dtype = autocast_dtype
        self.cuda = device.type == "cuda"
        self.module_ranges = ModuleRanges(wrapper.model, opts.module_depth)  # annotated calls only

    def _phase(self, name: str, annotate: bool):
        return trials.phase(name, annotate)

    def __call__(self, images: list, annotate: bool) -> list:
        torch, w = self.torch, self.wrapper
        with self._phase("preprocess", annotate):
            pre = [w._preprocess(img, "auto", input_size=self.imgsz) for img in images]
            x = pre[0][0] if len(pre) == 1 else torch.cat([p[0] for p in pre], dim=0)
            x = x.to(self.device)
        with self._phase("forward", annotate):
            with torch.no_grad(), self.module_ranges.recording(annotate):
                if self.autocast_dtype is not None:
                    with torch.autocast("cuda", dtype=self.autocast_dtype):
                        out = w._forward(x)
                else:
                    out = w._forward(x)
            if self.cuda:
                torch.cuda.synchronize(self.device)
        with self._phase("postprocess", annotate):
            if len(pre) == 1:
                dets = [
                    w._postprocess(
                        out,
                        self.conf,
                        self.iou,
                        pre[0][2],
                        max_det=self.max_det,
                        ratio=pre[0][3],
                        input_size=self.imgsz,
                    )
                ]
            else:
                dets = [
                    w._postprocess(
                        self.slice(out, i),
                        self.conf,
                        self.iou,
                        p[2],
                        max_det=self.max_det,
                        ratio=p[3],
                        input_size=self.imgsz,
                    )
                    for i, p in enumerate(pre)
                ]
        return dets


def over_plan(infer_call: InferCall, plan: list[list]) -> Call:
    """The trial loop's call: call i runs the plan's i-th batch (warmup wraps around the plan)."""

    def call(index: int, annotate: bool) -> list:
        return infer_call(plan[index % len(plan)], annotate)

    return call


def batch_plan(images: list, batch: int, runs: int) -> list[list]:
    """The batch of each measured call: the images in order, wrapping around, `batch` at a time."""
    return [[images[(i * batch + k) % len(images)] for k in range(batch)] for i in range(runs)]


def profile_infer(
    opts: InferOptions, argv: list[str], *, only_trial: int | None = None, hand_off_to: Path | None = None
) -> MeasuredProfile | None:
    """Measure `opts.repeat` trials and write the profile; returns where it went. With `only_trial` (a
    trial's own process, measure/isolated.py), measure that one trial and hand it to `hand_off_to`."""
    preflight.check_infer(opts)  # before torch: a typo is said in milliseconds, not after the import
    files, source_kind, source_shown = _source_files(opts.source)
    if opts.repeat > 1 and opts.fresh_processes and only_trial is None:
        from libreyolo_profile.measure.isolated import measure_in_processes

        return measure_in_processes("infer", opts, argv)
    device, autocast_dtype = _device_and_autocast(opts)

    with common.workspace(opts.project, "infer") as tmp:
        with common.pinned():  # --threads' CPUs from the model's load to the last trial (measure/common.py)
            images = _decode(files)
            model = infer_model.prepare(
                opts,
                device,
                tmp,
                images,
                lambda wrapper, imgsz: InferCall(wrapper, device, imgsz, opts, autocast_dtype),
            )
            model_info, marks, imgsz = model.info, model.marks, model.imgsz
            call = over_plan(model.call, batch_plan(images, opts.batch, opts.runs))
            profile_memory = opts.memory  # the profiled window only: the unprofiled headline calls never see it
            trials = [
                _measure_trial(
                    call,
                    opts,
                    device,
                    (hand_off_to or tmp) / f"trial{trial + 1}_trace.json",
                    trial,
                    profile_memory,
                    warmed=model.preflight_calls if k == 0 else 0,
                )
                for k, trial in enumerate(range(opts.repeat) if only_trial is None else [only_trial])
            ]
        infer_model.finish(model, trials)
        env = common.environment(device)
        source = {"source": source_shown, "source_kind": source_kind, "source_images": len(images)}
        settings = _settings(opts, source, model_info, imgsz, device, profile_memory)
        if hand_off_to is not None:
            from libreyolo_profile.measure.isolated import hand_off

            return hand_off(hand_off_to, trials, settings=settings, environment=env, model=model_info, marks=marks)
        return common.publish(
            Path(opts.project) / "infer",
            kind="infer",
            trials=trials,
            keep_trace=opts.trace,
            command=list(argv),
            settings=settings,
            env=env,
            model=model_info,
            marks=marks,
            exist_ok=opts.exist_ok,
        )


def _device_and_autocast(opts: InferOptions):
    """(the device, the forward pass's autocast dtype or None), after torch and LibreYOLO are imported and
    checked: exit 2 for --half off CUDA, or --amp-dtype bfloat16 on a GPU without it."""
    with common.status("importing torch and LibreYOLO"):
        import torch

        device = common.resolve_device(opts.device)
        common.apply_threads(opts.threads)
        if opts.half and device.type != "cuda":
            raise UsageError(
                "--half runs the forward pass under CUDA autocast and needs a CUDA device; "
                "drop --half (or use --no-half) with --device cpu"
            )
        from libreyolo_profile.measure import adapter

        adapter.check_libreyolo()
    autocast_dtype = getattr(torch, opts.amp_dtype) if opts.half else None
    if autocast_dtype is torch.bfloat16 and not torch.cuda.is_bf16_supported():
        raise UsageError(
            f"--amp-dtype bfloat16: {torch.cuda.get_device_name(device)} has no bfloat16 support; use float16"
        )
    return device, autocast_dtype


def _measure_trial(
    call: Call, opts: InferOptions, device, trace_path: Path, trial: int, profile_memory: bool, warmed: int = 0
):
    """Warmup, half the unprofiled calls, the profiled window, the other half (blocks A B A, same
    inputs in the same order); the trace exported. The unprofiled calls are the headline. `warmed`: the
    warmup's first calls already made (the preflight, in the first trial a process measures)."""
    runs, warmup, profiled = opts.runs, opts.warmup, opts.window_runs
    label = f"trial {trial + 1}/{opts.repeat}" if opts.repeat > 1 else "infer"
    total = warmup + profiled + (runs if opts.overhead else 0)
    load = LoadSampler(device)
    with common.progress(
        f"{label}: warmup {warmup}, {profiled} profiled calls" + (f", {runs} unprofiled" if opts.overhead else ""),
        total,
    ) as advance:
        runner = TrialRunner(device, advance)
        load.start()
        runner.warmup(call, warmup, done=min(warmed, warmup))
        retries = profiler.cuda_memory_reset(device)
        before = runs // 2 if opts.overhead else 0
        plain = [runner.time_block(call, range(before))] if before else []
        if device.type == "cuda":  # the unprofiled calls must not lift the window's peak
            retries = profiler.cuda_memory_reset(device)
        prof = profiler.make_profiler(device, profile_memory=profile_memory)
        window = runner.profiled_window(call, profiled, prof)
        mem = profiler.cuda_memory_capture(device, retries)
        if opts.overhead:
            plain.append(runner.time_block(call, range(before, runs)))
        machine = load.stop()
        profiler.export_trace(prof, trace_path)
        del prof
    return _capture(trace_path, opts.batch, mem, window, plain, machine, device)


def _settings(opts: InferOptions, source: dict, model_info: dict, imgsz: int, device, profile_memory: bool) -> dict:
    import torch

    return {
        **source,
        "weights": opts.weights,
        "size": model_info["size"],
        "batch": opts.batch,
        "imgsz": imgsz,
        "imgsz_requested": opts.imgsz,
        "half": opts.half,
        "amp_dtype": opts.amp_dtype if opts.half else None,
        "warmup": opts.warmup,
        "runs": opts.runs,
        "profiled_runs": opts.window_runs,
        "repeat": opts.repeat,
        "conf": opts.conf,
        "iou": opts.iou,
        "max_det": opts.max_det,
        "device": str(device),
        "device_requested": str(opts.device),
        "trace": opts.trace,
        "project": str(Path(opts.project).resolve()),
        "overhead": opts.overhead,
        "decode_in_latency": False,
        "latency_scope": (
            "one call = LibreYOLO _preprocess per image (letterbox, to tensor) + torch.cat + "
            "host-to-device copy | _forward under torch.no_grad"
            + (f" and CUDA autocast {opts.amp_dtype}" if opts.half else "")
            + (" + cuda synchronize" if device.type == "cuda" else "")
            + " | _postprocess (NMS) per image to python lists; images decoded once "
            "before the window, Results objects not built"
        ),
        "torch_threads": torch.get_num_threads(),
        "threads_requested": opts.threads,
        **common.pinning_settings(),
        "profile_memory": profile_memory,
        "module_depth": opts.module_depth,
        "profiler": profiler.profiler_settings(device),
    }


def _capture(trace_path: Path, batch: int, mem: dict, window: Block, plain: list[Block], machine: dict, device):
    from libreyolo_profile.store.document.capture import TrialCapture, UnprofiledTiming

    profiled = window.call_ms
    extra = {
        "host_latency_mean_ms": round(statistics.fmean(profiled), 4),
        "host_latency_p50_ms": round(statistics.median(profiled), 4),
        "host_latency_ms": [round(v, 4) for v in profiled],
        "profiled_calls": len(profiled),
    }
    if device.type == "cpu":
        extra["peak_rss_mb"] = profiler.peak_rss_mb()
        extra["peak_rss_note"] = (
            "process peak resident set size since start (interpreter, libraries, model "
            "and every tensor; the profiler's own records also grow with each profiled call), "
            "not an allocator peak"
        )
    unprofiled = None
    if plain:
        extra["unprofiled_latency_ms"] = [round(v, 4) for b in plain for v in b.call_ms]
        unprofiled = UnprofiledTiming.of_blocks(
            plain,
            images_per_call=batch,
            where=(
                f"{sum(len(b.call_ms) for b in plain)} unprofiled calls in {len(plain)} blocks, half just before "
                f"the profiled window and half just after (same inputs, same order)"
            ),
        )
    return TrialCapture(
        trace_path=trace_path,
        images_per_step=batch,
        profiled_step_ms=statistics.fmean(profiled),
        profiled_window_ms=window.wall_ms,
        unprofiled=unprofiled,
        machine=machine,
        extra=extra,
        **mem,
    )
