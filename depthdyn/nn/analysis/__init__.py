"""The analysis room: what a model does over depth, read from one recorded forward.

* :mod:`.record`: find a model's residual layers and record its residual stream with hooks
  during the model's own forward (masks, caches and dtypes as the model uses them): the one
  recorder every analysis reads;
* :mod:`.profile`: the depth profile of a recording (norms, update cosines, perturbation
  ratios, gradient norms) with one convention for values that do not exist;
* :mod:`.operators`: each layer's Jacobian as a matrix-free operator (``vjp``/``jvp`` on
  the recorded graph); :mod:`.krylov` and :mod:`.blockkrylov` the Lanczos, Arnoldi and
  Hutchinson methods that read it, :mod:`.schedule` how iterations share its passes;
  :mod:`.product` products of operators over depth;
* :mod:`.inspection`: :func:`inspect`, the one entry point for any model, and its result
  :class:`Inspection`; :mod:`.checks` what it checks first (setup, non-finite values, coupled
  batch rows), :mod:`.steps` attention and MLP as separate steps, :mod:`.local` token-local
  functions of causal layers, :mod:`.stepspectra` the per-step spectra;
* :mod:`.placement`: measured ``lam`` values on any family's stability region;
* :mod:`.hyper` (with :mod:`.hclib`): hyper-connection ``H_res`` products per token;
* :mod:`.diagnostics`, :mod:`.linearise`: the diagnostics and the bridge to the theory for
  depthdyn's own :class:`~depthdyn.nn.blocks.stack.DepthStack`.
"""

from .checks import BatchCouplingError, ModelSetupError, NonFiniteError
from .diagnostics import (
    Diagnostics,
    PerturbationRatio,
    UpdateCosine,
    diagnose,
    grad_norms,
    inversion_growth,
    jacobian_spectra,
    norm_profile,
    perturbation_ratio,
    update_cosine,
)
from .hyper import HCProfile, hc_layers, hc_profile
from .inspection import Inspection, inspect
from .krylov import (
    KrylovEstimate,
    arnoldi_hessenberg,
    hutchinson_trace,
    ritz_values,
    singular_values_and_radius,
    spectral_radius_estimate,
    top_singular_values,
)
from .linearise import (
    RECURRENCE_EXACT,
    Agreement,
    Linearisation,
    linearise,
    measure_response,
    predict_response,
    response_agreement,
)
from .operators import LayerOperator
from .placement import Placement, place
from .product import ProductOperator, end_to_end, lyapunov_exponents
from .profile import DepthProfile, depth_profile
from .record import LAYOUTS, Recording, find_layers, record
from .steps import SPLITS, Split

__all__ = [
    # recording and the depth profile
    "record",
    "Recording",
    "find_layers",
    "LAYOUTS",
    "depth_profile",
    "DepthProfile",
    # any model
    "inspect",
    "Inspection",
    "SPLITS",
    "Split",
    "ModelSetupError",
    "NonFiniteError",
    "BatchCouplingError",
    "LayerOperator",
    "ProductOperator",
    "KrylovEstimate",
    "top_singular_values",
    "spectral_radius_estimate",
    "singular_values_and_radius",
    "ritz_values",
    "arnoldi_hessenberg",
    "hutchinson_trace",
    "end_to_end",
    "lyapunov_exponents",
    "place",
    "Placement",
    "hc_profile",
    "hc_layers",
    "HCProfile",
    # depthdyn stacks: diagnostics (000 §8, 002 §4.3, 003) and the bridge to the theory
    "diagnose",
    "Diagnostics",
    "norm_profile",
    "update_cosine",
    "UpdateCosine",
    "perturbation_ratio",
    "PerturbationRatio",
    "grad_norms",
    "jacobian_spectra",
    "inversion_growth",
    "linearise",
    "Linearisation",
    "RECURRENCE_EXACT",
    "predict_response",
    "measure_response",
    "response_agreement",
    "Agreement",
]
