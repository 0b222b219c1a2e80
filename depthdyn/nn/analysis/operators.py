"""Each layer's Jacobian as a matrix-free operator.

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

The methods that read the operator (Lanczos, Arnoldi, Hutchinson) are in :mod:`.krylov`;
:meth:`LayerOperator.dense` gives the Jacobian itself, for small ``n`` (one ``vjp`` per row).
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Callable

import torch

from ...errors import ParameterError, ShapeError

__all__ = ["JacobianProducts", "LayerOperator", "agree", "math_attention", "probe", "quiet"]


def quiet(fn):
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


def agree(a: torch.Tensor, b: torch.Tensor, scale: float) -> bool:
    """``max |a - b| <= 1e3 eps scale``: the same numbers to rounding, ``scale`` the size of what
    they were computed from (the check of every shortcut a product takes: prefixes, token-local
    functions, stacked layers)."""
    return float((a - b).abs().max()) <= 1e3 * torch.finfo(a.dtype).eps * scale


def probe(problems: int, n: int, like: torch.Tensor) -> torch.Tensor:
    """The fixed random ``(1, problems, n)`` vector those checks compare products on."""
    gen = torch.Generator().manual_seed(54321)
    return torch.randn(1, problems, n, generator=gen, dtype=like.dtype).to(like.device)


def math_attention(fn):
    """``fn`` with ``scaled_dot_product_attention`` on its math backend: plain differentiable ops,
    with the forward-mode AD and double backward that the fused CPU kernels lack."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def wrapped(x):
        with sdpa_kernel([SDPBackend.MATH]):
            return fn(x)

    wrapped.math_attention = True
    wrapped.spec = getattr(fn, "spec", None)  # what :class:`~.local.Stack` reads
    return wrapped


class JacobianProducts:
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
                    quiet(jvp)(torch.zeros_like(self.x))
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

    def release(self) -> None:
        """Drop the recorded graphs (they keep the layer's weights); the next product records anew."""
        self._vjp = self._jvp = None

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
            return quiet(f)(lanes[0])[None]
        return quiet(torch.func.vmap(f))(lanes)

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
        random whole-sequence product (at the first and the last sampled token) computes every
        block on the sampled tokens alone.
    around : callable, optional
        ``around()`` gives a context that every product runs in (a layer whose weights are
        offloaded is loaded there: :func:`~depthdyn.nn.analysis.offload.loaded`).

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

    def __init__(self, fn: Callable, x: torch.Tensor, *, tokens=None, prefix: bool = True, local=None,
                 around: Callable | None = None):
        self._around = around or contextlib.nullcontext
        with self._around():
            self._setup(fn, x, tokens, prefix, local)

    def _setup(self, fn, x, tokens, prefix, local) -> None:
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
        self._full = JacobianProducts(fn, self.x, self.y)
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
    def block(self) -> int:
        """Vectors per product for block Lanczos (:mod:`.blockkrylov`): 4 where the operator is
        token-local (several vectors cost little more than one), else 1."""
        return 4 if self.token_local else 1

    @property
    def forward_mode(self) -> str | None:
        """How ``J w`` is computed (known after the first one): ``"transpose of vjp"`` or ``"jvp"``."""
        pieces = list(self._local.values()) if self._local else self._prefix or [self._full]
        modes = {p.mode for p in pieces if p.mode is not None}
        return None if not modes else "jvp" if "jvp" in modes else modes.pop()

    def release(self) -> None:
        """Free the graphs this operator keeps (and with them the weights the layer saved for its
        backward); a later product records them again, calling the layer once more. For a model
        whose weights are loaded on demand (offloaded by accelerate) this keeps one layer's
        weights in memory at a time."""
        pieces = [self._full, *(self._prefix or ()), *(self._local.values() if self._local else ())]
        for piece in pieces:
            piece.release()

    def _prefixes(self):
        """One :class:`JacobianProducts` per sampled token on its prefix, or None where the check fails."""
        T, scale = self.x.shape[1], 1.0 + float(self.y.abs().max())
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
            if not agree(ys, self.y[:, : t + 1], scale):
                return None
            pieces.append(JacobianProducts(self.fn, xs, ys))
        self._prefix = pieces
        V = probe(self.problems, self.n_out, self.y)
        short, whole = self.rmatvec(V), self._whole_rmatvec(V)
        self._prefix = None
        return pieces if agree(short, whole, float(whole.abs().max()) + float(V.abs().max())) else None

    def entries(self, t: torch.Tensor, lanes: int = 1) -> torch.Tensor:
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
        """Inverse of :meth:`_to_entries`: ``(B, K * m, d)`` -> ``(K, P, d)``."""
        m = len(self.tokens)
        return E.reshape(self.B, K, m, -1).permute(1, 2, 0, 3).reshape(K, self.problems, -1)

    def _whole_at(self, V: torch.Tensor, which: list) -> torch.Tensor:
        """Whole-sequence ``D_t^T v_t`` at the sampled tokens ``which`` (indices among them):
        ``(r, B, d)``. One lane per token asked (a cotangent at that token alone), each a
        backward pass over the whole sequence."""
        lanes = self._lanes(V.to(self.y.dtype), self.y.shape[1:])[which]  # (r, B, T, d)
        G = self._full.rvec(lanes)
        tok = torch.tensor([self.tokens[i] for i in which], device=G.device)
        return G[torch.arange(len(which), device=G.device), :, tok]

    def _token_local(self, local) -> dict | None:
        """The first candidate of ``local(tokens)`` (token-local functions, see
        :mod:`~depthdyn.nn.analysis.local`) that gives the recorded outputs at every sampled
        token and the whole-sequence ``D_t^T v`` on a random ``v`` at the first and the last
        sampled token; None where none does. The derivative is checked at those two tokens only:
        a lane of the whole-sequence check costs a backward pass over all ``T`` tokens, as dear
        as the layer's forward, and one per sampled token was a quarter of a GPT-2 analysis; the
        values are checked at every sampled token.

        Products with ``K`` vectors at once run on ``K`` copies of the entries in one sequence
        (:meth:`_piece`): no entry moves another, so the layer's matrix products take all vectors
        in one pass, where ``vmap`` over the vectors would repeat the pass."""
        X, Y = self.entries(self.x), self.entries(self.y)
        scale = 1.0 + float(self.y.abs().max())
        V = probe(self.problems, self.n_out, self.y)
        whole, ends = None, sorted({0, len(self.tokens) - 1})
        for which, fn in enumerate(local(self.tokens)):
            # the math backend of attention: plain differentiable ops (the fused CPU kernel's
            # backward is not differentiable), and for one query per row it saves nothing
            fn = math_attention(fn)
            try:  # a candidate that does not fit this layer may raise anything: the next one is tried
                with torch.no_grad():
                    Ys = fn(X)
                if not isinstance(Ys, torch.Tensor) or Ys.shape != X.shape:
                    continue
                if not agree(Ys, Y, scale):
                    continue
                piece = JacobianProducts(fn, X, Ys)
                short = self._from_entries(piece.rvec(self._to_entries(V)[None])[0], 1)
            except Exception:  # noqa: BLE001
                continue
            whole = self._whole_at(V, ends) if whole is None else whole
            short = short.reshape(len(self.tokens), self.B, -1)[ends]
            if agree(short, whole, float(whole.abs().max()) + float(V.abs().max())):
                self._make = lambda K, local=local, which=which: math_attention(local(self.tokens * K)[which])
                self._full._vjp = None  # the whole-sequence graph is not needed again: free it
                return {1: piece}
        return None

    def token_function(self, K: int = 1) -> Callable | None:
        """The verified token-local function of the layer on ``K`` copies of the sampled tokens
        (entries ``(B, K * m, d)``, laid out as :meth:`entries`), or None where the operator is not
        token-local."""
        return self._make(K) if self._local else None

    def _piece(self, K: int) -> JacobianProducts:
        """The token-local products of ``K`` copies of the entries: those of one vector, of a
        block (:attr:`block`) and of a block with an Arnoldi vector beside it
        (:func:`~.krylov.singular_values_and_radius`) are kept, others (probes, dense columns)
        recorded when asked, so that their graphs do not pile up."""
        if K in self._local:
            return self._local[K]
        fn, X = self._make(K), self.entries(self.x, K)
        with torch.no_grad():
            piece = JacobianProducts(fn, X, fn(X))
        if K in (self.block, self.block + 1):
            self._local[K] = piece
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
        with self._around():
            return self._rmatvec(V)

    def _rmatvec(self, V: torch.Tensor) -> torch.Tensor:
        if self._local:
            return self._per_row(V.to(self.y.dtype), JacobianProducts.rvec)
        if self._prefix is not None:
            return self._per_prefix(V.to(self.y.dtype), JacobianProducts.rvec)
        return self._whole_rmatvec(V)

    def matvec(self, W: torch.Tensor) -> torch.Tensor:
        """``J w`` for ``W`` of shape ``(K, P, n_in)``: returns ``(K, P, n_out)``."""
        with self._around():
            return self._matvec(W)

    def _matvec(self, W: torch.Tensor) -> torch.Tensor:
        if self._local:
            return self._per_row(W.to(self.x.dtype), JacobianProducts.fvec)
        if self._prefix is not None:
            return self._per_prefix(W.to(self.x.dtype), JacobianProducts.fvec)
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
