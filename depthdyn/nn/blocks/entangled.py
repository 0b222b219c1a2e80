"""Entangled residual blocks: the identity skip replaced by a matrix or a convolution (001).

Convention: column vectors, ``x_{l+1} = Gamma x_l + h f(x_l)``; on a batch of rows this is
``x @ Gamma.T``. (001 eq. 2-3 writes ``R_f(x) = f(x) + Gamma x`` and its Jacobian with
``Gamma^T``, for row vectors.) Family ``entangled``: linearised
``x_{l+1} = (Gamma + lam I) x_l``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ...errors import DomainError, ParameterError, ShapeError
from ...families import entangled
from ...numeric.conv import conv_kernel, conv_spectrum
from ...recurrence import Recurrence
from .base import DepthBlock, check_finite, check_positive_int

__all__ = ["EntangledBlock", "ConvEntangledBlock", "circular_conv2d"]


def _gamma(value) -> float:
    g = check_finite(value, "gamma")
    if not 0 <= g <= 1:
        raise DomainError(f"gamma must lie in [0, 1] (001 eq. 4), got {value!r}")
    return g


def _store(module: nn.Module, name: str, value: torch.Tensor, learn: bool) -> None:
    if not isinstance(learn, bool):
        raise ParameterError(f"learn must be True or False, got {learn!r}")
    value = value.to(torch.get_default_dtype())
    if learn:
        setattr(module, name, nn.Parameter(value))
    else:
        module.register_buffer(name, value)


def _no_channel(channel) -> None:
    if channel is not None:
        raise ParameterError("the entangled recurrence couples all features: drop channel=")


class EntangledBlock(DepthBlock):
    """Entangled residual block ``x_{l+1} = Gamma x_l + h f(norm(x_l))`` on ``(B, d)`` (001 eq. 2).

    Column-vector convention ``x_{l+1} = Gamma x_l``, i.e. ``x @ Gamma.T`` on a batch (001
    writes the Jacobian ``df/dx + Gamma^T`` for row vectors, eq. 3).

    Parameters
    ----------
    dim : int
        Number of features ``d``.
    f : torch.nn.Module, optional
        Block function; :func:`~depthdyn.nn.blocks.mlp` by default.
    kind : {"uniform", "orthogonal", "matrix"}
        ``"uniform"``: ``Gamma = (gamma/d) 1 1^T + (1 - gamma) I`` (001 eq. 4; eigenvalues
        1 and ``1 - gamma``); ``"orthogonal"``: the Q of the QR factorisation of a standard
        normal ``d x d`` matrix drawn from ``seed`` (001); ``"matrix"``: the given ``Gamma``
        (implied when ``Gamma`` is passed with the default kind).
    gamma : float
        Entanglement coefficient in ``[0, 1]`` for ``"uniform"`` (001 finds 0.1 best).
    Gamma : array_like, optional
        A ``d x d`` matrix for ``"matrix"``.
    seed : int
        Seed of the orthogonal draw.
    learn : bool
        ``Gamma`` is a trainable parameter (else a fixed buffer).
    step, norm
        As in :class:`~depthdyn.nn.blocks.DepthBlock`.
    """

    family = "entangled"

    def __init__(
        self,
        dim: int,
        f: nn.Module | None = None,
        *,
        kind: str = "uniform",
        gamma: float = 0.1,
        Gamma=None,
        seed: int = 0,
        learn: bool = False,
        step: float = 1.0,
        norm: bool = False,
    ):
        super().__init__(dim, f, step=step, norm=norm)
        d = self.dim
        if Gamma is not None and kind == "uniform":
            kind = "matrix"
        if kind == "uniform":
            g = _gamma(gamma)
            G = torch.full((d, d), g / d, dtype=torch.float64) + (1 - g) * torch.eye(d, dtype=torch.float64)
        elif kind == "orthogonal":
            if isinstance(seed, bool) or not isinstance(seed, int):
                raise ParameterError(f"seed must be an integer, got {seed!r}")
            Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, d)))
            G = torch.from_numpy(Q)
        elif kind == "matrix":
            G = self._matrix(Gamma)
        else:
            raise ParameterError(f"kind must be 'uniform', 'orthogonal' or 'matrix', got {kind!r}")
        self.kind = kind
        _store(self, "Gamma", G, learn)

    def _matrix(self, Gamma) -> torch.Tensor:
        if Gamma is None:
            raise ParameterError("kind='matrix' needs Gamma (a d x d matrix)")
        if isinstance(Gamma, torch.Tensor):
            Gamma = Gamma.detach().cpu()
        try:
            G = torch.as_tensor(np.asarray(Gamma, dtype=float))
        except (TypeError, ValueError):
            raise ParameterError(f"Gamma must be a numeric d x d matrix, got {Gamma!r}") from None
        if G.dim() != 2 or G.shape[0] != G.shape[1]:
            raise ShapeError(f"Gamma must be square, got shape {tuple(G.shape)}")
        if G.shape[0] != self.dim:
            raise ShapeError(f"Gamma must be {self.dim}x{self.dim} (dim={self.dim}), got {tuple(G.shape)}")
        if not bool(torch.isfinite(G).all()):
            raise ParameterError("Gamma must have finite entries")
        return G

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._check_input(x)
        return x @ self.Gamma.T + self.branch(x)

    def coefficients(self) -> dict[str, torch.Tensor]:
        return {"Gamma": self.Gamma.detach()}

    def skip_operator(self) -> torch.Tensor:
        """``Gamma`` (``x_{l+1} = Gamma x_l`` when ``f = 0``)."""
        return self.Gamma.detach()

    def recurrence(self, *, channel: int | None = None, **values) -> Recurrence:
        """``entangled(kind="matrix", Gamma=<learned Gamma>)``: ``x_{l+1} = (Gamma + lam I) x_l``.

        Exact work is limited to ``d <= 8``: larger ``d`` raises
        :class:`~depthdyn.errors.DegreeTooLargeError`.
        """
        _no_channel(channel)
        G = self.Gamma.detach().to("cpu", torch.float64).tolist()
        return entangled(kind="matrix", Gamma=G, **values)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, kind={self.kind}, learn={isinstance(self.Gamma, nn.Parameter)}"


def circular_conv2d(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """A "same" cross-correlation with circular padding, centre tap ``(kh // 2, kw // 2)``.

    ``y[o, h, w] = sum_{a, b, i} weight[o, i, a, b] x[i, (h + a - c_h) % H, (w + b - c_w) % W]``,
    the convention of :func:`~depthdyn.numeric.conv.conv_spectrum`; works for maps
    smaller than the kernel (the indices wrap as often as needed).
    """
    kh, kw = weight.shape[-2:]
    H, W = x.shape[-2:]
    rows = torch.arange(-(kh // 2), H + kh - 1 - kh // 2, device=x.device) % H
    cols = torch.arange(-(kw // 2), W + kw - 1 - kw // 2, device=x.device) % W
    return nn.functional.conv2d(x[..., rows, :][..., cols], weight)


def _conv_f(channels: int, hidden: int) -> nn.Sequential:
    def conv(i, o):
        return nn.Conv2d(i, o, 3, padding=1, padding_mode="circular")

    return nn.Sequential(conv(channels, hidden), nn.Tanh(), conv(hidden, channels))


class ConvEntangledBlock(DepthBlock):
    """Convolutional entangled block ``x_{l+1} = K * x_l + h f(norm(x_l))`` on ``(B, C, H, W)``.

    ``K *`` is a "same" 2-D cross-correlation with circular padding (001 eq. 7) whose
    kernel comes from :func:`~depthdyn.numeric.conv.conv_kernel` (001 Fig. 3), converted
    from HWIO ``(kh, kw, C_in, C_out)`` to torch's ``(C_out, C_in, kh, kw)``.

    Parameters
    ----------
    channels : int
        Number of channels ``C`` (the block's ``dim``).
    f : torch.nn.Module, optional
        Maps ``(B, C, H, W)`` to itself; default ``Conv3x3 -> tanh -> Conv3x3`` with
        circular padding and ``hidden`` channels.
    kind : {"spatial", "channel", "spatial_channel", "orthogonal"}
        ``"spatial"``: Fig. 3's ``sp_kernel`` (each channel with its own ``k x k``
        neighbourhood); ``"channel"``: channel-only entanglement, ``ch_kernel`` with
        ``kernel_size=1``; ``"spatial_channel"``: ``ch_kernel`` with ``kernel_size=k``;
        ``"orthogonal"``: ``orth_kernel`` (``1 x 1``, a random orthogonal channel map).
    gamma, kernel_size, seed
        Passed to :func:`~depthdyn.numeric.conv.conv_kernel`.
    learn : bool
        The kernel is a trainable parameter (else a fixed buffer).
    step : float
        Multiplies the output of ``f``.
    norm : bool
        ``GroupNorm(1, C)`` (layer norm over ``C, H, W``) before ``f``.
    hidden : int, optional
        Hidden channels of the default ``f`` (``C``).
    """

    family = "entangled"

    def __init__(
        self,
        channels: int,
        f: nn.Module | None = None,
        *,
        kind: str = "spatial",
        gamma: float = 0.1,
        kernel_size: int = 3,
        seed: int = 0,
        learn: bool = False,
        step: float = 1.0,
        norm: bool = False,
        hidden: int | None = None,
    ):
        C = check_positive_int(channels, "channels")
        if f is None:
            f = _conv_f(C, check_positive_int(C if hidden is None else hidden, "hidden"))
        super().__init__(C, f, step=step, norm=False)
        if norm:
            self.norm = nn.GroupNorm(1, C)
        k = check_positive_int(kernel_size, "kernel_size")
        g = _gamma(gamma)
        if kind == "spatial":
            K = conv_kernel("spatial", g, k, C)
        elif kind == "channel":
            K = conv_kernel("channel", g, 1, C)
        elif kind == "spatial_channel":
            K = conv_kernel("channel", g, k, C)
        elif kind == "orthogonal":
            if isinstance(seed, bool) or not isinstance(seed, int):
                raise ParameterError(f"seed must be an integer, got {seed!r}")
            K = conv_kernel("orthogonal", channels=C, seed=seed)
        else:
            raise ParameterError(
                f"kind must be 'spatial', 'channel', 'spatial_channel' or 'orthogonal', got {kind!r}"
            )
        self.kind = kind
        _store(self, "kernel", torch.from_numpy(np.ascontiguousarray(np.transpose(K, (3, 2, 0, 1)))), learn)

    def _check_input(self, x: torch.Tensor) -> None:
        if not isinstance(x, torch.Tensor):
            raise ParameterError(f"expected a torch.Tensor, got {type(x).__name__}")
        if x.dim() != 4 or x.shape[1] != self.dim:
            raise ParameterError(f"expected inputs of shape (B, {self.dim}, H, W), got {tuple(x.shape)}")

    def skip(self, x: torch.Tensor) -> torch.Tensor:
        """``K * x``, the skip path alone."""
        return circular_conv2d(x, self.kernel)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._check_input(x)
        return self.skip(x) + self.branch(x)

    def coefficients(self) -> dict[str, torch.Tensor]:
        return {"kernel": self.kernel.detach()}

    def skip_operator(self) -> torch.Tensor:
        """The skip kernel as a torch conv weight ``(C_out, C_in, kh, kw)``."""
        return self.kernel.detach()

    def skip_matrix(self, H: int, W: int) -> torch.Tensor:
        """The skip as a dense ``(C H W) x (C H W)`` matrix on row-major flattened ``(C, H, W)`` maps."""
        H, W = check_positive_int(H, "H"), check_positive_int(W, "W")
        n = self.dim * H * W
        eye = torch.eye(n, dtype=self.kernel.dtype, device=self.kernel.device)
        with torch.no_grad():
            return self.skip(eye.reshape(n, self.dim, H, W)).reshape(n, n).T

    def skip_spectrum(self, H: int, W: int) -> np.ndarray:
        """Eigenvalues of the skip on ``H x W`` maps: ``conv_spectrum`` of the kernel, ``(H, W, C)``."""
        hwio = self.kernel.detach().to("cpu", torch.float64).permute(2, 3, 1, 0).numpy()
        return conv_spectrum(hwio, H, W)

    def recurrence(self, *, H: int | None = None, W: int | None = None, channel=None, **values) -> Recurrence:
        """``entangled(kind="matrix", Gamma=skip_matrix(H, W))`` on ``H x W`` maps.

        Exact work needs ``C H W <= 8`` (else :class:`~depthdyn.errors.DegreeTooLargeError`).
        """
        _no_channel(channel)
        if H is None or W is None:
            raise ParameterError("ConvEntangledBlock.recurrence needs the map size: recurrence(H=..., W=...)")
        G = self.skip_matrix(H, W).to("cpu", torch.float64).tolist()
        return entangled(kind="matrix", Gamma=G, **values)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, kind={self.kind}, kernel={tuple(self.kernel.shape[-2:])}"
