"""Deterministic full-batch (or seeded mini-batch) training of a :class:`DepthModel` with Adam.

002 §4 trains its networks with Adam by backpropagation; :func:`train` does the same on a
:class:`~depthdyn.nn.experiments.tasks.Task` and returns a frozen :class:`TrainResult`. A loss that
becomes NaN or infinite, or grows past :data:`EXPLODED` times its starting value, stops
training early and is recorded in ``diverged`` instead of raising, so sweeps over step
sizes and learning rates keep going.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass

import torch
from torch import nn

from ...errors import ParameterError
from ..blocks.stack import DepthStack, pick_device
from .tasks import TASKS, Task, build_model, make_task

__all__ = ["TrainResult", "train", "run", "evaluate", "task_loss", "EXPLODED"]


#: A loss this many times its starting value counts as diverged (training stops there).
EXPLODED = 1e4
_TINY = 1e-12


def _json_float(v):
    return float(v) if v is not None and math.isfinite(v) else None


@dataclass(frozen=True)
class TrainResult:
    """What one training run did.

    Attributes
    ----------
    family, task : str
        Block family and task name.
    seed : int
        Seed of the run (model init is seeded by :func:`~depthdyn.nn.experiments.tasks.build_model`).
    steps : int
        Optimiser steps actually taken (fewer than ``steps_requested`` after a divergence).
    steps_requested : int
    layers : int or None
        Depth ``L`` of the model's :class:`DepthStack` (``None`` if it has none).
    step_size : float or None
        The layer step ``h`` of the blocks.
    lr : float
        Adam learning rate.
    losses : tuple of float
        Training loss before each optimiser step (finite values only).
    final_loss : float
        Loss of the trained model on the whole task (NaN if the model outputs NaN).
    accuracy : float or None
        Fraction classified correctly (classification tasks), else ``None``.
    wall_time_s : float
    device : str
    diverged : str or None
        Why training stopped early (``"loss became nan at step 123; lower lr or step"``).
    """

    family: str
    task: str
    seed: int
    steps: int
    steps_requested: int
    layers: int | None
    step_size: float | None
    lr: float
    losses: tuple[float, ...]
    final_loss: float
    accuracy: float | None
    wall_time_s: float
    device: str
    diverged: str | None = None

    def to_json(self) -> dict:
        """A JSON-ready dict (non-finite numbers become ``None``)."""
        return {
            "family": self.family,
            "task": self.task,
            "seed": self.seed,
            "steps": self.steps,
            "steps_requested": self.steps_requested,
            "layers": self.layers,
            "step_size": self.step_size,
            "lr": self.lr,
            "losses": [_json_float(v) for v in self.losses],
            "final_loss": _json_float(self.final_loss),
            "accuracy": self.accuracy,
            "wall_time_s": self.wall_time_s,
            "device": self.device,
            "diverged": self.diverged,
        }

    def __str__(self) -> str:
        acc = "" if self.accuracy is None else f", accuracy {self.accuracy:.3f}"
        div = f" [{self.diverged}]" if self.diverged else ""
        return (
            f"{self.family} on {self.task} (L={self.layers}, h={self.step_size}, seed={self.seed}): "
            f"loss {self.final_loss:.4g}{acc} after {self.steps} steps in {self.wall_time_s:.2f}s "
            f"on {self.device}{div}"
        )


def task_loss(task: Task):
    """The training loss of a task: cross-entropy for classification, mean squared error otherwise."""
    if task.kind == "classify":
        return nn.functional.cross_entropy
    return nn.functional.mse_loss


def _stack_of(model: nn.Module) -> DepthStack | None:
    if isinstance(model, DepthStack):
        return model
    return next((m for m in model.modules() if isinstance(m, DepthStack)), None)


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


class _Counter:
    """Fallback progress display without tqdm: a line to stderr every tenth of the run."""

    def __init__(self, total: int):
        self.total, self.done = total, 0
        self.every = max(1, total // 10)

    def update(self, n: int = 1):
        self.done += n
        if self.done % self.every == 0 or self.done == self.total:
            print(f"step {self.done}/{self.total}", file=sys.stderr, flush=True)

    def set_postfix(self, **kwargs):
        pass

    def close(self):
        pass


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _Counter(total)
    return tqdm(total=total, leave=False)


@torch.no_grad()
def evaluate(model: nn.Module, task: Task, *, device=None) -> tuple[float, float | None]:
    """``(loss, accuracy)`` of ``model`` on the whole task (accuracy ``None`` for regression)."""
    dev = pick_device(device) if device is not None else next(model.parameters()).device
    x, y = task.inputs.to(dev), task.targets.to(dev)
    out = model(x)
    loss = float(task_loss(task)(out, y))
    acc = float((out.argmax(dim=1) == y).double().mean()) if task.kind == "classify" else None
    return loss, acc


def train(
    model: nn.Module,
    task: Task,
    *,
    steps: int = 400,
    lr: float = 0.05,
    seed: int = 0,
    batch_size: int | None = None,
    device=None,
    progress: bool = False,
) -> TrainResult:
    """Train ``model`` on ``task`` with Adam; stop early (not raise) if the loss turns NaN/inf.

    Parameters
    ----------
    model : torch.nn.Module
        Usually a :class:`~depthdyn.nn.experiments.tasks.DepthModel`; moved to ``device`` in place.
    task : Task
    steps : int
        Optimiser steps (full-batch epochs when ``batch_size`` is ``None``).
    lr : float
        Adam learning rate.
    seed : int
        ``torch.manual_seed(seed)`` before training; mini-batches are drawn from a
        ``torch.Generator`` seeded with it, so equal seeds give identical runs (on the same
        device and torch version with the same number of threads: float reductions depend on it).
    batch_size : int, optional
        Mini-batch size; ``None`` trains on the full batch.
    device : str or torch.device, optional
        ``None`` picks CUDA when available (:func:`~depthdyn.nn.blocks.stack.pick_device`).
    progress : bool
        Show a tqdm bar (a plain step counter on stderr when tqdm is not installed).

    Returns
    -------
    TrainResult
    """
    if not isinstance(task, Task):
        raise ParameterError(f"task must be a Task (see make_task), got {type(task).__name__}")
    if not isinstance(model, nn.Module):
        raise ParameterError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    steps = _check_int(steps, "steps", 0)
    seed = _check_int(seed, "seed", 0)
    try:
        lr = float(lr)
    except (TypeError, ValueError):
        raise ParameterError(f"lr must be a positive number, got {lr!r}") from None
    if not math.isfinite(lr) or lr <= 0:
        raise ParameterError(f"lr must be a finite positive number, got {lr!r}")
    if batch_size is not None:
        batch_size = _check_int(batch_size, "batch_size", 1)
    dev = pick_device(device)
    model.to(dev)
    x, y = task.inputs.to(dev), task.targets.to(dev)
    loss_fn = task_loss(task)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses: list[float] = []
    diverged = None
    bar = _progress(steps, progress)
    start = time.perf_counter()
    model.train()
    taken = 0
    try:
        for s in range(steps):
            if batch_size is None or batch_size >= task.size:
                xb, yb = x, y
            else:
                idx = torch.randperm(task.size, generator=gen)[:batch_size].to(dev)
                xb, yb = x[idx], y[idx]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xb), yb)
            value = float(loss.detach())
            if not math.isfinite(value):
                diverged = f"loss became {value} at step {s}; lower lr or step"
                break
            if losses and value > EXPLODED * max(losses[0], _TINY):
                diverged = (f"loss exploded to {value:.3g} at step {s} (from {losses[0]:.3g}); "
                            "lower lr or step")
                break
            losses.append(value)
            loss.backward()
            opt.step()
            taken += 1
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{value:.4g}")
    finally:
        if bar is not None:
            bar.close()
    model.eval()
    final_loss, accuracy = evaluate(model, task)
    if diverged is None and not math.isfinite(final_loss):
        diverged = f"loss became {final_loss} after step {taken}; lower lr or step"
    elif diverged is None and losses and final_loss > EXPLODED * max(losses[0], _TINY):
        diverged = (f"loss exploded to {final_loss:.3g} after step {taken} (from {losses[0]:.3g}); "
                    "lower lr or step")
    wall = time.perf_counter() - start
    stack = _stack_of(model)
    return TrainResult(
        family=stack.family if stack is not None else type(model).__name__,
        task=task.name,
        seed=seed,
        steps=taken,
        steps_requested=steps,
        layers=stack.depth if stack is not None else None,
        step_size=float(stack.blocks[0].step) if stack is not None else None,
        lr=lr,
        losses=tuple(losses),
        final_loss=final_loss,
        accuracy=accuracy,
        wall_time_s=wall,
        device=str(dev),
        diverged=diverged,
    )


def run(
    family,
    task_name: str,
    *,
    layers: int | None = None,
    steps: int | None = None,
    seed: int = 0,
    step: float | None = None,
    lr: float | None = None,
    device=None,
    samples: int | None = None,
    progress: bool = False,
    **block_options,
):
    """Build the task and the model, train, and return ``(model, TrainResult)``.

    ``layers``, ``steps``, ``step`` and ``lr`` default to ``TASKS[task_name].defaults``; the
    task data (``samples`` of them, the task's default when ``None``) and the model
    initialisation are both drawn with ``seed``. Every other keyword is a block option, so
    ``n=8`` is the stream count of hyper-connections.

    Examples
    --------
    >>> import torch; torch.set_num_threads(1)
    >>> model, result = run("smooth", "separation-1d", k=2, layers=5, steps=3, device="cpu")
    >>> result.steps, result.layers, result.accuracy is not None
    (3, 5, True)
    """
    task = make_task(task_name, seed=seed, n=samples)
    defaults = TASKS[task_name].defaults
    model = build_model(family, task, layers=layers, step=step, seed=seed, **block_options)
    result = train(
        model,
        task,
        steps=defaults["steps"] if steps is None else steps,
        lr=defaults["lr"] if lr is None else lr,
        seed=seed,
        device=device,
        progress=progress,
    )
    return model, result
