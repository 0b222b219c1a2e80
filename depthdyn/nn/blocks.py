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

from ..errors import ParameterError
from ..families import build
from ..recurrence import Recurrence

__all__ = [
    "DepthBlock",
    "ResidualBlock",
    "ReZeroBlock",
    "WeightedBlock",
    "HighwayBlock",
    "MomentumBlock",
    "SmoothBlock",
    "DenseBlock",
    "mlp",
    "tanh_layer",
]


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(f"{name} must be a positive integer, got {value!r}")
    return value


def _finite(value, name: str, *, positive: bool = False) -> float:
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
    dim = _positive_int(dim, "dim")
    hidden = _positive_int(4 * dim if hidden is None else hidden, "hidden")
    return nn.Sequential(nn.Linear(dim, hidden), activation(), nn.Linear(hidden, dim))


def tanh_layer(dim: int) -> nn.Sequential:
    """``sigma(W x + b)`` with ``W`` a ``dim x dim`` matrix and ``sigma = tanh`` (002 eq. 2).

    With ``dim = 1`` this is the "single node per layer" function of 002 §4.1.
    """
    dim = _positive_int(dim, "dim")
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
        self.dim = _positive_int(dim, "dim")
        self.step = _finite(step, "step", positive=True)
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

    def extra_repr(self) -> str:
        return f"dim={self.dim}, step={self.step:g}"


def _eye(block: DepthBlock) -> torch.Tensor:
    p = next(block.parameters(), None)
    dtype = p.dtype if p is not None else torch.get_default_dtype()
    device = p.device if p is not None else None
    return torch.eye(block.dim, dtype=dtype, device=device)


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
        return _eye(self)


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
        return _eye(self)


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
        self.a = nn.Parameter(torch.tensor(_finite(skip, "skip")))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a * x + self.branch(x)

    def coefficients(self) -> dict[str, torch.Tensor]:
        return {"a": self.a.detach()}

    def skip_operator(self) -> torch.Tensor:
        return self.a.detach() * _eye(self)


class HighwayBlock(DepthBlock):
    """Highway block ``x_{l+1} = g(x) * h f(x) + (1 - g(x)) * x`` with ``g = sigmoid(W_g x + b_g)``.

    Source: 004 (highway networks). The gate bias starts at ``gate_bias`` (-2: the block
    starts mostly carrying ``x``). Family ``highway`` with ``g`` the gate at ``x = 0``,
    ``sigmoid(b_g)`` per channel (the gate is input dependent; linearise at a point with
    :mod:`depthdyn.nn.linearize` for the exact Jacobian).
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
            self.gate.bias.fill_(_finite(gate_bias, "gate_bias"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = torch.sigmoid(self.gate(x))
        return g * self.branch(x) + (1 - g) * x

    def coefficients(self) -> dict[str, torch.Tensor]:
        return {"g": torch.sigmoid(self.gate.bias.detach())}

    def skip_operator(self) -> torch.Tensor:
        return torch.diag(1 - torch.sigmoid(self.gate.bias.detach()))


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
        self.a = nn.Parameter(torch.full((self.dim,), _finite(a_init, "a_init")))
        self.b = nn.Parameter(torch.full((self.dim,), _finite(b_init, "b_init")))

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
        eye, M = _eye(self), torch.diag(self.m.detach())
        return torch.cat((torch.cat((eye, M), 1), torch.cat((torch.zeros_like(eye), M), 1)), 0)


class _LagBlock(DepthBlock):
    """Shared part of the ``k``-lag blocks: state ``(x_l, ..., x_{l-k+1})``, all equal to the
    input at layer 0 (zero differences); ``f`` defaults to :func:`tanh_layer`; ``h`` and ``k``
    are the family's parameters. Subclasses give the new lag and the skip map's first row."""

    def __init__(
        self, dim: int, f: nn.Module | None = None, *, k: int = 2, step: float = 1.0, norm: bool = False
    ):
        super().__init__(dim, f if f is not None else tanh_layer(dim), step=step, norm=norm)
        self.k = self.slots = _positive_int(k, "k")

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
