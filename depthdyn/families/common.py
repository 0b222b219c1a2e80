"""What the family modules share: size limits, the common parameters and argument checks.

Every factory of :mod:`depthdyn.families` builds on these; they are public within the
package so that :mod:`~depthdyn.families.sources`, :mod:`~depthdyn.families.literature` and
:mod:`~depthdyn.families.multistep` import them by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import numpy as np
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
    "FLOAT_TOLERANCE",
    "SIMPLE_DENOMINATOR",
    "READ_DENOMINATOR",
    "exact_float",
    "exact_floats",
    "stochastic_from_floats",
    "stochastic_arg",
]


#: Domains shared by the families' parameters.
NONNEG = sp.Interval(0, sp.oo)
POS = sp.Interval.open(0, sp.oo)
UNIT = sp.Interval(0, 1)

#: The parameters most families share: the block eigenvalue, the step and the depth.
LAM = Param("lam", COMPLEXES, "eigenvalue of the linearised block")
STEP = Param("h", POS, "layer step size Delta l")
DEPTH = Param("L", POS, "network depth")


#: The float rule (docs/stability.md, "Float data"). A float is read as the fraction with
#: denominator at most ``READ_DENOMINATOR`` whose nearest double it is (``1/3`` from
#: ``0.3333333333333333``, as :func:`~depthdyn.families.from_lmm` reads its coefficients);
#: a residue of at most ``FLOAT_TOLERANCE`` from a simple number (denominator at most
#: ``SIMPLE_DENOMINATOR``) decides nothing: a row sum off 1, a root modulus off 1.
READ_DENOMINATOR = 10**6
SIMPLE_DENOMINATOR = 1000
FLOAT_TOLERANCE = 1e-12


def exact_float(value) -> sp.Expr:
    """A float read exactly: a short decimal as it prints, else the small fraction it rounds
    from, else the decimal it prints as.

    A float whose shortest ``repr`` has at most 12 significant digits is that decimal
    (``0.1 -> 1/10``). Otherwise ``p/q`` with ``q <= READ_DENOMINATOR`` is taken when
    ``float(p/q) == value``, i.e. when ``value`` is the double nearest to ``p/q`` (``1/3``
    computed in float64 reads back as ``1/3``); for ``|value| < 1000`` at most one such
    fraction exists (two differ by at least ``1/q**2 >= 1e-12``, more than an ulp there), and
    it is the one of denominator ``<= READ_DENOMINATOR`` nearest to ``value``. Other floats
    (a Sinkhorn output) are read as :func:`~depthdyn.recurrence.to_exact` reads them: the
    shortest decimal that rounds to them. Non-floats go to ``to_exact`` unchanged.

    Examples
    --------
    >>> exact_float(1 / 3), exact_float(0.1), exact_float(2 / 7 + 1e-15)
    (1/3, 1/10, 2857142857142867/10000000000000000)
    """
    if isinstance(value, (float, np.floating)) and np.isfinite(value):
        x = float(value)
        if len(repr(abs(x)).replace(".", "").lstrip("0").partition("e")[0]) <= 12:
            return to_exact(x)
        near = Fraction(x).limit_denominator(READ_DENOMINATOR)
        if float(near) == x:
            return sp.Rational(near.numerator, near.denominator)
        return to_exact(x)
    return to_exact(value)


def exact_floats(value):
    """``value`` (a number, a nested list or tuple, or an array) with every float read by
    :func:`exact_float`; strings, SymPy objects and the rest are left for the parser."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return [exact_floats(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [exact_floats(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return exact_float(value)
    return value


def stochastic_from_floats(K) -> tuple[sp.ImmutableMatrix, float]:
    """An ``n x n`` float64 matrix meant to be doubly stochastic (a Sinkhorn output), read exactly.

    Every entry is read by :func:`exact_float`. When every row sum of the entries so read
    is within ``FLOAT_TOLERANCE`` of 1, the last column is recomputed as ``1 - (the other
    entries of its row)``; when every column sum is, the last row likewise. Each entry moves
    by at most that residual, and the sums within the tolerance become 1 exactly, so the
    eigenvalue 1 on the all-ones vector is exact rather than ``1 +- 1e-16`` (a Sinkhorn run
    stopped early still has exact column sums: it ends on a column step). Sums further
    from 1 are kept as read. Returns the matrix and the largest residual as read.

    Examples
    --------
    >>> H, residual = stochastic_from_floats([[0.1, 0.9], [0.9, 0.1]])
    >>> H, residual
    (Matrix([
    [1/10, 9/10],
    [9/10, 1/10]]), 0.0)
    >>> H, residual = stochastic_from_floats([[0.1, 0.9 + 1e-16], [0.9, 0.1]])
    >>> H.T * sp.ones(2, 1) == H * sp.ones(2, 1) == sp.ones(2, 1), residual < 1e-15
    (True, True)
    """
    read = [[exact_float(v) for v in row] for row in np.asarray(K, dtype=float)]
    rows = [r[:] for r in read]
    n = len(rows)
    row_gap = max(abs(sum(r) - 1) for r in rows)
    col_gap = max(abs(sum(rows[i][j] for i in range(n)) - 1) for j in range(n))
    if n > 1 and 0 < row_gap <= FLOAT_TOLERANCE:
        for i in range(n - 1 if col_gap <= FLOAT_TOLERANCE else n):
            rows[i][n - 1] = 1 - sum(rows[i][: n - 1])
    if n > 1 and 0 < col_gap <= FLOAT_TOLERANCE or (0 < row_gap <= FLOAT_TOLERANCE and col_gap == 0):
        for j in range(n):  # after the rows: with both sums exact, the last row sums to 1 too
            rows[n - 1][j] = 1 - sum(rows[i][j] for i in range(n - 1))
    if any(v < 0 for r in rows for v in r):  # an entry at the residual's size: kept as read
        rows = read
    return sp.ImmutableMatrix(rows), float(max(row_gap, col_gap))


def stochastic_arg(value, what: str, n: int | None = None) -> sp.ImmutableMatrix:
    """``value`` as an exact square matrix meant to be doubly stochastic: :func:`matrix_arg`,
    and a matrix of floats read by :func:`stochastic_from_floats` (sums within
    ``FLOAT_TOLERANCE`` of 1 made exact)."""
    M = matrix_arg(value, what, n)
    try:
        K = np.asarray(value)
    except (TypeError, ValueError):  # ragged: matrix_arg has refused it already
        return M
    if K.dtype.kind == "f" and K.shape == M.shape:
        return stochastic_from_floats(K)[0]
    return M


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
    M = as_square_matrix(exact_floats(value), what)
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
        value = as_sympy(exact_floats(value))  # strings, lists, arrays: read safely
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple)):
        if len(value) != 1:
            raise ShapeError(f"{what} must be a 1 x {n} row, got {len(value)} rows")
        value = value[0]
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise ShapeError(f"{what} must have {n} entries (one per stream), got {value!r}")
    return sp.ImmutableMatrix([[to_exact(v) for v in value]])
