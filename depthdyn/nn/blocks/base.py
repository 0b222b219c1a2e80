"""Residual-family blocks as ``torch.nn`` modules, one per depthdyn family.

Every block maps a *state* to the next layer's state. First-order blocks carry the
features ``x_l`` themselves (shape ``(B, d)``); blocks with more state stack it on axis 1:
``(B, 2, d)`` holds ``(x_l, v_l)`` for the momentum block, ``(B, k, d)`` the lags
``(x_l, x_{l-1}, ..., x_{l-k+1})`` for the ``C^k`` and dense blocks, ``(B, n, d)`` the
streams of hyper-connections. :meth:`DepthBlock.position` reads ``x_l`` back.

Each block wraps a user ``f`` (an MLP by default), scales its output by an explicit
``step`` (the layer step ``h = Delta l`` of 002; depth scaling ``h = T/L`` is the caller's
choice), and exposes its linear skip operator and its learned per-layer coefficients, so
that :meth:`DepthBlock.recurrence` gives the depthdyn :class:`~depthdyn.Recurrence` of the
block with the learned numbers in place of the symbols (``lam`` stays free: it is the
eigenvalue of the linearised ``f``).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ...errors import ParameterError
from ...families import build
from ...recurrence import Recurrence

__all__ = ["DepthBlock", "check_finite", "check_positive_int", "mlp", "tanh_layer"]


def check_positive_int(value, name: str) -> int:
    """``value`` if it is a positive ``int`` (not a bool), else a ``ParameterError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(f"{name} must be a positive integer, got {value!r}")
    return value


def check_finite(value, name: str, *, positive: bool = False) -> float:
    """``value`` as a finite float (``> 0`` with ``positive``), else a ``ParameterError`` naming ``name``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or (positive and v <= 0):
        raise ParameterError(
            f"{name} must be a finite{' positive' if positive else ''} number, got {value!r}"
        )
    return v


def mlp(dim: int, hidden: int | None = None, activation: type[nn.Module] = nn.Tanh) -> nn.Sequential:
    """The default block function: ``Linear(dim, hidden) -> activation -> Linear(hidden, dim)``.

    ``hidden`` defaults to ``4 * dim``.
    """
    dim = check_positive_int(dim, "dim")
    hidden = check_positive_int(4 * dim if hidden is None else hidden, "hidden")
    return nn.Sequential(nn.Linear(dim, hidden), activation(), nn.Linear(hidden, dim))


def tanh_layer(dim: int) -> nn.Sequential:
    """``sigma(W x + b)`` with ``W`` a ``dim x dim`` matrix and ``sigma = tanh`` (002 eq. 2).

    With ``dim = 1`` this is the "single node per layer" function of 002 §4.1.
    """
    dim = check_positive_int(dim, "dim")
    return nn.Sequential(nn.Linear(dim, dim), nn.Tanh())


class DepthBlock(nn.Module):
    """Base class: one layer of a residual-family network acting on a state tensor.

    Parameters
    ----------
    dim : int
        Number of features ``d`` of ``x_l``.
    f : torch.nn.Module, optional
        The block function, mapping ``(..., d)`` to ``(..., d)``; :func:`mlp` by default.
    step : float
        Multiplies the output of ``f`` (``h`` in 002, ``1/L`` for depth-scaled nets).
    norm : bool
        Apply ``LayerNorm`` before ``f`` (pre-norm). Needs ``dim >= 2``: the layer norm
        of a single feature is identically zero.
    """

    family: str = ""
    slots: int = 1

    def __init__(self, dim: int, f: nn.Module | None = None, *, step: float = 1.0, norm: bool = False):
        super().__init__()
        self.dim = check_positive_int(dim, "dim")
        self.step = check_finite(step, "step", positive=True)
        if f is not None and not isinstance(f, nn.Module):
            raise ParameterError(f"f must be a torch.nn.Module, got {type(f).__name__}")
        if norm and self.dim < 2:
            raise ParameterError(
                "norm=True needs dim >= 2 (LayerNorm of one feature is zero); pass norm=False"
            )
        self.norm = nn.LayerNorm(self.dim) if norm else nn.Identity()
        self.f = f if f is not None else mlp(self.dim)

    # -- state handling ------------------------------------------------------------------
    def initial_state(self, x: torch.Tensor) -> torch.Tensor:
        """The state of layer 0 built from the input ``x`` (``(B, d)``)."""
        self._check_input(x)
        if self.slots == 1:
            return x
        return x.unsqueeze(1).expand(x.shape[0], self.slots, *x.shape[1:]).contiguous()

    def position(self, state: torch.Tensor) -> torch.Tensor:
        """``x_l`` read from a state."""
        return state if self.slots == 1 else state[:, 0]

    def branch_input(self, state: torch.Tensor) -> torch.Tensor:
        """What the branch reads from a state: ``x_l`` (``H_pre X`` for hyper-connections)."""
        return self.position(state)

    def branch(self, x: torch.Tensor) -> torch.Tensor:
        """The residual branch ``step * f(norm(x))``."""
        return self.step * self.f(self.norm(x))

    def _check_input(self, x: torch.Tensor) -> None:
        if not isinstance(x, torch.Tensor):
            raise ParameterError(f"expected a torch.Tensor, got {type(x).__name__}")
        if x.dim() < 2 or x.shape[-1] != self.dim:
            raise ParameterError(
                f"{type(self).__name__} expects inputs of shape (B, {self.dim}), got {tuple(x.shape)}"
            )

    # -- analysis ------------------------------------------------------------------------
    def structure(self) -> dict:
        """Structural keyword arguments of the depthdyn family (``k`` for ``C^k`` nets)."""
        return {}

    def coefficients(self) -> dict[str, torch.Tensor]:
        """Learned (or fixed) per-layer coefficients, detached, named as the family's parameters."""
        return {}

    def skip_operator(self) -> torch.Tensor:
        """The linear map the block applies to its flattened state when ``f = 0``."""
        raise NotImplementedError

    def recurrence(self, *, channel: int | None = None, **values) -> Recurrence:
        """The block's family with its learned coefficients substituted (``lam`` stays free).

        Per-channel coefficients need ``channel``; ``values`` fix further parameters
        (``lam=...``).
        """
        fixed = {}
        for name, value in self.coefficients().items():
            t = value.detach().to("cpu", torch.float64).reshape(-1)
            if t.numel() == 1:
                fixed[name] = float(t[0])
            elif channel is None:
                raise ParameterError(
                    f"{name} has {t.numel()} per-channel values; pass channel=0..{t.numel() - 1}"
                )
            elif not 0 <= channel < t.numel():
                raise ParameterError(f"channel must lie in 0..{t.numel() - 1}, got {channel!r}")
            else:
                fixed[name] = float(t[channel])
        return build(self.family, **self.structure(), **fixed, **values)

    def identity(self) -> torch.Tensor:
        """The ``dim x dim`` identity in the block's dtype and on its device."""
        p = next(self.parameters(), None)
        dtype = p.dtype if p is not None else torch.get_default_dtype()
        device = p.device if p is not None else None
        return torch.eye(self.dim, dtype=dtype, device=device)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, step={self.step:g}"

