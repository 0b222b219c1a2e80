"""Batched spectra vs symbolic roots and mpmath; flagging and refinement; conv kernels."""

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy.optimize import linear_sum_assignment

import depthdyn
from depthdyn import (
    Param,
    Recurrence,
    dense,
    entangled,
    from_coefficients,
    general,
    hyper_connection,
    momentum,
    smooth,
)
from depthdyn.errors import ParameterError, ShapeError
from depthdyn.numeric.bridge import batch_coefficients
from depthdyn.numeric.conv import conv_kernel, conv_spectrum
from depthdyn.numeric.spectra import (
    dominant_mode,
    roots,
    spectral_radius,
    spectrum,
)
from depthdyn.recurrence import r


def _match(a, b):
    """Largest distance between two root multisets after optimal matching."""
    a, b = np.asarray(a, complex), np.asarray(b, complex)
    rows, cols = linear_sum_assignment(np.abs(a[:, None] - b[None, :]))
    return np.abs(a[rows] - b[cols]), b[cols]


def _mp_roots(coeffs, dps=60):
    """Roots of a float coefficient vector (exact binary values) at dps digits."""
    with mpmath.workdps(dps):
        cs = [mpmath.mpc(complex(c)) for c in coeffs]
        return np.array([complex(z) for z in mpmath.polyroots(cs, maxsteps=500, extraprec=4 * dps)])


def _bdf(k):
    rho = " + ".join(f"r**{k - j}*(r - 1)**{j}/{j}" for j in range(1, k + 1))
    return general(rho=rho, sigma=f"r**{k}")


@pytest.mark.parametrize(
    "rec",
    [momentum(), smooth(k=3), dense(k=3), _bdf(4), general(rho="r**3 - a*r + 1", sigma="r")],
    ids=lambda rc: f"{rc.name}{rc.order}",
)
def test_numeric_roots_match_symbolic_roots(rec):
    rng = np.random.default_rng(7)
    for _ in range(3):
        point = {}
        for p in rec.params:
            if p.name == "lam":
                point[p.name] = sp.Rational(int(rng.integers(-40, 40)), 16)
                if rec.order <= 2:  # depthdyn.roots gives CRootOf only over the rationals
                    point[p.name] += sp.I * sp.Rational(int(rng.integers(-40, 40)), 16)
            elif p.name == "m":
                point[p.name] = sp.Rational(int(rng.integers(0, 15)), 16)
            else:
                point[p.name] = sp.Rational(int(rng.integers(1, 40)), 16)
        exact = [complex(sp.N(v, 30)) for v in depthdyn.roots(rec.subs(point)).values()]
        numeric = spectrum(rec, {k: complex(v) if k == "lam" else float(v) for k, v in point.items()})
        dist, want = _match(numeric.refined, exact)
        assert np.all(dist <= 1e-12 * np.maximum(1, np.abs(want))), (point, numeric.refined, exact)


def test_quadratic_closed_form_has_no_cancellation():
    # r^2 - 1e8 r + 1: the small root 1e-8 would lose all digits with the textbook formula
    z = roots([1.0, -1e8, 1.0])
    small = z[np.argmin(np.abs(z))]
    assert abs(small - 1e-8) <= 1e-22
    zc = roots(np.array([1.0, -1e8j, 1.0]))
    dist, _ = _match(zc, _mp_roots([1.0, -1e8j, 1.0]))
    assert np.all(dist <= 1e-12 * np.abs(zc))
    assert np.allclose(roots([1.0, 0.0, 0.0]), 0)


@pytest.mark.parametrize("degree", [3, 4, 6, 8])
def test_unflagged_roots_meet_the_stated_accuracy(degree):
    rng = np.random.default_rng(degree)
    names = [f"a{j}" for j in range(1, degree + 1)]
    rec = from_coefficients([1] + names, params=names)
    batch = 200
    coeffs = rng.normal(size=(batch, degree)) * rng.choice([0.01, 1, 100], size=(batch, 1))
    spec = spectrum(rec, {n: coeffs[:, j] for j, n in enumerate(names)})
    for i in range(batch):
        dist, want = _match(spec.refined[i], _mp_roots(np.r_[1.0, coeffs[i]]))
        assert np.all(dist <= spec.tol * np.abs(want) + 1e-300), (i, spec.flagged[i])


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_repeated_root_is_flagged_and_refined(k):
    rec = general(rho=f"(r - 1)**{k}", sigma=f"r**{k - 1}")
    raw = roots(batch_coefficients(rec, lam=0.0))
    if k >= 3:  # companion eigenvalues alone are visibly wrong here
        assert np.abs(raw - 1).max() > 1e-8
    for spec in (spectrum(rec, lam=[0.0, 1e-14]), spectrum(smooth(k=k), lam=[0.0, 1e-14], h=1)):
        assert spec.flagged.all()
        np.testing.assert_array_equal(spec.refined[0], np.ones(k))
        # lam = 1e-14: roots 1 + (1e-14)^(1/k) w, exactly known to first order
        assert np.abs(np.abs(spec.refined[1] - 1) - 1e-14 ** (1 / k)).max() < 1e-14 ** (2 / k) * 4
        assert spec.n_refined == 2


def test_momentum_critical_damping_flagged_and_refined():
    m = np.array([0.25, 0.36, 0.5, 0.81, 0.9])
    eta = 1.5
    lam = (2 * np.sqrt(m) - 1 - m) / eta  # discriminant (1 + m + eta lam)^2 - 4m = 0 (up to rounding)
    spec = spectrum(momentum(), lam=lam, m=m, eta=eta)
    assert spec.flagged.all()
    far = spectrum(momentum(), lam=lam - 0.1, m=m, eta=eta)
    assert not far.flagged.any()
    for i in range(len(m)):
        with mpmath.workdps(80):  # exact binary parameter values, closed form at 80 digits
            B = 1 + mpmath.mpf(m[i]) + mpmath.mpf(eta) * mpmath.mpf(lam[i])
            d = mpmath.sqrt(B**2 - 4 * mpmath.mpf(m[i]))
            want = [complex((B + d) / 2), complex((B - d) / 2)]
        dist, _ = _match(spec.refined[i], want)
        assert dist.max() <= 1e-15
    np.testing.assert_allclose(spec.radius, np.sqrt(m), rtol=1e-7)


def test_radius_and_dominant_mode():
    c = np.array([[1.0, 0.0, 0.25], [1.0, -3.0, 2.0], [1.0, 0.0, 4.0]])
    np.testing.assert_allclose(spectral_radius(c), [0.5, 2.0, 2.0])
    np.testing.assert_allclose(dominant_mode(c), [0.5j, 2.0, 2.0j])
    cubic = np.array([1.0, -1.0, 4.0, -4.0])  # (r - 1)(r^2 + 4)
    assert dominant_mode(cubic) == pytest.approx(2j)


def test_roots_input_errors():
    with pytest.raises(ShapeError):
        roots([1.0])
    with pytest.raises(ParameterError):
        roots([1.0, np.nan])
    with pytest.raises(ParameterError, match="leading"):
        roots([[1.0, 2.0, 1.0], [0.0, 1.0, 1.0]])
    with pytest.raises(ShapeError):
        roots(np.zeros((2, 2, 3)), matrix=True)


def test_entangled_uniform_spectrum_is_exact():
    # Gamma = gamma/n 11^T + (1 - gamma) I: eigenvalues 1 and 1 - gamma (n - 1 times), plus lam
    gamma, lam = np.array([0.0, 0.3, 1.0]), 0.2 - 0.1j
    spec = spectrum(entangled(n=4), lam=lam, gamma=gamma)
    for i, g in enumerate(gamma):
        dist, _ = _match(spec.refined[i], [1 + lam] + [1 - g + lam] * 3)
        assert dist.max() < 1e-12
    assert not spec.flagged.any()  # repeated eigenvalues of a normal matrix are well conditioned


def test_hyper_connection_and_block_companion():
    vals = dict(hres_1_1=0.3, hpre_1=1.0, hpre_2=2.0, hpost_1=0.5, hpost_2=1.0)
    lam = np.array([1.0, -0.5 + 0.2j])
    spec = spectrum(hyper_connection(n=2), lam=lam, **vals)
    H = np.array([[0.3, 0.7], [0.7, 0.3]])
    for i, lm in enumerate(lam):
        M = H + lm * np.outer([0.5, 1.0], [1.0, 2.0])
        dist, _ = _match(spec.refined[i], np.linalg.eigvals(M))
        assert dist.max() < 1e-12
    # order-2 matrix recurrence: roots of det(r^2 I + r A1 + A2)
    c = Param("c").symbol
    rec = Recurrence(
        coeffs=(sp.eye(2), sp.Matrix([[c, 1], [0, -1]]), sp.Matrix([[0, 2], [1, c]])), params=[Param("c")]
    )
    spec = spectrum(rec, c=0.7)
    exact = [complex(v) for v in sp.Poly(rec.subs(c=sp.Rational(7, 10)).charpoly(), r).nroots(n=30)]
    dist, _ = _match(spec.refined, exact)
    assert dist.max() < 1e-12
    coeffs = batch_coefficients(rec, c=[0.7, 0.7])
    np.testing.assert_allclose(spectral_radius(coeffs, matrix=True), np.abs(exact).max())


def test_spectrum_prints():
    text = str(spectrum(smooth(k=2), lam=[0.0, -1.0], h=1))
    assert "flagged" in text and "50 digits" in text


# ------------------------------------------------------------------ convolution
def _dense_conv(K, H, W):
    """Dense matrix of y[o,h,w] = sum K[a,b,i,o] x[i,(h+a-ca)%H,(w+b-cb)%W], x flattened (C,H,W)."""
    kh, kw, C, _ = K.shape
    D = np.zeros((C * H * W, C * H * W))
    for o in range(C):
        for h in range(H):
            for w in range(W):
                for a in range(kh):
                    for b in range(kw):
                        for i in range(C):
                            src = (i * H + (h + a - kh // 2) % H) * W + (w + b - kw // 2) % W
                            D[(o * H + h) * W + w, src] += K[a, b, i, o]
    return D


KERNELS = [
    conv_kernel("spatial", 0.4, 3, 2),
    conv_kernel("channel", 0.7, 3, 2),
    conv_kernel("orthogonal", 0.0, 1, 3, seed=2),
    np.random.default_rng(0).normal(size=(2, 3, 2, 2)),  # even size, non-symmetric
    np.random.default_rng(1).normal(size=(5, 5, 2, 2)),  # larger than the map: taps wrap
]


@pytest.mark.parametrize("K", KERNELS, ids=["spatial", "channel", "orthogonal", "random23", "random55"])
def test_conv_spectrum_matches_dense_operator(K):
    H, W = 4, 4
    D = _dense_conv(K, H, W)
    ev = conv_spectrum(K, H, W)
    assert ev.shape == (H, W, K.shape[2])
    dist, _ = _match(ev.ravel(), np.linalg.eigvals(D))
    assert dist.max() < 1e-10
    C = K.shape[2]
    for u in range(H):  # per frequency: compress D onto the Fourier mode (u, v)
        for v in range(W):
            f = np.exp(2j * np.pi * (u * np.arange(H)[:, None] / H + v * np.arange(W)[None, :] / W)).ravel()
            P = np.kron(np.eye(C), f[:, None]) / np.sqrt(H * W)
            dist, _ = _match(ev[u, v], np.linalg.eigvals(P.conj().T @ D @ P))
            assert dist.max() < 1e-10


def test_conv_kernels_follow_fig3():
    sp_k = conv_kernel("spatial", 0.5, 3, 2)
    assert sp_k.shape == (3, 3, 2, 2)
    assert sp_k[1, 1, 0, 0] == pytest.approx(0.5 / 9 + 0.5) and sp_k[0, 0, 0, 1] == 0
    # the spatial kernel preserves the mean of each channel: eigenvalue 1 at frequency 0
    assert np.allclose(conv_spectrum(sp_k, 8, 8)[0, 0], 1)
    Q = conv_kernel("orthogonal", 0.0, 3, 3, seed=1)[0, 0]
    np.testing.assert_allclose(Q.T @ Q, np.eye(3), atol=1e-12)
    with pytest.raises(ParameterError):
        conv_kernel("diagonal")
    with pytest.raises(ParameterError):
        conv_kernel("spatial", gamma=1.5)
    with pytest.raises(ShapeError):
        conv_spectrum(np.zeros((3, 3, 2)), 4, 4)


def test_spectral_radius_of_recurrence_matches_high_precision():
    rng = np.random.default_rng(3)
    lam = rng.uniform(-4, 1, (40, 50)) + 1j * rng.uniform(-3, 3, (40, 50))
    m, eta = 0.3, 1.7
    got = spectral_radius(momentum(), lam=lam, m=m, eta=eta)
    assert got.shape == lam.shape
    want = np.empty(lam.shape)
    for idx in np.ndindex(lam.shape):
        with mpmath.workdps(50):
            B = 1 + mpmath.mpf(m) + mpmath.mpf(eta) * mpmath.mpc(complex(lam[idx]))
            d = mpmath.sqrt(B**2 - 4 * mpmath.mpf(m))
            want[idx] = float(max(abs((B + d) / 2), abs((B - d) / 2)))
    np.testing.assert_allclose(got, want, rtol=1e-14)
    # complex-conjugate pairs of a real quadratic: |r| = sqrt(m) exactly, no sqrt(eps) loss
    under = spectral_radius(momentum(), lam=np.linspace(-1.0, -0.5, 11), m=0.81, eta=1)
    np.testing.assert_allclose(under, 0.9, rtol=2e-16)
    # the array path and higher degrees agree with the roots
    coeffs = batch_coefficients(_bdf(3), lam=lam)
    np.testing.assert_allclose(
        spectral_radius(_bdf(3), lam=lam), np.abs(roots(coeffs)).max(axis=-1), rtol=1e-12
    )
    # (the radius path polishes the companion roots with a Newton step: a few ulps apart)
    np.testing.assert_allclose(spectral_radius(coeffs), np.abs(roots(coeffs)).max(axis=-1), rtol=1e-14)


def test_spectral_radius_reports_bad_values_and_overflow():
    with pytest.raises(ParameterError, match="finite"):
        spectral_radius(momentum(), lam=np.r_[np.zeros(5000), np.nan], m=0.5, eta=1)
    with pytest.raises(ParameterError, match="overflows"):  # the radius itself is past 1.8e308
        spectral_radius(momentum(), lam=np.array([1.5e308, 0.0]), m=0.5, eta=2)
    # a large but representable radius is computed (its square overflows: rescaled, not refused)
    np.testing.assert_allclose(spectral_radius(momentum(), lam=np.array([1e200, 0.0]), m=0.5, eta=1),
                               [1e200, 1.0], rtol=1e-15)
