"""Initialisation recipes: from a target to ``(sw2, sb2, branch scale)``, applied to a model.

* :func:`init_recipe` turns a target into numbers. The plain chain goes on the order-to-chaos
  boundary (``chi_1 = 1``, so every depth scale is infinite and ``xi_c >= k L`` holds for any
  ``k``) at the requested ``sb2``; with ``isometry=s`` the weights must keep the ``J J^T``
  spread ``m_2/m_1^2 - 1 <= s`` (Gaussian, else orthogonal, else refused). A residual family
  keeps ``sw2, sb2`` and gets the largest branch scale ``h <= 1`` whose mean-field input
  gradient norm over ``depth`` layers stays ``<= gradient_bound``.
* :func:`apply_recipe` writes the recipe into a model: every ``nn.Linear`` gets weights
  ``N(0, sw2 / fan_in)`` (or ``sqrt(sw2)`` times a Haar orthogonal matrix) and biases
  ``N(0, sb2)``; every depthdyn block (:class:`~depthdyn.nn.blocks.DepthBlock`) gets
  ``step = h``. It works on a model built from depthdyn's blocks and on a plain
  ``nn.Sequential`` of ``Linear`` and activation layers alike.

torch is imported inside :func:`apply_recipe` only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DomainError, ParameterError
from ..records import Record
from .asymptotics import gradient_norms
from .checks import as_count, as_real, as_variance
from .fixedpoint import critical_point
from .isometry import isometry_score
from .kernels import kernel_spec, resolve_activation

__all__ = ["InitRecipe", "init_recipe", "apply_recipe"]


@dataclass(frozen=True)
class InitRecipe(Record):
    """``(sw2, sb2, h)`` and the weights ensemble for ``family`` at ``depth``, with what they give."""

    activation: str
    family: str
    depth: int
    sw2: float
    sb2: float
    h: float
    weights: str = "gaussian"
    q_star: float | None = None
    gradient_norm: float | None = None
    isometry: float | None = None

    def _text(self) -> str:
        text = (
            f"{self.family} init for {self.activation} at depth {self.depth}: sw2 = {self.sw2:.10g}, "
            f"sb2 = {self.sb2:.10g}, h = {self.h:.10g} ({self.weights} weights)"
        )
        if self.gradient_norm is not None:
            text += f"; gradient norm {self.gradient_norm:.4g}"
        if self.isometry is not None:
            text += f"; J J^T spread {self.isometry:.4g}"
        return text

    def _latex(self) -> str:
        return f"\\sigma_w^2 = {self.sw2:.10g},\\; \\sigma_b^2 = {self.sb2:.10g},\\; h = {self.h:.10g}"


def _d2_moments(act, q: float, n: int = 200) -> list[float]:
    z, w = np.polynomial.hermite_e.hermegauss(n)
    d2 = np.asarray(act.dphi(math.sqrt(q) * z), dtype=float) ** 2
    return [float(np.sum(w * d2**k) / math.sqrt(2 * math.pi)) for k in (1, 2)]


def init_recipe(
    act, *, depth: int, family: str = "plain", sb2=0.0, sw2=None, isometry=None, gradient_bound=2.0, **params
) -> InitRecipe:
    """The initialisation that meets the target (see the module docstring).

    Parameters
    ----------
    act
        The activation.
    depth : int
        Number of layers ``L``.
    family : str
        ``"plain"`` or a family of :mod:`~depthdyn.meanfield.kernels` (``params`` as there;
        ``h`` is what the recipe chooses).
    sb2 : float
        Bias variance (plain: the point on the critical line; residual: kept).
    sw2 : float, optional
        Residual families: the weight variance (default: the plain chain's critical ``sw2``).
    isometry : float, optional
        Plain chain: the largest acceptable ``m_2/m_1^2 - 1`` of ``J J^T``.
    gradient_bound : float
        Residual families: the largest acceptable ``E|grad x_0|^2 / E|grad x_L|^2``.
    """
    act = resolve_activation(act)
    depth = as_count(depth, "depth", 10**6)
    sb2 = as_variance(sb2, "sb2")
    if family == "plain":
        if params or sw2 is not None:
            raise ParameterError("the plain recipe chooses sw2 itself and takes no family parameters")
        critical = critical_point(act, sb2=sb2)
        if not math.isfinite(critical.q_star):
            raise DomainError(f"{act} has no finite q* on the critical line at sb2={sb2:g}; use sb2 = 0")
        weights, spread = "gaussian", None
        if isometry is not None:
            bound = as_real(isometry, "isometry", low=0)
            mu = _d2_moments(act, max(critical.q_star, 1e-12))
            for weights in ("gaussian", "orthogonal"):
                spread = float(isometry_score(mu, critical.sw2, depth=depth, weights=weights))
                if spread <= bound:
                    break
            else:
                raise DomainError(
                    f"no ensemble keeps the J J^T spread <= {bound:g} at depth {depth} for {act} "
                    f"(orthogonal gives {spread:.4g}); use fewer layers or an activation more linear at q*"
                )
        return InitRecipe(
            str(act), "plain", depth, critical.sw2, sb2, 1.0, weights, critical.q_star, None, spread
        )
    if "h" in params:
        raise ParameterError("the recipe chooses the branch scale h; do not pass it")
    kernel_spec(family, depth=depth, **params)  # validates the family and its parameters
    bound = as_real(gradient_bound, "gradient_bound", low=1, low_open=True)
    sw2 = critical_point(act, sb2=sb2).sw2 if sw2 is None else as_variance(sw2, "sw2", positive=True)

    def norm(h):
        return float(gradient_norms(act, sw2, sb2, depth=depth, family=family, h=h, **params)[0])

    if norm(1.0) <= bound:
        h = 1.0
    else:
        lo, hi = -30.0, 0.0  # log h: the gradient norm grows with h
        if norm(math.exp(lo)) > bound:
            raise DomainError(f"no branch scale h >= e^-30 keeps the gradient norm <= {bound:g}")
        for _ in range(40):  # |log h| to 3e-11
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if norm(math.exp(mid)) <= bound else (lo, mid)
        h = math.exp(lo)
    return InitRecipe(str(act), family, depth, sw2, sb2, h, "gaussian", None, norm(h), None)


def apply_recipe(model, recipe: InitRecipe, *, generator=None):
    """Initialise ``model`` in place from ``recipe`` and return it.

    Every ``torch.nn.Linear``: weight ``N(0, sw2 / fan_in)`` (Gaussian) or ``sqrt(sw2)`` times
    a Haar orthogonal matrix (square layers), bias ``N(0, sb2)``. Every depthdyn block:
    ``step = h``. A plain ``nn.Sequential`` has no blocks and keeps its structure.
    """
    import torch
    from torch import nn

    from ..nn.blocks import DepthBlock

    if not isinstance(model, nn.Module):
        raise ParameterError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(recipe, InitRecipe):
        raise ParameterError(f"recipe must be an InitRecipe (from init_recipe), got {type(recipe).__name__}")
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if not linears:
        raise ParameterError("the model has no nn.Linear layer to initialise")
    with torch.no_grad():
        for layer in linears:
            out_f, in_f = layer.weight.shape
            if recipe.weights == "orthogonal":
                if out_f != in_f:
                    raise ParameterError("orthogonal weights need square Linear layers")
                z = torch.randn(in_f, in_f, generator=generator, dtype=torch.float64)
                q, r = torch.linalg.qr(z)
                w = q * torch.sign(torch.diagonal(r))[None, :] * math.sqrt(recipe.sw2)
            else:
                w = torch.randn(out_f, in_f, generator=generator, dtype=torch.float64) * math.sqrt(
                    recipe.sw2 / in_f
                )
            layer.weight.copy_(w.to(layer.weight.dtype))
            if layer.bias is not None:
                b = torch.randn(out_f, generator=generator, dtype=torch.float64) * math.sqrt(recipe.sb2)
                layer.bias.copy_(b.to(layer.bias.dtype))
        for block in model.modules():
            if isinstance(block, DepthBlock):
                block.step = float(recipe.h)
    return model
