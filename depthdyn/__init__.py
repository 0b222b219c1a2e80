"""depthdyn: residual-family networks as recurrences over depth, analysed exactly and fast."""

from .errors import *  # noqa: F403
from .recurrence import COMPLEXES, REALS, Param, Realisation, Recurrence, r, to_exact
from .families import (
    FAMILIES,
    MAX_ORDER,
    MAX_STREAMS,
    build,
    dense,
    entangled,
    from_coefficients,
    general,
    get_family,
    highway,
    hyper_connection,
    momentum,
    oscillator,
    residual,
    rezero,
    smooth,
    weighted,
)
from .symbolic.statespace import realisations, realisation, signed_pascal, similarity
from . import errors

__version__ = "0.1.0"
from .symbolic.polynomial import charpoly, char_poly, discriminant, root_structure, roots, vieta
