"""Linear multistep methods as depth recurrences.

A ``k``-step method ``sum_j alpha_j y_{n+j} = z sum_j beta_j y_{n+j}`` applied to
``y' = lam y`` with step ``h`` (``z = h lam``) is the recurrence with characteristic
polynomial ``rho(r) - lam sigma(r)``, ``rho = sum alpha_j r^j``, ``sigma = sum beta_j r^j``
(``lam`` stands for ``z``). The linear-multistep ResNets of Lu et al. (2018) use exactly
these recurrences over depth.

The coefficients are derived here, never typed in: the Adams and Nystrom/Milne families
integrate the Lagrange interpolant of ``f`` through the nodes exactly (rational
arithmetic), BDF sums backward differences. :func:`order_and_error_constant` reads off
the order ``p`` (``C_0 = ... = C_p = 0``) and the error constant ``C_{p+1} / sigma(1)``.

Sources: Hairer, Norsett & Wanner, *Solving Ordinary Differential Equations I*, §III.1-III.2;
Lambert, *Numerical Methods for Ordinary Differential Systems* (1991), §3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy as sp

from ..errors import ParameterError, ShapeError
from ..limits import MAX_ORDER
from ..recurrence import Recurrence, r, to_exact
from .common import LAM, finish, positive_int

__all__ = [
    "adams_bashforth",
    "adams_moulton",
    "bdf",
    "nystrom",
    "milne_simpson",
    "from_lmm",
    "lmm_coefficients",
    "LMMOrder",
    "order_and_error_constant",
]

_s = sp.Symbol("s")


def _integrated_lagrange(nodes: range, lo: int, hi: int) -> list:
    """``int_lo^hi L_j(s) ds`` for the Lagrange basis ``L_j`` on ``nodes`` (exact)."""
    out = []
    for j in nodes:
        L = sp.Mul(*[(_s - m) / sp.Integer(j - m) for m in nodes if m != j])
        out.append(sp.integrate(sp.expand(L), (_s, lo, hi)))
    return out


def _method(alpha, beta, name: str, description: str, source: str, values: dict) -> Recurrence:
    """The recurrence ``rho(r) - lam sigma(r)`` from ``alpha_0..alpha_k``, ``beta_0..beta_k``."""
    k = len(alpha) - 1
    lam = LAM.symbol
    coeffs = tuple(sp.expand(alpha[k - i] - lam * beta[k - i]) for i in range(k + 1))
    rec = Recurrence(coeffs=coeffs, params=(LAM,), lam="lam", name=name, description=description,
                     source=source)
    return finish(rec, values)


def _adams(k, implicit: bool, back: int, name: str, label: str, source: str, values: dict) -> Recurrence:
    """The Adams (``back = 1``) or Nystrom/Milne (``back = 2``) method with ``k >= back`` steps.

    ``label`` is the description with ``{k}`` and ``{p}`` (the order of the Adams methods)
    to fill in once ``k`` is checked.
    """
    k = positive_int(k, "k", MAX_ORDER)
    if k < back:
        raise ParameterError(f"{name} needs k >= {back} steps, got {k}")
    alpha, beta = _adams_coefficients(k, implicit, back)
    return _method(alpha, beta, name, label.format(k=k, p=k + implicit), source, values)


def _adams_coefficients(k: int, implicit: bool, back: int) -> tuple[list, list]:
    """Integrate the interpolant over ``[k - back, k]``: nodes ``0..k-1`` (explicit) or ``0..k``."""
    nodes = range(k + 1) if implicit else range(k)
    b = _integrated_lagrange(nodes, k - back, k)
    beta = list(b) + ([] if implicit else [sp.Integer(0)])
    alpha = [sp.Integer(0)] * (k + 1)
    alpha[k], alpha[k - back] = sp.Integer(1), sp.Integer(-1)
    return alpha, beta


def adams_bashforth(*, k: int = 1, **values) -> Recurrence:
    """Adams–Bashforth ``k``-step method (explicit, order ``k``).

    .. math::

        y_{n+k} = y_{n+k-1} + h \\sum_{j=0}^{k-1} \\beta_j f_{n+j},
        \\qquad \\beta_j = \\int_{k-1}^{k} L_j(s)\\, ds,

    ``L_j`` the Lagrange basis on the nodes ``0, ..., k-1``. ``k = 1`` is forward Euler,
    the plain residual block. Source: Hairer, Norsett & Wanner I, §III.1 (eq. 1.5); as a
    depth model, the general order-p model of 000 §7.

    Examples
    --------
    >>> adams_bashforth(k=2).charpoly()
    lam/2 + r**2 + r*(-3*lam/2 - 1)
    """
    return _adams(k, False, 1, "adams_bashforth", "Adams-Bashforth {k}-step (explicit, order {p})",
                  "Hairer-Norsett-Wanner I §III.1; Lu et al. 2018 (LM-ResNet)", values)


def adams_moulton(*, k: int = 1, **values) -> Recurrence:
    """Adams–Moulton ``k``-step method (implicit, order ``k + 1``).

    Nodes ``0, ..., k``, integrated over ``[k-1, k]``; ``k = 1`` is the trapezoidal rule.
    Source: Hairer, Norsett & Wanner I, §III.1 (eq. 1.8); 000 §7 (order-p depth model).

    Examples
    --------
    >>> adams_moulton(k=1).charpoly()
    -lam/2 + r*(1 - lam/2) - 1
    """
    return _adams(k, True, 1, "adams_moulton", "Adams-Moulton {k}-step (implicit, order {p})",
                  "Hairer-Norsett-Wanner I §III.1", values)


def nystrom(*, k: int = 2, **values) -> Recurrence:
    """Nyström ``k``-step method (explicit, order ``k``, ``k >= 2``): ``y_{n+k} = y_{n+k-2} + ...``.

    Nodes ``0, ..., k-1`` integrated over ``[k-2, k]``; ``k = 2`` is the leapfrog
    (explicit midpoint) rule ``y_{n+2} = y_n + 2 h f_{n+1}``. Source: Hairer, Norsett &
    Wanner I, §III.1 (explicit Nystrom methods); 000 §7 (order-p depth model).

    Examples
    --------
    >>> nystrom(k=2).charpoly()
    -2*lam*r + r**2 - 1
    """
    return _adams(k, False, 2, "nystrom", "Nystrom {k}-step (explicit, order {p})",
                  "Hairer-Norsett-Wanner I §III.1", values)


def milne_simpson(*, k: int = 2, **values) -> Recurrence:
    """Milne–Simpson ``k``-step method (implicit, ``k >= 2``; ``k = 2`` is Simpson's rule, order 4).

    Nodes ``0, ..., k`` integrated over ``[k-2, k]``. Source: Hairer, Norsett & Wanner I,
    §III.1 (Milne–Simpson methods); 000 §7 (order-p depth model).

    Examples
    --------
    >>> milne_simpson(k=2).charpoly()
    -4*lam*r/3 - lam/3 + r**2*(1 - lam/3) - 1
    """
    return _adams(k, True, 2, "milne_simpson", "Milne-Simpson {k}-step (implicit)",
                  "Hairer-Norsett-Wanner I §III.1", values)


def bdf(*, k: int = 1, **values) -> Recurrence:
    """Backward differentiation formula with ``k`` steps (order ``k``).

    .. math::

        \\sum_{j=1}^{k} \\frac{1}{j} \\nabla^j y_{n+k} = h f_{n+k},
        \\qquad \\rho(r) = \\sum_{j=1}^{k} \\frac{1}{j} (r - 1)^j r^{k-j}, \\quad \\sigma(r) = r^k.

    Zero-stable only for ``k <= 6``. Source: Hairer & Wanner II, §V.1; 000 §7 (order-p depth model).

    Examples
    --------
    >>> bdf(k=2).charpoly()
    r**2*(3/2 - lam) - 2*r + 1/2
    """
    k = positive_int(k, "k", MAX_ORDER)
    rho = sp.Poly(sum(((r - 1) ** j * r ** (k - j) / sp.Integer(j) for j in range(1, k + 1)), sp.S.Zero), r)
    alpha = [rho.coeff_monomial(r**j) for j in range(k + 1)]
    beta = [sp.Integer(0)] * k + [sp.Integer(1)]
    return _method(alpha, beta, "bdf", f"BDF {k}-step (implicit, order {k})",
                   "Hairer-Wanner II §V.1", values)


def from_lmm(*, alpha=None, beta=None, **values) -> Recurrence:
    """A linear multistep method from its coefficients ``alpha_0..alpha_k``, ``beta_0..beta_k``.

    ``sum_j alpha_j y_{n+j} = h sum_j beta_j f_{n+j}`` (lowest index first, as in the
    textbooks); ``beta`` may be one shorter (an explicit method). Entries are exact:
    strings are parsed, lists, tuples and 1-D NumPy arrays accepted, and a float is read
    as the decimal it prints as when that has at most 12 significant digits (``0.25``),
    else as the fraction with denominator at most 10**6 that rounds to it (``1/3`` from
    ``0.3333333333333333``); other floats are refused. Source: Hairer,
    Norsett & Wanner I, §III.2 (eq. 2.1); 000 §7 (order-p depth model).

    Examples
    --------
    >>> from_lmm(alpha=[-1, 0, 1], beta=[0, 2, 0]).charpoly()
    -2*lam*r + r**2 - 1
    """
    if alpha is None or beta is None:
        raise ParameterError("from_lmm needs alpha=[alpha_0, ..., alpha_k] and beta=[beta_0, ..., beta_k]")
    a, b = (_coefficients(c, n) for c, n in ((alpha, "alpha"), (beta, "beta")))
    if len(b) == len(a) - 1:
        b.append(sp.Integer(0))
    if len(a) < 2 or len(b) != len(a):
        raise ShapeError(f"alpha and beta need k + 1 >= 2 entries each, got {len(a)} and {len(b)}")
    if any(v.free_symbols for v in a + b):
        raise ParameterError("from_lmm coefficients must be numbers")
    if a[-1] == 0 and b[-1] == 0:
        raise ParameterError("alpha_k and beta_k are both 0: the method does not determine y_{n+k}")
    if len(a) - 1 > MAX_ORDER:
        raise ParameterError(f"at most {MAX_ORDER} steps for exact work, got {len(a) - 1}")
    return _method(a, b, "lmm", f"linear multistep method with {len(a) - 1} steps", "user coefficients",
                   values)


def _as_list(value, name: str) -> list:
    if isinstance(value, str):
        from ..parse import parse_value

        value = parse_value(value)
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise ShapeError(f"{name} must be a list (or 1-D array) of numbers, got {value!r}")
    return list(value)


def _coefficients(value, name: str) -> list:
    """Exact coefficients; floats that are neither short decimals nor small fractions are refused."""
    out = []
    for v in _as_list(value, name):
        v = v.item() if isinstance(v, np.generic) else v
        if isinstance(v, float) and math.isfinite(v) and len(repr(abs(v)).replace(".", "").lstrip("0")
                                                          .partition("e")[0]) > 12:
            q = Fraction(v).limit_denominator(10**6)  # 1/3 and 2/3 survive a float only this way
            if float(q) != v:
                raise ParameterError(f"{name} entry {v!r} is a float that is neither a short decimal nor a "
                                     "fraction with denominator <= 10**6; give it exactly, as a string "
                                     "('1/3') or a fractions.Fraction")
            v = q
        out.append(to_exact(v))
    if any(not e.is_number for e in out):
        raise ParameterError(f"{name} entries must be numbers, got {[str(e) for e in out]}")
    return out


def lmm_coefficients(rec) -> tuple[tuple, tuple] | None:
    """``(alpha_0..alpha_k, beta_0..beta_k)`` of a scalar recurrence ``rho - lam sigma``, else None."""
    if not rec.is_scalar or rec.lam is None or len(rec.params) != 1:
        return None
    pair = rec.rho_sigma()
    if pair is None:
        return None
    k = rec.order
    rho, sigma = (sp.Poly(e, r) for e in pair)
    return (tuple(rho.coeff_monomial(r**j) for j in range(k + 1)),
            tuple(sigma.coeff_monomial(r**j) for j in range(k + 1)))


@dataclass(frozen=True)
class LMMOrder:
    """Order ``p`` and error constant ``C_{p+1} / sigma(1)`` of a linear multistep method."""

    order: int
    error_constant: sp.Expr | None
    constants: tuple  # C_0 .. C_{p+1}


def order_and_error_constant(alpha, beta, max_order: int = 2 * MAX_ORDER + 2) -> LMMOrder:
    """Order conditions ``C_q = sum_j (j^q alpha_j / q! - j^(q-1) beta_j / (q-1)!) = 0``.

    The order is the largest ``p`` with ``C_0 = ... = C_p = 0`` (0 if the method is not
    consistent: ``C_0 != 0`` or ``C_1 != 0`` gives order 0); the error constant is
    ``C_{p+1} / sigma(1)`` (invariant under scaling ``alpha, beta``), ``None`` when
    ``sigma(1) = 0``.

    Examples
    --------
    >>> o = order_and_error_constant([-1, 1], [sp.Rational(1, 2), sp.Rational(1, 2)])
    >>> o.order, o.error_constant
    (2, -1/12)
    """
    if isinstance(max_order, bool) or not isinstance(max_order, (int, np.integer)) or max_order < 0:
        raise ParameterError(f"max_order must be an integer >= 0, got {max_order!r}")
    alpha, beta = _coefficients(alpha, "alpha"), _coefficients(beta, "beta")
    if len(alpha) != len(beta) or not alpha:
        raise ShapeError(f"alpha and beta need the same number (>= 1) of entries, got {len(alpha)} and {len(beta)}")
    C = []
    for q in range(max_order + 2):
        if q == 0:
            c = sum(alpha, sp.S.Zero)
        else:
            c = sum((sp.Integer(j) ** q * a / sp.factorial(q) - sp.Integer(j) ** (q - 1) * b / sp.factorial(q - 1)
                     for j, (a, b) in enumerate(zip(alpha, beta, strict=True))), sp.S.Zero)
        C.append(c)
        if c != 0:
            break
    p = len(C) - 1 - 1 if C[-1] != 0 else len(C) - 1
    sig1 = sum(beta, sp.S.Zero)
    const = C[-1] / sig1 if sig1 != 0 else None
    return LMMOrder(max(p, 0), const, tuple(C))
