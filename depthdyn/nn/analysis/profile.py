"""The depth profile of one recorded forward: state norms, update cosines, perturbation ratios
and gradient norms, per depth and state, with one convention for the values that do not exist.

Both :func:`~depthdyn.nn.analysis.inspection.inspect` (any model) and
:func:`~depthdyn.nn.analysis.diagnostics.diagnose` (depthdyn's own stacks) read their profile
from :func:`depth_profile` on the states of one :func:`~depthdyn.nn.analysis.record.record`.

Conventions (the same for every caller):

* ``perturbation`` ``||x_{l+1} - x_l|| / ||x_l||`` is ``0`` where the step does not move the
  state (also at ``x_l = 0``: nothing happened), ``inf`` where a zero state moves (no relative
  size exists) and ``NaN`` where the step changes the state's shape;
* ``update_cosine`` is ``NaN`` where either update crosses a change of shape; a zero update has
  cosine ``0`` (``torch.nn.functional.cosine_similarity`` with a tiny ``eps``);
* ``grad_norms`` is ``NaN`` where no gradient reaches a state. Autograd gives no gradient both
  where the loss does not depend on a state and where a layer ran without a graph (inside a
  custom ``autograd.Function``, under ``no_grad``); the recording cannot tell these apart, and
  ``0`` would claim that the gradient vanishes there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...errors import ParameterError, ShapeError
from ...records import Record
from .readonly import frozen
from .record import first_tensor

__all__ = ["DepthProfile", "depth_profile", "gradient_norms", "probe_loss"]


@dataclass(frozen=True, eq=False)
class DepthProfile(Record):
    """Per-depth measurements of one forward, per state (``B`` states).

    Attributes
    ----------
    norms : ndarray
        ``(L + 1, B)``: ``||x_l||``.
    update_cosine : ndarray
        ``(L - 1, B)``: cosine of ``x_{l+1} - x_l`` and ``x_{l+2} - x_{l+1}``.
    perturbation : ndarray
        ``(L, B)``: ``||x_{l+1} - x_l|| / ||x_l||``.
    grad_norms : ndarray or None
        ``(L + 1,)``: ``||d loss / d x_l||`` over the batch (``None``: no loss was given).
    """

    norms: np.ndarray
    update_cosine: np.ndarray
    perturbation: np.ndarray
    grad_norms: np.ndarray | None = None

    @property
    def depth(self) -> int:
        return self.perturbation.shape[0]

    def _text(self) -> str:
        grads = "" if self.grad_norms is None else f", gradient norms {np.nanmin(self.grad_norms):.4g}.." \
            f"{np.nanmax(self.grad_norms):.4g}"
        return (f"depth profile: {self.depth} steps, {self.norms.shape[1]} states, ||x_L|| / ||x_0|| = "
                f"{np.nanmean(self.norms[-1]) / np.nanmean(self.norms[0]):.4g}, mean perturbation "
                f"{np.nanmean(self.perturbation):.4g}{grads}")

    def _latex(self) -> str:
        return (rf"\text{{depth profile: }} L = {self.depth},\ "
                rf"\overline{{\|x_{{\ell+1}} - x_\ell\| / \|x_\ell\|}} = {np.nanmean(self.perturbation):.4g}")


def _flat(t: torch.Tensor) -> torch.Tensor:
    return t.detach().reshape(t.shape[0], -1).to(torch.float64)


def depth_profile(positions: Sequence[torch.Tensor], grad_norms: np.ndarray | None = None) -> DepthProfile:
    """The profile of the positions ``x_0, ..., x_L`` (each ``(B, ...)``; shapes may change).

    ``grad_norms`` (from :func:`gradient_norms`) is stored as given.
    """
    if len(positions) < 1:
        raise ShapeError("a depth profile needs at least one state")
    B = positions[0].shape[0]
    if any(p.shape[0] != B for p in positions):
        raise ShapeError("every state of the profile must have the batch on its first axis")
    flat = [_flat(p) for p in positions]
    norms = np.stack([f.norm(dim=1).cpu().numpy() for f in flat])
    upd = [b - a if b.shape == a.shape else None for a, b in zip(flat[:-1], flat[1:], strict=True)]
    pert = []
    for i, u in enumerate(upd):
        if u is None:
            pert.append(np.full(B, np.nan))
            continue
        num, den = u.norm(dim=1), flat[i].norm(dim=1)
        pert.append(torch.where(num == 0, torch.zeros_like(num), num / den).cpu().numpy())
    cos = [
        torch.nn.functional.cosine_similarity(b, a, dim=1, eps=1e-300).cpu().numpy()
        if a is not None and b is not None and a.shape == b.shape
        else np.full(B, np.nan)
        for a, b in zip(upd[:-1], upd[1:], strict=True)
    ]
    return DepthProfile(
        norms=frozen(norms),
        update_cosine=frozen(np.stack(cos) if cos else np.zeros((0, B))),
        perturbation=frozen(np.stack(pert) if pert else np.zeros((0, B))),
        grad_norms=None if grad_norms is None else frozen(grad_norms),
    )


def probe_loss(output, seed: int = 0) -> torch.Tensor:
    """``<g, out>`` with a fixed standard-normal ``g`` (seed ``seed``): a probe of gradient transport."""
    out = first_tensor(output) if not isinstance(output, torch.Tensor) else output
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed), dtype=out.dtype).to(out.device)
    return (out * g).sum()


def gradient_norms(
    output, states: Sequence[torch.Tensor], loss_fn: Callable | None = None, *, seed: int = 0
) -> tuple[np.ndarray, str | None]:
    """``||d loss / d x_l||`` for every recorded state (Frobenius over the batch), and a note.

    ``loss_fn(output)`` must give a scalar tensor; ``None`` takes :func:`probe_loss`. The
    states carry the graph of the recorded forward: this is one backward pass, no forward.
    Returns ``(norms, note)``: ``NaN`` where no gradient reaches a state; all ``NaN`` with a
    note where the model's backward fails because it updates a tensor in place that its
    backward needs.
    """
    if loss_fn is None:
        loss = probe_loss(output, seed)
    else:
        if not callable(loss_fn):
            raise ParameterError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
        loss = loss_fn(output)
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise ShapeError("loss_fn must return a scalar tensor (reduce over the batch, e.g. with .mean())")
    need = [s for s in states if s.requires_grad]
    try:
        grads = iter(torch.autograd.grad(loss.reshape(()), need, allow_unused=True) if need else ())
    except RuntimeError as exc:
        if "inplace operation" not in str(exc):
            raise
        # the model overwrote a tensor its backward needs (x += f(x) after f saved x): its own
        # training would fail the same way; the Jacobians (recomputed per layer) are unaffected
        return np.full(len(states), np.nan), (
            "gradient norms unavailable (NaN): the model updates a tensor in place that its backward "
            "needs (x += f(x)); write x = x + f(x) to get them"
        )
    got = [next(grads) if s.requires_grad else None for s in states]
    return np.array([np.nan if g is None else float(g.detach().double().norm()) for g in got]), None
