"""The second-order (momentum) residual block of 000 §8."""

from __future__ import annotations

import math

import torch
from torch import nn

from .base import DepthBlock, check_finite

__all__ = ["MomentumBlock"]


class MomentumBlock(DepthBlock):
    """Second-order (momentum) residual block exactly as 000 §8.

    .. math::

        u_l = h f(\\mathrm{LN}(x_l)), \\quad m_l = \\sigma(a_l), \\quad
        \\eta_l = \\mathrm{softplus}(b_l), \\quad
        v_{l+1} = m_l \\odot v_l + \\eta_l \\odot u_l, \\quad x_{l+1} = x_l + v_{l+1}

    with per-channel ``a_l, b_l``. State ``(B, 2, d)`` = ``(x_l, v_l)``, ``v_0 = 0``.
    Initialisation (000 §8): ``a = a_init`` (``<< 0``, so ``m ~ 0``) and
    ``b = log(e - 1)`` (``eta = 1``): the block starts as the plain residual block. Note that
    ``dm/da = m (1 - m)`` is tiny there (``2e-9`` at ``a = -20``): with this init ``m``
    barely trains; pass a milder ``a_init`` (e.g. -2) to let it. Family ``momentum``.
    """

    family = "momentum"
    slots = 2

    def __init__(
        self,
        dim: int,
        f: nn.Module | None = None,
        *,
        step: float = 1.0,
        norm: bool = True,
        a_init: float = -20.0,
        b_init: float = math.log(math.e - 1),
    ):
        super().__init__(dim, f, step=step, norm=norm)
        self.a = nn.Parameter(torch.full((self.dim,), check_finite(a_init, "a_init")))
        self.b = nn.Parameter(torch.full((self.dim,), check_finite(b_init, "b_init")))

    @property
    def m(self) -> torch.Tensor:
        return torch.sigmoid(self.a)

    @property
    def eta(self) -> torch.Tensor:
        return nn.functional.softplus(self.b)

    def initial_state(self, x: torch.Tensor) -> torch.Tensor:
        self._check_input(x)
        return torch.stack((x, torch.zeros_like(x)), dim=1)

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        x, v = state[:, 0], state[:, 1]
        v = self.m * v + self.eta * self.branch(x)
        return torch.stack((x + v, v), dim=1)

    def coefficients(self) -> dict[str, torch.Tensor]:
        return {"m": self.m.detach(), "eta": self.eta.detach()}

    def skip_operator(self) -> torch.Tensor:
        eye, M = self.identity(), torch.diag(self.m.detach())
        return torch.cat((torch.cat((eye, M), 1), torch.cat((torch.zeros_like(eye), M), 1)), 0)
