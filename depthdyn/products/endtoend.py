"""Singular values of the end-to-end Jacobian ``J_L ... J_1`` without forming it.

Each layer is an operator (a dense matrix, a :class:`scipy.sparse.linalg.LinearOperator`, or
anything with ``shape``, ``matvec`` and ``rmatvec``); the product acts on a vector one layer
at a time (``J^T`` in reverse order). The top ``k`` singular values come from implicitly
restarted Lanczos on ``J^T J`` (ARPACK, through :func:`scipy.sparse.linalg.svds`), each with
a residual bound computed afterwards from two more products: for unit ``u, v`` and
``sigma``, the Jordan-Wielandt matrix ``[[0, J], [J^T, 0]]`` has an eigenvalue, hence ``J`` a
singular value, within

.. math::

    \\sqrt{(\\|J v - \\sigma u\\|^2 + \\|J^T u - \\sigma v\\|^2) / 2}

of ``sigma``. Layers of a torch model (:class:`depthdyn.nn.analysis.operators.LayerOperator`)
go through :mod:`depthdyn.nn.analysis.product` (imported only then).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError, ShapeError
from ..records import Record
from .lyapunov import seeded

__all__ = ["EndToEnd", "end_to_end_singular_values", "product_operator"]


@dataclass(frozen=True, eq=False)
class EndToEnd(Record):
    """Top singular values of the end-to-end product, descending, with error bounds.

    ``values`` ``(k,)`` (or ``(P, k)`` for a model's independent problems); ``bounds``: a
    singular value of the product lies within ``bounds[i]`` of ``values[i]``; ``layer_gains``:
    the product of the per-layer top singular values (an upper bound of ``values[0]``: what a
    single-layer analysis would predict), or None where not computed; ``products``: operator
    applications used.
    """

    values: np.ndarray
    bounds: np.ndarray
    layers: int
    method: str
    products: int
    layer_gains: float | None = None

    def _text(self) -> str:
        vals = ", ".join(f"{v:.8g} (+-{b:.2g})" for v, b in zip(np.ravel(self.values)[:8],
                                                                np.ravel(self.bounds)[:8], strict=True))
        more = "" if self.layer_gains is None else f"; product of per-layer norms {self.layer_gains:.6g}"
        return f"end-to-end singular values over {self.layers} layers ({self.method}): {vals}{more}"

    def _latex(self) -> str:
        return ",\\ ".join(f"\\sigma_{{{i + 1}}} = {v:.8g}" for i, v in enumerate(np.ravel(self.values)[:8]))

    def to_json(self) -> dict:
        return {"values": np.asarray(self.values).tolist(), "bounds": np.asarray(self.bounds).tolist(),
                "layers": self.layers, "method": self.method, "products": self.products,
                "layer_gains": self.layer_gains}


def _as_operator(layer, i: int):
    from scipy.sparse.linalg import LinearOperator, aslinearoperator

    if isinstance(layer, LinearOperator):
        return layer
    if hasattr(layer, "matvec") and hasattr(layer, "rmatvec") and hasattr(layer, "shape"):
        return LinearOperator(tuple(layer.shape), matvec=layer.matvec, rmatvec=layer.rmatvec, dtype=float)
    M = np.asarray(layer)
    if M.ndim != 2 or M.dtype == object:
        raise ShapeError(f"layer {i + 1} must be a matrix or an operator with shape, matvec and rmatvec")
    if not np.isfinite(M).all():
        raise ParameterError(f"layer {i + 1} is not finite")
    return aslinearoperator(M.astype(float))


def product_operator(layers):
    """``J_L ... J_1`` as one :class:`scipy.sparse.linalg.LinearOperator` (``layers[0]`` first)."""
    from scipy.sparse.linalg import LinearOperator

    ops = [_as_operator(layer, i) for i, layer in enumerate(layers)]
    if not ops:
        raise ShapeError("an empty stack: give at least one layer")
    for i in range(1, len(ops)):
        if ops[i].shape[1] != ops[i - 1].shape[0]:
            raise ShapeError(f"layer {i + 1} takes {ops[i].shape[1]} inputs but layer {i} gives "
                             f"{ops[i - 1].shape[0]}")
    count = [0]

    def mv(x):
        count[0] += 1
        x = np.ravel(x)  # 1-D between layers: user operators need not handle columns
        for op in ops:
            x = np.ravel(op.matvec(x))
        if not np.isfinite(x).all():
            raise ParameterError("the product overflowed float64 on a unit vector; rescale the layers")
        return x

    def rmv(y):
        count[0] += 1
        y = np.ravel(y)
        for op in reversed(ops):
            y = np.ravel(op.rmatvec(y))
        return y

    op = LinearOperator((ops[-1].shape[0], ops[0].shape[1]), matvec=mv, rmatvec=rmv, dtype=float)
    op.count = count
    return op


def _is_model_operator(layer) -> bool:
    return type(layer).__module__.startswith("depthdyn.nn.")


def end_to_end_singular_values(layers, k: int = 1, *, tol: float = 0.0, seed: int = 0,
                               layer_gains: bool = False) -> EndToEnd:
    """Top ``k`` singular values of ``J_L ... J_1`` from products only.

    Parameters
    ----------
    layers : sequence or array
        ``(L, n, n)`` matrices or a sequence of per-layer operators, first layer first;
        :class:`~depthdyn.nn.analysis.operators.LayerOperator` objects of a torch model work too.
    k : int
        How many singular values.
    tol : float
        ARPACK's relative tolerance (0: machine precision).
    seed : int
        Seed of the start vector.
    layer_gains : bool
        Also compute each layer's top singular value and report their product.

    Returns
    -------
    EndToEnd

    Raises
    ------
    ShapeError, ParameterError
        Empty or mismatched stacks, non-finite layers, bad ``k``.
    """
    layers = list(layers) if not isinstance(layers, np.ndarray) else list(layers)
    if not layers:
        raise ShapeError("an empty stack: give at least one layer")
    if any(_is_model_operator(x) for x in layers):
        # the torch side builds on this module, not the other way round
        raise ParameterError("layers of a torch model (LayerOperator) give values per sample or "
                             "token: use depthdyn.nn.analysis.product.end_to_end(layers, k)")
    from scipy.sparse.linalg import svds

    op = product_operator(layers)
    m, n = op.shape
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= min(m, n):
        raise ParameterError(f"k must be an integer in 1..{min(m, n)}, got {k!r}")
    if k < min(m, n) - 1:
        v0 = seeded(seed).standard_normal(n)
        U, s, Vt = svds(op, k=int(k), tol=tol, v0=v0, solver="arpack")
        order = np.argsort(-s)
        U, s, V = U[:, order], s[order], Vt[order].T
        method = "Lanczos on J^T J (ARPACK), matrix-free"
    else:  # too few vectors left for Lanczos: the product applied to the identity
        D = op.matmat(np.eye(n))
        U, s, Vt = np.linalg.svd(D, full_matrices=False)
        U, s, V = U[:, :k], s[:k], Vt[:k].T
        method = "dense SVD of the product (k close to the size)"
    r1 = op.matmat(V) - U * s
    r2 = op.rmatmat(U) - V * s
    bounds = np.sqrt((np.linalg.norm(r1, axis=0) ** 2 + np.linalg.norm(r2, axis=0) ** 2) / 2)
    gains = None
    if layer_gains:
        gains = float(np.prod([end_to_end_singular_values([x], 1, seed=seed).values[0] for x in layers]))
    return EndToEnd(s, bounds, len(layers), method, op.count[0], gains)
