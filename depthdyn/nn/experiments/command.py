"""``depthdyn train``: train one family on one task, diagnose it, hold it against the theory.

:func:`train_to_dir` runs the whole chain and writes ``metrics.json`` and the figures into a
directory; the command line is a thin layer over it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from ...errors import DegreeTooLargeError, DepthdynError, ParameterError
from ...families import MAX_ORDER
from ...output import atomic_write, claim_directory, save_figure
from ...style import figure_format
from ..analysis.diagnostics import diagnose
from ..analysis.linearise import linearise, response_agreement
from ..analysis.placement import place
from ..blocks.stack import BLOCKS
from .tasks import TASKS, make_task, task_names
from .train import run, task_loss

__all__ = ["list_text", "parse_options", "train_to_dir", "LIMITS", "MARKER"]

#: Inputs used for the diagnostics and the linear-response check (a spread of the task).
DIAGNOSTIC_SAMPLES = 64

#: Largest sizes ``depthdyn train`` accepts: beyond them a run would not fit in memory or
#: time on a workstation (and ``k`` past the exact layer's limit cannot be held against theory).
LIMITS = {"layers": 1000, "steps": 100_000, "k": MAX_ORDER, "n": 64}

#: Marker file of a directory written by ``depthdyn train``.
MARKER = ".depthdyn-train"
_MARKER_TEXT = "This directory was written by `depthdyn train`; it may be overwritten by it.\n"


def _check_limits(layers, steps, options: dict) -> None:
    """One clear error for sizes past :data:`LIMITS` (before any tensor is allocated)."""
    for name, value in (("layers", layers), ("steps", steps), *options.items()):
        limit = LIMITS.get(name)
        if limit is None or value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ParameterError(f"{name} must be a positive integer, got {value!r}")
        if value > limit:
            given = f"--{name} {value}" if name in ("layers", "steps") else f"-p {name}={value}"
            raise DegreeTooLargeError(f"{given} is past the limit {limit} of depthdyn train")


def list_text() -> str:
    """The families with a torch block and the tasks, one per line."""
    width = max(map(len, [*BLOCKS, *TASKS]))
    lines = ["families:"]
    for name, cls in sorted(BLOCKS.items()):
        lines.append(f"  {name:<{width}}  {(cls.__doc__ or '').strip().splitlines()[0]}")
    lines.append("tasks:")
    for name in task_names():
        spec = TASKS[name]
        defaults = ", ".join(f"{k}={v}" for k, v in spec.defaults.items())
        lines.append(f"  {name:<{width}}  {spec.summary}  [{defaults}]")
    return "\n".join(lines)


_FLAGS = ("layers", "steps", "seed", "step", "lr", "device", "out", "progress")


def _value(text: str):
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


def parse_options(items) -> dict:
    """``["k=2", "mixing=sinkhorn", "a_init=-2"]`` -> ``{"k": 2, "mixing": "sinkhorn", "a_init": -2}``."""
    options = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise ParameterError(f"-p expects NAME=VALUE, got {item!r}")
        name = name.strip()
        if name in _FLAGS:
            raise ParameterError(f"{name} has its own flag: use --{name} instead of -p {name}=...")
        options[name] = _value(value)
    return options


def _plain(v):
    """JSON-ready data: non-finite floats become ``None`` (JSON has no NaN)."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (float, np.floating)):
        return float(v) if np.isfinite(v) else None
    if isinstance(v, np.integer):
        return int(v)
    return v


def _spread(x: torch.Tensor, n: int) -> torch.Tensor:
    """``n`` entries of ``x`` spread evenly over its first axis."""
    idx = torch.linspace(0, x.shape[0] - 1, min(n, x.shape[0])).round().long()
    return x[idx]


def _bridge(stack, x: torch.Tensor) -> dict:
    """Linear response and stability placement; a family the bridge cannot treat says why."""
    out: dict = {}
    try:
        lin = linearise(stack, x)
        out["agreement"] = response_agreement(stack, x, lin=lin).to_json()
    except (DepthdynError, NotImplementedError) as exc:
        return {"agreement": None, "placement": None, "note": str(exc)}
    try:
        placement = place(lin)
        out["placement"] = placement.to_json()
        out["_placement"] = placement
    except (DepthdynError, NotImplementedError) as exc:
        out["placement"] = None
        out["note"] = str(exc)
    rec = stack.blocks[0].recurrence(channel=0) if stack.family == "momentum" else None
    out["layer0_recurrence"] = rec.equation() if rec is not None else None
    return out


def _figures(out: Path, model, task, result, trace, diag, bridge, formats=("png",)) -> list[str]:
    from ...plot.training import training_figures

    positions = trace.positions
    labels = task.targets.cpu().numpy() if task.kind == "classify" else None
    placement = bridge.get("_placement") if model.family == "momentum" else None
    figs = training_figures(result.losses, diag, labels=labels, placement=placement,
                            positions=positions.cpu().numpy() if positions.dim() == 3 else None)
    written = []
    for stem, fig in figs.items():
        for fmt in formats:
            save_figure(fig, out / f"{stem}.{fmt}")
            written.append(f"{stem}.{fmt}")
    return written


def train_to_dir(
    family: str,
    task: str,
    *,
    out,
    layers: int | None = None,
    steps: int | None = None,
    seed: int = 0,
    step: float | None = None,
    lr: float | None = None,
    device=None,
    progress: bool = False,
    force: bool = False,
    formats=("png",),
    **block_options,
) -> dict:
    """Train ``family`` on ``task``, then write ``metrics.json`` and figures into ``out``.

    ``metrics.json`` holds the training record, the depth diagnostics of the trained stack
    (000 §8, 002 §4.3, 003), the linearised response against the measured one and the
    placement of the learned layers on their family's stability region. Returns the same
    dict. A run that diverged still writes its metrics (``training.diverged`` says why).

    ``out`` is created, or reused when it is empty or holds the ``.depthdyn-train`` marker of
    an earlier run; a non-empty directory without it is refused unless ``force``. Sizes past
    :data:`LIMITS` are refused before anything is built. ``formats``: the files each figure is
    written as (``png``, ``pdf``, ``svg``; PDF and SVG are vector).
    """
    _check_limits(layers, steps, block_options)
    formats = tuple(dict.fromkeys(figure_format(f) for f in formats)) or ("png",)
    out = claim_directory(out, MARKER, _MARKER_TEXT, force, command="depthdyn train")
    model, result = run(
        family,
        task,
        layers=layers,
        steps=steps,
        seed=seed,
        step=step,
        lr=lr,
        device=device,
        progress=progress,
        **block_options,
    )
    data = make_task(task, seed=seed)
    device = next(model.parameters()).device  # analysed where it trained, never moved
    inputs, targets = data.inputs.to(device), data.targets.to(device)
    idx = _spread(torch.arange(data.size), DIAGNOSTIC_SAMPLES).to(device)
    with torch.no_grad():
        x = model.embed(inputs[idx])
        trace = model.stack.trace(model.embed(inputs))
    loss = task_loss(data)
    try:
        diag = diagnose(model.stack, x, loss_fn=lambda out: loss(model.head(out), targets[idx]))
    except DepthdynError:
        if not result.diverged:
            raise
        diag = None  # a diverged model (NaN weights) has no depth profile to report
    bridge = _bridge(model.stack, x) if not result.diverged else {"note": "training diverged"}
    metrics = {
        "training": result.to_json(),
        "options": {**TASKS[task].block_defaults.get(model.family, {}), **block_options},
        "diagnostics": diag.to_json() if diag is not None else None,
        "bridge": {k: v for k, v in bridge.items() if not k.startswith("_")},
    }
    metrics["figures"] = (_figures(out, model, data, result, trace, diag, bridge, formats)
                          if diag is not None else [])
    metrics = _plain(metrics)
    atomic_write(out / "metrics.json", json.dumps(metrics, indent=2, allow_nan=False))
    return metrics
