"""The first two moments of ``J J^T`` for the residual chain at initialisation.

For ``x_{l+1} = x_l + h (W_l phi(x_l) + b_l)`` the input-output Jacobian is
``J = A_{L-1} ... A_0`` with ``A_l = I + h W_l D_l`` and ``D_l = diag(phi'(x_l))``. Unlike the
plain chain, the factors ``A_l A_l^T`` are not free of each other: the skip keeps the
pre-activations of one unit correlated over depth (per unit, ``x_l`` is a Gaussian random walk
with ``Cov(x_j, x_l) = q_min(j, l)``), so the diagonals ``D_j, D_l`` commute and are dependent,
and the S-transforms of the layers do not simply multiply. What is free (as the width grows,
with the gradient-independence rule of mean-field theory) is every ``W_l`` from the others and
from the commutative algebra ``B`` of the diagonals: ``W_l`` is circular with variance ``sw2``
(Gaussian weights) or ``sqrt(sw2)`` times a Haar unitary (orthogonal weights).

With ``M_l = J_l J_l^T`` and ``tau`` the normalised trace, the functionals
``f(b) = tau(b M)`` and ``g(b, b') = tau(b M b' M)`` (``b, b'`` in ``B``) follow one layer
``M -> A M A^T`` in closed form (second-order free cumulants; for Haar unitaries also the
fourth, which removes one term). With ``a = h^2 sw2``, ``mu_l = E[phi'(x_l)^2]``:
``f(b) = m_1 tau(b)`` with ``m_1 = prod_l (1 + a mu_l)``, and
``g(b, b') = m_1^2 tau(b b') + tau(b) lambda(b') + tau(b') lambda(b) + beta tau(b) tau(b')``
where ``lambda(b) = sum_j gamma_j tau(D_j^2 b)``. One layer updates

.. math::

    \\gamma_l \\mathrel{+}= a m_1^2, \\quad \\gamma_j \\to (1 + a \\mu_l) \\gamma_j, \\quad
    \\beta \\to \\beta + 2a(\\lambda(D_l^2) + \\beta \\mu_l) + a^2 (H - (1 - \\epsilon) m_1^2 \\mu_l^2),

with ``H = g(D_l^2, D_l^2) = m_1^2 E[phi'^4] + 2 mu_l lambda(D_l^2) + beta mu_l^2`` (old values on
the right), ``epsilon = 1`` for Gaussian and ``0`` for orthogonal weights, and
``m_2 = g(1, 1) = m_1^2 + 2 lambda(1) + beta``. The inputs are the means ``E[phi'(x_l)^2]`` and
the products ``E[phi'(x_j)^2 phi'(x_l)^2]`` (``E[phi'(x_l)^4]`` on the diagonal); rational inputs
(``int``, ``Fraction``, SymPy rationals) give exact moments.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..errors import DomainError, ParameterError
from .checks import as_count, as_real
from .closedform import PiecewiseLinear
from .gaussian import expect, expect2
from .isometry import WEIGHTS, JacobianMoments
from .kernels import iterate_family, resolve_activation

__all__ = ["residual_jacobian_moments", "residual_d2_moments", "residual_isometry_score"]


def _exact(value, name):
    """Integers, Fractions and SymPy rationals stay exact; anything else a checked float ``>= 0``."""
    if isinstance(value, (int, Fraction)) and not isinstance(value, bool):
        exact = Fraction(value)
    elif type(value).__module__.startswith("sympy") and getattr(value, "is_Rational", False):
        exact = Fraction(int(value.p), int(value.q))
    else:
        return as_real(value, name, low=0)
    if exact < 0:
        raise DomainError(f"{name} must be >= 0, got {value}")
    return exact


def residual_jacobian_moments(d2_means, d2_products, sw2, *, h=1, weights: str = "gaussian"):
    """``m_1, m_2`` of ``J J^T`` for ``J = prod_l (I + h W_l D_l)`` (see the module docstring).

    Parameters
    ----------
    d2_means : sequence
        ``E[phi'(x_l)^2]`` for the layers ``l = 0..L-1``.
    d2_products : (L, L) array_like
        ``E[phi'(x_j)^2 phi'(x_l)^2]``, symmetric; the diagonal is ``E[phi'(x_l)^4]``.
    sw2 : number
        Weight variance (``> 0``): entries ``N(0, sw2/N)``, or ``sqrt(sw2)`` times Haar.
    h : number
        Branch scale (``> 0``).
    weights : {"gaussian", "orthogonal"}

    Returns
    -------
    JacobianMoments
        ``moments = (m_1, m_2)``; ``score`` is ``m_2 / m_1^2 - 1``.

    Examples
    --------
    One linear layer, ``J = I + h W``: ``m_2 = 1 + 4a + 2a^2`` with ``a = h^2 sw2``.

    >>> residual_jacobian_moments([1], [[1]], 1, h=1).moments
    (Fraction(2, 1), Fraction(7, 1))
    """
    if weights not in WEIGHTS:
        raise ParameterError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
    mu = [_exact(m, f"d2_means[{i}]") for i, m in enumerate(d2_means)]
    L = len(mu)
    if L == 0:
        raise ParameterError("d2_means must hold one E[phi'^2] per layer (at least one layer)")
    try:
        rows = [list(r) for r in d2_products]
    except TypeError:
        raise ParameterError("d2_products must be an L x L array of E[phi'(x_j)^2 phi'(x_l)^2]") from None
    if len(rows) != L or any(len(r) != L for r in rows):
        raise ParameterError(f"d2_products must be {L} x {L}: one row and one column per layer")
    nu = [[_exact(x, f"d2_products[{j}][{k}]") for k, x in enumerate(r)] for j, r in enumerate(rows)]
    sw2 = _exact(sw2, "sw2")
    h = _exact(h, "h")
    if sw2 == 0 or h == 0:
        raise DomainError("sw2 and h must be > 0")
    a = h * h * sw2
    eps = 1 if weights == "gaussian" else 0
    try:
        m1, beta, gamma = 1, 0, [0] * L
        for layer in range(L):
            m = mu[layer]
            lam = sum(gamma[j] * nu[j][layer] for j in range(layer))  # lambda(D_l^2): only earlier layers
            big_h = m1 * m1 * nu[layer][layer] + 2 * m * lam + beta * m * m
            beta = beta + 2 * a * (lam + beta * m) + a * a * (big_h - (1 - eps) * (m1 * m) ** 2)
            grow = 1 + a * m
            gamma = [g * grow for g in gamma]
            gamma[layer] = a * m1 * m1
            m1 = m1 * grow
        m2 = m1 * m1 + 2 * sum(g * x for g, x in zip(gamma, mu, strict=True)) + beta
    except OverflowError:
        m1 = m2 = math.inf
    if not all(isinstance(m, Fraction) or math.isfinite(m) for m in (m1, m2)):
        raise DomainError("the moments overflowed float64; lower sw2, h or the depth (or give exact inputs)")
    return JacobianMoments(weights, L, sw2, (m1, m2))


def residual_d2_moments(act, sw2, sb2, *, depth: int, h=1.0, q0=1.0):
    """The means ``E[phi'(x_l)^2]`` and products ``E[phi'(x_j)^2 phi'(x_l)^2]`` of the residual chain.

    ``q_l`` comes from the residual family's kernel recurrence
    (:func:`~depthdyn.meanfield.kernels.iterate_family`), and ``(x_j, x_l)`` is Gaussian with
    covariance ``q_min(j, l)``; every expectation is the certified quadrature of
    :mod:`depthdyn.meanfield.gaussian` (graded at the kink for non-smooth activations), except
    the cross moments of the piecewise-linear activations, which are orthant probabilities.

    Returns
    -------
    (ndarray, ndarray)
        Shapes ``(L,)`` and ``(L, L)``.

    Notes
    -----
    Other than for the piecewise-linear activations this takes ``L (L - 1) / 2`` two-dimensional
    quadratures: about 0.8 s of CPU at ``L = 20`` and 25 s at ``L = 100`` for tanh.
    """
    act = resolve_activation(act)
    depth = as_count(depth, "depth", 2000)
    h = as_real(h, "h", low=0, low_open=True)
    traj = iterate_family(act, sw2, sb2, depth=depth, q0=q0, family="residual", h=h)
    if traj.stopped_at is not None and traj.stopped_at < depth:
        raise DomainError(f"the forward kernel stopped at layer {traj.stopped_at} ({traj.reason}); "
                          "lower sw2, h or the depth")
    q = np.asarray(traj.q, dtype=float)[:depth]
    dphi = act.dphi
    means = np.asarray(expect(lambda u: dphi(u) ** 2, np.sqrt(q)), dtype=float)
    fourth = np.asarray(expect(lambda u: dphi(u) ** 4, np.sqrt(q)), dtype=float)
    products = np.diag(fourth)
    j, k = np.triu_indices(depth, 1)
    if j.size:
        # the random walk: x_k = x_j + an independent increment, so c = sqrt(q_j / q_k)
        rho = np.sqrt(q[j] / q[k])
        if isinstance(act, PiecewiseLinear):
            # phi'^2 is 1 or alpha^2 by the sign: orthant probabilities 1/4 +- asin(rho) / (2 pi)
            same, a2 = np.arcsin(rho) / (2 * np.pi), act.alpha**2
            products[j, k] = products[k, j] = (0.25 + same) * (1 + a2 * a2) + 2 * (0.25 - same) * a2
            return means, products
        cross = expect2(lambda u, d: dphi(u) ** 2 * dphi(u + d) ** 2, q[j], q[k], eps=-np.expm1(np.log(rho)),
                        sharp=not getattr(act, "smooth", False))
        products[j, k] = products[k, j] = cross
    return means, products


def residual_isometry_score(act, sw2, sb2, *, depth: int, h=1.0, q0=1.0, weights: str = "gaussian"):
    """``m_2 / m_1^2 - 1`` of ``J J^T`` for a residual network (0 for perfect dynamical isometry).

    The moments of :func:`residual_jacobian_moments` at the means and products of
    :func:`residual_d2_moments`.
    """
    means, products = residual_d2_moments(act, sw2, sb2, depth=depth, h=h, q0=q0)
    score = residual_jacobian_moments(means.tolist(), products.tolist(), sw2, h=h, weights=weights).score
    if not math.isfinite(score):
        raise DomainError("the isometry score overflowed; lower sw2, h or the depth")
    return float(score)
