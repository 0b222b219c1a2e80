"""The end-to-end Jacobian of a run of a model's layers, as products of per-layer operators.

:class:`ProductOperator` chains :class:`~.operators.LayerOperator` objects (each the Jacobian
of one layer at its recorded input, ``jvp``/``vjp`` products only): ``J w`` goes through the
layers first to last, ``J^T v`` last to first. It has the interface the Krylov methods of
:mod:`.operators` read, so :func:`~.operators.top_singular_values` gives the top singular values
of the whole run per problem (sample or sampled token), with their residual bounds.
"""

from __future__ import annotations

import numpy as np
import torch

from ...errors import ShapeError
from .operators import LayerOperator, top_singular_values

__all__ = ["ProductOperator", "end_to_end"]


class ProductOperator:
    """``J_L ... J_1`` of layer operators of one layout (same problems and state sizes)."""

    def __init__(self, layers):
        self.layers = list(layers)
        if not self.layers:
            raise ShapeError("an empty run of layers")
        for i, op in enumerate(self.layers):
            if not isinstance(op, LayerOperator):
                raise ShapeError(f"layer {i + 1} is not a LayerOperator")
        first = self.layers[0]
        for i, op in enumerate(self.layers[1:], start=2):
            if op.problems != first.problems or op.n_in != self.layers[i - 2].n_out:
                raise ShapeError(f"layer {i} does not chain onto layer {i - 1} (problems or state size differ)")
        self.x, self.problems = first.x, first.problems
        self.n_in, self.n_out = first.n_in, self.layers[-1].n_out

    def matvec(self, W: torch.Tensor) -> torch.Tensor:
        for op in self.layers:
            W = op.matvec(W)
        return W

    def rmatvec(self, V: torch.Tensor) -> torch.Tensor:
        for op in reversed(self.layers):
            V = op.rmatvec(V)
        return V


def end_to_end(layers, k: int = 1, *, steps: int = 100, tol: float = 1e-6, seed: int = 0):
    """Top ``k`` singular values of a run of layer operators, per problem, beside the product of
    the per-layer top singular values (what a single-layer analysis sees).

    Returns a :class:`depthdyn.products.endtoend.EndToEnd` with ``values`` ``(P, k)``.
    """
    from ...products.endtoend import EndToEnd

    prod = ProductOperator(layers)
    spec = top_singular_values(prod, k, steps=steps, tol=tol, seed=seed)
    per_layer = np.stack([top_singular_values(op, 1, steps=steps, tol=tol, seed=seed).values[:, 0]
                          for op in prod.layers])
    gains = float(np.prod(per_layer, axis=0).mean())
    return EndToEnd(spec.values, spec.accuracy, len(prod.layers), spec.method, -1, gains)
