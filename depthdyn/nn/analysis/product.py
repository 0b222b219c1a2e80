"""Products of matrix-free operators over depth: the end-to-end Jacobian of a run of layers.

:class:`ProductOperator` chains operators (:class:`~.operators.LayerOperator`: each the
Jacobian of one step at its recorded input, products only): ``J w`` goes through the layers
first to last, ``J^T v`` last to first. It has the interface the Krylov methods of
:mod:`.krylov` read, so :func:`end_to_end` gives the top singular values of the whole run per
problem (sample or sampled token) with their residual bounds, and :func:`lyapunov_exponents`
the finite-depth Lyapunov exponents of the run by the QR method, each layer applied to ``k``
vectors at once. A model layer of two steps (attention, MLP) is the product of its steps.
"""

from __future__ import annotations

import numpy as np
import torch

from ...errors import ShapeError
from .krylov import top_singular_values

__all__ = ["ProductOperator", "end_to_end", "lyapunov_exponents"]


class ProductOperator:
    """``J_m ... J_1`` of matrix-free operators of one layout, applied first to last.

    Any operator with ``matvec`` / ``rmatvec`` on lanes ``(K, problems, n)``, ``problems``,
    ``n_in``, ``n_out`` and ``x`` (a :class:`~.operators.LayerOperator`, another product)
    chains, where each one's input size is the previous one's output size and the problems
    agree. For causal token blocks the product of block lower-triangular Jacobians has the
    product of the diagonal blocks on its diagonal, so per-token problems compose as they are.
    """

    def __init__(self, layers):
        self.layers = list(layers)
        if not self.layers:
            raise ShapeError("an empty run of layers: nothing to multiply")
        for i, op in enumerate(self.layers):
            if not all(hasattr(op, a) for a in ("matvec", "rmatvec", "problems", "n_in", "n_out", "x")):
                raise ShapeError(f"layer {i + 1} is not a matrix-free operator (a LayerOperator)")
        for i, (a, b) in enumerate(zip(self.layers[:-1], self.layers[1:], strict=True), start=2):
            if b.problems != a.problems or b.n_in != a.n_out:
                raise ShapeError(
                    f"layer {i} does not chain onto layer {i - 1} (problems or state size differ)"
                )
        first = self.layers[0]
        self.x, self.problems = first.x, first.problems
        self.n_in, self.n_out = first.n_in, self.layers[-1].n_out

    @property
    def square(self) -> bool:
        return self.n_in == self.n_out

    def matvec(self, W: torch.Tensor) -> torch.Tensor:
        for op in self.layers:
            W = op.matvec(W)
        return W

    def rmatvec(self, V: torch.Tensor) -> torch.Tensor:
        for op in reversed(self.layers):
            V = op.rmatvec(V)
        return V

    def dense(self) -> torch.Tensor:
        """``(problems, n_out, n_in)``: the product itself, one ``J^T`` pass per output row."""
        eye = torch.eye(self.n_out, dtype=self.x.dtype, device=self.x.device)
        return self.rmatvec(eye[:, None, :].expand(-1, self.problems, -1)).permute(1, 0, 2)


def end_to_end(layers, k: int = 1, *, steps: int = 100, tol: float = 1e-6, seed: int = 0):
    """Top ``k`` singular values of a run of layer operators, per problem, beside the product of
    the per-layer top singular values (what a single-layer analysis sees).

    Returns the record of the NumPy path, a :class:`depthdyn.products.endtoend.EndToEnd`, with
    ``values`` ``(P, k)``. The algorithm is not that path's
    (:func:`depthdyn.products.endtoend.end_to_end_singular_values`, ARPACK on one operator): a
    model's operators carry ``P`` independent problems (samples, token blocks) in every
    product, one pass through the layer for all of them, and ARPACK per problem would take
    ``P`` times the passes; the batched Lanczos of :func:`~.krylov.top_singular_values` runs
    all problems at once, with residual bounds.
    """
    from ...products.endtoend import EndToEnd

    prod = ProductOperator(layers)
    spec = top_singular_values(prod, k, steps=steps, tol=tol, seed=seed)
    per_layer = np.stack([top_singular_values(op, 1, steps=steps, tol=tol, seed=seed).values[:, 0]
                          for op in prod.layers])
    gains = float(np.prod(per_layer, axis=0).mean())
    return EndToEnd(spec.values, spec.accuracy, len(prod.layers), spec.method, -1, gains)


def lyapunov_exponents(layers, k: int = 1, *, seed: int = 0) -> np.ndarray:
    """Top ``k`` finite-depth Lyapunov exponents of a run of layers, per problem: ``(P, k)``.

    The torch twin of :func:`depthdyn.products.lyapunov.lyapunov` (its ``samples``), the same
    algorithm on matrix-free layers: ``A_l Q_{l-1} = Q_l R_l`` with ``A_l`` the layer's Jacobian
    applied to the ``k`` columns of ``Q`` (one lane each), exponent ``i`` the mean of
    ``log |(R_l)_ii|`` over the layers (natural log, per layer, largest first), from the same
    ``Q_0`` for the same ``seed``; the QR runs in float64.
    """
    from ...products.lyapunov import SingularProductError

    prod = ProductOperator(layers)
    n = prod.n_in
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= n:
        raise ShapeError(f"k must be an integer in 1..{n}, got {k!r}")
    Q0 = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, k)))[0]
    Q = torch.as_tensor(Q0, dtype=torch.float64, device=prod.x.device).expand(prod.problems, n, k)
    total = torch.zeros(prod.problems, k, dtype=torch.float64, device=prod.x.device)
    for i, op in enumerate(prod.layers):
        Z = op.matvec(Q.permute(2, 0, 1).to(prod.x.dtype)).permute(1, 2, 0).double()  # (P, n_out, k)
        Q, R = torch.linalg.qr(Z)
        d = torch.diagonal(R, dim1=-2, dim2=-1).abs()
        if bool((d == 0).any()):
            raise SingularProductError(f"the run loses rank at layer {i + 1}")
        total += d.log()
    exps = total / len(prod.layers)
    return -np.sort(-exps.cpu().numpy(), axis=1)
