"""Residual-family blocks in torch: train them, trace their depth dynamics, linearise them.

This subpackage needs the optional extra ``pip install "depthdyn[torch]"`` (which pins
the CPU build ``torch==2.13.0``); ``import depthdyn`` never imports it.
"""

from __future__ import annotations

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without torch installed
    from ..errors import OptionalDependencyError

    raise OptionalDependencyError(
        'depthdyn.nn needs torch: pip install "depthdyn[torch]" (or pip install torch==2.13.0)'
    ) from exc

from .blocks import (
    BLOCKS,
    DenseBlock,
    DepthBlock,
    HighwayBlock,
    MomentumBlock,
    ResidualBlock,
    ReZeroBlock,
    SmoothBlock,
    WeightedBlock,
    mlp,
    tanh_layer,
)
from .stack import DepthStack, Trace, block_class, make_stack, pick_device

__all__ = [
    "BLOCKS",
    "DepthBlock",
    "ResidualBlock",
    "ReZeroBlock",
    "WeightedBlock",
    "HighwayBlock",
    "MomentumBlock",
    "SmoothBlock",
    "DenseBlock",
    "mlp",
    "tanh_layer",
    "DepthStack",
    "Trace",
    "make_stack",
    "block_class",
    "pick_device",
]
