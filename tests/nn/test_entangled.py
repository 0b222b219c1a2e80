"""Entangled blocks: skip maps against independently built dense operators, spectra, recurrences."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

import sympy as sp  # noqa: E402
from scipy.optimize import linear_sum_assignment  # noqa: E402

from depthdyn.errors import DegreeTooLargeError, ParameterError, ShapeError  # noqa: E402
from depthdyn.nn.blocks.entangled import ConvEntangledBlock, EntangledBlock  # noqa: E402
from depthdyn.numeric.conv import conv_kernel  # noqa: E402

torch.set_num_threads(1)


class Zero(torch.nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)


def _reference_gamma(kind, d, gamma=0.3, seed=0):
    if kind == "uniform":
        return np.full((d, d), gamma / d) + (1 - gamma) * np.eye(d)
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, d)))
    return Q


@pytest.mark.parametrize("kind", ["uniform", "orthogonal", "matrix"])
def test_skip_map_is_gamma_times_column_vectors(kind):
    d = 5
    if kind == "matrix":
        G = np.random.default_rng(1).normal(size=(d, d))
        block = EntangledBlock(d, Zero(), Gamma=G)
    else:
        G = _reference_gamma(kind, d, seed=3)
        block = EntangledBlock(d, Zero(), kind=kind, gamma=0.3, seed=3)
    block = block.double()
    x = torch.randn(7, d, dtype=torch.float64)
    expected = (G @ x.numpy().T).T  # x_{l+1} = Gamma x_l per column vector
    np.testing.assert_allclose(block(x).numpy(), expected, rtol=0, atol=1e-6)  # Gamma stored in float32
    np.testing.assert_allclose(block.skip_operator().numpy(), G, rtol=0, atol=1e-7)


def test_branch_adds_step_times_f():
    d = 4
    block = EntangledBlock(d, step=0.25).double()
    x = torch.randn(3, d, dtype=torch.float64)
    expected = x @ block.Gamma.T + 0.25 * block.f(x)
    torch.testing.assert_close(block(x), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("gamma", [0.0, 0.1, 0.7, 1.0])
def test_uniform_gamma_eigenvalues_are_one_and_one_minus_gamma(gamma):
    d = 6
    G = EntangledBlock(d, kind="uniform", gamma=gamma).skip_operator().double().numpy()
    eig = np.sort(np.linalg.eigvalsh(G))
    np.testing.assert_allclose(eig, [1 - gamma] * (d - 1) + [1.0], atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_orthogonal_gamma_is_orthogonal_and_seeded(seed):
    G = EntangledBlock(6, kind="orthogonal", seed=seed).skip_operator().double()
    torch.testing.assert_close(G.T @ G, torch.eye(6, dtype=torch.float64), rtol=0, atol=1e-6)
    again = EntangledBlock(6, kind="orthogonal", seed=seed).skip_operator()
    assert torch.equal(G.float(), again)
    assert not torch.allclose(G, EntangledBlock(6, kind="orthogonal", seed=seed + 1).skip_operator().double())


def test_learn_makes_gamma_a_trained_parameter():
    fixed, learned = EntangledBlock(3), EntangledBlock(3, learn=True)
    assert "Gamma" not in dict(fixed.named_parameters()) and "Gamma" in dict(fixed.named_buffers())
    learned(torch.randn(4, 3)).sum().backward()
    assert learned.Gamma.grad is not None and learned.Gamma.grad.norm() > 0


def _charpoly_coeffs(expr, *gens):
    return {k: float(v) for k, v in sp.Poly(sp.expand(expr), *gens).as_dict().items()}


def _assert_same_poly(a, b, tol=1e-12):
    assert set(a) == set(b)
    for k in a:
        assert abs(a[k] - b[k]) <= tol * max(1.0, abs(b[k])), (k, a[k], b[k])


@pytest.mark.parametrize("kind", ["uniform", "orthogonal", "matrix"])
def test_recurrence_charpoly_is_det_of_r_minus_gamma_minus_lam(kind):
    d = 3
    Gamma = np.random.default_rng(2).normal(size=(d, d)) if kind == "matrix" else None
    block = EntangledBlock(d, kind=kind, Gamma=Gamma, gamma=0.2, learn=True).double()
    with torch.no_grad():  # learned numbers, not the initial ones
        block.Gamma.add_(0.01 * torch.randn(d, d, dtype=torch.float64))
    rec = block.recurrence()
    r, lam = sp.symbols("r lam")
    G = sp.Matrix(d, d, [sp.Rational(float(v)) for v in block.Gamma.detach().reshape(-1)])
    reference = (r * sp.eye(d) - G - lam * sp.eye(d)).det()
    got = rec.charpoly().subs({s: {"r": r, "lam": lam}[s.name] for s in rec.charpoly().free_symbols})
    _assert_same_poly(_charpoly_coeffs(got, r, lam), _charpoly_coeffs(reference, r, lam))
    assert rec.name == "entangled"


def test_recurrence_size_limit_and_channel():
    with pytest.raises(DegreeTooLargeError):
        EntangledBlock(9).recurrence()
    with pytest.raises(ParameterError):
        EntangledBlock(3).recurrence(channel=0)


def test_bad_entangled_inputs_raise_typed_errors():
    with pytest.raises(ShapeError):
        EntangledBlock(3, Gamma=np.ones((3, 2)))
    with pytest.raises(ShapeError):
        EntangledBlock(3, Gamma=np.eye(4))
    with pytest.raises(ParameterError):
        EntangledBlock(2, Gamma=[[1.0, float("nan")], [0.0, 1.0]])
    with pytest.raises(ParameterError):
        EntangledBlock(3, kind="matrix")
    for g in (-0.1, 1.5, float("nan"), "x"):
        with pytest.raises(ParameterError):
            EntangledBlock(3, gamma=g)
    with pytest.raises(ParameterError):
        EntangledBlock(3, kind="sparse")
    with pytest.raises(ParameterError):
        EntangledBlock(3, kind="orthogonal", seed=1.5)
    block = EntangledBlock(3)
    for bad in (torch.randn(4, 2), torch.randn(3), [[1.0, 2.0, 3.0]]):
        with pytest.raises(ParameterError):
            block(bad)


# -- convolutional entanglement --------------------------------------------------------


def _dense_from_taps(K, H, W):
    """The (C H W)^2 operator of a circular "same" cross-correlation, built tap by tap."""
    kh, kw, C, _ = K.shape
    ca, cb = kh // 2, kw // 2
    M = np.zeros((C, H, W, C, H, W))
    for a in range(kh):
        for b in range(kw):
            for i in range(C):
                for o in range(C):
                    for h in range(H):
                        for w in range(W):
                            M[o, h, w, i, (h + a - ca) % H, (w + b - cb) % W] += K[a, b, i, o]
    return M.reshape(C * H * W, C * H * W)


def _hwio(kind, C, gamma, k, seed):
    if kind == "spatial_channel":
        return conv_kernel("channel", gamma, k, C)
    if kind == "channel":
        return conv_kernel("channel", gamma, 1, C)
    return conv_kernel(kind, gamma, k, C, seed=seed)


def _same_multiset(a, b, tol):
    a, b = np.ravel(a), np.ravel(b)
    rows, cols = linear_sum_assignment(np.abs(a[:, None] - b[None, :]))
    assert np.abs(a[rows] - b[cols]).max() <= tol


@pytest.mark.parametrize("kind", ["spatial", "channel", "spatial_channel", "orthogonal"])
@pytest.mark.parametrize("H, W", [(3, 4), (2, 1)])
def test_conv_skip_is_the_dense_tap_operator_and_its_spectrum(kind, H, W):
    C, gamma, k, seed = 3, 0.4, 3, 5  # C = 3: a 2 x 2 orthogonal draw can be symmetric
    block = ConvEntangledBlock(C, Zero(), kind=kind, gamma=gamma, kernel_size=k, seed=seed).double()
    M = _dense_from_taps(_hwio(kind, C, gamma, k, seed), H, W)
    x = torch.randn(3, C, H, W, dtype=torch.float64)
    expected = (M @ x.reshape(3, -1).numpy().T).T.reshape(3, C, H, W)
    np.testing.assert_allclose(block(x).numpy(), expected, rtol=0, atol=1e-6)  # kernel stored in float32
    np.testing.assert_allclose(block.skip_matrix(H, W).numpy(), M, rtol=0, atol=1e-7)
    _same_multiset(block.skip_spectrum(H, W), np.linalg.eigvals(block.skip_matrix(H, W).numpy()), 1e-9)
    _same_multiset(block.skip_spectrum(H, W), np.linalg.eigvals(M), 1e-6)


@pytest.mark.parametrize("k", [3, 2])
def test_random_asymmetric_kernel_matches_taps_and_spectrum(k):
    # the Fig. 3 kernels are symmetric under tap flips and (but orth) channel swaps: a random
    # kernel pins the cross-correlation orientation and the HWIO -> (O, I, kh, kw) layout
    C, H, W = 2, 3, 4
    K = np.random.default_rng(k).normal(size=(k, k, C, C))
    block = ConvEntangledBlock(C, Zero(), kernel_size=k, learn=True).double()
    with torch.no_grad():
        block.kernel.copy_(torch.from_numpy(K.transpose(3, 2, 0, 1)))
    M = _dense_from_taps(K, H, W)
    x = torch.randn(2, C, H, W, dtype=torch.float64)
    expected = (M @ x.reshape(2, -1).numpy().T).T.reshape(2, C, H, W)
    np.testing.assert_allclose(block(x).detach().numpy(), expected, rtol=0, atol=1e-12)
    _same_multiset(block.skip_spectrum(H, W), np.linalg.eigvals(M), 1e-8)


def test_conv_skip_weight_layout_and_learning():
    block = ConvEntangledBlock(3, kind="spatial_channel", gamma=0.5, kernel_size=3)
    K = conv_kernel("channel", 0.5, 3, 3)
    w = block.skip_operator()
    assert w.shape == (3, 3, 3, 3)
    # (O, I, kh, kw) <-> HWIO
    np.testing.assert_allclose(w.permute(2, 3, 1, 0).double().numpy(), K, atol=1e-7)
    learned = ConvEntangledBlock(2, learn=True)
    learned(torch.randn(2, 2, 4, 4)).square().sum().backward()
    assert learned.kernel.grad is not None and learned.kernel.grad.norm() > 0
    assert "kernel" in dict(ConvEntangledBlock(2).named_buffers())


def test_conv_orthogonal_skip_is_orthogonal():
    block = ConvEntangledBlock(3, kind="orthogonal", seed=2).double()
    M = block.skip_matrix(2, 3)
    torch.testing.assert_close(M.T @ M, torch.eye(18, dtype=torch.float64), rtol=0, atol=1e-6)


def test_conv_recurrence_charpoly():
    block = ConvEntangledBlock(1, kind="spatial", gamma=0.5).double()
    rec = block.recurrence(H=2, W=2)
    r, lam = sp.symbols("r lam")
    M = sp.Matrix(_dense_from_taps(conv_kernel("spatial", 0.5, 3, 1), 2, 2)).applyfunc(sp.Rational)
    reference = (r * sp.eye(4) - M - lam * sp.eye(4)).det()
    got = rec.charpoly().subs({s: {"r": r, "lam": lam}[s.name] for s in rec.charpoly().free_symbols})
    # the kernel is stored in float32
    _assert_same_poly(_charpoly_coeffs(got, r, lam), _charpoly_coeffs(reference, r, lam), tol=1e-6)
    with pytest.raises(DegreeTooLargeError):
        ConvEntangledBlock(1).recurrence(H=3, W=3)
    with pytest.raises(ParameterError):
        ConvEntangledBlock(1).recurrence()


def test_bad_conv_inputs_raise_typed_errors():
    block = ConvEntangledBlock(2)
    for bad in (torch.randn(2, 3, 4, 4), torch.randn(2, 2, 4), torch.randn(2, 4)):
        with pytest.raises(ParameterError):
            block(bad)
    with pytest.raises(ParameterError):
        ConvEntangledBlock(2, kind="sparse")
    with pytest.raises(ParameterError):
        ConvEntangledBlock(2, gamma=2.0)
    with pytest.raises(ParameterError):
        ConvEntangledBlock(0)
    with pytest.raises(ParameterError):
        ConvEntangledBlock(2, kernel_size=0)
    with pytest.raises(ParameterError):
        block.skip_matrix(0, 2)
