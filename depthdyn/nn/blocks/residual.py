"""First-order residual blocks: plain / pre-norm, ReZero, weighted, highway (004, 000 §1)."""

from __future__ import annotations

import torch
from torch import nn

from .base import DepthBlock, check_finite

__all__ = ["ResidualBlock", "ReZeroBlock", "WeightedBlock", "HighwayBlock"]


class ResidualBlock(DepthBlock):
    """Plain / pre-norm residual block ``x_{l+1} = x_l + h f(LN(x_l))``.

    Source: 000 §1, 004 (pre-norm ``y = x + F(LayerNorm(x))``), 002 eq. 2. Family
    ``residual``: linearised ``x_{l+1} = (1 + lam) x_l`` with ``lam`` an eigenvalue of
    ``h J_f``.
    """

    family = "residual"

    def __init__(self, dim: int, f: nn.Module | None = None, *, step: float = 1.0, norm: bool = True):
        super().__init__(dim, f, step=step, norm=norm)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.branch(x)

    def skip_operator(self) -> torch.Tensor:
        return self.identity()


class ReZeroBlock(DepthBlock):
    """ReZero ``x_{l+1} = x_l + a h f(x_l)`` with the scalar gain ``a`` initialised at 0.

    Source: 004 (Alternatives: ReZero). Family ``rezero``: ``x_{l+1} = (1 + a lam) x_l``.
    """

    family = "rezero"

    def __init__(self, dim: int, f: nn.Module | None = None, *, step: float = 1.0, norm: bool = False):
        super().__init__(dim, f, step=step, norm=norm)
        self.a = nn.Parameter(torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.a * self.branch(x)

    def coefficients(self) -> dict[str, torch.Tensor]:
        return {"a": self.a.detach()}

    def skip_operator(self) -> torch.Tensor:
        return self.identity()


class WeightedBlock(DepthBlock):
    """Weighted residual ``x_{l+1} = a x_l + h f(x_l)`` with a learned scalar skip weight ``a``.

    Source: 004 (weighted residual ``y = F(x) + alpha x``); 001 eq. 2 with ``Gamma = a I``.
    Family ``weighted``: ``x_{l+1} = (a + lam) x_l``. ``a`` starts at ``skip`` (1).
    """

    family = "weighted"

    def __init__(
        self,
        dim: int,
        f: nn.Module | None = None,
        *,
        step: float = 1.0,
        norm: bool = False,
        skip: float = 1.0,
    ):
        super().__init__(dim, f, step=step, norm=norm)
        self.a = nn.Parameter(torch.tensor(check_finite(skip, "skip")))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a * x + self.branch(x)

    def coefficients(self) -> dict[str, torch.Tensor]:
        return {"a": self.a.detach()}

    def skip_operator(self) -> torch.Tensor:
        return self.a.detach() * self.identity()


class HighwayBlock(DepthBlock):
    """Highway block ``x_{l+1} = g(x) * h f(x) + (1 - g(x)) * x`` with ``g = sigmoid(W_g x + b_g)``.

    Source: 004 (highway networks). The gate bias starts at ``gate_bias`` (-2: the block
    starts mostly carrying ``x``). Family ``highway`` with ``g`` the gate at ``x = 0``,
    ``sigmoid(b_g)`` per channel (the gate is input dependent; linearise at a point with
    :mod:`depthdyn.nn.analysis.linearise` for the exact Jacobian).
    """

    family = "highway"

    def __init__(
        self,
        dim: int,
        f: nn.Module | None = None,
        *,
        step: float = 1.0,
        norm: bool = False,
        gate_bias: float = -2.0,
    ):
        super().__init__(dim, f, step=step, norm=norm)
        self.gate = nn.Linear(self.dim, self.dim)
        with torch.no_grad():
            self.gate.bias.fill_(check_finite(gate_bias, "gate_bias"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = torch.sigmoid(self.gate(x))
        return g * self.branch(x) + (1 - g) * x

    def coefficients(self) -> dict[str, torch.Tensor]:
        return {"g": torch.sigmoid(self.gate.bias.detach())}

    def skip_operator(self) -> torch.Tensor:
        return torch.diag(1 - torch.sigmoid(self.gate.bias.detach()))
