"""Residual-family blocks in torch, the depth dynamics of any torch model, and experiments.

Three rooms, each with its own curated face:

* :mod:`depthdyn.nn.blocks`: one ``torch.nn`` block per family and the
  :class:`~depthdyn.nn.blocks.stack.DepthStack` that runs them;
* :mod:`depthdyn.nn.analysis`: the analysis of a model, all from one recorded forward
  (:func:`~depthdyn.nn.analysis.record.record`): :func:`inspect` for any user model
  (hooks during the real forward, matrix-free layer Jacobians), the diagnostics and
  linearisation of depthdyn's own stacks, placement on stability regions, hyper-connection gains;
* :mod:`depthdyn.nn.experiments`: tasks, training, the trained claims and ``depthdyn train``.

This package itself keeps the few names most work starts from: the stack, the recorder,
:func:`inspect`, :func:`diagnose`, :func:`linearise` and :func:`train` (the seeded trainer).

This subpackage needs the optional extra ``pip install "depthdyn[torch]"`` (any
``torch>=2.1``); ``import depthdyn`` never imports it.
"""

from __future__ import annotations

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without torch installed
    from ..errors import OptionalDependencyError

    raise OptionalDependencyError(
        'depthdyn.nn needs torch: pip install "depthdyn[torch]" (or pip install torch)'
    ) from exc

from .analysis import Diagnostics, Inspection, Recording, diagnose, inspect, linearise, record
from .blocks import BLOCKS, DepthStack, make_stack
from .experiments.train import run as train

__all__ = [
    "DepthStack",
    "make_stack",
    "BLOCKS",
    "record",
    "Recording",
    "inspect",
    "Inspection",
    "diagnose",
    "Diagnostics",
    "linearise",
    "train",
]
