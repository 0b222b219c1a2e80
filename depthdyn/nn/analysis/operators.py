"""Each layer's Jacobian as a matrix-free operator, and the Krylov methods that read it.

A layer maps its input state ``x`` (one sample: ``n_in`` numbers) to its output state ``y``.
:class:`LayerOperator` wraps ``J = dy/dx`` at the recorded input as products only: ``J w``
by forward-mode AD (``jvp``) and ``J^T v`` by reverse mode (``vjp``), batched over the
samples (they are independent: the batch axis is the first axis) and, with ``vmap``, over
several vectors at once. Nothing of size ``n x n`` is formed unless asked (:meth:`dense`).

Causal sequence layers (state ``(B, T, d)``, token ``t`` of the output depends on tokens
``<= t`` of the input) have a block lower-triangular Jacobian: its eigenvalues are those of
the diagonal blocks ``D_t = dy_t / dx_t`` (``d x d``). With ``tokens`` given, the operator
*is* those diagonal blocks of the sampled tokens: a tangent placed at token ``t`` alone gives
``D_t w`` at output token ``t`` (earlier tokens do not move), and a cotangent at output token
``t`` alone gives ``D_t^T v`` at input token ``t`` (later outputs carry no cotangent). So each
sampled token is one independent ``d``-dimensional problem, ``T / len(tokens)`` times less work
than the whole-sequence Jacobian and exact for the sampled blocks.

Methods (all batched over the independent problems, float64 when the model is float64):

* :func:`top_singular_values`: randomised block Krylov on ``J^T J`` (wide products);
* :func:`spectral_radius`: Arnoldi on ``J^T`` (same eigenvalues as ``J``), needing only ``vjp``;
* :func:`hutchinson_trace`: ``E[z^T J z]`` with Rademacher probes;
* :meth:`LayerOperator.dense`: the Jacobian itself, for small ``n`` (one ``vjp`` per row).

A Krylov space as large as the problem makes the block Krylov and Arnoldi values exact up to
rounding; below that each value comes with its residual bound (``accuracy``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ...errors import ParameterError, ShapeError

__all__ = [
    "LayerOperator",
    "Spectrum",
    "top_singular_values",
    "spectral_radius",
    "hutchinson_trace",
    "ritz_values",
]


def _quiet(fn):
    """Run ``fn`` with vmap's "no batching rule, falling back" performance warnings silenced (and
    the deprecation warning of ``torch.jit.script`` that forward-mode AD's first use triggers
    inside torch)."""

    def wrapped(*args):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*batching rule.*")
            warnings.filterwarnings("ignore", message=".*fallback.*")
            warnings.filterwarnings("ignore", message=".*torch.jit.script.*", category=DeprecationWarning)
            return fn(*args)

    return wrapped


class LayerOperator:
    """``J = d layer(x) / dx`` at one recorded input, as ``jvp``/``vjp`` products.

    Parameters
    ----------
    fn : callable
        The layer as a function of its state alone (the other arguments of its recorded
        call bound): ``(B, *in_shape) -> (B, *out_shape)``.
    x : torch.Tensor
        The recorded input ``(B, *in_shape)``.
    tokens : sequence of int, optional
        Sampled token positions of a causal sequence layer (state ``(B, T, d)``): the
        operator is then the diagonal blocks ``D_t`` of those tokens.

    Notes
    -----
    Vectors are shaped ``(P, n)`` with ``P`` independent problems: ``P = B`` (one per
    sample, ``n`` the flattened state), or ``P = len(tokens) * B`` (token-major, ``n = d``).
    """

    def __init__(self, fn: Callable, x: torch.Tensor, *, tokens=None):
        self.fn, self.x = fn, x.detach()
        with torch.no_grad():
            self.y = fn(self.x)
        if not isinstance(self.y, torch.Tensor) or self.y.shape[:1] != x.shape[:1]:
            raise ShapeError("the layer must return a tensor with the batch axis of its input first")
        self.B = x.shape[0]
        self.tokens = None if tokens is None else tuple(int(t) for t in tokens)
        if self.tokens is not None:
            if x.dim() != 3 or self.y.shape != x.shape:
                raise ShapeError(
                    f"per-token blocks need a (B, T, d) state kept by the layer, got {tuple(x.shape)} -> "
                    f"{tuple(self.y.shape)}"
                )
            T = x.shape[1]
            if not self.tokens or any(not 0 <= t < T for t in self.tokens):
                raise ParameterError(f"tokens must be positions in 0..{T - 1}, got {tokens!r}")
            self.n_in = self.n_out = x.shape[2]
        else:
            self.n_in, self.n_out = x[0].numel(), self.y[0].numel()
        self.problems = self.B * (1 if self.tokens is None else len(self.tokens))
        self._vjp = None

    @property
    def square(self) -> bool:
        return self.n_in == self.n_out

    # -- layout: (P, n) vectors <-> full tensors, one lane per token -----------------------
    def _lanes(self, V: torch.Tensor, shape) -> torch.Tensor:
        """``(K, P, n)`` -> ``(K * m, B, *shape)``: each token's vectors alone at its token."""
        K = V.shape[0]
        if self.tokens is None:
            return V.reshape(K, self.B, *shape)
        m, T = len(self.tokens), shape[0]
        full = V.new_zeros(K, m, self.B, T, shape[1])
        idx = torch.arange(m, device=V.device)
        tok = torch.tensor(self.tokens, device=V.device)
        full[:, idx, :, tok] = V.reshape(K, m, self.B, shape[1]).transpose(0, 1)
        return full.reshape(K * m, self.B, T, shape[1])

    def _unlanes(self, G: torch.Tensor, K: int) -> torch.Tensor:
        """Inverse of :meth:`_lanes` on the result: ``(K * m, B, ...)`` -> ``(K, P, n)``."""
        if self.tokens is None:
            return G.reshape(K, self.problems, -1)
        m = len(self.tokens)
        G = G.reshape(K, m, self.B, *G.shape[2:])
        tok = torch.tensor(self.tokens, device=G.device)
        picked = G[:, torch.arange(m, device=G.device), :, tok]  # (m, K, B, d)
        return picked.transpose(0, 1).reshape(K, self.problems, -1)

    # -- products --------------------------------------------------------------------------
    def rmatvec(self, V: torch.Tensor) -> torch.Tensor:
        """``J^T v`` for ``V`` of shape ``(K, P, n_out)``: returns ``(K, P, n_in)``."""
        if self._vjp is None:
            _, self._vjp = torch.func.vjp(self.fn, self.x)
        K = V.shape[0]
        lanes = self._lanes(V.to(self.y.dtype), self.y.shape[1:])
        G = _quiet(torch.func.vmap(lambda v: self._vjp(v)[0]))(lanes)
        return self._unlanes(G.detach(), K)

    def matvec(self, W: torch.Tensor) -> torch.Tensor:
        """``J w`` for ``W`` of shape ``(K, P, n_in)``: returns ``(K, P, n_out)``."""
        K = W.shape[0]
        lanes = self._lanes(W.to(self.x.dtype), self.x.shape[1:])
        G = _quiet(torch.func.vmap(lambda w: torch.func.jvp(self.fn, (self.x,), (w,))[1]))(lanes)
        return self._unlanes(G.detach(), K)

    def dense(self, *, chunk: int = 256) -> torch.Tensor:
        """The Jacobian ``(P, n_out, n_in)``, one ``vjp`` per output coordinate, ``chunk`` at a time."""
        eye = torch.eye(self.n_out, dtype=self.y.dtype, device=self.y.device)
        rows = []
        for lo in range(0, self.n_out, chunk):
            E = eye[lo : lo + chunk, None, :].expand(-1, self.problems, -1)
            rows.append(self.rmatvec(E))
        return torch.cat(rows).permute(1, 0, 2)


@dataclass(frozen=True, eq=False)
class Spectrum:
    """Values per problem and the bound on their error.

    ``values`` ``(P, k)``; ``accuracy`` ``(P, k)``: the Krylov residual bound on each
    value (0 for a dense computation: rounding only); ``method`` says how they were found.
    """

    values: np.ndarray
    accuracy: np.ndarray
    method: str


def _check_steps(steps, n: int, k: int) -> int:
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ParameterError(f"steps must be a positive integer, got {steps!r}")
    return max(min(steps, n), min(k, n))


def _orthonormalise(w: torch.Tensor, Q: torch.Tensor, j: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Twice Gram–Schmidt of ``w`` ``(P, n)`` against ``Q[:, :j]``; returns (w, coefficients)."""
    h = torch.zeros(w.shape[0], j, dtype=w.dtype, device=w.device)
    for _ in range(2):
        c = torch.einsum("pjn,pn->pj", Q[:, :j], w)
        w = w - torch.einsum("pjn,pj->pn", Q[:, :j], c)
        h = h + c
    return w, h


def _next_basis(w: torch.Tensor, Q: torch.Tensor, j: int, gen: torch.Generator) -> tuple:
    """Normalise ``w``; where it vanished (an invariant subspace), restart with a random vector
    orthogonal to the basis and record a zero coupling, which keeps the projection exact."""
    norm = w.norm(dim=-1)
    scale = Q[:, :j].abs().amax(dim=(1, 2)) if j else norm
    dead = norm <= 1e3 * torch.finfo(w.dtype).eps * torch.clamp(scale, min=1.0)
    if bool(dead.any()):
        r = torch.randn(w.shape, generator=gen, dtype=w.dtype).to(w.device)
        r, _ = _orthonormalise(r, Q, j)
        w = torch.where(dead[:, None], r, w)
        norm = torch.where(dead, torch.zeros_like(norm), norm)
    return w / w.norm(dim=-1, keepdim=True), norm


def _start(P: int, n: int, like: torch.Tensor, seed: int) -> tuple[torch.Tensor, torch.Generator]:
    gen = torch.Generator().manual_seed(seed)
    v = torch.randn(P, n, generator=gen, dtype=like.dtype).to(like.device)
    return v / v.norm(dim=-1, keepdim=True), gen


def _orth(Y: torch.Tensor) -> torch.Tensor:
    """Orthonormal columns per problem: ``(P, n, m)`` -> ``(P, n, m)`` (reduced QR)."""
    return torch.linalg.qr(Y).Q


def top_singular_values(op: LayerOperator, k: int = 1, *, steps: int = 40, seed: int = 0) -> Spectrum:
    """The ``k`` largest singular values of ``J`` per problem, descending.

    Randomised block Krylov iteration on ``J^T J`` (Musco & Musco 2015): a block of
    ``b = max(k + 2, 8)`` random vectors and ``steps // b`` products with ``J^T J``, each on the
    whole block at once (wide matrix products through the layer), then Rayleigh–Ritz on the
    Krylov space of dimension ``m = b (steps // b + 1)``, whose ``J Q`` and ``J^T J Q`` come
    from the products already made. ``accuracy``: the Ritz residual ``r`` puts an eigenvalue of
    ``J^T J`` within ``r`` of ``sigma^2``, so a singular value of ``J`` lies within ``r / sigma``
    of ``sigma``. When ``m >= n`` the space is everything and the values are exact.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ParameterError(f"steps must be a positive integer, got {steps!r}")
    n = op.n_in
    k = min(k, n)
    b = min(n, max(k + 2, 8))
    q = max(1, steps // b)
    if b * (q + 1) >= n:  # the Krylov space would be the whole space: take it
        Q = torch.eye(n, dtype=op.x.dtype, device=op.x.device).expand(op.problems, n, n).contiguous()
        Z = op.matvec(Q.permute(2, 0, 1))  # J Q, (m, P, n_out)
        JQ, JtJQ = Z.permute(1, 2, 0).double(), None
    else:
        gen = torch.Generator().manual_seed(seed)
        Y = _orth(torch.randn(op.problems, n, b, generator=gen, dtype=op.x.dtype).to(op.x.device))
        Ys, JYs, JtJYs = [], [], []
        for i in range(q + 1):
            W = op.matvec(Y.permute(2, 0, 1))  # J Y
            U = op.rmatvec(W)  # J^T J Y
            Ys.append(Y)
            JYs.append(W.permute(1, 2, 0))
            JtJYs.append(U.permute(1, 2, 0))
            if i < q:
                Y = _orth(U.permute(1, 2, 0))
        # Q = K R^-1 with K the Krylov blocks: J Q and J^T J Q follow from the products already
        # made (no further pass through the layer), in float64
        Q, R = torch.linalg.qr(torch.cat(Ys, dim=2).double())
        diag = R.diagonal(dim1=-2, dim2=-1).abs()
        if bool((diag <= 1e-10 * diag.amax(-1, keepdim=True)).any()):  # dependent blocks: recompute
            Q = _orth(torch.cat(Ys, dim=2)).double()
            Z = op.matvec(Q.to(op.x.dtype).permute(2, 0, 1))
            JQ, JtJQ = Z.permute(1, 2, 0).double(), op.rmatvec(Z).permute(1, 2, 0).double()
        else:
            solve = torch.linalg.solve_triangular
            JQ = solve(R, torch.cat(JYs, dim=2).double(), upper=True, left=False)
            JtJQ = solve(R, torch.cat(JtJYs, dim=2).double(), upper=True, left=False)
    G = JQ.transpose(1, 2) @ JQ  # Q^T J^T J Q
    theta, V = torch.linalg.eigh(G)
    theta, V = theta.flip(-1)[:, :k], V.flip(-1)[:, :, :k]
    sigma = theta.clamp(min=0).sqrt()
    exact = JtJQ is None
    if exact:
        acc = torch.zeros_like(sigma)
    else:
        resid = (JtJQ @ V - (Q.double() @ V) * theta[:, None, :]).norm(dim=1)
        acc = resid / torch.where(sigma > 0, sigma, torch.ones_like(sigma))
    method = "dense (full Krylov space)" if exact else f"block Krylov (block {b}, dimension {Q.shape[-1]})"
    return Spectrum(sigma.cpu().numpy(), acc.cpu().numpy(), method)


def _arnoldi(op: LayerOperator, steps: int, seed: int) -> tuple[np.ndarray, int]:
    """Arnoldi on ``J^T`` (same eigenvalues as ``J``; ``vjp`` only): the ``(P, s + 1, s)``
    Hessenberg matrix in float64 and ``s``."""
    if not op.square:
        raise ShapeError(f"no eigenvalues: the layer maps {op.n_in} numbers to {op.n_out}")
    s = _check_steps(steps, op.n_in, 1)
    v, gen = _start(op.problems, op.n_in, op.x, seed)
    Q = v.new_zeros(op.problems, s + 1, op.n_in)
    Q[:, 0] = v
    H = v.new_zeros(op.problems, s + 1, s)
    for j in range(s):
        w, h = _orthonormalise(op.rmatvec(Q[None, :, j])[0], Q, j + 1)
        H[:, : j + 1, j] = h
        Q[:, j + 1], H[:, j + 1, j] = _next_basis(w, Q, j + 1, gen)
    return H.double().cpu().numpy(), s


def spectral_radius(op: LayerOperator, *, steps: int = 40, seed: int = 0) -> Spectrum:
    """Largest ``|eigenvalue|`` of ``J`` per problem (``values`` ``(P, 1)``), by Arnoldi.

    ``accuracy`` is the Ritz residual ``h_{s+1,s} |y_last|`` of the dominant Ritz pair (a
    backward-error bound; 0 when the Krylov space is the whole space).
    """
    H, s = _arnoldi(op, steps, seed)
    lam, Y = np.linalg.eig(H[:, :s, :])
    top = np.argmax(np.abs(lam), axis=1)
    rows = np.arange(op.problems)
    exact = s >= op.n_in
    resid = np.zeros(op.problems) if exact else np.abs(H[:, s, s - 1] * Y[rows, -1, top])
    return Spectrum(
        np.abs(lam[rows, top])[:, None], resid[:, None], "arnoldi (exact)" if exact else "arnoldi"
    )


def ritz_values(op: LayerOperator, *, steps: int = 40, seed: int = 0) -> np.ndarray:
    """All Ritz values of ``J`` per problem: ``(P, s)`` complex.

    With ``steps >= n`` these are the eigenvalues of ``J``; below it, a sampled spectrum whose
    extreme values converge first.
    """
    H, s = _arnoldi(op, steps, seed)
    return np.linalg.eigvals(H[:, :s, :])


def hutchinson_trace(op: LayerOperator, *, probes: int = 16, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Hutchinson estimate of ``tr J`` per problem and its standard error: two ``(P,)`` arrays.

    ``z^T (J^T z)`` with Rademacher ``z`` (``probes`` of them, one batched ``vjp``).
    """
    if not op.square:
        raise ShapeError(f"no trace: the layer maps {op.n_in} numbers to {op.n_out}")
    if isinstance(probes, bool) or not isinstance(probes, int) or probes < 2:
        raise ParameterError(f"probes must be an integer >= 2, got {probes!r}")
    gen = torch.Generator().manual_seed(seed)
    Z = (torch.randint(0, 2, (probes, op.problems, op.n_in), generator=gen) * 2 - 1).to(op.x)
    est = (Z * op.rmatvec(Z)).sum(-1).double().cpu().numpy()
    return est.mean(0), est.std(0, ddof=1) / math.sqrt(probes)
