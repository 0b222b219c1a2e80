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
from .diagnostics import (
    Diagnostics,
    diagnose,
    grad_norms,
    hc_gain,
    inversion_growth,
    jacobian_spectra,
    norm_profile,
    perturbation_ratio,
    update_cosine,
)
from .entangled import ConvEntangledBlock, EntangledBlock
from .hyper import HyperConnectionBlock, sinkhorn
from .linearize import (
    Agreement,
    Linearization,
    Placement,
    linearize,
    measure_response,
    predict_response,
    response_agreement,
    stability_placement,
)
from .stack import BLOCKS, DepthStack, Trace, block_class, make_stack, pick_device

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
    "EntangledBlock",
    "ConvEntangledBlock",
    "HyperConnectionBlock",
    "sinkhorn",
    "mlp",
    "tanh_layer",
    "DepthStack",
    "Trace",
    "make_stack",
    "block_class",
    "pick_device",
    # diagnostics (000 §8, 002 §4.3, 003)
    "Diagnostics",
    "diagnose",
    "norm_profile",
    "update_cosine",
    "grad_norms",
    "perturbation_ratio",
    "jacobian_spectra",
    "hc_gain",
    "inversion_growth",
    # the bridge to the theory
    "Linearization",
    "Placement",
    "Agreement",
    "linearize",
    "stability_placement",
    "predict_response",
    "measure_response",
    "response_agreement",
]
