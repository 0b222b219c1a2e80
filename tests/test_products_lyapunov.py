"""Lyapunov exponents by QR: periodic patterns (exact through the monodromy), a Gaussian
ensemble with a closed-form spectrum, mutants, log-domain safety and bad input."""

import importlib

import numpy as np
import pytest
import sympy as sp
from scipy import integrate, special, stats

import depthdyn as dd
from depthdyn.errors import ParameterError, ShapeError
from depthdyn.products import (
    ProductOverflowError,
    SingularProductError,
    growth_rate,
    periodic,
    product_singular_values,
    random_layers,
    state_matrices,
)

a, b = sp.symbols("a b")
POINT = {"a": sp.Rational(-1, 4), "b": sp.Rational(-3, 2)}


def _pattern_layers():
    pattern = periodic(dd.momentum(lam=a, m=sp.Rational(1, 2), eta=1),
                       dd.momentum(lam=b, m=sp.Rational(1, 5), eta=1))
    C = pattern.numeric_layers({k: float(v) for k, v in POINT.items()})  # (2, 2, 2)
    mult = [complex(z) for z in pattern.subs(POINT).monodromy.eigenvals(multiple=True)]
    exact = sorted((np.log(abs(z)) / 2 for z in mult), reverse=True)
    return C, np.array(exact)


def test_periodic_exponents_converge_like_one_over_depth():
    C, exact = _pattern_layers()
    assert exact[0] - exact[1] > 0.1  # distinct moduli: a clean O(1/L) transient
    depths = np.array([40, 80, 160, 320, 640])
    errors = []
    for L in depths:
        spec = dd.lyapunov(np.tile(C, (L // 2, 1, 1)))
        assert spec.stderr is None and spec.layers == L
        errors.append(np.abs(spec.exponents - exact).max())
    slope = np.polyfit(np.log(depths), np.log(errors), 1)[0]
    assert -1.2 < slope < -0.8
    assert errors[-1] < 0.01


def _chi2_log_mean(k: int) -> float:
    """E[log X], X ~ chi^2_k, by quadrature of the density (no digamma)."""
    f = lambda x: np.log(x) * stats.chi2.pdf(x, k)  # noqa: E731
    return integrate.quad(f, 0, 1)[0] + integrate.quad(f, 1, np.inf)[0]


def test_gaussian_ensemble_matches_the_closed_form_within_standard_error():
    # entries N(0, 1/n): |A q_i|^2 restricted to the orthogonal complement of the first i-1
    # directions is chi^2_{n-i+1} / n, so lambda_i = E[log chi^2_{n-i+1}] / 2 - log(n) / 2
    n = 5
    ref = np.array([(_chi2_log_mean(n - i) - np.log(n)) / 2 for i in range(n)])
    newman = np.array([(np.log(2 / n) + special.digamma((n - i + 1) / 2)) / 2 for i in range(1, n + 1)])
    assert np.allclose(ref, newman, atol=1e-8)  # the quadrature and Newman (1986) agree
    A = random_layers("gaussian", n, 300, 48, seed=3)
    spec = dd.lyapunov(A)
    assert spec.stderr is not None and spec.stderr.max() < 0.02
    assert (np.abs(spec.exponents - ref) < 3 * spec.stderr).all()
    top = dd.lyapunov(A, k=2)
    assert np.allclose(top.exponents, spec.exponents[:2], atol=3 * spec.stderr[:2].max())


def test_mutant_without_reorthonormalisation_fails(monkeypatch):
    n = 5
    ref = np.array([(np.log(2 / n) + special.digamma((n - i + 1) / 2)) / 2 for i in range(1, n + 1)])
    A = random_layers("gaussian", n, 300, 48, seed=3)
    real_qr = np.linalg.qr

    def normalise_only(Z, *args, **kw):  # columns rescaled, never orthogonalised
        norms = np.linalg.norm(Z, axis=-2)
        R = np.zeros(Z.shape[:-2] + (Z.shape[-1], Z.shape[-1]))
        idx = np.arange(Z.shape[-1])
        R[..., idx, idx] = norms
        return Z / norms[..., None, :], R

    monkeypatch.setattr(np.linalg, "qr", normalise_only)
    bad = dd.lyapunov(A)
    monkeypatch.setattr(np.linalg, "qr", real_qr)
    assert np.abs(bad.exponents - ref).max() > 20 * bad.stderr.max()


def test_mutant_with_a_wrong_log_fails(monkeypatch):
    C, exact = _pattern_layers()
    stack = np.tile(C, (200, 1, 1))
    good = dd.lyapunov(stack).exponents
    monkeypatch.setattr(importlib.import_module("depthdyn.products.lyapunov").np, "log", np.log10)
    bad = dd.lyapunov(stack).exponents
    monkeypatch.undo()
    assert np.abs(good - exact).max() < 0.01
    assert np.abs(bad - exact).max() > 0.1


def test_ten_thousand_layers_never_overflow():
    A = np.broadcast_to(np.array([[10.0, 1.0], [0.0, 0.1]]), (10_000, 2, 2))
    spec = dd.lyapunov(A)
    assert np.allclose(spec.exponents, [np.log(10), np.log(0.1)], atol=1e-3)
    assert np.isclose(growth_rate(A), np.log(10), atol=1e-3)
    sv = product_singular_values(A)
    assert np.isfinite(sv.log_values[0, 0]) and np.isclose(sv.rates[0, 0], np.log(10), atol=1e-3)


def test_growth_rate_and_singular_values_match_dense_products():
    A = random_layers("gaussian", 4, 20, 3, seed=5)
    for s in range(3):
        P = np.eye(4)
        for M in A[s]:
            P = M @ P
        assert np.isclose(growth_rate(A)[s], np.log(np.linalg.norm(P)) / 20, rtol=1e-12)
        sv = np.linalg.svd(P, compute_uv=False)
        got = product_singular_values(A[s]).log_values[0]
        well = sv > 1e-6 * sv[0]  # both routes lose ~eps * sigma_1 / sigma_i in the small ones
        assert well.sum() >= 2 and np.allclose(got[well], np.log(sv[well]), rtol=1e-8)
        assert np.allclose(got, np.log(sv), rtol=1e-4)


def test_ensembles_have_their_defining_properties():
    Q = random_layers("orthogonal", 4, 3, 2, seed=1)
    assert np.allclose(Q @ np.swapaxes(Q, -1, -2), np.eye(4), atol=1e-12)
    S = random_layers("sinkhorn", 4, 3, 2, seed=1)
    assert (S > 0).all() and np.allclose(S.sum(-1), 1, atol=1e-13) and np.allclose(S.sum(-2), 1, atol=1e-13)
    assert np.array_equal(random_layers("hc", 3, 2, seed=9), random_layers("hc", 3, 2, seed=9))
    with pytest.raises(ParameterError):
        random_layers("cauchy", 3, 2)


def test_bad_input_is_refused():
    with pytest.raises(ParameterError, match="not finite"):
        dd.lyapunov(np.array([[[1.0, np.nan], [0, 1]]]))
    with pytest.raises(ShapeError):
        dd.lyapunov(np.ones((3, 2, 3)))
    with pytest.raises(ShapeError, match="empty"):
        dd.lyapunov(np.ones((0, 2, 2)))
    with pytest.raises(ParameterError):
        dd.lyapunov(np.ones((3, 2, 2)), k=0)
    with pytest.raises(SingularProductError):
        dd.lyapunov(np.zeros((3, 2, 2)))
    with pytest.raises(ProductOverflowError):
        dd.lyapunov(np.full((2, 2, 2), 1e308))


def test_iid_lam_ensemble_of_a_family():
    # residual layers with lam_l drawn i.i.d.: the exponent of each sample is the mean of log|1 + lam_l|
    rng = np.random.default_rng(4)
    lam = rng.normal(-0.5, 0.4, size=(16, 300))
    S = state_matrices(dd.residual(), lam=lam)
    assert S.shape == (16, 300, 1, 1)
    spec = dd.lyapunov(S)
    assert np.allclose(spec.samples[:, 0], np.log(np.abs(1 + lam)).mean(axis=1), rtol=1e-12)
    assert np.isclose(spec.stderr[0], np.log(np.abs(1 + lam)).mean(axis=1).std(ddof=1) / 4)


def test_explicit_matrices_make_a_pattern():
    x = sp.Symbol("x")
    pattern = periodic([[x, 1], [0, 2]], sp.Matrix([[1, 0], [1, 1]]))
    assert pattern.param_names == ("x",)
    plain = pattern.monodromy.xreplace({s: sp.Symbol(s.name) for s in pattern.monodromy.free_symbols})
    assert plain == sp.Matrix([[1, 0], [1, 1]]) * sp.Matrix([[x, 1], [0, 2]])
    numeric = periodic(np.array([[[2.0, 0], [0, 0.5]], [[0.5, 0], [0, 2.0]]]))
    assert numeric.monodromy == sp.eye(2) and numeric.period == 2
    with pytest.raises(ParameterError, match="not finite"):
        periodic(np.array([[np.nan]]))
