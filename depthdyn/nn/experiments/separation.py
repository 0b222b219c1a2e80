"""Experiments of 002 §4 on the torch blocks: ``C^1`` vs ``C^k`` separation, residual vs momentum.

:data:`SEPARATION_WINDOW` is the range of step sizes ``h`` where the ``separation-1d``
criterion ("``C^2`` accuracy >= 0.99 and ``C^1`` accuracy <= 0.76 for every seed", ``L = 30``,
400 full-batch Adam steps, ``lr = 0.05``, seeds 0, 1, 2, one CPU thread) held on the scanned
grid; :data:`SEPARATION_STEP` is the documented step inside it. The scan, and what
:func:`separation_2d` and :func:`cubic_fit` measure, are in ``docs/nn.md`` ("Measured results").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ...errors import ParameterError
from .tasks import TASKS
from .train import TrainResult, run

__all__ = [
    "SEPARATION_STEP",
    "SEPARATION_WINDOW",
    "SEPARATION_LAYERS",
    "SEPARATION_STEPS",
    "SEPARATION_LR",
    "SeparationRow",
    "SeparationWindow",
    "Comparison",
    "separation_window",
    "compare",
    "separation_2d",
    "cubic_fit",
]

_SEPARATION = TASKS["separation-1d"].defaults
SEPARATION_LAYERS = _SEPARATION["layers"]
"""Depth ``L`` of the ``separation-1d`` experiment (the task's default)."""
SEPARATION_STEPS = _SEPARATION["steps"]
"""Full-batch Adam steps of the ``separation-1d`` experiment (the task's default)."""
SEPARATION_LR = _SEPARATION["lr"]
"""Adam learning rate of the ``separation-1d`` experiment (the task's default)."""
SEPARATION_WINDOW = (0.07, 0.14)
"""Measured step sizes ``h`` (inclusive, grid spacing 0.01) where ``C^2`` >= 0.99 and ``C^1`` <= 0.76."""
SEPARATION_STEP = _SEPARATION["step"]
"""Documented step size ``h`` of the ``separation-1d`` experiment (inside :data:`SEPARATION_WINDOW`)."""


def _seeds(seeds) -> tuple[int, ...]:
    seeds = tuple(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds):
        raise ParameterError(f"seeds must be a non-empty sequence of non-negative integers, got {seeds!r}")
    return seeds


@dataclass(frozen=True)
class SeparationRow:
    """One step size of :func:`separation_window`: accuracies per seed and the verdict."""

    step: float
    c1: tuple[float, ...]
    c2: tuple[float, ...]
    holds: bool

    def to_json(self) -> dict:
        return {"step": self.step, "c1": list(self.c1), "c2": list(self.c2), "holds": self.holds}


@dataclass(frozen=True)
class SeparationWindow:
    """Result of :func:`separation_window`.

    Attributes
    ----------
    rows : tuple of SeparationRow
        One per scanned step size, in the order given.
    seeds : tuple of int
    layers, steps : int
    lr : float
    high, low : float
        The criterion: every ``C^2`` accuracy ``>= high`` and every ``C^1`` accuracy ``<= low``.
    wall_time_s : float
        Total training time of the scan.
    """

    rows: tuple[SeparationRow, ...]
    seeds: tuple[int, ...]
    layers: int
    steps: int
    lr: float
    high: float
    low: float
    wall_time_s: float

    @property
    def holding(self) -> tuple[float, ...]:
        """Step sizes where the criterion holds."""
        return tuple(r.step for r in self.rows if r.holds)

    @property
    def window(self) -> tuple[float, float] | None:
        """``(min, max)`` of the longest run of consecutive scanned step sizes that hold."""
        best: list[float] = []
        current: list[float] = []
        for r in sorted(self.rows, key=lambda r: r.step):
            current = current + [r.step] if r.holds else []
            if len(current) > len(best):
                best = current
        return (best[0], best[-1]) if best else None

    def to_json(self) -> dict:
        return {
            "rows": [r.to_json() for r in self.rows],
            "seeds": list(self.seeds),
            "layers": self.layers,
            "steps": self.steps,
            "lr": self.lr,
            "high": self.high,
            "low": self.low,
            "window": list(self.window) if self.window else None,
            "wall_time_s": self.wall_time_s,
        }

    def __str__(self) -> str:
        lines = [f"separation-1d, L={self.layers}, {self.steps} steps, lr={self.lr}, seeds {self.seeds}"]
        for r in self.rows:
            c1 = " ".join(f"{a:.3f}" for a in r.c1)
            c2 = " ".join(f"{a:.3f}" for a in r.c2)
            lines.append(f"  h={r.step:<6g} C^1 [{c1}]  C^2 [{c2}]  {'holds' if r.holds else '-'}")
        lines.append(f"  window: {self.window}")
        return "\n".join(lines)


def separation_window(
    step_sizes: Iterable[float],
    *,
    seeds: Iterable[int] = (0, 1, 2),
    layers: int = SEPARATION_LAYERS,
    steps: int = SEPARATION_STEPS,
    lr: float = SEPARATION_LR,
    high: float = 0.99,
    low: float = 0.76,
    n: int | None = None,
    device="cpu",
) -> SeparationWindow:
    """Scan step sizes ``h`` for where ``C^2`` separates ``separation-1d`` and ``C^1`` does not.

    For every ``h`` and seed, trains a ``C^1`` and a ``C^2``
    :class:`~depthdyn.nn.blocks.SmoothBlock` stack with one node per layer (002 §4.1) and
    records the final accuracies.

    Parameters
    ----------
    step_sizes : iterable of float
    seeds : iterable of int
    layers, steps, lr
        Depth, Adam steps and learning rate (defaults: the documented experiment).
    high, low : float
        Criterion thresholds.
    n : int, optional
        Number of points (a multiple of 4; default 200).
    device : str
        ``"cpu"`` by default, so measurements are comparable.

    Returns
    -------
    SeparationWindow
    """
    seeds = _seeds(seeds)
    hs = tuple(float(h) for h in step_sizes)
    if not hs or any(not math.isfinite(h) or h <= 0 for h in hs):
        raise ParameterError(f"step_sizes must be finite positive numbers, got {hs!r}")
    rows, total = [], 0.0
    for h in hs:
        acc: dict[int, list[float]] = {1: [], 2: []}
        for k in (1, 2):
            for seed in seeds:
                _, res = run(
                    "smooth",
                    "separation-1d",
                    k=k,
                    layers=layers,
                    step=h,
                    steps=steps,
                    lr=lr,
                    seed=seed,
                    samples=n,
                    device=device,
                )
                acc[k].append(res.accuracy)
                total += res.wall_time_s
        holds = min(acc[2]) >= high and max(acc[1]) <= low
        rows.append(SeparationRow(h, tuple(acc[1]), tuple(acc[2]), holds))
    return SeparationWindow(tuple(rows), seeds, layers, steps, float(lr), high, low, total)


@dataclass(frozen=True)
class Comparison:
    """Per-seed results of several model variants on one task (see :func:`compare`).

    ``values[label]`` is the per-seed ``metric`` (``"accuracy"`` or ``"final_loss"``);
    ``results[label]`` the full :class:`~depthdyn.nn.experiments.train.TrainResult` records.
    """

    task: str
    metric: str
    seeds: tuple[int, ...]
    values: Mapping[str, tuple[float, ...]]
    results: Mapping[str, tuple[TrainResult, ...]]

    def to_json(self) -> dict:
        return {
            "task": self.task,
            "metric": self.metric,
            "seeds": list(self.seeds),
            "values": {k: list(v) for k, v in self.values.items()},
            "results": {k: [r.to_json() for r in v] for k, v in self.results.items()},
        }

    def __str__(self) -> str:
        lines = [f"{self.task}: {self.metric} per seed {self.seeds}"]
        for label, vals in self.values.items():
            lines.append(f"  {label:<24} " + " ".join(f"{v:.4g}" for v in vals))
        return "\n".join(lines)


def compare(
    task_name: str,
    variants: Mapping[str, Mapping[str, object]],
    *,
    seeds: Iterable[int] = (0, 1, 2),
    device="cpu",
    **common,
) -> Comparison:
    """Train each variant (keyword arguments of :func:`~depthdyn.nn.experiments.train.run`, including
    ``family``) for every seed on ``task_name``.

    ``common`` keywords go to every run (``layers=``, ``steps=``, ...); a variant's own
    keywords override them. The metric is accuracy for classification, final MSE for
    regression.
    """
    seeds = _seeds(seeds)
    if not variants:
        raise ParameterError("compare needs at least one variant")
    values, results = {}, {}
    metric = "accuracy"
    for label, opts in variants.items():
        opts = {**common, **opts}
        family = opts.pop("family", "smooth")
        rs = tuple(run(family, task_name, seed=s, device=device, **opts)[1] for s in seeds)
        metric = "accuracy" if rs[0].accuracy is not None else "final_loss"
        values[label] = tuple(getattr(r, metric) for r in rs)
        results[label] = rs
    return Comparison(task_name, metric, seeds, MappingProxyType(values), MappingProxyType(results))


def separation_2d(ks: Iterable[int] = (1, 2, 3), *, seeds: Iterable[int] = (0, 1, 2), **common) -> Comparison:
    """002 §4.2: ``C^k`` stacks with two nodes per layer on ``separation-2d``; accuracy per seed."""
    return compare(
        "separation-2d", {f"C^{k}": {"family": "smooth", "k": k} for k in ks}, seeds=seeds, **common
    )


def cubic_fit(
    *, seeds: Iterable[int] = (0, 1, 2), a_inits: Iterable[float] = (-2.0, 2.0), **common
) -> Comparison:
    """``cubic``: plain residual vs momentum with trainable ``m = sigmoid(a)`` from each ``a_init``.

    The metric is the final MSE. The momentum default ``a_init = -20`` of 000 §8 leaves
    ``dm/da ~ 2e-9``, i.e. ``m`` frozen near 0; ``a_init = -2`` (``m = 0.12``) and ``2``
    (``m = 0.88``) let it train.
    """
    variants: dict[str, dict] = {"residual": {"family": "residual"}}
    for a in a_inits:
        variants[f"momentum a_init={a:g}"] = {"family": "momentum", "a_init": float(a)}
    return compare("cubic", variants, seeds=seeds, **common)
