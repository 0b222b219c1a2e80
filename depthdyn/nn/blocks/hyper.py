"""Hyper-connections: ``n`` residual streams mixed by learned matrices (003; Zhu et al. 2024; mHC).

State ``(B, n, d)``: ``n`` streams of ``d`` features on axis 1. Streams are *rows*, so with
``h_l`` the ``n x d`` state of one sample the update of 003 (eq. at the top, case 3) reads

.. math::

    h_{l+1} = H_{res} h_l + H_{post}^T \\, \\big(\\mathrm{step} \\, f(\\mathrm{norm}(H_{pre} h_l))\\big)

with ``H_res`` ``n x n`` (mixes streams), ``H_pre`` a ``1 x n`` row (reads one ``d``-vector
out of the streams) and ``H_post^T`` an ``n x 1`` column (writes ``f``'s output back into
every stream). Linearised with ``f ~ lam`` per channel this is the family
:func:`depthdyn.families.hyper_connection`, ``x_{l+1} = (H_res + lam H_post^T H_pre) x_l``.
"""

from __future__ import annotations

import torch
from torch import nn

from ...errors import ParameterError, ShapeError
from ...families import hyper_connection
from ...mixing import MAX_SINKHORN_ROUNDS
from ...recurrence import Recurrence
from .base import DepthBlock, check_finite, check_positive_int

__all__ = ["sinkhorn", "HyperConnectionBlock"]

_MIXINGS = ("static", "dynamic", "sinkhorn")


def _sinkhorn(logits: torch.Tensor, iterations: int | None, tol: float = 1e-14) -> torch.Tensor:
    log_v = torch.zeros_like(logits[..., :1, :])
    for _ in range(iterations if iterations is not None else MAX_SINKHORN_ROUNDS):
        log_u = -torch.logsumexp(logits + log_v, dim=-1, keepdim=True)  # rows sum to 1
        log_v = -torch.logsumexp(logits + log_u, dim=-2, keepdim=True)  # columns sum to 1
        if iterations is None:
            A = torch.exp(logits + log_u + log_v)
            if float((A.sum(dim=-1) - 1).abs().max()) <= tol:
                return A
    if iterations is None:
        raise ParameterError(f"Sinkhorn-Knopp did not reach {tol:g} in {MAX_SINKHORN_ROUNDS} rounds; "
                             "pass iterations=k for a fixed number of rounds")
    return torch.exp(logits + log_u + log_v)


def sinkhorn(logits: torch.Tensor, iterations: int | None = None, *, tol: float = 1e-14) -> torch.Tensor:
    """Doubly stochastic ``diag(u) exp(logits) diag(v)`` by log-domain Sinkhorn-Knopp, in torch.

    The torch twin of :func:`depthdyn.mixing.sinkhorn`, with the same parameters and meaning:
    a round normalises the rows of ``K = exp(logits)`` (003 §5.2.1, the exponential activation
    ``K_ij = e^{M_ij}`` of its eq. 14), then the columns, in the log domain with
    ``logsumexp`` from ``log_v = 0``. Batched over leading dimensions, in the tensor's dtype
    and on its device; differentiable (autograd unrolls the rounds).

    Parameters
    ----------
    logits : torch.Tensor
        ``(..., n, n)``, finite, floating.
    iterations : int or None
        Rounds (rows, then columns) to run, ``>= 1``, as a network layer does; ``None``
        (default) runs until every row sum is within ``tol`` of 1 (at most
        :data:`depthdyn.mixing.MAX_SINKHORN_ROUNDS`).
    tol : float
        Convergence tolerance of ``iterations=None`` (ignored otherwise).

    Returns
    -------
    torch.Tensor
        Same shape and dtype. After any round the columns sum to 1 up to rounding; how fast
        the rows follow is tabulated in the hyper-connections section of ``docs/nn.md``.

    Raises
    ------
    ParameterError
        Logits that are not a finite floating tensor, ``iterations`` not a positive integer,
        a non-positive ``tol``, no convergence within the rounds allowed.
    ShapeError
        Logits that are not square matrices.
    """
    if not isinstance(logits, torch.Tensor):
        raise ParameterError(f"logits must be a torch.Tensor, got {type(logits).__name__}")
    if logits.dim() < 2 or logits.shape[-1] != logits.shape[-2] or logits.shape[-1] == 0:
        raise ShapeError(f"logits must have shape (..., n, n) with n >= 1, got {tuple(logits.shape)}")
    if not logits.is_floating_point():
        raise ParameterError(f"logits must be a floating-point tensor, got {logits.dtype}")
    if not bool(torch.isfinite(logits).all()):
        raise ParameterError("logits must be finite (no NaN or infinity)")
    if iterations is not None:
        check_positive_int(iterations, "iterations")
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol > 0:
        raise ParameterError(f"tol must be a positive number, got {tol!r}")
    return _sinkhorn(logits, iterations, float(tol))


class HyperConnectionBlock(DepthBlock):
    """Hyper-connection block on ``n`` streams, state ``(B, n, d)`` (003, eq. at the top).

    ``h_{l+1} = H_res h_l + H_post^T (step * f(norm(H_pre h_l)))``: streams are rows,
    ``H_res @ state`` mixes streams, ``H_pre @ state`` (``H_pre`` a ``1 x n`` row) is the
    input of ``f``, ``H_post^T`` (``n x 1``) writes ``f``'s output into the streams. The
    mixing is shared by all ``d`` channels (``H ⊗ I_d``).

    Parameters
    ----------
    dim : int
        Features ``d`` per stream.
    f : torch.nn.Module, optional
        Block function ``(..., d) -> (..., d)``; :func:`~depthdyn.nn.blocks.mlp` by default.
    n : int
        Number of streams (expansion rate). ``n >= 3`` for the initialisation below to give
        every mixing parameter a gradient.
    mixing : {"static", "dynamic", "sinkhorn"}
        ``"static"``: free ``H_res``, ``H_pre``, ``H_post`` parameters. ``"dynamic"``: the
        static part plus input-dependent parts as in Zhu et al. 2024,
        ``H_res(h) = H_res + alpha tanh(rms(h) W_res)^T``,
        ``H_pre(h) = H_pre + alpha tanh(rms(h) w_pre)``,
        ``H_post(h) = H_post + beta tanh(rms(h) w_post)`` (``rms`` a per-stream RMS norm
        without weights; row ``i`` of ``tanh(rms(h) W_res)`` is computed from stream ``i``
        and distributes it, as ``A_r`` in that paper). ``"sinkhorn"`` (manifold-constrained
        hyper-connections, mHC): ``H_res = sinkhorn(res_logits, sinkhorn_iters)`` is doubly
        stochastic (003 §5.2.1); with ``dynamic=True`` the dynamic part is added inside the
        logits and to ``H_pre``, ``H_post``. ``H_pre`` and ``H_post`` stay unconstrained in
        every variant (mHC's sigmoids cannot hold the exact zeros of the initialisation).
    dynamic : bool
        Add the dynamic parts (implied by ``mixing="dynamic"``; an error with ``"static"``).
    sinkhorn_iters : int
        Sinkhorn rounds for ``mixing="sinkhorn"`` (see :func:`sinkhorn` for the tolerance).
    step : float
        Multiplies the output of ``f``.
    norm : bool
        Pre-norm ``LayerNorm`` before ``f`` (as :class:`~depthdyn.nn.blocks.ResidualBlock`).
    alpha_init : float
        Initial value of the dynamic gains ``alpha`` and ``beta`` (0.01, as Zhu et al.).

    Notes
    -----
    Initialisation. With ``c = e_0 + (n-1) e_1 = (1, n-1, 0, ..., 0)`` (so ``c_0 = 1`` and
    ``mean(c) = 1``): ``H_res = J/n`` (every entry ``1/n``; exactly what Sinkhorn returns for
    the zero logits of ``"sinkhorn"``), ``H_pre = e_0``, ``H_post = c``, dynamic weights 0,
    read-out ``position(state) = state[:, 0]``, and the expansion (a linear ``E`` as 003
    allows) ``initial_state(x)_i = x + (c_i - 1) P x`` with ``P`` the cyclic shift of the
    features by one. Invariant: stream 0 and the mean of the streams both equal the plain
    residual ``x_l`` of ``x_{l+1} = x_l + step f(norm(x_l))``. Indeed ``J/n`` replaces every
    stream by the mean, ``x_l``; ``H_pre`` reads stream 0, ``x_l``; stream ``i`` then gains
    ``c_i u_l`` (``u_l = step f(norm(x_l))``), so stream 0 and the mean become
    ``x_l + u_l``. So the stack *is* the plain residual net at init, yet the streams differ
    (``x_l + (c_i - 1) u_{l-1}``), which is what gives every mixing parameter a gradient:

    * Sinkhorn logits can only move ``H_res`` by ``dH`` with zero row and column sums. Such a
      ``dH`` changes nothing when all streams are equal and never changes their mean; here
      it changes stream 0, which ``H_pre`` and the read-out see. Same for a uniform
      ``H_pre`` or a mean read-out: they would hide it, hence ``e_0``.
    * ``P`` makes the streams of layer 0 non-collinear: with ``c ⊗ x`` they are all
      multiples of ``x`` and, under the (scale-invariant) pre-norm, layer 0's ``H_pre``
      gets a gradient of the order of the LayerNorm ``eps`` only.
    * At the last layer only stream 0 is read, so only row 0 of ``H_res`` and ``H_post[0]``
      see the loss there (every parameter tensor still has a non-zero gradient).

    With ``n = 2`` the constraints force ``c = (1, 1)``, equal streams, and the Sinkhorn
    logits' gradient vanishes at init: exact equivalence needs ``H_pre`` and the read-out
    blind to ``(1, -1) ⊗ z``, the only direction a doubly stochastic ``dH`` moves. Use
    ``n >= 3``; ``n = 1`` is the plain residual block. The gains ``alpha``, ``beta`` get zero
    gradient at init (``tanh(rms(h) 0) = 0``); like ReZero's gain they start learning once
    the dynamic weights have moved.

    The analysis methods report the static part (for ``"dynamic"``, the mixing at
    dynamic weights ``0``; for ``"sinkhorn"``, ``sinkhorn`` of the static logits).
    """

    family = "hyper_connection"

    def __init__(
        self,
        dim: int,
        f: nn.Module | None = None,
        *,
        n: int = 4,
        mixing: str = "static",
        dynamic: bool = False,
        sinkhorn_iters: int = 20,
        step: float = 1.0,
        norm: bool = True,
        alpha_init: float = 0.01,
    ):
        super().__init__(dim, f, step=step, norm=norm)
        if mixing not in _MIXINGS:
            raise ParameterError(f"mixing must be one of {', '.join(_MIXINGS)}, got {mixing!r}")
        if not isinstance(dynamic, bool):
            raise ParameterError(f"dynamic must be True or False, got {dynamic!r}")
        if mixing == "static" and dynamic:
            raise ParameterError("mixing='static' has no dynamic part; use mixing='dynamic'")
        self.n = self.slots = check_positive_int(n, "n")
        self.mixing = mixing
        self.dynamic = dynamic or mixing == "dynamic"
        self.sinkhorn_iters = check_positive_int(sinkhorn_iters, "sinkhorn_iters")
        self.alpha_init = check_finite(alpha_init, "alpha_init")
        n, d = self.n, self.dim
        self.register_buffer("expansion", torch.empty(n))
        if mixing == "sinkhorn":
            self.res_logits = nn.Parameter(torch.empty(n, n))
        else:
            self.H_res = nn.Parameter(torch.empty(n, n))
        self.H_pre = nn.Parameter(torch.empty(n))
        self.H_post = nn.Parameter(torch.empty(n))
        if self.dynamic:
            self.W_res = nn.Parameter(torch.empty(d, n))
            self.w_pre = nn.Parameter(torch.empty(d))
            self.w_post = nn.Parameter(torch.empty(d))
            self.alpha = nn.Parameter(torch.empty(()))
            self.beta = nn.Parameter(torch.empty(()))
        self.reset_mixing()

    @torch.no_grad()
    def reset_mixing(self) -> None:
        """Set the expansion and mixing parameters to the residual-equivalent init (see Notes).

        Works in the current dtype: ``J/n`` built in float32 and then cast to float64 is off by
        ``~1e-8`` for ``n`` not a power of two; call this after ``.double()`` for an exact init.
        """
        n = self.n
        c = self.expansion
        c.zero_()
        c[0] = 1.0
        if n > 1:
            c[1] = n - 1.0
        if self.mixing == "sinkhorn":
            self.res_logits.zero_()
        else:
            self.H_res.fill_(1.0 / n)
        self.H_pre.zero_()
        self.H_pre[0] = 1.0
        self.H_post.copy_(c)
        if self.dynamic:
            for w in (self.W_res, self.w_pre, self.w_post):
                w.zero_()
            self.alpha.fill_(self.alpha_init)
            self.beta.fill_(self.alpha_init)

    # -- state handling ------------------------------------------------------------------
    def initial_state(self, x: torch.Tensor) -> torch.Tensor:
        """Stream ``i`` holds ``x + (c_i - 1) P x`` (``c`` the ``expansion`` buffer, ``P`` the
        cyclic shift of the features by one): stream 0 and the mean of the streams are ``x``."""
        self._check_input(x)
        if x.dim() != 2:
            raise ParameterError(f"expected inputs of shape (B, {self.dim}), got {tuple(x.shape)}")
        c = self.expansion.to(x.dtype)[:, None]
        return x[:, None, :] + (c - 1) * torch.roll(x, 1, dims=-1)[:, None, :]

    def position(self, state: torch.Tensor) -> torch.Tensor:
        """Stream 0 (equal to the mean of the streams at init)."""
        return state[:, 0]

    def branch_input(self, state: torch.Tensor) -> torch.Tensor:
        """``H_pre X``: the branch input (with the dynamic ``H_pre`` of this state)."""
        _, H_pre, _ = self.mixing_matrices(state)
        return (H_pre.unsqueeze(-2) @ state).squeeze(-2)

    # -- mixing --------------------------------------------------------------------------
    def _static_res(self) -> torch.Tensor:
        if self.mixing == "sinkhorn":
            return _sinkhorn(self.res_logits, self.sinkhorn_iters)
        return self.H_res

    def mixing_matrices(self, state: torch.Tensor | None = None):
        """``(H_res, H_pre, H_post)``: shapes ``(n, n), (n,), (n,)``, or batched
        ``(B, n, n), (B, n), (B, n)`` when the block is dynamic and ``state`` is given."""
        if not self.dynamic or state is None:
            return self._static_res(), self.H_pre, self.H_post
        z = nn.functional.rms_norm(state, (self.dim,))
        res = self.alpha * torch.tanh(z @ self.W_res).transpose(-1, -2)
        pre = self.H_pre + self.alpha * torch.tanh(z @ self.w_pre)
        post = self.H_post + self.beta * torch.tanh(z @ self.w_post)
        if self.mixing == "sinkhorn":
            return _sinkhorn(self.res_logits + res, self.sinkhorn_iters), pre, post
        return self.H_res + res, pre, post

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        if state.dim() != 3 or state.shape[1:] != (self.n, self.dim):
            raise ParameterError(
                f"expected states of shape (B, {self.n}, {self.dim}), got {tuple(state.shape)}"
            )
        H_res, H_pre, H_post = self.mixing_matrices(state)
        x = (H_pre.unsqueeze(-2) @ state).squeeze(-2)  # = branch_input(state)
        return H_res @ state + H_post.unsqueeze(-1) * self.branch(x).unsqueeze(-2)

    # -- analysis ------------------------------------------------------------------------
    def structure(self) -> dict:
        """The stream count (and the doubly stochastic constraint of Sinkhorn mixing)."""
        return {"n": self.n, "doubly_stochastic": self.mixing == "sinkhorn"}

    def coefficients(self) -> dict[str, torch.Tensor]:
        """Static ``H_res`` ``(n, n)``, ``H_pre`` ``(n,)``, ``H_post`` ``(n,)``, detached."""
        H_res, H_pre, H_post = self.mixing_matrices()
        return {"H_res": H_res.detach(), "H_pre": H_pre.detach(), "H_post": H_post.detach()}

    def skip_operator(self) -> torch.Tensor:
        """``H_res`` (``n x n``, acting on the streams; ``⊗ I_d`` implied)."""
        return self.coefficients()["H_res"]

    def recurrence(self, *, channel: int | None = None, **values) -> Recurrence:
        """:func:`~depthdyn.families.hyper_connection` with the learned (static) matrices.

        The mixing is shared by all channels, so every ``channel`` has this recurrence.
        ``n > 8`` raises :class:`~depthdyn.errors.DegreeTooLargeError` (exact work limit).
        """
        if channel is not None and (isinstance(channel, bool) or not isinstance(channel, int)):
            raise ParameterError(f"channel must be an integer, got {channel!r}")
        if channel is not None and not 0 <= channel < self.dim:
            raise ParameterError(f"channel must lie in 0..{self.dim - 1}, got {channel!r}")
        co = {k: v.to("cpu", torch.float64).tolist() for k, v in self.coefficients().items()}
        return hyper_connection(
            H_res=co["H_res"],
            H_pre=co["H_pre"],
            H_post=co["H_post"],
            doubly_stochastic=self.mixing == "sinkhorn",
            **values,
        )

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, n={self.n}, mixing={self.mixing}, dynamic={self.dynamic}"
