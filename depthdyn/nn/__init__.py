"""Residual-family blocks in torch, the depth dynamics of any torch model, and experiments.

Three rooms:

* :mod:`depthdyn.nn.blocks`: one ``torch.nn`` block per family and the :class:`DepthStack`
  that runs them;
* :mod:`depthdyn.nn.analysis`: the analysis of a model: :func:`inspect` for any user model
  (hooks during the real forward, matrix-free layer Jacobians), the diagnostics and
  linearisation of depthdyn's own stacks, hyper-connection gains;
* :mod:`depthdyn.nn.experiments`: tasks, training, the trained claims and ``depthdyn train``.

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

from .analysis.diagnostics import (
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
from .analysis.hyper import HCProfile, hc_profile
from .analysis.inspect import Inspection, LayerPlacement, inspect
from .analysis.linearize import (
    Agreement,
    Linearization,
    Placement,
    linearize,
    measure_response,
    predict_response,
    response_agreement,
    stability_placement,
)
from .analysis.operators import (
    LayerOperator,
    hutchinson_trace,
    ritz_values,
    spectral_radius,
    top_singular_values,
)
from .analysis.placement import place, plot_placement
from .analysis.record import LAYOUTS, Recording, find_layers, record
from .analysis.steps import SPLITS, Split
from .blocks import (
    BLOCKS,
    ConvEntangledBlock,
    DenseBlock,
    DepthBlock,
    DepthStack,
    EntangledBlock,
    HighwayBlock,
    HyperConnectionBlock,
    MomentumBlock,
    ResidualBlock,
    ReZeroBlock,
    SmoothBlock,
    Trace,
    WeightedBlock,
    block_class,
    make_stack,
    mlp,
    pick_device,
    sinkhorn,
    tanh_layer,
)

__all__ = [
    # any model: inspect, its operators, hyper-connection gains per token
    "inspect",
    "Inspection",
    "LayerPlacement",
    "place",
    "plot_placement",
    "SPLITS",
    "Split",
    "find_layers",
    "record",
    "Recording",
    "LAYOUTS",
    "LayerOperator",
    "top_singular_values",
    "spectral_radius",
    "ritz_values",
    "hutchinson_trace",
    "hc_profile",
    "HCProfile",
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
