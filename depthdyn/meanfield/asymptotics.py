"""Depth asymptotics of the kernel recurrences: gradient norms and the class of q_L, 1 - c_L.

Gradients. Back-propagating ``<u, x_L>`` through ``X' = C X + e sum_j F((R X)_j)`` with fresh
weights (the gradient-independence rule of mean-field theory, exact as the width grows), the
per-unit Gram matrix ``Gamma_l = E[delta_l delta_l^T]`` of the state's adjoint obeys

.. math::

    \\Gamma_l = C^T \\Gamma_{l+1} C + (e^T \\Gamma_{l+1} e) \\, R^T K_l R,
    \\qquad K_{l,ij} = s_w^2 E[\\phi'(y_i) \\phi'(y_j)]

at layer ``l``'s branch inputs (the same ``kappa`` as the linearisation, at ``S = P``;
``Gamma_{L}`` reads the output, a post-LN divides by ``q_z + eps``). The input gradient
collects the state's dependence on ``x_0`` (``v_0 = 0``; equal lags; the streams'
expansion). :func:`gradient_norms` gives ``E|d<u, x_L>/dx_l|^2 / E|u|^2``, ``l = 0..L``.

Classes. :func:`classify` fits ``log y_l`` on the last three quarters of the layers against
``l`` (exponential, rate), ``log l`` (polynomial, exponent) and ``sqrt(l)``
(``exp(a sqrt(l))``), and calls a sequence ``convergent`` when it settles; it reports the
best fit and its residual. :func:`kernel_asymptotics` classifies ``q_L``, ``1 - c_L`` and the
gradient norm of a family, with the exact rate of the linearised kernel where one exists (a
fixed point; ``q -> 0`` for positively homogeneous activations with ``sb2 = 0``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DomainError, ParameterError
from ..records import Record
from .checks import as_count
from .kernel_analysis import branch_gains, depth_scales, linearise_kernel
from .kernels import LN_EPS, iterate_family, kernel_spec, kernel_step, resolve_activation

__all__ = ["gradient_norms", "classify", "AsymptoticClass", "KernelAsymptotics", "kernel_asymptotics"]


def gradient_norms(act, sw2, sb2, *, depth: int, q0=1.0, family="residual", **params) -> np.ndarray:
    """``E|d<u, x_L>/dx_l|^2 / E|u|^2`` for ``l = 0..L`` (mean field; see the module docstring).

    Entry ``0`` is the input gradient, entry ``L`` is 1. Raises
    :class:`~depthdyn.errors.DomainError` when the forward kernel leaves its range first.
    """
    act = resolve_activation(act)
    traj = iterate_family(act, sw2, sb2, depth=depth, q0=q0, c0=1.0, family=family, **params)
    if traj.stopped_at is not None:
        raise DomainError(
            f"the forward kernel stopped at layer {traj.stopped_at} ({traj.reason}); use fewer layers"
        )
    spec = kernel_spec(family, depth=depth, sw2=traj.sw2, sb2=traj.sb2, **params)
    # the Gram matrix of the gradient with respect to the state, in the basis the forward kernel is
    # iterated in (KernelSpec.iterated: X = B Y, the gradients' Gram B^T G B): x_L is its first state
    run, back = spec.iterated
    k = spec.k
    gamma = np.zeros((k, k))
    gamma[0, 0] = 1.0
    out = np.empty(depth + 1)
    out[depth] = 1.0
    b, read = spec.inputs, np.eye(k)[0]  # x_0's directions in the state; x_l alone
    if back is not None:
        b, read = np.linalg.solve(back, b), np.linalg.solve(back, read)
    ee = run.e
    for layer in range(depth - 1, -1, -1):
        P = traj.P[layer]
        if spec.norm == "post":
            gamma = gamma / (kernel_step(act, spec, traj.sw2, traj.sb2, P, 0 * P)[2] + LN_EPS)
        K = branch_gains(act, spec, traj.sw2, traj.sb2, P, P)
        gamma = run.C.T @ gamma @ run.C + float(ee @ gamma @ ee) * (run.R.T @ K @ run.R)
        # the gradient with respect to the read-out x_l of layer l (all of the state's columns)
        out[layer] = float(np.sum(b * (gamma @ b))) if layer == 0 else float(read @ gamma @ read)
        if not np.isfinite(gamma).all() or np.max(np.abs(gamma)) > 1e250:
            raise DomainError(
                f"the gradient overflows below layer {layer} (exploding gradients); use fewer layers"
            )
    return out


@dataclass(frozen=True)
class AsymptoticClass(Record):
    """How a positive sequence behaves over depth.

    ``kind``: ``"convergent"`` (to ``limit``), ``"exponential"`` (``y ~ e^{rate l}``),
    ``"polynomial"`` (``y ~ l^exponent``) or ``"stretched"`` (``y ~ e^{a sqrt(l)}``, ``a`` in
    ``rate``); ``residual`` is the rms misfit of ``log y`` of the chosen model; ``exact`` the
    rate from the linearised kernel where one exists (else ``None``).
    """

    kind: str
    rate: float
    residual: float
    limit: float | None = None
    exact: float | None = None

    def _text(self) -> str:
        if self.kind == "convergent":
            return f"convergent to {self.limit:.6g}"
        what = {"exponential": "exp({:.6g} L)", "polynomial": "L^{:.6g}", "stretched": "exp({:.6g} sqrt L)"}
        exact = f" (exact rate {self.exact:.6g})" if self.exact is not None else ""
        return what[self.kind].format(self.rate) + exact

    def _latex(self) -> str:
        return f"\\text{{{self._text()}}}"


def classify(values, layers=None, *, settle: float = 1e-6, exact: float | None = None) -> AsymptoticClass:
    """The asymptotic class of a positive sequence ``values`` at ``layers`` (default ``0..L``).

    At least 9 values; the fit uses the layers from a quarter of the last one on.
    """
    y = np.asarray(values, dtype=float)
    if y.ndim != 1 or y.size < 9 or not np.all(np.isfinite(y)) or np.any(y <= 0):
        raise ParameterError("values must be a 1-d sequence of at least 9 positive finite numbers")
    at = np.arange(y.size) if layers is None else np.asarray(layers, dtype=float)
    if at.shape != y.shape or np.any(np.diff(at) <= 0) or at[0] < 0:
        raise ParameterError("layers must be increasing, >= 0, one per value")
    keep = at >= at[-1] / 4
    tail, log_y = at[keep], np.log(y[keep])
    if tail.size < 3:
        raise ParameterError("too few layers in the last three quarters to classify")
    if abs(log_y[-1] - log_y[-2]) <= settle and abs(log_y[-1] - log_y[len(tail) // 2]) <= 1e3 * settle:
        return AsymptoticClass("convergent", 0.0, 0.0, float(y[-1]), exact)
    fits = {}
    for kind, x in (("exponential", tail), ("polynomial", np.log(tail + 1.0)), ("stretched", np.sqrt(tail))):
        coef, res, *_ = np.polyfit(x, log_y, 1, full=True)
        fits[kind] = (float(coef[0]), float(np.sqrt(res[0] / tail.size)) if res.size else 0.0)
    kind = min(fits, key=lambda name: fits[name][1])
    return AsymptoticClass(kind, fits[kind][0], fits[kind][1], None, exact)


@dataclass(frozen=True)
class KernelAsymptotics(Record):
    """The classes of ``q_L``, ``1 - c_L`` and the input gradient norm of one family."""

    family: str
    depth: int
    q: AsymptoticClass
    eps: AsymptoticClass
    gradient: AsymptoticClass

    def _text(self) -> str:
        return (
            f"{self.family} (to depth {self.depth}): q_L {self.q}; 1 - c_L {self.eps}; "
            f"gradient norm {self.gradient}"
        )

    def _latex(self) -> str:
        return f"\\text{{{self._text()}}}"


def kernel_asymptotics(
    act, sw2, sb2, *, family="residual", depth: int = 2000, q0=1.0, c0=0.5, **params
) -> KernelAsymptotics:
    """Classify ``q_L``, ``1 - c_L`` and the gradient norm of ``family`` from ``depth`` layers.

    An exploding kernel (``q`` past ``1e8``) is classified on the layers before that.

    The exact rates: the log of the spectral radius of :func:`linearise_kernel` at the fixed
    point (for ``1 - c_L`` when ``c* = 1``), and at ``q -> 0`` for ``q_L`` of positively
    homogeneous activations with ``sb2 = 0`` (where the variance map is that linear map).
    """
    act = resolve_activation(act)
    if family == "scaled_residual":
        raise ParameterError(
            "scaled_residual is a different network at every depth; its kernel tends to the continuum "
            "limit (continuum_limit), classify 'residual' with a fixed h instead"
        )
    depth = as_count(depth, "depth", 10**6)
    if depth < 8:
        raise ParameterError("depth must be >= 8 to classify")
    traj = iterate_family(act, sw2, sb2, depth=depth, q0=q0, c0=c0, family=family, **params)
    depth = traj.layers  # an exploding kernel is classified on the layers before it left the range
    if depth < 8:
        raise DomainError(f"the kernel left its range at layer {depth} ({traj.reason}): too few layers")
    grads = np.array(
        [gradient_norms(act, sw2, sb2, depth=n, q0=q0, family=family, **params)[0] for n in _grid(depth)]
    )
    exact_q = exact_eps = None
    if (
        getattr(act, "homogeneous", False)
        and traj.sb2 == 0
        and family != "scaled_residual"
        and not params.get("norm")
    ):
        exact_q = float(
            np.log(depth_scales(linearise_kernel(act, sw2, sb2, family=family, at="zero", **params))[0, 0])
        )
    if family != "scaled_residual":
        try:
            rec = linearise_kernel(act, sw2, sb2, family=family, q0=q0, c0=c0, max_layers=depth, **params)
            exact_eps = float(np.log(depth_scales(rec)[0, 0]))
        except DomainError:
            exact_eps = None
    eps = np.maximum(traj.eps, 1e-300)
    return KernelAsymptotics(
        family,
        depth,
        classify(traj.q, exact=exact_q),
        classify(eps, exact=exact_eps),
        classify(grads, _grid(depth)),
    )


def _grid(depth: int) -> np.ndarray:
    return np.unique(np.linspace(1, depth, 17).astype(int))
