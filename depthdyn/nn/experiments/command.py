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


def _figures(out: Path, model, task, result, trace, diag, bridge) -> list[str]:
    from matplotlib.figure import Figure

    from ...plot.placement import plot_placement
    from ...plot.training import plot_depth_profile, plot_depth_trajectories, plot_loss

    written = []

    def save(fig, name):
        save_figure(fig, out / name)
        written.append(name)

    fig = Figure(figsize=(6, 4), layout="constrained")
    plot_loss(result.losses, fig.add_subplot())
    save(fig, "loss.png")

    fig = Figure(figsize=(14, 3.6), layout="constrained")
    axes = fig.subplots(1, 4)
    plot_depth_profile(diag.norms, axes[0], ylabel=r"mean $\|x_\ell\|$")
    if diag.update_cosine is not None:
        plot_depth_profile(diag.update_cosine, axes[1], ylabel=r"$\cos(u_\ell, u_{\ell+1})$")
    plot_depth_profile(diag.perturbation, axes[2], ylabel=r"$\|x_{\ell+1} - x_\ell\| / \|x_\ell\|$")
    if diag.grad_norms is not None:
        plot_depth_profile(diag.grad_norms, axes[3], ylabel=r"$\|\partial \mathcal{L} / \partial s_\ell\|$")
    save(fig, "depth_profile.png")

    positions = trace.positions
    if positions.dim() == 3 and positions.shape[-1] <= 2:
        labels = task.targets.cpu().numpy() if task.kind == "classify" else None
        fig = Figure(figsize=(10, 4), layout="constrained")
        a, b = fig.subplots(1, 2)
        plot_depth_trajectories(positions.cpu().numpy(), labels, a)
        plot_depth_trajectories(positions.cpu().numpy(), labels, b, phase=True)
        save(fig, "trajectories.png")

    placement = bridge.get("_placement")
    if model.family == "momentum" and placement is not None:
        c = placement.coordinates
        eta_lam = (np.real(c["eta"] * c["lam"])).reshape(-1)
        m = np.real(c["m"]).reshape(-1)
        lo = min(-2 * (1 + m.max()) - 0.5, eta_lam.min() - 0.2)
        hi = max(0.5, eta_lam.max() + 0.2)
        fig = Figure(figsize=(6.4, 4.8), layout="constrained")
        plot_placement(placement, fig.add_subplot(), plane=("eta*lam", "m"), window=(lo, hi, 0, 0.99), n=241)
        save(fig, "placement.png")
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
    **block_options,
) -> dict:
    """Train ``family`` on ``task``, then write ``metrics.json`` and figures into ``out``.

    ``metrics.json`` holds the training record, the depth diagnostics of the trained stack
    (000 §8, 002 §4.3, 003), the linearised response against the measured one and the
    placement of the learned layers on their family's stability region. Returns the same
    dict. A run that diverged still writes its metrics (``training.diverged`` says why).

    ``out`` is created, or reused when it is empty or holds the ``.depthdyn-train`` marker of
    an earlier run; a non-empty directory without it is refused unless ``force``. Sizes past
    :data:`LIMITS` are refused before anything is built.
    """
    _check_limits(layers, steps, block_options)
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
    metrics["figures"] = _figures(out, model, data, result, trace, diag, bridge) if diag is not None else []
    metrics = _plain(metrics)
    atomic_write(out / "metrics.json", json.dumps(metrics, indent=2, allow_nan=False))
    return metrics
