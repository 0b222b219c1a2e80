"""Numeric engine: batched coefficients, spectra and stability masks over parameter grids.

The Recurrence-level verbs ``simulate`` and ``check`` live in the submodules of those
names (and at the top level, ``depthdyn.simulate`` / ``depthdyn.check``).

Everything here is vectorised over a leading batch axis (no Python loop over grid points)
and checked against the exact symbolic layer in the test suite.
"""

from .blocks import BLOCKS, simulate_block
from .bridge import batch_coefficients, monic_columns, prepare_values
from .check import CheckReport, CheckRow
from .conv import conv_kernel, conv_spectrum
from .masks import schur_cohn, stability_mask
from .region import StabilityRegion, boundary_locus, stability_region
from .simulate import (
    OverflowReport,
    SimulationOverflowError,
    Trajectory,
    final_state,
    initial_from_velocity,
    trajectory,
)
from .spectra import (
    Spectrum,
    dominant_mode,
    roots,
    spectral_radius,
    spectrum,
)
from .sweep import sweep

__all__ = [
    "final_state",
    "trajectory",
    "initial_from_velocity",
    "Trajectory",
    "OverflowReport",
    "SimulationOverflowError",
    "simulate_block",
    "BLOCKS",
    "sweep",
    "CheckReport",
    "CheckRow",
    "batch_coefficients",
    "monic_columns",
    "prepare_values",
    "roots",
    "spectral_radius",
    "dominant_mode",
    "Spectrum",
    "spectrum",
    "conv_kernel",
    "conv_spectrum",
    "schur_cohn",
    "stability_mask",
    "boundary_locus",
    "StabilityRegion",
    "stability_region",
]
