"""Blocks with ``k`` lags of state: ``C^k`` smooth networks and dense networks (002)."""

from __future__ import annotations

import math

import torch
from torch import nn

from .base import DepthBlock, check_positive_int, tanh_layer

__all__ = ["SmoothBlock", "DenseBlock"]


class _LagBlock(DepthBlock):
    """Shared part of the ``k``-lag blocks: state ``(x_l, ..., x_{l-k+1})``, all equal to the
    input at layer 0 (zero differences); ``f`` defaults to :func:`tanh_layer`; ``h`` and ``k``
    are the family's parameters. Subclasses give the new lag and the skip map's first row."""

    def __init__(
        self, dim: int, f: nn.Module | None = None, *, k: int = 2, step: float = 1.0, norm: bool = False
    ):
        super().__init__(dim, f if f is not None else tanh_layer(dim), step=step, norm=norm)
        self.k = self.slots = check_positive_int(k, "k")

    def _next(self, lags: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _skip_row(self) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        lags = state if self.k > 1 else state.unsqueeze(1)
        new = self._next(lags)
        if self.k == 1:
            return new
        return torch.cat((new.unsqueeze(1), lags[:, :-1]), dim=1)

    def structure(self) -> dict:
        return {"k": self.k}

    def coefficients(self) -> dict[str, torch.Tensor]:
        return {"h": torch.tensor(self.step, dtype=torch.float64)}

    def skip_operator(self) -> torch.Tensor:
        """Block companion ``kron(C, I_d)`` of the lag recurrence with ``f = 0``."""
        row = self._skip_row()
        C = torch.zeros(self.k, self.k, dtype=row.dtype)
        C[0] = row
        C[1:, :-1] += torch.eye(self.k - 1, dtype=row.dtype)
        return torch.kron(C, torch.eye(self.dim, dtype=row.dtype))


class SmoothBlock(_LagBlock):
    """``C^k`` smooth block (002 eq. 4c): ``sum_i (-1)^i C(k, i) x_{l+1-i} = h^k f(x_l)``.

    Keeps ``k`` lags ``(x_l, ..., x_{l-k+1})`` as state (all equal to the input at layer 0:
    zero velocity, acceleration, ...). ``f`` defaults to :func:`tanh_layer`, the
    ``sigma(W x + b)`` of 002. ``k = 1`` is the residual block ``x + h f(x)``. Family
    ``smooth``.
    """

    family = "smooth"

    def __init__(
        self, dim: int, f: nn.Module | None = None, *, k: int = 2, step: float = 1.0, norm: bool = False
    ):
        super().__init__(dim, f, k=k, step=step, norm=norm)
        signs = [-((-1) ** i) * math.comb(self.k, i) for i in range(1, self.k + 1)]
        self.register_buffer("lag_weights", torch.tensor(signs, dtype=torch.get_default_dtype()))

    def _next(self, lags: torch.Tensor) -> torch.Tensor:
        skip = torch.einsum("k,bk...->b...", self.lag_weights.to(lags.dtype), lags)
        return skip + self.step**self.k * self.f(self.norm(lags[:, 0]))

    def _skip_row(self) -> torch.Tensor:
        return self.lag_weights.double()


class DenseBlock(_LagBlock):
    """``k``-lag dense block, row ``n = 0`` of 002 eq. 9.

    ``x_{l+1} = x_{l+1-k} + h sum_{j<k} f(x_{l-j})``; state = the ``k`` lags, all equal to
    the input at layer 0. ``f`` defaults to :func:`tanh_layer`. Family ``dense``.
    """

    family = "dense"

    def _next(self, lags: torch.Tensor) -> torch.Tensor:
        return lags[:, -1] + self.step * self.f(self.norm(lags)).sum(dim=1)

    def _skip_row(self) -> torch.Tensor:
        row = torch.zeros(self.k, dtype=torch.float64)
        row[-1] = 1.0
        return row
