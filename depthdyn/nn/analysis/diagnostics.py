"""Depth diagnostics of a depthdyn stack, all read from one recorded forward.

* :func:`norm_profile`, :func:`update_cosine`, :func:`perturbation_ratio` (on a
  :class:`~depthdyn.nn.blocks.stack.Trace`): batch means of the depth profile of
  :mod:`.profile` (norm growth over depth, cosine of successive updates, the size of each
  update relative to its input, 000 §8 and 002 §4.3);
* :func:`grad_norms`, :func:`jacobian_spectra` (on a :class:`~.record.Recording`): gradient
  magnitude over layers (one backward pass) and the eigenvalues of each layer's state Jacobian;
* :func:`inversion_growth`: how a momentum stack run backwards amplifies reconstruction
  errors (``prod_l 1/m_l`` per channel);
* :func:`diagnose`: all of them, and the ``H_res`` products of hyper-connections
  (:func:`~.hyper.hc_profile`), from one forward of the stack, in a :class:`Diagnostics` record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from ...errors import ParameterError, ShapeError
from ...records import Record
from ..blocks.stack import DepthStack, Trace, check_stack
from .hyper import HCProfile, hc_profile
from .profile import DepthProfile, depth_profile, gradient_norms
from .record import Recording, record

__all__ = [
    "UpdateCosine",
    "PerturbationRatio",
    "Diagnostics",
    "norm_profile",
    "update_cosine",
    "grad_norms",
    "perturbation_ratio",
    "jacobian_spectra",
    "inversion_growth",
    "diagnose",
]


def _profile(trace) -> DepthProfile:
    if not isinstance(trace, Trace):
        raise ParameterError(f"expected a Trace (from DepthStack.trace), got {type(trace).__name__}")
    return depth_profile(list(trace.positions))


def norm_profile(trace: Trace) -> np.ndarray:
    """Mean over the batch of ``||x_l||`` for ``l = 0..L``: shape ``(L + 1,)``."""
    return _profile(trace).norms.mean(axis=1)


@dataclass(frozen=True, eq=False)
class UpdateCosine(Record):
    """Cosine similarity of successive updates ``x_{l+1} - x_l`` and ``x_{l+2} - x_{l+1}``.

    ``cosine`` (``(L - 1,)``) is the batch mean per layer pair; ``flip_fraction`` the
    fraction of (pair, sample) with ``cos < 0``; ``flips_per_layer`` the same per pair.
    The updates are ``v_{l+1}`` for the momentum block and ``u_l`` for first-order blocks.
    """

    cosine: np.ndarray
    flip_fraction: float
    flips_per_layer: np.ndarray

    def _text(self) -> str:
        return f"update cosine: mean {np.mean(self.cosine):.4g}, {self.flip_fraction:.1%} sign flips"

    def _latex(self) -> str:
        return rf"\overline{{\cos}} = {np.mean(self.cosine):.4g}"


def _cosine(prof: DepthProfile) -> UpdateCosine:
    flips = (prof.update_cosine < 0).astype(float)
    return UpdateCosine(
        cosine=prof.update_cosine.mean(axis=1), flip_fraction=float(flips.mean()),
        flips_per_layer=flips.mean(axis=1),
    )


def update_cosine(trace: Trace) -> UpdateCosine:
    """Cosine similarity of successive updates and the fraction of sign flips (000 §8).

    Raises
    ------
    ShapeError
        The trace has fewer than two layers.
    """
    prof = _profile(trace)
    if prof.depth < 2:
        raise ShapeError(f"successive updates need a stack of at least 2 layers, got {prof.depth}")
    return _cosine(prof)


def _recording(recording) -> Recording:
    if not isinstance(recording, Recording):
        raise ParameterError(
            f"expected a Recording (record(stack, x)), got {type(recording).__name__}"
        )
    return recording


def grad_norms(recording: Recording, loss_fn: Callable[[torch.Tensor], torch.Tensor]) -> np.ndarray:
    """Norm of ``d loss / d state_l`` for ``l = 0..L`` (000 §8, gradient transport).

    Parameters
    ----------
    recording : Recording
        :func:`~depthdyn.nn.analysis.record.record` of the stack (with its graph): one backward
        pass through it, no forward.
    loss_fn : callable
        Maps the recorded output (``x_L`` of a stack, ``(B, d)``) to a scalar tensor (close
        over targets).

    Returns
    -------
    ndarray
        ``(L + 1,)`` Frobenius norms over the whole batch; NaN where no gradient reaches a
        state (see :mod:`.profile`). The parameters' ``.grad`` are not touched.
    """
    rec = _recording(recording)
    if not callable(loss_fn):
        raise ParameterError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
    return gradient_norms(rec.output, rec.states, loss_fn)[0]


@dataclass(frozen=True, eq=False)
class PerturbationRatio(Record):
    """``||x_{l+1} - x_l|| / ||x_l||`` (002 §4.3): ``per_layer`` batch means and their ``mean``."""

    per_layer: np.ndarray
    mean: float

    def _text(self) -> str:
        return f"perturbation ratio: mean {self.mean:.4g} over {self.per_layer.size} layers"

    def _latex(self) -> str:
        return rf"\overline{{\|x_{{\ell+1}} - x_\ell\| / \|x_\ell\|}} = {self.mean:.4g}"


def _ratio(prof: DepthProfile) -> PerturbationRatio:
    per_layer = prof.perturbation.mean(axis=1)
    return PerturbationRatio(per_layer=per_layer, mean=float(per_layer.mean()))


def perturbation_ratio(trace: Trace) -> PerturbationRatio:
    """Size of each layer's update relative to its input, per layer and averaged (002 §4.3).

    A zero ``x_l`` with a nonzero update gives ``inf`` (no relative size exists).
    """
    return _ratio(_profile(trace))


def jacobian_spectra(recording: Recording, sample: int = 0) -> np.ndarray:
    """Eigenvalues of ``d state_{l+1} / d state_l`` per layer at one recorded input (flattened state).

    Each layer is the recorded call of its block (:meth:`~.record.Call.function`), differentiated
    at the recorded state of input ``sample``; the model is not run again.

    Returns
    -------
    ndarray
        ``(L, S)`` complex, each row sorted by decreasing modulus (``S`` the flattened state).
    """
    rec = _recording(recording)
    B = rec.calls[0].state.shape[0]
    if isinstance(sample, bool) or not isinstance(sample, int) or not 0 <= sample < B:
        raise ParameterError(f"sample must be an integer in 0..{B - 1}, got {sample!r}")
    out = []
    for call in rec.calls:
        fn, s = call.function(), call.state.detach()[sample]
        if call.output.shape[1:] != s.shape:
            raise ShapeError(f"layer {call.name} changes the state's shape: no square Jacobian")
        J = torch.func.jacrev(lambda t, fn=fn: fn(t[None])[0])(s).detach()
        out.append(J.reshape(s.numel(), s.numel()).to(torch.float64))
    eig = torch.linalg.eigvals(torch.stack(out)).cpu().numpy()
    order = np.argsort(-np.abs(eig), axis=-1, kind="stable")
    return np.take_along_axis(eig, order, axis=-1)


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
    check_stack(stack)
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
class Diagnostics(Record):
    """All depth diagnostics of one stack at one batch; :meth:`to_json` gives plain data.

    ``norms``, ``update_cosine``, ``perturbation`` are the batch means of ``profile`` (the
    :class:`~.profile.DepthProfile` of the recorded forward, per sample: the same numbers
    :func:`~.inspection.inspect` gives); ``grad_norms`` needs a ``loss_fn``; ``hc`` (the
    :class:`~.hyper.HCProfile` of the actual ``H_res`` of every input) is present for blocks
    with ``H_res``, ``inversion_log10_growth`` for blocks with a velocity carry ``m``; others
    are ``None``. ``jacobian_radius`` is the spectral radius of each layer's state Jacobian at
    the first input.
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
    hc: HCProfile | None
    inversion_log10_growth: np.ndarray | None
    profile: DepthProfile | None = field(default=None, repr=False)

    def to_json(self) -> dict:
        def plain(v):
            if isinstance(v, np.ndarray):
                return v.astype(float).tolist()
            if isinstance(v, Record):
                return v.to_json()
            return float(v) if isinstance(v, (np.floating, np.integer)) else v

        return {k: plain(getattr(self, k)) for k in self.__dataclass_fields__ if k != "profile"}

    def _text(self) -> str:
        return (f"{self.family}, L = {self.depth}: ||x_L|| / ||x_0|| = {self.norms[-1] / self.norms[0]:.4g}, "
                f"mean perturbation {self.perturbation_mean:.4g}, max Jacobian radius "
                f"{np.max(self.jacobian_radius):.4g}")

    def _latex(self) -> str:
        return (rf"\text{{{self.family}}},\ L = {self.depth}:\ "
                rf"\max_\ell \rho(J_\ell) = {np.max(self.jacobian_radius):.4g}")


def _has_hres(block) -> bool:
    return hasattr(block, "mixing_matrices") or "H_res" in block.coefficients()


def diagnose(stack: DepthStack, x: torch.Tensor, loss_fn: Callable | None = None) -> Diagnostics:
    """Every diagnostic that applies to ``stack`` at the inputs ``x`` (``(B, d)``), from one forward.

    The stack runs once under :func:`~.record.record`; the profile, the gradient norms (one
    backward pass, with ``loss_fn``), the Jacobian spectra and the ``H_res`` products all read
    that recording.
    """
    check_stack(stack)
    if not isinstance(x, torch.Tensor):
        raise ParameterError(f"x must be a torch.Tensor, got {type(x).__name__}")
    rec = record(stack, x, list(stack.blocks), graph=loss_fn is not None)
    grads = None if loss_fn is None else grad_norms(rec, loss_fn)
    prof = depth_profile([stack.blocks[0].position(s) for s in rec.states], grads)
    cos = _cosine(prof) if stack.depth >= 2 else None
    pr = _ratio(prof)
    spectra = jacobian_spectra(rec)
    coeffs = stack.blocks[0].coefficients()
    return Diagnostics(
        family=stack.family,
        depth=stack.depth,
        norms=prof.norms.mean(axis=1),
        update_cosine=None if cos is None else cos.cosine,
        flip_fraction=None if cos is None else cos.flip_fraction,
        perturbation=pr.per_layer,
        perturbation_mean=pr.mean,
        jacobian_radius=np.abs(spectra[:, 0]),
        grad_norms=grads,
        hc=hc_profile(rec) if _has_hres(stack.blocks[0]) else None,
        inversion_log10_growth=inversion_growth(stack, log10=True) if "m" in coeffs else None,
        profile=prof,
    )
