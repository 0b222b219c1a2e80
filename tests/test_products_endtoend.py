"""End-to-end singular values of a random residual-MLP stack, matrix-free against dense."""

import numpy as np
import pytest
from scipy.sparse.linalg import LinearOperator

import depthdyn as dd
from depthdyn.errors import ParameterError, ShapeError


def _mlp_stack(n, layers, seed):
    """Jacobians of x + W2 tanh(W1 x) at random points: operators and their dense matrices."""
    rng = np.random.default_rng(seed)
    ops, dense = [], []
    for _ in range(layers):
        W1, W2 = rng.standard_normal((2, n, n)) / np.sqrt(n)
        d = 1 - np.tanh(W1 @ rng.standard_normal(n)) ** 2
        ops.append(LinearOperator((n, n), matvec=lambda v, W1=W1, W2=W2, d=d: v + W2 @ (d * (W1 @ v)),
                                  rmatvec=lambda v, W1=W1, W2=W2, d=d: v + W1.T @ (d * (W2.T @ v))))
        dense.append(np.eye(n) + W2 @ (d[:, None] * W1))
    return ops, dense


def test_width_64_matches_the_dense_product():
    ops, dense = _mlp_stack(64, 12, seed=0)
    res = dd.end_to_end_singular_values(ops, 16, layer_gains=True)
    P = np.eye(64)
    for M in dense:
        P = M @ P
    sv = np.linalg.svd(P, compute_uv=False)
    assert np.allclose(res.values, sv[:16], rtol=1e-8, atol=0)
    assert (res.bounds < 1e-8 * res.values).all()
    # the bound is honest: every computed value has a true singular value within it (+ rounding)
    assert all(np.abs(sv - v).min() <= bnd + 1e-12 * v for v, bnd in zip(res.values, res.bounds, strict=True))
    # single-layer analysis: the product of the per-layer norms overestimates the end-to-end gain
    assert res.layer_gains > 10 * res.values[0]
    dense_res = dd.end_to_end_singular_values(np.array(dense), 3)
    assert np.allclose(dense_res.values, sv[:3], rtol=1e-10)


def test_a_wrong_layer_order_changes_the_answer():  # mutant: J_1 ... J_L instead of J_L ... J_1
    ops, dense = _mlp_stack(32, 6, seed=1)
    right = dd.end_to_end_singular_values(ops, 4).values
    P = np.eye(32)
    for M in reversed(dense):
        P = M @ P
    assert not np.allclose(right, np.linalg.svd(P, compute_uv=False)[:4], rtol=1e-6)


def test_bad_stacks_are_refused():
    with pytest.raises(ShapeError):
        dd.end_to_end_singular_values([], 1)
    with pytest.raises(ShapeError):
        dd.end_to_end_singular_values([np.eye(3), np.eye(4)], 1)
    with pytest.raises(ParameterError):
        dd.end_to_end_singular_values([np.eye(3)], 5)
    with pytest.raises(ParameterError):
        dd.end_to_end_singular_values([np.full((3, 3), np.inf)], 1)


def test_model_layers_through_their_operators():
    torch = pytest.importorskip("torch")
    from depthdyn.nn.analysis.operators import LayerOperator

    gen = torch.Generator().manual_seed(0)
    n, B = 24, 2
    Ws = [torch.randn(n, n, generator=gen, dtype=torch.float64) / n**0.5 for _ in range(4)]
    x = torch.randn(B, n, generator=gen, dtype=torch.float64)
    ops, dense = [], []
    for W in Ws:
        fn = lambda z, W=W: z + torch.tanh(z @ W.T)  # noqa: E731
        op = LayerOperator(fn, x)
        ops.append(op)
        dense.append(op.dense().numpy())  # (B, n, n)
        x = fn(x).detach()
    from depthdyn.nn.analysis.product import end_to_end

    with pytest.raises(ParameterError, match="nn.analysis.product.end_to_end"):
        dd.end_to_end_singular_values(ops, 3)  # the numpy front door names the torch one
    res = end_to_end(ops, 3)
    for s in range(B):
        P = np.eye(n)
        for D in dense:
            P = D[s] @ P
        assert np.allclose(res.values[s], np.linalg.svd(P, compute_uv=False)[:3], rtol=1e-6)


def test_model_lyapunov_exponents_match_the_dense_jacobians():
    torch = pytest.importorskip("torch")
    from depthdyn.nn.analysis.operators import LayerOperator
    from depthdyn.nn.analysis.product import lyapunov_exponents

    gen = torch.Generator().manual_seed(1)
    n, B = 16, 3
    x = torch.randn(B, n, generator=gen, dtype=torch.float64)
    ops, dense = [], []
    for _ in range(5):
        W = torch.randn(n, n, generator=gen, dtype=torch.float64) / n**0.5
        fn = lambda z, W=W: z + torch.tanh(z @ W.T)  # noqa: E731
        op = LayerOperator(fn, x)
        ops.append(op)
        dense.append(op.dense().numpy())
        x = fn(x).detach()
    got = lyapunov_exponents(ops, 4)
    want = dd.lyapunov(np.stack(dense, axis=1), k=4).samples  # (B, L, n, n): per sample
    assert got.shape == (B, 4) and np.allclose(got, want, rtol=1e-10, atol=1e-12)
