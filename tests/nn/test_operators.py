"""The matrix-free layer operator and its Krylov methods against dense linear algebra
(numpy's SVD / eigenvalues of the same matrices), including the paths chosen on the way:
``J w`` by the transpose of the recorded ``vjp`` or by forward-mode AD, and the stop on a
residual tolerance."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

from torch.autograd.function import once_differentiable  # noqa: E402

from depthdyn.errors import ParameterError  # noqa: E402
from depthdyn.nn.analysis import (  # noqa: E402
    LayerOperator,
    arnoldi_hessenberg,
    ritz_values,
    spectral_radius_estimate,
    top_singular_values,
)


def _linear(J: torch.Tensor) -> LayerOperator:
    """The operator of ``x -> J_b x`` per sample ``b``: its Jacobian is ``J`` exactly."""
    x = torch.randn(J.shape[0], J.shape[2], dtype=J.dtype)
    return LayerOperator(lambda z: torch.einsum("bij,bj->bi", J, z), x)


class _Cube(torch.autograd.Function):
    """``x ** 3`` whose backward is not differentiable (as some fused kernels)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x**3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 3 * x * x * t


def _jacobians(fn, x):
    return torch.stack([torch.autograd.functional.jacobian(lambda t: fn(t[None])[0], xb) for xb in x])


@pytest.mark.parametrize("once", [False, True])
def test_forward_products_by_transpose_or_jvp_match_the_dense_jacobian(once):
    torch.manual_seed(0)
    W = torch.randn(6, 5, dtype=torch.float64)
    act = _Cube.apply if once else torch.tanh
    fn = lambda x: act(x) @ W.T  # noqa: E731
    x = torch.randn(3, 5, dtype=torch.float64)
    op = LayerOperator(fn, x)
    J = _jacobians(fn, x)  # (3, 6, 5)
    w = torch.randn(4, 3, 5, dtype=torch.float64)
    v = torch.randn(4, 3, 6, dtype=torch.float64)
    np.testing.assert_allclose(op.matvec(w), torch.einsum("bij,kbj->kbi", J, w), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.rmatvec(v), torch.einsum("bji,kbj->kbi", J, v), rtol=1e-12, atol=1e-12)
    # a backward that is not differentiable makes the transpose of the vjp silently wrong:
    # the check sees it and forward-mode AD is used instead
    assert op.forward_mode == ("jvp" if once else "transpose of vjp")
    _, vjp = torch.func.vjp(fn, x)
    _, jt = torch.func.vjp(lambda u: vjp(u)[0], torch.zeros(3, 6, dtype=torch.float64))
    assert op._full.transposes(vjp, jt) is (not once)
    wrong = jt(w[0])[0]
    assert torch.allclose(wrong, torch.einsum("bij,bj->bi", J, w[0])) is (not once)


def _matrix(n=80, P=3, seed=0):
    """Nonsymmetric matrices with well separated top singular values."""
    g = torch.Generator().manual_seed(seed)
    Q1 = torch.linalg.qr(torch.randn(P, n, n, generator=g, dtype=torch.float64)).Q
    Q2 = torch.linalg.qr(torch.randn(P, n, n, generator=g, dtype=torch.float64)).Q
    s = 0.9 ** torch.arange(n, dtype=torch.float64) * 3
    return Q1 @ torch.diag_embed(s.expand(P, n)) @ Q2.transpose(1, 2)


def test_lanczos_stops_at_its_tolerance_and_its_bound_holds():
    J = _matrix()
    op = _linear(J)
    every = np.linalg.svd(J.numpy(), compute_uv=False)
    exact = every[:, :5]
    fine = top_singular_values(op, 5, steps=60, tol=1e-8)
    steps = int(fine.method.split("(")[1].split()[0])
    assert steps < 60  # stopped on the tolerance, not the step count
    assert np.all(fine.accuracy <= 1e-8 * fine.values)
    assert np.all(np.abs(fine.values - exact) <= fine.accuracy + 1e-13)
    np.testing.assert_allclose(fine.values, exact, rtol=1e-8)
    # fewer steps: not converged, and the bound says so (it still holds)
    rough = top_singular_values(op, 5, steps=8, tol=0)
    assert "8 steps" in rough.method
    err = np.abs(rough.values - exact)
    assert err.max() > 1e-6 and rough.accuracy.max() > 1e-6
    # the bound: each value lies within it of *a* singular value (an unresolved one may be
    # skipped, so not always of the i-th)
    nearest = np.abs(rough.values[:, :, None] - every[:, None, :]).min(-1)
    assert np.all(nearest <= rough.accuracy + 1e-13)
    assert not np.all(err <= rough.accuracy + 1e-13)  # here one was skipped: the distinction matters
    assert np.all(rough.values <= exact + 1e-12)  # Ritz values bound from below (interlacing)
    # a looser tolerance stops earlier
    loose = top_singular_values(op, 5, steps=60, tol=1e-2)
    assert int(loose.method.split("(")[1].split()[0]) < steps
    for bad in (-1e-3, 1.0, True, "0.1"):
        with pytest.raises(ParameterError, match="tol"):
            top_singular_values(op, 5, tol=bad)


def test_arnoldi_stops_at_its_tolerance_on_a_known_spectrum():
    g = torch.Generator().manual_seed(1)
    n, P = 60, 2
    lam = torch.cat((torch.tensor([3.0]), torch.rand(n - 1, generator=g) * 1.5 - 0.75)).double()
    S = torch.randn(P, n, n, generator=g, dtype=torch.float64) / n**0.5 + torch.eye(n, dtype=torch.float64)
    J = S @ torch.diag_embed(lam.expand(P, n)) @ torch.linalg.inv(S)
    op = _linear(J)
    r = spectral_radius_estimate(op, steps=50, tol=1e-10)
    steps = int(r.method.split("(")[1].split()[0])
    assert steps < 50 and np.all(r.accuracy <= 1e-10 * r.values)
    np.testing.assert_allclose(r.values[:, 0], 3.0, rtol=1e-8)
    # the same with tol=0 runs every step; too few steps leave a visible residual
    assert "50 steps" in spectral_radius_estimate(op, steps=50, tol=0).method
    short = spectral_radius_estimate(op, steps=2, tol=0)
    assert short.accuracy.max() > 1e-3
    # and a mutated matrix (dominant eigenvalue 2.5) gives the other value
    lam2 = lam.clone()
    lam2[0] = 2.5
    J2 = S @ torch.diag_embed(lam2.expand(P, n)) @ torch.linalg.inv(S)
    r2 = spectral_radius_estimate(_linear(J2), steps=50, tol=1e-10)
    np.testing.assert_allclose(r2.values[:, 0], 2.5, rtol=1e-8)


def test_arnoldi_hessenberg_holds_every_shorter_run_and_the_whole_space_is_exact():
    """The leading ``(t + 1, t)`` part of a run's Hessenberg matrix is the run of ``t`` steps
    (what benchmarks/krylov_floor.py reads its Ritz values from); ``n`` steps give the
    eigenvalues of ``J`` (numpy's, of the matrix itself)."""
    J = _matrix(n=40, P=2, seed=3)
    op = _linear(J)
    H, s = arnoldi_hessenberg(op, steps=30, seed=5)
    assert s == 30 and H.shape == (2, 31, 30)
    short, t = arnoldi_hessenberg(op, steps=12, seed=5)
    np.testing.assert_allclose(H[:, :13, :12], short, atol=1e-13)
    leading = np.sort_complex(np.linalg.eigvals(H[:, :12, :12]))
    np.testing.assert_allclose(leading, np.sort_complex(ritz_values(op, steps=12, seed=5)), atol=1e-12)
    # another start gives another Krylov space: a check that could fail
    assert np.abs(arnoldi_hessenberg(op, steps=12, seed=6)[0] - short).max() > 1e-3
    whole, n = arnoldi_hessenberg(op, steps=40, seed=5)
    exact = np.sort_complex(np.linalg.eigvals(J.numpy()))
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(whole[:, :n, :n])), exact, atol=1e-10)


def _easy_and_hard() -> tuple[torch.Tensor, torch.Tensor]:
    """Two problems (dominant eigenvalues 3 and 1): one Arnoldi resolves in a few steps, one it
    needs a few hundred for; and the similarity that hides their spectra."""
    g = torch.Generator().manual_seed(2)
    n = 301
    easy = torch.diag(torch.cat((torch.tensor([3.0]), torch.rand(n - 1, generator=g) - 0.5))).double()
    # hard: 1 beside 150 complex pairs of modulus up to 0.98 all round the circle (slow Arnoldi)
    hard = torch.zeros(n, n, dtype=torch.float64)
    hard[0, 0] = 1.0
    phi = torch.rand(150, generator=g, dtype=torch.float64) * torch.pi
    rad = 0.9 + 0.08 * torch.rand(150, generator=g, dtype=torch.float64)
    for i in range(150):
        c, sn = rad[i] * torch.cos(phi[i]), rad[i] * torch.sin(phi[i])
        block = torch.stack((torch.stack((c, -sn)), torch.stack((sn, c))))
        hard[1 + 2 * i : 3 + 2 * i, 1 + 2 * i : 3 + 2 * i] = block
    S = torch.randn(2, n, n, generator=g, dtype=torch.float64) / n**0.5 + torch.eye(n, dtype=torch.float64)
    # numpy's inverse: torch's threaded MKL LU has returned invalid pivots at this size
    return S @ torch.stack((easy, hard)) @ torch.from_numpy(np.linalg.inv(S.numpy())), S


def test_arnoldi_keeps_each_problems_value_from_the_test_it_passed(monkeypatch):
    """A problem that meets ``tol`` early keeps that test's value and bound (no further Ritz
    work for it); the others go on, tests spaced by the residual's trend, not every 8 steps."""
    from depthdyn.nn.analysis import krylov

    J, S = _easy_and_hard()
    sizes, plain = [], krylov._dominant

    def counted(H, s):
        sizes.append((H.shape[0], s))
        return plain(H, s)

    monkeypatch.setattr(krylov, "_dominant", counted)
    r = spectral_radius_estimate(_linear(J), steps=250, tol=1e-6)
    steps = int(r.method.split("(")[1].split()[0])
    np.testing.assert_allclose(r.values[:, 0], [3.0, 1.0], rtol=1e-4)
    assert np.all(r.accuracy[:, 0] <= 1e-6 * r.values[:, 0])
    # the easy problem left after the first test; the hard one was tested alone afterwards
    assert sizes[0] == (2, 8) and all(p == 1 for p, _ in sizes[1:])
    assert len(sizes) < steps // 8
    # each value within its bound of the dominant eigenvalue (backward error of a diagonalisable J,
    # amplified at most by the condition number of its eigenvectors)
    cond = np.linalg.cond(S.numpy())
    assert np.all(np.abs(r.values[:, 0] - [3.0, 1.0]) <= cond * r.accuracy[:, 0] + 1e-12)
    # a wrong premise: with the easy problem made hard as well, it is tested again after step 8
    sizes.clear()
    spectral_radius_estimate(_linear(J[[1, 1]]), steps=250, tol=1e-6)
    assert sizes[1][0] == 2


class _Later:
    """An executor whose answers come in only when waited for (the slowest host)."""

    def submit(self, fn, *args):
        return type("Pending", (), {"done": lambda self: False, "result": lambda self: fn(*args)})()


class _AtOnce:
    """An executor whose answers are in before the next step (the fastest host)."""

    def submit(self, fn, *args):
        out = fn(*args)
        return type("Done", (), {"done": lambda self: True, "result": lambda self: out})()


@pytest.mark.parametrize("executor", [_Later, _AtOnce])
def test_arnoldi_tests_beside_the_products_give_the_answers_in_order(monkeypatch, executor):
    """On an accelerator Arnoldi's tests run on the host while the iteration goes on: whenever
    their answers come in, the steps, values and bounds are those of the tests run in order."""
    from depthdyn.nn.analysis import krylov

    J, _ = _easy_and_hard()
    want = spectral_radius_estimate(_linear(J), steps=250, tol=1e-6)
    capped = spectral_radius_estimate(_linear(J), steps=12, tol=1e-6)  # the cap while a test is out
    monkeypatch.setattr(krylov, "_background", lambda op: True)
    monkeypatch.setattr(krylov, "_tests", executor)
    for steps, ref in ((250, want), (12, capped)):
        got = spectral_radius_estimate(_linear(J), steps=steps, tol=1e-6)
        assert got.method == ref.method
        np.testing.assert_array_equal(got.values, ref.values)
        np.testing.assert_array_equal(got.accuracy, ref.accuracy)
    # the steps taken while the last test was out are dropped: with them the values differ
    taken = int(want.method.split("(")[1].split()[0])
    later = spectral_radius_estimate(_linear(J), steps=taken + 8, tol=0)
    assert not np.array_equal(later.values, want.values)


def test_ritz_residuals_from_inverse_iteration_match_full_eigenvectors():
    """The checkpoint's residual ``h_{s+1,s} |y_s|``, with ``y`` by inverse iteration at the
    dominant Ritz value, is the one a full ``eig`` gives (a wrong eigenvector would not be)."""
    from depthdyn.nn.analysis.krylov import _dominant

    rng = np.random.default_rng(3)
    for s in (1, 8, 40):
        H = np.triu(rng.standard_normal((16, s + 1, s)), -1)
        H[:, :s] += 2 * np.eye(s)  # eigenvalues crowd around 2, as around 1 for residual layers
        lam, Y = np.linalg.eig(H[:, :s])
        top = np.abs(lam).argmax(axis=1)
        rows = np.arange(16)
        want = np.abs(H[:, s, s - 1] * Y[rows, -1, top])
        theta, resid = _dominant(H, s)
        np.testing.assert_allclose(theta, np.abs(lam[rows, top]), rtol=1e-12)
        np.testing.assert_allclose(resid, want, rtol=1e-6, atol=1e-14 * theta.max())
        if s > 1:  # the next eigenvector's residual differs
            second = np.argsort(np.abs(lam), axis=1)[:, -2]
            other = np.abs(H[:, s, s - 1] * Y[rows, -1, second])
            assert np.abs(other - resid).max() > 1e-3 * resid.max()


@pytest.mark.parametrize("fault", ["zero pivots", "info"])
def test_ritz_residuals_survive_a_faulty_lu(fault, monkeypatch):
    """A LAPACK LU that returns invalid pivots (seen from MKL's threaded complex LU at s = 152)
    or reports failure must not reach ``lu_solve``: those problems take a full ``eig``."""
    from depthdyn.nn.analysis import krylov

    rng = np.random.default_rng(5)
    s = 12
    H = np.triu(rng.standard_normal((4, s + 1, s)), -1)
    H[:, :s] += 2 * np.eye(s)
    want = krylov._dominant(H, s)
    real = torch.linalg.lu_factor_ex

    def faulty(M):
        LU, piv, info = real(M)
        if fault == "zero pivots":
            piv = piv.clone()
            piv[1] = 0
        else:
            info = info.clone()
            info[2] = 1
            LU = LU.clone()
            LU[2] = float("nan")
        return LU, piv, info

    monkeypatch.setattr(torch.linalg, "lu_factor_ex", faulty)
    got = krylov._dominant(H, s)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-14)


def test_causal_blocks_run_on_prefixes_only_where_the_layer_allows():
    torch.manual_seed(0)
    T, d = 6, 4
    W = torch.randn(d, d, dtype=torch.float64)

    def causal(x):  # token t reads tokens <= t, whatever the length
        return x + torch.tanh(torch.cumsum(x, 1) @ W.T)

    def tied(x):  # causal at length T too, but scaled by the length: a prefix computes otherwise
        return x + torch.tanh(torch.cumsum(x, 1) @ W.T / x.shape[1])

    x = torch.randn(2, T, d, dtype=torch.float64)
    tokens = (1, 3, 5)
    for fn, prefixed in ((causal, True), (tied, False)):
        op = LayerOperator(fn, x, tokens=tokens)
        assert op.prefixed is prefixed
        J = torch.autograd.functional.jacobian(fn, x)  # (2, T, d, 2, T, d)
        blocks = torch.stack([J[b, t, :, b, t, :] for t in tokens for b in range(2)])
        np.testing.assert_allclose(op.dense(), blocks, rtol=1e-12, atol=1e-14)
        w = torch.randn(3, op.problems, d, dtype=torch.float64)
        np.testing.assert_allclose(op.matvec(w), torch.einsum("pij,kpj->kpi", blocks, w), atol=1e-12)
    # whole-sequence products on request give the same blocks
    whole = LayerOperator(causal, x, tokens=tokens, prefix=False)
    assert not whole.prefixed
    np.testing.assert_allclose(whole.dense(), LayerOperator(causal, x, tokens=tokens).dense(), atol=1e-14)


# ------------------------------------------------------------------ products over depth
def test_product_operator_is_the_product_of_the_dense_layers():
    from depthdyn.errors import ShapeError
    from depthdyn.nn.analysis import ProductOperator

    g = torch.Generator().manual_seed(4)
    Js = [torch.randn(3, 5, 5, generator=g, dtype=torch.float64) for _ in range(3)]
    prod = ProductOperator([_linear(J) for J in Js])
    want = Js[2] @ Js[1] @ Js[0]
    np.testing.assert_allclose(prod.dense(), want, rtol=1e-12, atol=1e-13)
    assert not np.allclose(prod.dense(), Js[0] @ Js[1] @ Js[2], atol=1e-6)  # the order matters
    nested = ProductOperator([ProductOperator([_linear(J) for J in Js[:2]]), _linear(Js[2])])
    np.testing.assert_allclose(nested.dense(), want, rtol=1e-12, atol=1e-13)
    with pytest.raises(ShapeError):
        ProductOperator([])
    with pytest.raises(ShapeError):
        ProductOperator([_linear(Js[0]), _linear(torch.randn(2, 5, 5, dtype=torch.float64))])
    with pytest.raises(ShapeError):
        ProductOperator([Js[0]])


def test_torch_lyapunov_exponents_are_the_twin_of_the_numpy_ones():
    from depthdyn.nn.analysis import lyapunov_exponents
    from depthdyn.products.lyapunov import lyapunov

    g = torch.Generator().manual_seed(5)
    Js = torch.randn(6, 2, 4, 4, generator=g, dtype=torch.float64)  # (L, problems, n, n)
    ops = [_linear(J) for J in Js]
    want = lyapunov(Js.transpose(0, 1).numpy(), k=3, seed=7).samples  # (problems, k)
    np.testing.assert_allclose(lyapunov_exponents(ops, 3, seed=7), want, rtol=1e-12, atol=1e-14)
    # a diagonal product: the exponents sum to log |det| per layer exactly (k = n), and tend to
    # the logs of the diagonal as 1/L (textbook facts)
    D = torch.diag_embed(torch.tensor([2.0, 1.0, 0.25], dtype=torch.float64)).expand(200, 1, 3, 3)
    got = lyapunov_exponents([_linear(J) for J in D], 3)[0]
    exact = np.log([2.0, 1.0, 0.25])
    assert got.sum() == pytest.approx(exact.sum(), abs=1e-12)
    np.testing.assert_allclose(got, exact, atol=0.05)
    reversed_order = lyapunov_exponents(ops[::-1], 3, seed=7)
    assert not np.allclose(reversed_order, want, atol=1e-6)  # the order of the layers matters
