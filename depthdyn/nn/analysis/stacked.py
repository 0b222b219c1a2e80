"""Same-shaped layers as one operator: every layer's products in one pass.

On a GPU the Krylov products of one token-local layer (a few tokens through the layer's matrix
products) are bound by latency, not arithmetic: the kernels are launched one after another,
and the same kernels for several layers at once cost about as much as for one. Same-shaped
layers (:class:`~.local.Stack`) are therefore run together: :class:`StackedOperator` is the
block diagonal of their Jacobians, with the problems of layer ``g`` at ``g * P0 ... (g + 1) *
P0 - 1``, and each product is one ``vmap`` over the stacked weights. The Krylov iterations of
:mod:`.krylov` run on it unchanged (every problem keeps its own values and bounds); a problem
that converges early iterates on with the others at no extra pass.

A stack is taken only where its function gives every layer's recorded outputs at the sampled
tokens and, for a random vector, every layer's own ``J^T v`` (to rounding); otherwise the layers
are analysed one by one.
"""

from __future__ import annotations

import torch

from .local import Stack
from .operators import JacobianProducts, LayerOperator, agree, math_attention, probe

__all__ = ["StackedOperator", "stack_groups"]


class StackedOperator:
    """The Jacobians of the token-local layer operators ``ops`` as one block-diagonal operator
    (``problems = len(ops) * ops[0].problems``, layer-major), products through ``stack``."""

    def __init__(self, ops: list[LayerOperator], stack: Stack):
        first = ops[0]
        self.ops, self._stack = tuple(ops), stack
        self.n_in, self.n_out, self.block = first.n_in, first.n_out, first.block
        self.problems = len(ops) * first.problems
        self.x, self.y = first.x, first.y  # dtype and device of the vectors
        self._pieces: dict = {}

    @property
    def square(self) -> bool:
        return self.n_in == self.n_out

    @classmethod
    def of(cls, ops: list[LayerOperator]) -> StackedOperator | None:
        """The stacked operator of ``ops``, or None where they do not stack or the stacked
        function disagrees with a layer's own (see the module's notes)."""
        first = ops[0]
        if len(ops) < 2 or any(
            not op.token_local or op.tokens != first.tokens or op.x.shape != first.x.shape
            or op.x.dtype != first.x.dtype or op.x.device != first.x.device or op.block != first.block
            for op in ops
        ):
            return None
        try:  # weights on several devices, a layer vmap cannot map over: analysed one by one
            stack = Stack.of([op.token_function(1) for op in ops])
            if stack is None:
                return None
            stacked = cls(ops, stack)
            piece = stacked._piece(1)
        except Exception:  # noqa: BLE001
            return None
        want = torch.stack([op.entries(op.y) for op in ops])
        if not torch.isfinite(piece.y).all() or not agree(piece.y, want, 1.0 + float(want.abs().max())):
            return None
        V = probe(stacked.problems, first.n_out, first.y)
        together = stacked.rmatvec(V)[0].reshape(len(ops), first.problems, -1)
        parts = V[0].reshape(len(ops), first.problems, -1)
        alone = torch.stack([op.rmatvec(v[None])[0] for op, v in zip(ops, parts, strict=True)])
        if not agree(together, alone, float(alone.abs().max()) + float(V.abs().max())):
            return None
        return stacked

    def _piece(self, K: int) -> JacobianProducts:
        """Products on ``K`` copies of every layer's entries (kept for one vector, a block and a
        block with an Arnoldi vector beside it, as :class:`~.operators.LayerOperator` does)."""
        if K in self._pieces:
            return self._pieces[K]
        fn = self._stack.function([op.token_function(K) for op in self.ops])
        if fn is None:
            raise RuntimeError("the layers' arguments lost their common layout")
        fn = math_attention(fn)  # as each layer's own token-local function runs
        X = torch.stack([op.entries(op.x, K) for op in self.ops])
        with torch.no_grad():
            piece = JacobianProducts(fn, X, fn(X))
        if K in (1, self.block, self.block + 1):
            self._pieces[K] = piece
        return piece

    def _apply(self, V: torch.Tensor, product) -> torch.Tensor:
        """``product`` on ``V`` ``(K, problems, n)``: every layer's problems laid out as its
        entries (as :meth:`~.operators.LayerOperator.entries` lays them out, one reshape for all
        the layers: they share ``B`` and the tokens), through the stacked function, and back."""
        K, G, B, m = V.shape[0], len(self.ops), self.ops[0].B, len(self.ops[0].tokens)
        # problem g * P0 + t * B + b  <->  layer g, sample b, entry k * m + t
        E = V.reshape(K, G, m, B, -1).permute(1, 3, 0, 2, 4).reshape(G, B, K * m, -1)
        out = product(self._piece(K), E[None])[0]
        return out.reshape(G, B, K, m, -1).permute(2, 0, 3, 1, 4).reshape(K, self.problems, -1)

    def rmatvec(self, V: torch.Tensor) -> torch.Tensor:
        """``J^T v`` for ``V`` of shape ``(K, problems, n_out)``."""
        return self._apply(V.to(self.y.dtype), JacobianProducts.rvec)

    def matvec(self, W: torch.Tensor) -> torch.Tensor:
        """``J w`` for ``W`` of shape ``(K, problems, n_in)``."""
        return self._apply(W.to(self.x.dtype), JacobianProducts.fvec)

    def release(self) -> None:
        self._pieces.clear()


def stack_groups(ops: list[LayerOperator], modules: list, most: int) -> list[list[int]]:
    """Runs of consecutive steps whose operators may stack (token-local, one state shape, modules
    of one class), at most ``most`` steps each; every other step alone."""
    groups: list[list[int]] = []
    for i, op in enumerate(ops):
        head = groups[-1][0] if groups else None
        if (head is not None and len(groups[-1]) < most and op.token_local and ops[head].token_local
                and op.x.shape == ops[head].x.shape and type(modules[i]) is type(modules[head])):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups
