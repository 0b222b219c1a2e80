"""Each layer's Jacobian as a matrix-free operator, and the Krylov methods that read it.

A layer maps its input state ``x`` (one sample: ``n_in`` numbers) to its output state ``y``.
:class:`LayerOperator` wraps ``J = dy/dx`` at the recorded input as products only: ``J^T v``
by reverse mode (``vjp``) and ``J w`` as the transpose of that linear map (a reverse pass
through the recorded reverse pass; forward-mode ``jvp`` where that is unavailable), batched
over the samples (they are independent: the batch axis is the first axis) and, with ``vmap``, over
several vectors at once. Nothing of size ``n x n`` is formed unless asked (:meth:`dense`).

Causal sequence layers (state ``(B, T, d)``, token ``t`` of the output depends on tokens
``<= t`` of the input) have a block lower-triangular Jacobian: its eigenvalues are those of
the diagonal blocks ``D_t = dy_t / dx_t`` (``d x d``). With ``tokens`` given, the operator
*is* those diagonal blocks of the sampled tokens: a tangent placed at token ``t`` alone gives
``D_t w`` at output token ``t`` (earlier tokens do not move), and a cotangent at output token
``t`` alone gives ``D_t^T v`` at input token ``t`` (later outputs carry no cotangent). So each
sampled token is one independent ``d``-dimensional problem, ``T / len(tokens)`` times less work
than the whole-sequence Jacobian and exact for the sampled blocks; where the layer allows it,
token ``t``'s products run on the prefix ``x[:, :t + 1]`` alone (:class:`LayerOperator`).

Methods (all batched over the independent problems, float64 when the model is float64):

* :func:`top_singular_values`: Golub–Kahan–Lanczos bidiagonalisation (``J^T J`` implicitly);
* :func:`spectral_radius`: Arnoldi on ``J^T`` (same eigenvalues as ``J``), needing only ``vjp``;
* :func:`hutchinson_trace`: ``E[z^T J z]`` with Rademacher probes;
* :meth:`LayerOperator.dense`: the Jacobian itself, for small ``n`` (one ``vjp`` per row).

A Krylov space as large as the problem makes the values exact up to rounding; below that each
value comes with its residual bound (``accuracy``), and the iterations stop once that bound is
below ``tol`` times the value (tested every 8 steps).
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
            # a DeprecationWarning up to torch 2.13, a FutureWarning from 2.14
            warnings.filterwarnings("ignore", message=".*torch.jit.script.*")
            return fn(*args)

    return wrapped


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]


def math_attention(fn):
    """``fn`` with ``scaled_dot_product_attention`` on its math backend: plain differentiable ops,
    with the forward-mode AD and double backward that the fused CPU kernels lack."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def wrapped(x):
        with sdpa_kernel([SDPBackend.MATH]):
            return fn(x)

    wrapped.math_attention = True
    return wrapped


class _Products:
    """``v -> J^T v`` and ``w -> J w`` of ``fn`` at ``x`` (``y = fn(x)``), on lanes ``(K, *x.shape)``."""

    def __init__(self, fn: Callable, x: torch.Tensor, y: torch.Tensor):
        self.fn, self.x, self.y = fn, x, y
        self._vjp = self._jvp = None
        self.mode = None

    def transpose(self):
        """The recorded ``v -> J^T v`` (one reverse pass through the layer's saved graph)."""
        if self._vjp is None:
            _, self._vjp = torch.func.vjp(self.fn, self.x)
        return self._vjp

    def forward(self):
        """``w -> J w`` as the transpose of the linear map ``v -> J^T v``: a reverse pass through
        the reverse pass already recorded (no new forward, and on CPU markedly cheaper than
        forward-mode AD). A layer whose backward is not itself differentiable (a custom
        ``autograd.Function`` marked ``once_differentiable``) may give a silently wrong transpose,
        so the identity ``<u, J w> = <J^T u, w>`` is checked on random ``u, w`` first; where it
        fails, or double backward raises, forward-mode ``jvp`` is used."""
        if self._jvp is None:
            for attempt in range(2):
                vjp = self.transpose()
                try:
                    _, jt = torch.func.vjp(lambda v, vjp=vjp: vjp(v)[0], torch.zeros_like(self.y))
                    ok = self.transposes(vjp, jt)
                except (RuntimeError, NotImplementedError):
                    ok = False
                if ok:
                    self._jvp, self.mode = (lambda w, jt=jt: jt(w)[0]), "transpose of vjp"
                    break
                jvp = lambda w, fn=self.fn: torch.func.jvp(fn, (self.x,), (w,))[1]  # noqa: E731
                try:
                    _quiet(jvp)(torch.zeros_like(self.x))
                    self._jvp, self.mode = jvp, "jvp"
                    break
                except (RuntimeError, NotImplementedError) as exc:
                    if attempt or getattr(self.fn, "math_attention", False):
                        raise ParameterError(
                            "the layer supports neither forward-mode AD nor a differentiable backward "
                            f"({_first_line(exc)}): J w cannot be formed; run inspect with causal=False and "
                            "dense_max at least the state size (reverse mode only)"
                        ) from None
                    # fused attention kernels (CPU flash sdpa) have neither: rerun on the math backend
                    self.fn, self._vjp = math_attention(self.fn), None
            if getattr(self.fn, "math_attention", False):
                self.mode += " (sdpa math backend)"
        return self._jvp

    def transposes(self, vjp, jt) -> bool:
        """``<u, jt(w)> == <vjp(u), w>`` per sample, to rounding, for one random pair."""
        gen = torch.Generator().manual_seed(12345)
        u = torch.randn(self.y.shape, generator=gen, dtype=self.y.dtype).to(self.y.device)
        w = torch.randn(self.x.shape, generator=gen, dtype=self.x.dtype).to(self.x.device)
        Jw, Jtu = jt(w)[0].detach(), vjp(u)[0].detach()
        B = self.x.shape[0]
        a = (u * Jw).reshape(B, -1).sum(1).double()
        b = (Jtu * w).reshape(B, -1).sum(1).double()
        scale = Jtu.reshape(B, -1).norm(dim=1) * w.reshape(B, -1).norm(dim=1)
        scale = scale + u.reshape(B, -1).norm(dim=1) * Jw.reshape(B, -1).norm(dim=1)
        eps = torch.finfo(self.x.dtype).eps
        return bool(((a - b).abs() <= math.sqrt(eps) * scale.double()).all())

    @staticmethod
    def _each(f, lanes: torch.Tensor) -> torch.Tensor:
        """``f`` on every lane: a single one directly, several batched by ``vmap``."""
        if lanes.shape[0] == 1:
            return _quiet(f)(lanes[0])[None]
        return _quiet(torch.func.vmap(f))(lanes)

    def rvec(self, lanes: torch.Tensor) -> torch.Tensor:
        vjp = self.transpose()
        return self._each(lambda v: vjp(v)[0], lanes.to(self.y.dtype)).detach()

    def fvec(self, lanes: torch.Tensor) -> torch.Tensor:
        return self._each(self.forward(), lanes.to(self.x.dtype)).detach()


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
    prefix : bool
        With ``tokens``: where the layer accepts a shorter sequence and is causal, compute the
        block of token ``t`` on the prefix ``x[:, :t + 1]`` alone (see Notes).
    local : callable, optional
        With ``tokens``: ``local(tokens)`` gives candidate token-local functions of the layer
        (:mod:`~depthdyn.nn.analysis.local`); the first that reproduces the recording and a
        random whole-sequence product computes every block on the sampled tokens alone.

    Notes
    -----
    Vectors are shaped ``(P, n)`` with ``P`` independent problems: ``P = B`` (one per
    sample, ``n`` the flattened state), or ``P = len(tokens) * B`` (token-major, ``n = d``).

    A product with the block ``D_t`` is a pass through the whole sequence (autograd computes
    every token, the zero tangents included). The output of a causal layer at tokens ``<= t``
    does not depend on later tokens, so where the layer called on the prefix ``x[:, :t + 1]``
    gives the recorded outputs there and the same ``D_t^T v`` on a random ``v``, token ``t``'s
    products run on that prefix: ``t + 1`` tokens instead of ``T`` (about half the work for
    evenly spaced tokens). A layer whose other arguments are tied to the length ``T`` (masks,
    position tables) fails that check and keeps whole-sequence products (``prefixed`` False).
    A verified token-local function (``token_local`` True) goes further: all sampled tokens in
    one call as one-token sequences, at the cost of those tokens alone.
    """

    def __init__(self, fn: Callable, x: torch.Tensor, *, tokens=None, prefix: bool = True, local=None):
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
        self._full = _Products(fn, self.x, self.y)
        self._prefix = self._local = None
        if self.tokens is not None and local is not None:
            self._local = self._token_local(local)
        if not self._local and prefix and self.tokens is not None:
            self._prefix = self._prefixes()

    @property
    def square(self) -> bool:
        return self.n_in == self.n_out

    @property
    def prefixed(self) -> bool:
        """Whether the token blocks are computed on sequence prefixes (see Notes)."""
        return self._prefix is not None

    @property
    def token_local(self) -> bool:
        """Whether the token blocks are computed on the sampled tokens alone (see Notes)."""
        return bool(self._local)

    @property
    def forward_mode(self) -> str | None:
        """How ``J w`` is computed (known after the first one): ``"transpose of vjp"`` or ``"jvp"``."""
        pieces = list(self._local.values()) if self._local else self._prefix or [self._full]
        modes = {p.mode for p in pieces if p.mode is not None}
        return None if not modes else "jvp" if "jvp" in modes else modes.pop()

    def _prefixes(self):
        """One :class:`_Products` per sampled token on its prefix, or None where the check fails."""
        T, eps = self.x.shape[1], torch.finfo(self.y.dtype).eps
        tol = 1e3 * eps * (1.0 + float(self.y.abs().max()))
        pieces = []
        for t in self.tokens:
            if t == T - 1:
                pieces.append(self._full)
                continue
            xs = self.x[:, : t + 1]
            try:  # a layer bound to length-T arguments raises here (any error): whole sequence
                with torch.no_grad():
                    ys = self.fn(xs)
            except Exception:  # noqa: BLE001
                return None
            if not isinstance(ys, torch.Tensor) or ys.shape != xs.shape:
                return None
            if float((ys - self.y[:, : t + 1]).abs().max()) > tol:
                return None
            pieces.append(_Products(self.fn, xs, ys))
        self._prefix = pieces
        gen = torch.Generator().manual_seed(54321)
        V = torch.randn(1, self.problems, self.n_out, generator=gen, dtype=self.y.dtype).to(self.y.device)
        short, whole = self.rmatvec(V), self._whole_rmatvec(V)
        self._prefix = None
        return pieces if self._agrees(short, whole, V) else None

    def _agrees(self, short: torch.Tensor, whole: torch.Tensor, V: torch.Tensor) -> bool:
        eps = torch.finfo(self.y.dtype).eps
        scale = float(whole.abs().max()) + float(V.abs().max())
        return float((short - whole).abs().max()) <= 1e3 * eps * scale

    def _entries(self, t: torch.Tensor, lanes: int = 1) -> torch.Tensor:
        """``(B, T, d)`` -> the sampled tokens of each sample as a sequence of their own,
        ``lanes`` times over: ``(B, lanes * m, d)``, entry ``k * m + i`` token ``t_i`` (the layout
        of the token-local functions)."""
        tok = torch.tensor(self.tokens, device=t.device)
        return t[:, tok].repeat(1, lanes, 1)

    def _to_entries(self, V: torch.Tensor) -> torch.Tensor:
        """``(K, P, d)`` vectors (token-major problems) -> ``(B, K * m, d)``."""
        K, m = V.shape[0], len(self.tokens)
        return V.reshape(K, m, self.B, -1).permute(2, 0, 1, 3).reshape(self.B, K * m, -1)

    def _from_entries(self, E: torch.Tensor, K: int) -> torch.Tensor:
        m = len(self.tokens)
        return E.reshape(self.B, K, m, -1).permute(1, 2, 0, 3).reshape(K, self.problems, -1)

    def _token_local(self, local) -> dict | None:
        """The first candidate of ``local(tokens)`` (token-local functions, see
        :mod:`~depthdyn.nn.analysis.local`) that gives the recorded outputs at the sampled
        tokens and the whole-sequence ``J^T v`` on a random ``v``; None where none does.

        Products with ``K`` vectors at once run on ``K`` copies of the entries in one sequence
        (:meth:`_piece`): no entry moves another, so the layer's matrix products take all vectors
        in one pass, where ``vmap`` over the vectors would repeat the pass."""
        X, Y = self._entries(self.x), self._entries(self.y)
        eps = torch.finfo(self.y.dtype).eps
        tol = 1e3 * eps * (1.0 + float(self.y.abs().max()))
        gen = torch.Generator().manual_seed(54321)
        V = torch.randn(1, self.problems, self.n_out, generator=gen, dtype=self.y.dtype).to(self.y.device)
        whole = None
        for which, fn in enumerate(local(self.tokens)):
            # the math backend of attention: plain differentiable ops (the fused CPU kernel's
            # backward is not differentiable), and for one query per row it saves nothing
            fn = math_attention(fn)
            try:  # a candidate that does not fit this layer may raise anything: the next one is tried
                with torch.no_grad():
                    Ys = fn(X)
                if not isinstance(Ys, torch.Tensor) or Ys.shape != X.shape:
                    continue
                if float((Ys - Y).abs().max()) > tol:
                    continue
                piece = _Products(fn, X, Ys)
                short = self._from_entries(piece.rvec(self._to_entries(V)[None])[0], 1)
            except Exception:  # noqa: BLE001
                continue
            whole = self._whole_rmatvec(V) if whole is None else whole
            if self._agrees(short, whole, V):
                self._make = lambda K, local=local, which=which: math_attention(local(self.tokens * K)[which])
                self._full._vjp = None  # the whole-sequence graph is not needed again: free it
                return {1: piece}
        return None

    def _piece(self, K: int) -> _Products:
        """The token-local products of ``K`` copies of the entries: one vector's is kept, others
        (probes, dense columns) are recorded when asked, so that their graphs do not pile up."""
        if K in self._local:
            return self._local[K]
        fn, X = self._make(K), self._entries(self.x, K)
        with torch.no_grad():
            piece = _Products(fn, X, fn(X))
        return piece

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

    def _per_prefix(self, V: torch.Tensor, product) -> torch.Tensor:
        """``(K, P, d)`` -> ``(K, P, d)``, token ``t``'s vectors through its prefix's products."""
        K, d = V.shape[0], V.shape[2]
        Vt = V.reshape(K, len(self.tokens), self.B, d)
        out = []
        for i, (t, piece) in enumerate(zip(self.tokens, self._prefix, strict=True)):
            lanes = V.new_zeros(K, self.B, t + 1, d)
            lanes[:, :, t] = Vt[:, i]
            out.append(product(piece, lanes)[:, :, t])
        return torch.stack(out, 1).reshape(K, self.problems, d)

    # -- products --------------------------------------------------------------------------
    def _whole_rmatvec(self, V: torch.Tensor) -> torch.Tensor:
        lanes = self._lanes(V.to(self.y.dtype), self.y.shape[1:])
        return self._unlanes(self._full.rvec(lanes), V.shape[0])

    def _per_row(self, V: torch.Tensor, product) -> torch.Tensor:
        K = V.shape[0]
        return self._from_entries(product(self._piece(K), self._to_entries(V)[None])[0], K)

    def rmatvec(self, V: torch.Tensor) -> torch.Tensor:
        """``J^T v`` for ``V`` of shape ``(K, P, n_out)``: returns ``(K, P, n_in)``."""
        if self._local:
            return self._per_row(V.to(self.y.dtype), _Products.rvec)
        if self._prefix is not None:
            return self._per_prefix(V.to(self.y.dtype), _Products.rvec)
        return self._whole_rmatvec(V)

    def matvec(self, W: torch.Tensor) -> torch.Tensor:
        """``J w`` for ``W`` of shape ``(K, P, n_in)``: returns ``(K, P, n_out)``."""
        if self._local:
            return self._per_row(W.to(self.x.dtype), _Products.fvec)
        if self._prefix is not None:
            return self._per_prefix(W.to(self.x.dtype), _Products.fvec)
        lanes = self._lanes(W.to(self.x.dtype), self.x.shape[1:])
        return self._unlanes(self._full.fvec(lanes), W.shape[0])

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
    """Gram–Schmidt of ``w`` ``(P, n)`` against ``Q[:, :j]``, repeated once where a problem's
    vector lost more than ``1 - 1/sqrt(2)`` of its norm (the Daniel–Gragg–Kaufman–Stewart test:
    one pass is then not enough for orthogonality to rounding); returns (w, coefficients)."""
    h = torch.zeros(w.shape[0], j, dtype=w.dtype, device=w.device)
    for _ in range(2):
        before = w.norm(dim=-1)
        # bmm reads the basis in place (einsum copies the strided slice on every call)
        c = torch.bmm(Q[:, :j], w[:, :, None])[:, :, 0]
        w = w - torch.bmm(c[:, None, :], Q[:, :j])[:, 0]
        h = h + c
        if bool((w.norm(dim=-1) > before / math.sqrt(2)).all()):
            break
    return w, h


def _next_basis(w: torch.Tensor, Q: torch.Tensor, j: int, gen: torch.Generator) -> tuple:
    """Normalise ``w``; where it vanished (an invariant subspace), restart with a random vector
    orthogonal to the basis and record a zero coupling, which keeps the projection exact."""
    norm = w.norm(dim=-1)
    # the basis is orthonormal (entries at most 1): the threshold is absolute past the first vector
    scale = torch.clamp(norm, min=1.0) if j == 0 else torch.ones_like(norm)
    dead = norm <= 1e3 * torch.finfo(w.dtype).eps * scale
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


def _check_tol(tol) -> float:
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 <= tol < 1:
        raise ParameterError(f"tol must be a number in [0, 1), got {tol!r}")
    return float(tol)


def _checkpoint(j: int, s: int, every: int = 8) -> bool:
    """Test convergence after step ``j`` (0-based) every ``every`` steps and at the last (a
    test costs a small dense SVD / eigenproblem per problem: not after every step)."""
    return j + 1 == s or (j + 1) % every == 0


def _full_space(op: LayerOperator, k: int) -> Spectrum:
    """Every ``J e_i`` at once: the exact singular values (the Krylov space is everything)."""
    n = op.n_in
    Q = torch.eye(n, dtype=op.x.dtype, device=op.x.device).expand(op.problems, n, n).contiguous()
    JQ = op.matvec(Q.permute(2, 0, 1)).permute(1, 2, 0).double()  # (P, n_out, n) = J
    sigma = torch.linalg.svdvals(JQ)[:, :k]
    return Spectrum(sigma.cpu().numpy(), np.zeros(tuple(sigma.shape)), "dense (full Krylov space)")


def top_singular_values(
    op: LayerOperator, k: int = 1, *, steps: int = 100, tol: float = 1e-3, seed: int = 0
) -> Spectrum:
    """The ``k`` largest singular values of ``J`` per problem, descending.

    Golub–Kahan–Lanczos bidiagonalisation with full reorthogonalisation, batched over the
    problems: step ``j`` makes one ``J v`` (``jvp``) and one ``J^T u`` (``vjp``) for every
    problem at once and extends ``J V_j = U_j B_j`` with ``B_j`` upper bidiagonal. The singular
    values of ``B_j`` are those of ``U_j^T J V_j``, so each is a lower bound of the
    corresponding one of ``J`` (interlacing), and for each Ritz triplet ``(sigma, x, y)`` of
    ``B_j``, ``J V y = sigma U x`` holds exactly while ``J^T U x - sigma V y`` has norm
    ``r = beta_j |x_j|``: a singular value of ``J`` lies within ``r`` of ``sigma``. ``accuracy``
    is that ``r`` (absolute). Every 8 steps the iteration stops once ``r <= tol * sigma`` for the
    top ``k`` of every problem (``tol=0``: always ``steps`` steps); a single-vector Krylov space
    of ``J^T J`` reaches a given accuracy in far fewer products than a block one of the same
    dimension. With ``steps >= n`` the whole space is taken at once and the values are exact.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ParameterError(f"steps must be a positive integer, got {steps!r}")
    tol = _check_tol(tol)
    n = op.n_in
    k = min(k, n, op.n_out)
    s = max(steps, k)
    if s >= min(n, op.n_out):
        return _full_space(op, k)
    P = op.problems
    v, gen = _start(P, n, op.x, seed)
    V = v.new_zeros(P, s + 1, n)
    U = v.new_zeros(P, s, op.n_out)
    alpha = torch.zeros(P, s, dtype=torch.float64)
    beta = torch.zeros(P, s, dtype=torch.float64)
    V[:, 0] = v
    u = op.matvec(v[None])[0]
    for j in range(s):
        if j:
            u = u - beta[:, j - 1, None].to(u) * U[:, j - 1]
        u, _ = _orthonormalise(u, U, j)
        U[:, j], a = _next_basis(u, U, j, gen)
        alpha[:, j] = a.double().cpu()
        w = op.rmatvec(U[None, :, j])[0] - alpha[:, j, None].to(u) * V[:, j]
        w, _ = _orthonormalise(w, V, j + 1)
        V[:, j + 1], b = _next_basis(w, V, j + 1, gen)
        beta[:, j] = b.double().cpu()
        if _checkpoint(j, s) and j + 1 >= k:
            B = torch.diag_embed(alpha[:, : j + 1]) + torch.diag_embed(beta[:, :j], offset=1)
            # left singular vectors of B as eigenvectors of B B^T: 3x cheaper than an SVD, and
            # the top k (all that is kept) lose nothing by the squaring (relative error eps s_1^2/s_k^2)
            ev, X = torch.linalg.eigh(B @ B.mT)
            sig, X = ev.flip(-1)[:, :k].clamp(min=0).sqrt(), X.flip(-1)
            resid = beta[:, j, None] * X[:, j, :k].abs()
            if j + 1 == s or bool((resid <= tol * sig).all()):
                break
        u = op.matvec(V[None, :, j + 1])[0]
    return Spectrum(sig.numpy(), resid.numpy(), f"Golub-Kahan-Lanczos ({j + 1} steps, tol {tol:g})")


def _arnoldi(op: LayerOperator, steps: int, seed: int, tol: float = 0.0) -> tuple[np.ndarray, int]:
    """Arnoldi on ``J^T`` (same eigenvalues as ``J``; ``vjp`` only): the ``(P, s + 1, s)``
    Hessenberg matrix in float64 and the number of steps ``s`` taken. With ``tol > 0`` and a
    Krylov space short of the whole space it stops (tested every 8 steps) once the dominant
    Ritz value of every problem has a residual ``<= tol`` times its modulus."""
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
        if tol > 0 and s < op.n_in and j + 1 < s and _checkpoint(j, s):
            theta, resid = _dominant(H[:, : j + 2, : j + 1].double().cpu().numpy(), j + 1)
            if np.all(resid <= tol * theta):
                return H[:, : j + 2, : j + 1].double().cpu().numpy(), j + 1
    return H.double().cpu().numpy(), s


def _dominant(H: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
    """``|theta|`` of the largest Ritz value of each problem and its residual ``h_{s+1,s} |y_s|``.

    Eigenvalues only (half the cost of eigenvectors too, and this runs at every checkpoint),
    then the one eigenvector needed by two steps of inverse iteration at that Ritz value.
    """
    # torch's LAPACK: numpy's threaded BLAS crawls on a shared machine (10-60x here)
    Hs = torch.from_numpy(np.ascontiguousarray(H[:, :s, :]))
    lam = torch.linalg.eigvals(Hs)
    theta = lam[torch.arange(lam.shape[0]), lam.abs().argmax(dim=1)]
    y = _eigenvector(Hs, theta)
    return theta.abs().numpy(), np.abs(H[:, s, s - 1] * y[:, -1].numpy())


def _eigenvector(Hs: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Unit eigenvectors ``(P, s)`` of ``Hs`` ``(P, s, s)`` for its eigenvalues ``theta``: inverse
    iteration with the shift moved off ``theta`` by ~1e-10 relative, so that the LU has no exact
    zero pivot; where that still fails (not finite), the eigenvector from a full ``eig``."""
    P, s = Hs.shape[0], Hs.shape[1]
    shift = theta * (1 + 1e-10) + 1e-10 * theta.abs().clamp(min=1)
    M = Hs.to(theta.dtype) - shift[:, None, None] * torch.eye(s, dtype=theta.dtype)
    y = torch.ones(P, s, 1, dtype=theta.dtype) / math.sqrt(s)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # MKL's threaded complex LU returned invalid pivots (0) at s = 152
    try:
        LU, piv, info = torch.linalg.lu_factor_ex(M)
    finally:
        torch.set_num_threads(threads)
    bad = (info != 0) | (piv < 1).any(dim=1) | (piv > s).any(dim=1)
    LU = torch.where(bad[:, None, None], torch.eye(s, dtype=LU.dtype), LU)  # their solve is redone below
    piv = torch.where(bad[:, None], torch.arange(1, s + 1, dtype=piv.dtype), piv)
    for _ in range(2):
        y = torch.linalg.lu_solve(LU, piv, y)
        y = y / torch.linalg.vector_norm(y, dim=1, keepdim=True)
    y = y[..., 0]
    bad = bad | ~torch.isfinite(y).all(dim=1)
    if bool(bad.any()):
        lam, Y = torch.linalg.eig(Hs[bad])
        top = (lam - theta[bad, None]).abs().argmin(dim=1)
        y[bad] = Y[torch.arange(Y.shape[0]), :, top]
    return y


def spectral_radius(op: LayerOperator, *, steps: int = 100, tol: float = 1e-3, seed: int = 0) -> Spectrum:
    """Largest ``|eigenvalue|`` of ``J`` per problem (``values`` ``(P, 1)``), by Arnoldi.

    Arnoldi on ``J^T`` (``vjp`` only) with full reorthogonalisation, at most ``steps`` steps,
    stopping (tested every 8 steps) once the dominant Ritz value of every problem has a
    residual ``h_{s+1,s} |y_s| <= tol * |theta|`` (``tol=0``: always ``steps``; ``steps >= n``:
    always the whole space, exact). ``accuracy`` is
    that residual: a backward-error bound (``theta`` is an eigenvalue of a matrix within it of
    ``J``), which a non-normal Jacobian can amplify; 0 when the Krylov space is the whole space.
    """
    tol = _check_tol(tol)
    H, s = _arnoldi(op, steps, seed, tol)
    theta, resid = _dominant(H, s)
    exact = s >= op.n_in
    if exact:
        resid = np.zeros(op.problems)
    return Spectrum(theta[:, None], resid[:, None], "arnoldi (exact)" if exact else f"arnoldi ({s} steps)")


def ritz_values(op: LayerOperator, *, steps: int = 40, seed: int = 0) -> np.ndarray:
    """All Ritz values of ``J`` per problem: ``(P, s)`` complex.

    With ``steps >= n`` these are the eigenvalues of ``J``; below it, a sampled spectrum whose
    extreme values converge first.
    """
    H, s = _arnoldi(op, steps, seed)
    return torch.linalg.eigvals(torch.from_numpy(np.ascontiguousarray(H[:, :s, :]))).numpy()


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
