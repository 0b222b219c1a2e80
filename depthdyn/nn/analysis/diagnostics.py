"""Depth diagnostics of a stack: norms, update directions, gradients, perturbation size, gains.

* :func:`norm_profile`, :func:`update_cosine`, :func:`grad_norms`: the three measurements
  of 000 §8 (norm growth over depth, cosine similarity of successive updates, gradient
  magnitude over layers).
* :func:`perturbation_ratio`: ``||x_{l+1} - x_l|| / ||x_l||`` of 002 §4.3 (small when the
  block is a perturbation of the identity).
* :func:`jacobian_spectra`: eigenvalues of each layer's state Jacobian at one input.
* :func:`hc_gain`: the composite ``H_res`` product of hyper-connections over depth and its
  gains (003); doubly stochastic products have all three gains equal to 1.
* :func:`inversion_growth`: how a momentum stack run backwards amplifies reconstruction
  errors (``prod_l 1/m_l`` per channel).
* :func:`diagnose`: all of the above in one JSON-serialisable :class:`Diagnostics` record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ...errors import ParameterError, ShapeError
from ..blocks.stack import DepthStack, Trace
from .hyper import hc_profile
from .linearize import _check_stack, _state_jacobians

__all__ = [
    "UpdateCosine",
    "PerturbationRatio",
    "HCGain",
    "Diagnostics",
    "norm_profile",
    "update_cosine",
    "grad_norms",
    "perturbation_ratio",
    "jacobian_spectra",
    "hc_gain",
    "inversion_growth",
    "diagnose",
]


def _check_trace(trace) -> torch.Tensor:
    if not isinstance(trace, Trace):
        raise ParameterError(f"expected a Trace (from DepthStack.trace), got {type(trace).__name__}")
    return trace.positions.detach()


def _flat(t: torch.Tensor) -> torch.Tensor:
    """``(L, B, ...)`` -> ``(L, B, features)``."""
    return t.reshape(t.shape[0], t.shape[1], -1).to(torch.float64)


def norm_profile(trace: Trace) -> np.ndarray:
    """Mean over the batch of ``||x_l||`` for ``l = 0..L``: shape ``(L + 1,)``."""
    return _flat(_check_trace(trace)).norm(dim=-1).mean(dim=1).cpu().numpy()


@dataclass(frozen=True, eq=False)
class UpdateCosine:
    """Cosine similarity of successive updates ``x_{l+1} - x_l`` and ``x_{l+2} - x_{l+1}``.

    ``cosine`` (``(L - 1,)``) is the batch mean per layer pair; ``flip_fraction`` the
    fraction of (pair, sample) with ``cos < 0``; ``flips_per_layer`` the same per pair.
    The updates are ``v_{l+1}`` for the momentum block and ``u_l`` for first-order blocks.
    """

    cosine: np.ndarray
    flip_fraction: float
    flips_per_layer: np.ndarray


def update_cosine(trace: Trace) -> UpdateCosine:
    """Cosine similarity of successive updates and the fraction of sign flips (000 §8).

    Raises
    ------
    ShapeError
        The trace has fewer than two layers.
    """
    u = _flat(_check_trace(trace)[1:] - _check_trace(trace)[:-1])
    if u.shape[0] < 2:
        raise ShapeError(f"successive updates need a stack of at least 2 layers, got {u.shape[0]}")
    cos = torch.nn.functional.cosine_similarity(u[1:], u[:-1], dim=-1, eps=1e-300)
    flips = (cos < 0).to(torch.float64)
    return UpdateCosine(
        cosine=cos.mean(dim=1).cpu().numpy(),
        flip_fraction=float(flips.mean()),
        flips_per_layer=flips.mean(dim=1).cpu().numpy(),
    )


def grad_norms(
    stack: DepthStack, x: torch.Tensor, loss_fn: Callable[[torch.Tensor], torch.Tensor]
) -> np.ndarray:
    """Norm of ``d loss / d state_l`` for ``l = 0..L`` (000 §8, gradient transport).

    Parameters
    ----------
    stack : DepthStack
    x : torch.Tensor
        ``(B, d)`` inputs.
    loss_fn : callable
        Maps the output ``x_L`` (``(B, d)``) to a scalar tensor (close over targets).

    Returns
    -------
    ndarray
        ``(L + 1,)`` Frobenius norms over the whole batch. The parameters' ``.grad`` are
        not touched (the gradients come from :func:`torch.autograd.grad`).
    """
    _check_stack(stack)
    if not callable(loss_fn):
        raise ParameterError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
    if not isinstance(x, torch.Tensor):
        raise ParameterError(f"x must be a torch.Tensor, got {type(x).__name__}")
    x = x.detach().clone().requires_grad_(True)
    tr = stack.trace(x, keep_graph=True)
    loss = loss_fn(stack.position(tr.states[-1]))
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise ShapeError("loss_fn must return a scalar tensor (reduce over the batch, e.g. with .mean())")
    grads = torch.autograd.grad(loss.reshape(()), list(tr.states), allow_unused=True)
    return np.array([0.0 if g is None else float(g.detach().double().norm()) for g in grads])


@dataclass(frozen=True, eq=False)
class PerturbationRatio:
    """``||x_{l+1} - x_l|| / ||x_l||`` (002 §4.3): ``per_layer`` batch means and their ``mean``."""

    per_layer: np.ndarray
    mean: float


def perturbation_ratio(trace: Trace) -> PerturbationRatio:
    """Size of each layer's update relative to its input, per layer and averaged (002 §4.3).

    A zero ``x_l`` with a nonzero update gives ``inf`` (no relative size exists).
    """
    pos = _flat(_check_trace(trace))
    num, den = (pos[1:] - pos[:-1]).norm(dim=-1), pos[:-1].norm(dim=-1)
    ratio = torch.where(num == 0, torch.zeros_like(num), num / den)
    per_layer = ratio.mean(dim=1).cpu().numpy()
    return PerturbationRatio(per_layer=per_layer, mean=float(per_layer.mean()))


def jacobian_spectra(stack: DepthStack, x: torch.Tensor) -> np.ndarray:
    """Eigenvalues of ``d state_{l+1} / d state_l`` per layer at one input (flattened state).

    Parameters
    ----------
    x : torch.Tensor
        One input, with or without a leading batch axis of 1: ``(d,)`` or ``(1, d)`` for
        vector blocks, ``(1, C, H, W)`` for convolutional ones.

    Returns
    -------
    ndarray
        ``(L, S)`` complex, each row sorted by decreasing modulus (``S`` the flattened state).
    """
    _check_stack(stack)
    if not isinstance(x, torch.Tensor):
        raise ParameterError(f"x must be a torch.Tensor, got {type(x).__name__}")
    x = x.detach()
    if x.dim() < 2 or x.shape[0] != 1:
        x = x.unsqueeze(0)
    if x.dim() < 2 or x.shape[1] != stack.blocks[0].dim:
        raise ShapeError(
            f"jacobian_spectra takes one input with {stack.blocks[0].dim} features (or channels) on its "
            f"first axis, got {tuple(x.shape)}"
        )
    with torch.no_grad():
        states = stack.trace(x).states
    J = _state_jacobians(stack, states)[:, 0].to(torch.float64)
    eig = torch.linalg.eigvals(J).cpu().numpy()
    order = np.argsort(-np.abs(eig), axis=-1, kind="stable")
    return np.take_along_axis(eig, order, axis=-1)


@dataclass(frozen=True, eq=False)
class HCGain:
    """Composite residual map ``P = H_res^(L-1) ... H_res^(0)`` of hyper-connections and its gains.

    ``max_row_sum`` (``||P||_inf``), ``max_col_sum`` (``||P||_1``) and ``spectral_norm``
    (``||P||_2``) are all 1 for a product of doubly stochastic matrices; ``spectral_norm_by_depth``
    is ``||H^(l) ... H^(0)||_2`` for ``l = 0..L-1``.
    """

    product: np.ndarray
    max_row_sum: float
    max_col_sum: float
    spectral_norm: float
    spectral_norm_by_depth: np.ndarray


def hc_gain(stack: DepthStack) -> HCGain:
    """Gains of the composite ``H_res`` product of a stack whose blocks expose ``H_res`` (003).

    Raises
    ------
    ParameterError
        A block's ``coefficients()`` has no ``"H_res"``.
    ShapeError
        ``H_res`` is not one square matrix size across the stack.
    """
    _check_stack(stack)
    P, by_depth = None, []
    for i, block in enumerate(stack.blocks):
        coeffs = block.coefficients()
        if "H_res" not in coeffs:
            raise ParameterError(
                f"block {i} ({type(block).__name__}) has no H_res coefficient; "
                "hc_gain needs hyper-connection blocks"
            )
        H = np.asarray(torch.as_tensor(coeffs["H_res"]).detach().to("cpu", torch.float64).numpy())
        if H.ndim != 2 or H.shape[0] != H.shape[1] or (P is not None and H.shape != P.shape):
            raise ShapeError(
                f"H_res of block {i} must be square and of one size across the stack, got {H.shape}"
            )
        P = H if P is None else H @ P
        by_depth.append(np.linalg.norm(P, 2))
    A = np.abs(P)
    return HCGain(
        product=P,
        max_row_sum=float(A.sum(axis=1).max()),
        max_col_sum=float(A.sum(axis=0).max()),
        spectral_norm=float(np.linalg.norm(P, 2)),
        spectral_norm_by_depth=np.array(by_depth),
    )


def inversion_growth(stack: DepthStack, *, log10: bool = False) -> np.ndarray:
    """Reconstruction-error growth ``prod_l 1/m_l`` per channel of a momentum stack run backwards.

    Inverting ``x_{l+1} = x_l + v_{l+1}``, ``v_{l+1} = m_l v_l + eta_l u_l`` gives
    ``x_l = x_{l+1} - v_{l+1}`` and ``v_l = (v_{l+1} - eta_l u_l) / m_l``: an error in the
    final velocity reaches ``v_0`` multiplied by ``prod_l 1/m_l`` (exactly when ``f = 0``).

    Parameters
    ----------
    log10 : bool
        Return ``log10`` of the growth (no overflow for deep stacks with small ``m``).

    Returns
    -------
    ndarray
        ``(d,)``.

    Raises
    ------
    ParameterError
        The blocks have no velocity carry ``m``, ``m = 0`` somewhere (not invertible), or the
        growth overflows float64 (pass ``log10=True``).
    """
    _check_stack(stack)
    total = 0.0
    for i, block in enumerate(stack.blocks):
        coeffs = block.coefficients()
        if "m" not in coeffs:
            raise ParameterError(
                f"block {i} ({type(block).__name__}) has no velocity carry m; need a momentum stack"
            )
        m = coeffs["m"].detach().to("cpu", torch.float64).numpy().reshape(-1)
        if np.any(m <= 0):
            raise ParameterError(f"m = 0 in block {i}: the stack cannot be inverted")
        total = total - np.log10(m)
    total = np.broadcast_to(total, (stack.blocks[0].dim,)).copy()
    if log10:
        return total
    if np.any(total > 300):
        raise ParameterError(f"the growth 10^{total.max():.4g} overflows float64; pass log10=True")
    return 10.0**total


@dataclass(frozen=True, eq=False)
class Diagnostics:
    """All depth diagnostics of one stack at one batch; :meth:`to_json` gives plain data.

    ``grad_norms`` needs a ``loss_fn``; ``hc_gain`` (static mixing) and ``hc_token_gain`` (the
    per-token forward/backward gains of :func:`~depthdyn.nn.analysis.hyper.hc_profile`, from
    the actual mixing of every input; blocks with ``mixing_matrices``) are present for blocks
    with ``H_res``,
    ``inversion_log10_growth`` for blocks with a velocity carry ``m``; others are ``None``.
    ``jacobian_radius`` is the spectral radius of each layer's state Jacobian at the first input.
    """

    family: str
    depth: int
    norms: np.ndarray
    update_cosine: np.ndarray | None
    flip_fraction: float | None
    perturbation: np.ndarray
    perturbation_mean: float
    jacobian_radius: np.ndarray
    grad_norms: np.ndarray | None
    hc_gain: HCGain | None
    inversion_log10_growth: np.ndarray | None
    hc_token_gain: dict | None = None

    def to_json(self) -> dict:
        def plain(v):
            if isinstance(v, np.ndarray):
                return v.astype(float).tolist()
            if isinstance(v, HCGain):
                return {k: plain(getattr(v, k)) for k in v.__dataclass_fields__}
            return float(v) if isinstance(v, (np.floating, np.integer)) else v

        return {k: plain(getattr(self, k)) for k in self.__dataclass_fields__}


def diagnose(stack: DepthStack, x: torch.Tensor, loss_fn: Callable | None = None) -> Diagnostics:
    """Run every diagnostic that applies to ``stack`` on the inputs ``x`` (``(B, d)``)."""
    _check_stack(stack)
    if not isinstance(x, torch.Tensor):
        raise ParameterError(f"x must be a torch.Tensor, got {type(x).__name__}")
    with torch.no_grad():
        tr = stack.trace(x)
    cos = update_cosine(tr) if stack.depth >= 2 else None
    pr = perturbation_ratio(tr)
    spectra = jacobian_spectra(stack, x[:1])
    coeffs = stack.blocks[0].coefficients()
    return Diagnostics(
        family=stack.family,
        depth=stack.depth,
        norms=norm_profile(tr),
        update_cosine=None if cos is None else cos.cosine,
        flip_fraction=None if cos is None else cos.flip_fraction,
        perturbation=pr.per_layer,
        perturbation_mean=pr.mean,
        jacobian_radius=np.abs(spectra[:, 0]),
        grad_norms=None if loss_fn is None else grad_norms(stack, x, loss_fn),
        hc_gain=hc_gain(stack) if "H_res" in coeffs else None,
        hc_token_gain=hc_profile(stack, x).to_json() if hasattr(stack.blocks[0], "mixing_matrices") else None,
        inversion_log10_growth=inversion_growth(stack, log10=True) if "m" in coeffs else None,
    )
