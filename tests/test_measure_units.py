"""Fast checks of the measurement side's pure parts: the exit-3 arithmetic (SPEC §10), the
weights/size reconciliation, device parsing, the workspace cleanup, the Kineto noise filter, the
typed options (in step with the CLI, checked when built) and the one trial loop."""

from __future__ import annotations

import os
import signal
import types

import pytest

from libreyolo_profile.errors import ProfileError, UsageError
from libreyolo_profile.measure import adapter, common, profiler, trials
from libreyolo_profile.measure.dataset import too_small_message
from libreyolo_profile.measure.options import InferOptions, RunOptions
from libreyolo_profile.measure.trials import TrialRunner


def test_too_small_coco128_defaults():
    # SPEC §10: with the seed's defaults coco128 (128 images) needs --steps ≤ 3 or --batch ≤ 5.
    msg = too_small_message("coco128", 128, warmup=5, steps=20, batch=16)
    assert "128 training images" in msg and "= 400 images" in msg
    assert "--steps 3 " in msg and "--batch 5 " in msg and "at least 400 training images" in msg


def test_too_small_when_warmup_alone_overflows():
    msg = too_small_message("tiny", 10, warmup=5, steps=1, batch=4)
    assert "--warmup 1 --steps 1" in msg and "--batch 1 " in msg


@pytest.mark.parametrize(
    "weights, size, expect",
    [
        ("LibreYOLO9t.pt", "t", ("LibreYOLO9t.pt", "t")),
        ("LibreYOLO9t.pt", "s", ("LibreYOLO9s.pt", "s")),  # default name follows --size
        ("LibreYOLO9m.pt", "t", ("LibreYOLO9m.pt", "m")),  # a sized name sets the size
        ("custom.pt", "c", ("custom.pt", "c")),
    ],
)
def test_resolve_size(weights, size, expect):
    assert adapter.resolve_size(weights, size) == expect


def test_resolve_size_conflict_and_unknown():
    with pytest.raises(UsageError):
        adapter.resolve_size("LibreYOLO9m.pt", "s")
    with pytest.raises(UsageError):
        adapter.resolve_size("LibreYOLO9t.pt", "x")


def test_device_parsing():
    import torch

    assert common.resolve_device("cpu").type == "cpu"
    for bad in ("0,1", "gpu", "mps"):
        with pytest.raises(UsageError):
            common.resolve_device(bad)
    if not torch.cuda.is_available():
        for spec in ("0", "cuda", "cuda:1"):
            with pytest.raises(UsageError, match="--device cpu"):
                common.resolve_device(spec)


def test_workspace_cleans_up_on_error_and_sigterm(tmp_path):
    project = tmp_path / "a" / "b"
    with pytest.raises(RuntimeError):
        with common.workspace(project, "infer") as tmp:
            (tmp / "partial.json").write_text("{}")
            raise RuntimeError("boom")
    assert not (tmp_path / "a").exists()  # created dirs removed when left empty
    project.mkdir(parents=True)
    (project / "keep.json").write_text("{}")
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(ProfileError) as info:
        with common.workspace(project, "train") as tmp:
            assert tmp.parent == project and tmp.name.startswith(".libreyolo-profile-train-")
            os.kill(os.getpid(), signal.SIGTERM)
    assert info.value.exit_code == 143
    assert sorted(os.listdir(project)) == ["keep.json"]
    assert signal.getsignal(signal.SIGTERM) == before


def test_kineto_filter():
    noise = [
        "USDT:2026-11-30 09:33:30 4191:4191 SyncActivityProfilerHandler.cpp:39] profiler_start\n",
        "STAGE:2026-11-30 09:33:37 4274:4274 SyncActivityProfilerHandler.cpp:38] Completed Stage: Warm Up\n",
        "ERROR:2026-11-30 09:33:30 4191:4191 DeviceProperties.cpp:56] gpuGetDeviceCount failed with code 35\n",
    ]
    for line in noise:
        assert profiler._KINETO_NOISE.match(line)
    assert not profiler._KINETO_NOISE.match("ERROR:2026-11-30 09:33:30 1:1 CuptiActivityApi.cpp:1] CUPTI failed\n")
    assert not profiler._KINETO_NOISE.match("warning: something of ours\n")


# --- typed options ---------------------------------------------------------------------------

# CLI options that say what the CLI does after the measurement, not what is measured
AFTER_MEASUREMENT = {"report", "as_json"}


def cli_parameters(command_name: str) -> dict[str, object]:
    """{python name: default} of one CLI command, read from the typer app itself."""
    import typer

    from libreyolo_profile.cli import app

    command = typer.main.get_command(app).get_command(None, command_name)
    return {param.name: param.default for param in command.params}


@pytest.mark.parametrize("command_name, options", [("infer", InferOptions), ("run", RunOptions)])
def test_options_match_the_cli(command_name, options):
    import dataclasses

    cli = cli_parameters(command_name)
    fields = {f.name: f.default for f in dataclasses.fields(options)}
    assert set(fields) == set(cli) - AFTER_MEASUREMENT
    for name, default in fields.items():
        if default is dataclasses.MISSING:  # the required positional (run's dataset)
            assert cli[name] is None, name
        else:
            assert cli[name] == default, name


@pytest.mark.parametrize("command_name, options", [("infer", InferOptions), ("run", RunOptions)])
def test_each_option_is_declared_once_in_its_field(command_name, options):
    """The CLI's help, flags and defaults are the fields' own declarations (measure/options.py), not a copy."""
    import dataclasses

    import typer

    from libreyolo_profile.cli import app
    from libreyolo_profile.measure.options import cli_of

    command = typer.main.get_command(app).get_command(None, command_name)
    params = {param.name: param for param in command.params}
    for f in dataclasses.fields(options):
        declared, param = cli_of(f), params[f.name]
        if declared.help is not None:
            assert param.help == declared.help, f.name
        for flag in declared.flags:  # `--amp/--no-amp`: both spellings reach the field
            assert set(flag.split("/")) <= set(param.opts) | set(param.secondary_opts), f.name
    assert params["max_det"].default == InferOptions().max_det if command_name == "infer" else True
    assert params["threads"].default is None  # --threads left out: torch's own choice


@pytest.mark.parametrize(
    "options, kwargs, message",
    [
        (InferOptions, {"runs": 0}, "--runs 0: must be ≥ 1"),
        (InferOptions, {"warmup": -1}, "--warmup -1: must be ≥ 0"),
        (InferOptions, {"max_det": 0}, "--max-det 0: must be ≥ 1"),
        (InferOptions, {"amp_dtype": "float32"}, "expected float16 or bfloat16"),
        (InferOptions, {"conf": 1.5}, "--conf 1.5: must be within [0, 1]"),
        (InferOptions, {"iou": -0.1}, "--iou -0.1: must be within [0, 1]"),
        (RunOptions, {"data": "d.yaml", "batch": 0}, "--batch 0: must be ≥ 1"),
        (RunOptions, {"data": "d.yaml", "steps": 0}, "--steps 0: must be ≥ 1"),
        (RunOptions, {"data": "d.yaml", "workers": -2}, "--workers -2: must be ≥ 0"),
        (InferOptions, {"threads": 0}, "--threads 0: must be ≥ 1"),
        (RunOptions, {"data": "d.yaml", "threads": -1}, "--threads -1: must be ≥ 1"),
    ],
)
def test_options_are_checked_when_built(options, kwargs, message):
    with pytest.raises(UsageError) as info:
        options(**kwargs)
    assert message in info.value.message


def test_run_options_auto_batch_and_supply():
    opts = RunOptions(data="d.yaml", batch=-1, warmup=2, steps=3)  # -1 is the one batch below 1 allowed
    assert opts.auto_batch and opts.steps_per_trial == 5
    assert not RunOptions(data="d.yaml").auto_batch


def test_cli_usage_error_exits_2_before_measuring(tmp_path):
    from tests.conftest import run_cli

    result = run_cli("infer", "--device", "cpu", "--runs", "0", "--project", str(tmp_path / "p"))
    assert result.returncode == 2 and "--runs 0: must be ≥ 1" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "p").exists()  # checked before the workspace is made


# --- the trial loop --------------------------------------------------------------------------


class RecordingCall:
    """A `Call` that records (index, annotate) for each time it runs."""

    def __init__(self):
        self.calls: list[tuple[int, bool]] = []

    def __call__(self, index: int, annotate: bool) -> None:
        self.calls.append((index, annotate))


def test_trial_runner_runs_the_calls_it_is_asked_for():
    import torch

    ticks = []
    runner = TrialRunner(torch.device("cpu"), advance=lambda: ticks.append(1))
    call = RecordingCall()
    runner.warmup(call, 3)
    assert call.calls == [(0, False), (1, False), (2, False)]
    call.calls.clear()
    block = runner.time_block(call, range(2, 5))
    assert call.calls == [(2, False), (3, False), (4, False)] and len(block.call_ms) == 3
    assert all(t >= 0 for t in block.call_ms) and block.wall_ms >= sum(block.call_ms)
    assert len(ticks) == 3 + 3  # one progress tick per call
    call.calls.clear()
    runner.warmup(call, 3, done=1)  # the first warmup call already made (infer's preflight)
    assert call.calls == [(1, False), (2, False)] and len(ticks) == 3 + 3 + 3


def test_unprofiled_block_times_each_phase_on_the_host_and_profiled_calls_do_not():
    """Phases of unprofiled calls are timed (the headline's stage split); annotated ones become profiler
    ranges instead; outside a timed block a phase costs nothing and records nothing."""
    import time

    import torch

    def call(index: int, annotate: bool) -> None:
        with trials.phase("slow", annotate):
            time.sleep(0.02)
        with trials.phase("fast", annotate):
            pass

    runner = TrialRunner(torch.device("cpu"))
    block = runner.time_block(call, range(3))
    assert set(block.stage_ms) == {"slow", "fast"} and len(block.stage_ms["slow"]) == 3
    assert all(18.0 <= v <= block.call_ms[i] for i, v in enumerate(block.stage_ms["slow"]))
    assert all(v < 5.0 for v in block.stage_ms["fast"])
    call(0, False)  # outside a block: nothing is recorded anywhere
    assert trials._stage_timer is None and len(block.stage_ms["slow"]) == 3


def test_profiled_window_puts_each_call_in_its_own_profiler_step(tmp_path):
    import json

    import torch
    from torch.profiler import record_function

    device = torch.device("cpu")
    seen = []

    def call(index: int, annotate: bool) -> None:
        seen.append((index, annotate))
        with record_function(f"## work{index} ##"):
            torch.ones(4).add_(1)

    prof = profiler.make_profiler(device)
    window = TrialRunner(device).profiled_window(call, 3, prof, sync_last=True)
    trace = profiler.export_trace(prof, tmp_path / "trace.json")
    assert seen == [(0, True), (1, True), (2, True)]
    assert len(window.call_ms) == 3 and window.wall_ms >= sum(window.call_ms)
    ranges = {
        e["name"]: (e["ts"], e["ts"] + e["dur"])
        for e in json.loads(trace.read_text())["traceEvents"]
        if e.get("ph") == "X" and e["name"].startswith(("ProfilerStep#", "## work"))
    }
    for n in range(3):  # call n's own range lies inside ProfilerStep#(n+1)
        step_start, step_end = ranges[f"ProfilerStep#{n + 1}"]
        work_start, work_end = ranges[f"## work{n} ##"]
        assert step_start <= work_start and work_end <= step_end


# --- departures from LibreYOLO's trainer, and the step's order ---------------------------------


def test_departures_are_options_named_by_their_cli_flag():
    """Each departure is a RunOptions field defaulting to the trainer's behaviour, whose CLI flag exists."""
    import dataclasses

    import typer

    from libreyolo_profile.cli import app
    from libreyolo_profile.measure.options import TRAINER_DEPARTURES
    from libreyolo_profile.store.document import marks

    defaults = {f.name: f.default for f in dataclasses.fields(RunOptions)}
    command = typer.main.get_command(app).get_command(None, "run")
    flags = {flag for param in command.params for flag in (*param.opts, *param.secondary_opts)}
    assert TRAINER_DEPARTURES
    for field, (flag, _what) in TRAINER_DEPARTURES.items():
        assert defaults[field] is True, field
        assert flag in flags, flag
    assert RunOptions(data="d.yaml").departures == {}
    departed = RunOptions(data="d.yaml", loss_item=False).departures
    assert list(departed) == ["--no-loss-item"]
    sentence = marks.departs_from_trainer(departed)
    assert "--no-loss-item" in sentence and departed["--no-loss-item"] in sentence


class StepRecorder:
    """Stands in for LibreYOLO's trainer around a real one-layer model: records the order of the
    calls a training step makes (optimizer, backward via a gradient hook, EMA, logging, schedule)."""

    def __init__(self):
        import torch

        self.calls: list[str] = []
        self.model = torch.nn.Linear(2, 1)
        self.model.weight.register_hook(lambda grad: self.calls.append("backward") or grad)
        self.optimizer = self._recording_optimizer(torch.optim.SGD(self.model.parameters(), lr=0.1))
        self.scaler = None
        self.ema_model = type("Ema", (), {"update": lambda _self, model: self.calls.append("ema")})()

    def _recording_optimizer(self, optimizer):
        step, zero_grad = optimizer.step, optimizer.zero_grad
        optimizer.step = lambda *a, **k: (self.calls.append("optimizer.step"), step(*a, **k))[1]
        optimizer.zero_grad = lambda *a, **k: (self.calls.append("zero_grad"), zero_grad(*a, **k))[1]
        return optimizer

    def on_forward(self, imgs, targets):
        self.calls.append("forward")
        loss = (self.model(imgs) - targets).pow(2).mean()
        return {"total_loss": loss, "box": loss.detach()}

    def get_loss_components(self, outputs):
        self.calls.append("loss components")
        return {"box": float(outputs["box"])}

    def _apply_scheduler(self, iteration):
        self.calls.append(f"schedule {iteration}")


# host reads per step with the logging: loss.item(), then float() of the recorder's one loss component
@pytest.mark.parametrize("loss_item, logging, reads_per_step", [(True, ["loss components"], 1 + 1), (False, [], 0)])
def test_train_step_runs_the_trainers_order(loss_item, logging, reads_per_step):
    import torch
    from torch.profiler import ProfilerActivity, profile

    from libreyolo_profile.measure.train_step import TrainStep

    trainer = StepRecorder()
    step = TrainStep(trainer, torch.device("cpu"), None, loss_item=loss_item)
    step.begin_pass([(torch.ones(4, 2), torch.zeros(4, 1))] * 2)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step(0, False)
        step(1, False)
    one_step = ["forward", "zero_grad", "backward", "optimizer.step", "ema", *logging]
    assert trainer.calls == [*one_step, "schedule 1", *one_step, "schedule 2"]
    reads = sum(e.count for e in prof.key_averages() if e.key == "aten::item")
    assert reads == 2 * reads_per_step


class BatchRecorder(StepRecorder):
    """A StepRecorder that also keeps each step's batch and the weights it met, and draws from torch's
    RNG in its forward (as augmentation or dropout would), so a replay that skipped an RNG restore
    would see other batches."""

    def __init__(self):
        import copy

        super().__init__()
        self.seen: list[tuple] = []
        self.ema_model = types.SimpleNamespace(ema=copy.deepcopy(self.model), updates=0, update=self._ema_update)

    def _ema_update(self, model) -> None:
        import torch

        self.ema_model.updates += 1
        with torch.no_grad():
            for kept, now in zip(self.ema_model.ema.parameters(), model.parameters(), strict=True):
                kept.mul_(0.5).add_(now, alpha=0.5)

    def on_forward(self, imgs, targets):
        import torch

        self.seen.append((imgs.clone(), self.model.weight.detach().clone()))
        torch.rand(3)
        return super().on_forward(imgs, targets)


class RandomLoader:
    """Batches drawn from torch's RNG as they are taken (a shuffling, augmenting loader with no workers)."""

    def __iter__(self):
        import torch

        for _ in range(16):
            yield torch.rand(4, 2), torch.zeros(4, 1)


@pytest.mark.parametrize("trial, steps_run", [(0, 2 + 3 + 3), (1, (2 + 3) * 2)])
def test_the_unprofiled_steps_replay_the_profiled_ones(tmp_path, trial, steps_run):
    # trial 0 replays the profiled steps after its pass from the state after the warmup (the warmup's
    # batches only drawn); trial 1 (odd) runs its unprofiled pass first, warmup included. Either way the
    # unprofiled steps see the very batches and weights the profiled steps saw.
    import torch

    from libreyolo_profile.measure.options import RunOptions
    from libreyolo_profile.measure.train import measure_trial
    from libreyolo_profile.measure.train_step import TrainStep

    trainer = BatchRecorder()
    trainer.train_loader = RandomLoader()
    device = torch.device("cpu")
    training = types.SimpleNamespace(device=device, trainer=trainer, batch=4, step=TrainStep(trainer, device, None))
    opts = RunOptions(data="d.yaml", steps=3, warmup=2, workers=0, repeat=2, project=tmp_path / "p")
    capture = measure_trial(training, opts, tmp_path / "trace.json", trial)
    assert capture.unprofiled is not None and (tmp_path / "trace.json").stat().st_size > 0
    assert len(trainer.seen) == steps_run
    profiled = trainer.seen[2:5] if trial == 0 else trainer.seen[7:10]
    unprofiled = trainer.seen[5:8] if trial == 0 else trainer.seen[2:5]
    for (p_imgs, p_weight), (u_imgs, u_weight) in zip(profiled, unprofiled, strict=True):
        assert torch.equal(p_imgs, u_imgs) and torch.equal(p_weight, u_weight)
    assert not torch.equal(profiled[0][0], profiled[1][0])  # the batches do differ step to step
