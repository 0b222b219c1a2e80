"""What the family modules share: size limits, the common parameters and argument checks.

Every factory of :mod:`depthdyn.families` builds on these; they are public within the
package so that :mod:`~depthdyn.families.sources`, :mod:`~depthdyn.families.literature` and
:mod:`~depthdyn.families.multistep` import them by name.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy as sp

from ..errors import DegreeTooLargeError, ParameterError, ShapeError
from ..limits import MAX_STREAMS
from ..parse import as_sympy
from ..recurrence import COMPLEXES, Param, Recurrence, as_square_matrix, to_exact

__all__ = [
    "NONNEG",
    "POS",
    "UNIT",
    "LAM",
    "STEP",
    "DEPTH",
    "finish",
    "positive_int",
    "matrix_arg",
    "vector_arg",
]


#: Domains shared by the families' parameters.
NONNEG = sp.Interval(0, sp.oo)
POS = sp.Interval.open(0, sp.oo)
UNIT = sp.Interval(0, 1)

#: The parameters most families share: the block eigenvalue, the step and the depth.
LAM = Param("lam", COMPLEXES, "eigenvalue of the linearised block")
STEP = Param("h", POS, "layer step size Delta l")
DEPTH = Param("L", POS, "network depth")


def finish(rec: Recurrence, values: Mapping) -> Recurrence:
    """``rec`` with the parameter ``values`` a factory was given substituted (exactly)."""
    return rec.subs(values) if values else rec


def positive_int(value, name: str, upper: int) -> int:
    """``value`` as an int in ``1..upper``: a structural size (order, streams) of a factory."""
    if isinstance(value, sp.Basic) and value.is_Integer:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(f"{name} must be a positive integer, got {value!r}")
    if value < 1:
        raise ParameterError(f"{name} must be a positive integer (>= 1), got {value}")
    if value > upper:
        raise DegreeTooLargeError(
            f"{name}={value} is too large for exact symbolic work (limit {upper}); "
            "use the numeric layer for larger sizes"
        )
    return value


def matrix_arg(value, what: str, n: int | None = None) -> sp.ImmutableMatrix:
    """``value`` as an exact square matrix (``n x n`` when ``n`` is given), at most ``MAX_STREAMS``."""
    M = as_square_matrix(value, what)
    if n is not None and M.shape[0] != n:
        raise ShapeError(f"{what} must be {n}x{n}, got {M.shape[0]}x{M.shape[1]}")
    if M.shape[0] > MAX_STREAMS:
        raise DegreeTooLargeError(
            f"{what} is {M.shape[0]}x{M.shape[0]}; exact work is limited to {MAX_STREAMS}"
        )
    return M


def vector_arg(value, what: str, n: int) -> sp.ImmutableMatrix:
    """``value`` as an exact ``1 x n`` row (one entry per stream); strings are read safely."""
    if isinstance(value, sp.MatrixBase):
        value = list(value)
    else:
        value = as_sympy(value)  # strings, lists, arrays: read safely
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple)):
        if len(value) != 1:
            raise ShapeError(f"{what} must be a 1 x {n} row, got {len(value)} rows")
        value = value[0]
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise ShapeError(f"{what} must have {n} entries (one per stream), got {value!r}")
    return sp.ImmutableMatrix([[to_exact(v) for v in value]])
