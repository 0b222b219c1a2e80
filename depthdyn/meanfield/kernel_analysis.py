"""What the kernel recurrences of :mod:`~depthdyn.meanfield.kernels` say over depth.

* :func:`kernel_fixed_point` iterates a family's kernel to its fixed point ``(P*, S*)``.
* :func:`linearise_kernel`: the linearisation at that fixed point (or at ``q = 0``) is a
  linear depth recurrence on the symmetric ``k x k`` state covariances, returned as a
  depthdyn :class:`~depthdyn.Recurrence` (matrix coefficients ``(I, -A)``): its roots are the
  per-layer factors of the kernel's deviations and :func:`depth_scales` turns them into
  depth scales ``xi = -1 / log|r|``. Every verb that takes a ``Recurrence`` takes it.
* :func:`continuum_limit`: the ``1/sqrt(L)``-scaled residual kernel as ``L -> oo`` solves
  ``dK/dt = G(K)`` on ``t in [0, 1]`` (the recurrence is its Euler scheme with step ``1/L``).

The linear map. For a deviation ``delta`` of the cross-covariance (or of ``D`` near
``c = 1``), one layer gives, by Price's theorem ``dE[phi(u_1) phi(u_2)]/dCov = E[phi' phi']``,

.. math::

    \\delta' = C \\delta C^T + e e^T \\sum_{ij} \\kappa_{ij} (R \\delta R^T)_{ij},
    \\qquad \\kappa_{ij} = s_w^2 E[\\phi'(y_i) \\phi'(y_j)]

at the fixed point's covariances (times the LayerNorm factors ``1/sqrt(q_i + eps)`` for
pre-LN, ``sv2 sw2 E[phi' phi']`` at the hidden covariance for the full residual block,
and ``1 / (q_z + eps)`` after a post-LN). For the plain chain it is ``chi_c``, and
``chi_1 = sw2 E[phi'^2]`` at ``c* = 1``.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..errors import DomainError, ParameterError
from ..recurrence import Recurrence
from .checks import as_count, as_real, as_variance, check_weights
from .kernels import LN_EPS, kernel_spec, kernel_step, resolve_activation

__all__ = ["kernel_fixed_point", "linearise_kernel", "depth_scales", "continuum_limit", "branch_gains"]


def kernel_fixed_point(
    act, sw2, sb2, *, family="residual", q0=1.0, c0=0.0, tol=1e-13, max_layers=100_000, **params
):
    """The fixed point ``(P*, D*)`` that the kernel reaches from ``(q0, c0)``.

    Raises :class:`~depthdyn.errors.DomainError` when the kernel does not settle within
    ``max_layers`` (the variance of most residual families grows without bound: use
    ``at="zero"`` in :func:`linearise_kernel`).
    """
    act = resolve_activation(act)
    sw2, sb2 = check_weights(sw2, sb2)
    max_layers = as_count(max_layers, "max_layers", 10**7)
    c0 = as_real(c0, "c0", low=-1, high=1)
    spec = kernel_spec(family, depth=1, sw2=sw2, sb2=sb2, **params)
    P = as_real(q0, "q0", low=0, low_open=True) * spec.P0
    D = 2 * (1 - c0) * P
    for _ in range(max_layers):
        P1, D1, _ = kernel_step(act, spec, sw2, sb2, P, D)
        scale = np.max(np.abs(P1))
        if not np.isfinite(scale) or scale > 1e8 or np.max(np.diag(spec.R @ P1 @ spec.R.T)) < 1e-8:
            break
        if np.max(np.abs(P1 - P)) <= tol * scale and np.max(np.abs(D1 - D)) <= tol * scale:
            return P1, D1
        P, D = P1, D1
    raise DomainError(
        f"the {family} kernel does not settle within {max_layers} layers (its variance grows, vanishes or "
        "drifts): no fixed point to linearise at; use at='zero' for the small-q rate"
    )


def branch_gains(act, spec, sw2, sb2, P, S):
    """The gains ``kappa_ij`` of the linear map at the state ``(P, S)`` (see the module docstring).

    ``act`` an activation object, ``spec`` a :class:`~depthdyn.meanfield.kernels.KernelSpec`;
    an ``r x r`` array over the branch inputs. At ``S = P`` it is the gradient's gain ``K_l``
    of :mod:`~depthdyn.meanfield.asymptotics`.
    """
    R = spec.R
    QP, QS = R @ P @ R.T, R @ S @ R.T
    qd = np.diag(QP).copy()
    factor = np.ones_like(QP)
    if spec.norm == "pre":
        nu = 1 / np.sqrt(qd + LN_EPS)
        factor = np.outer(nu, nu)
        QP, QS, qd = QP * factor, QS * factor, qd * nu**2
    gain2 = sw2
    if spec.branch == "two":
        QP, QS, qd = sw2 * QP + sb2, sw2 * QS + sb2, sw2 * qd + sb2
        factor, gain2 = factor * sw2, spec.sv2
    qi, qj = qd[:, None], qd[None, :]
    c = np.clip(QS / np.sqrt(qi * qj), -1.0, 1.0)
    return gain2 * factor * act.derivative_cross_moment(qi, qj, c=c)


def _symmetric_basis(k: int):
    pairs = [(i, j) for i in range(k) for j in range(i, k)]
    basis = []
    for i, j in pairs:
        B = np.zeros((k, k))
        B[i, j] = B[j, i] = 1.0
        basis.append(B)
    return pairs, basis


def linearise_kernel(
    act, sw2, sb2, *, family="residual", at="fixed", q0=1.0, c0=0.0, max_layers=20_000, **params
) -> Recurrence:
    """The kernel recurrence linearised at its fixed point (``at="fixed"``) or at ``q = 0``.

    Parameters
    ----------
    act, sw2, sb2, family, params
        As for :func:`~depthdyn.meanfield.kernels.iterate_family`.
    at : {"fixed", "zero"}
        ``"fixed"``: at the fixed point the kernel reaches from ``(q0, c0)``; the recurrence
        acts on deviations of the cross-covariance ``S`` from ``S*`` (at ``c* = 1``, on
        ``D = 2 (P - S)``: its roots give the correlation depth scales). ``"zero"``: the
        variance map's linear part at ``q -> 0`` (``kappa = sw2 E[phi'(0)^2]``, exact for
        activations differentiable at 0), the growth or decay rate of a small ``q`` in
        families whose variance has no finite fixed point.

    Returns
    -------
    Recurrence
        ``delta_{l+1} = A delta_l`` on the symmetric state covariances (``k (k + 1) / 2``
        entries, in the order ``(0, 0), (0, 1), ..., (k-1, k-1)``), a scalar recurrence
        ``(1, -a)`` for first-order families.
    """
    act = resolve_activation(act)
    sw2, sb2 = check_weights(sw2, sb2)
    if family == "scaled_residual":
        raise ParameterError(
            "scaled_residual's branch scale depends on the depth; linearise 'residual' with h"
        )
    spec = kernel_spec(family, depth=1, sw2=sw2, sb2=sb2, **params)
    if at == "fixed":
        P, D = kernel_fixed_point(act, sw2, sb2, family=family, q0=q0, c0=c0, max_layers=max_layers, **params)
        kappa = branch_gains(act, spec, sw2, sb2, P, P - D / 2)
    elif at == "zero":
        tiny = 1e-8
        qd = np.full(spec.R.shape[0], tiny)
        value = act.derivative_cross_moment(qd, qd, eps=np.zeros_like(qd))
        kappa = np.full((qd.size, qd.size), float(np.mean(value)))
        if spec.branch == "two":
            hidden = np.array([sw2 * tiny + sb2])
            kappa = kappa * 0 + spec.sv2 * sw2 * float(
                act.derivative_cross_moment(hidden, hidden, eps=0.0 * hidden)[0]
            )
        else:
            kappa = sw2 * kappa
        if spec.norm is not None:
            raise ParameterError(
                "at='zero' is for families without LayerNorm (a normalised branch has no small-q limit)"
            )
        P = np.zeros_like(spec.P0)
    else:
        raise ParameterError(f"at must be 'fixed' or 'zero', got {at!r}")
    post = 1.0
    if spec.norm == "post":
        post = 1 / (kernel_step(act, spec, sw2, sb2, P, D)[2] + LN_EPS)
    k = spec.k
    pairs, basis = _symmetric_basis(k)
    ee = np.outer(spec.e, spec.e)
    A = np.empty((len(pairs), len(pairs)))
    for m, B in enumerate(basis):
        image = spec.C @ B @ spec.C.T + float(np.sum(kappa * (spec.R @ B @ spec.R.T))) * ee
        A[:, m] = [post * image[i, j] for i, j in pairs]
    size = len(pairs)
    coeffs = (1, -float(A[0, 0])) if size == 1 else (sp.eye(size), -sp.Matrix(A))
    names = ", ".join(f"{spec.states[i]}.{spec.states[j]}" for i, j in pairs)
    return Recurrence(
        coeffs=coeffs,
        params=(),
        name=f"kernel:{family}",
        description=f"{family} kernel linearised at {'its fixed point' if at == 'fixed' else 'q = 0'}"
        f" (sw2={sw2:g}, sb2={sb2:g}); state: covariance deviations ({names})",
        source="Poole et al. 2016; Schoenholz et al. 2017 (derived for depthdyn's families)",
    )


def depth_scales(rec: Recurrence) -> np.ndarray:
    """Roots ``r`` of a linearised kernel and their depth scales ``xi = -1/log|r|``, by modulus.

    Returns an array of shape ``(m, 2)``: ``|r|`` and ``xi`` (``inf`` for ``|r| = 1``; a
    negative ``xi`` is a growth length, deviations growing like ``e^{l/|xi|}``).
    """
    if not isinstance(rec, Recurrence):
        raise ParameterError(f"expected a Recurrence, got {type(rec).__name__}")
    if any(M.free_symbols for M in rec.coeffs):
        raise ParameterError("the recurrence has free parameters; substitute values first")
    coeffs = [np.array(M.tolist(), dtype=float) for M in rec.coeffs]
    lead = np.linalg.inv(coeffs[0])
    n, p = coeffs[0].shape[0], len(coeffs) - 1
    comp = np.zeros((n * p, n * p))
    comp[:n] = -np.hstack([lead @ A for A in coeffs[1:]])
    if p > 1:
        comp[n:, :-n] = np.eye(n * (p - 1))
    mod = np.sort(np.abs(np.linalg.eigvals(comp)))[::-1]
    with np.errstate(divide="ignore"):
        xi = np.where(mod == 1.0, np.inf, -1 / np.log(np.where(mod == 1.0, 0.5, mod)))
    return np.stack((mod, xi), axis=1)


def continuum_limit(act, sw2, sb2, *, t, q0=1.0, c0=0.0, h=1.0, rtol=1e-10):
    """``q(t), c(t)`` of the ``1/sqrt(L)`` residual kernel as ``L -> oo``, ``t = l / L``.

    Solves ``dP/dt = h^2 (sw2 E[phi^2](P) + sb2)``, ``dS/dt = h^2 (sw2 E[phi phi](P, S) + sb2)``
    (the recurrence of ``scaled_residual`` is the Euler scheme of this ODE with step
    ``1/L``, so its layer ``l = t L`` approaches ``(q(t), c(t))`` at rate ``O(1/L)``).
    """
    from scipy.integrate import solve_ivp

    act = resolve_activation(act)
    sw2, sb2 = check_weights(sw2, sb2)
    q0 = as_variance(q0, "q0", positive=True)
    c0 = as_real(c0, "c0", low=-1, high=1)
    h = as_real(h, "h", low=0, low_open=True)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    if t.ndim != 1 or np.any(t < 0) or np.any(np.diff(t) < 0) or not np.all(np.isfinite(t)):
        raise ParameterError("t must be a non-decreasing sequence of times >= 0")

    def rhs(_, y):
        q, s = y
        c = np.clip(s / q, -1.0, 1.0)
        return [
            h * h * (sw2 * float(act.cross_moment(q, q, c=1.0)) + sb2),
            h * h * (sw2 * float(act.cross_moment(q, q, c=c)) + sb2),
        ]

    sol = solve_ivp(
        rhs, (0.0, float(t[-1])), [q0, q0 * c0], t_eval=t, rtol=rtol, atol=1e-12 * q0, method="DOP853"
    )
    if not sol.success:
        raise DomainError(f"the continuum kernel could not be integrated to t={t[-1]:g}: {sol.message}")
    q, s = sol.y
    return q, s / q
