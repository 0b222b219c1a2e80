"""Stability masks (Schur–Cohn, boundary locus) vs high-precision root magnitudes."""

import mpmath
import numpy as np
import pytest

from depthdyn import dense, entangled, from_coefficients, general, momentum, smooth
from depthdyn.errors import ParameterError, UnknownParameterError
from depthdyn.numeric import masks
from depthdyn.numeric.bridge import batch_coefficients
from depthdyn.numeric.masks import schur_cohn, stability_mask
from depthdyn.numeric.region import boundary_locus, stability_region


def _bdf(k):
    rho = " + ".join(f"r**{k - j}*(r - 1)**{j}/{j}" for j in range(1, k + 1))
    return general(rho=rho, sigma=f"r**{k}")


def _reference_radius(coeffs):
    """Largest root modulus: float64 eigenvalues, then mpmath (40 digits) near modulus 1."""
    flat = coeffs.reshape(-1, coeffs.shape[-1])
    flat = flat / flat[:, :1]
    p = flat.shape[1] - 1
    C = np.zeros((len(flat), p, p), dtype=complex)
    C[:, 0, :] = -flat[:, 1:]
    C[:, np.arange(1, p), np.arange(p - 1)] = 1
    rad = np.abs(np.linalg.eigvals(C)).max(axis=-1)
    for i in np.flatnonzero(np.abs(rad - 1) < 1e-4):
        with mpmath.workdps(40):
            zs = mpmath.polyroots([mpmath.mpc(complex(c)) for c in flat[i]], maxsteps=400, extraprec=200)
            rad[i] = float(max(abs(z) for z in zs))
    return rad.reshape(coeffs.shape[:-1])


def _assert_agrees(strict, radius, band=1e-9):
    far = np.abs(radius - 1) > band
    bad = far & (strict != (radius < 1))
    assert not bad.any(), f"{bad.sum()} disagreements away from the boundary"
    assert (~far).sum() <= max(10, strict.size // 100)  # the excluded band is thin


@pytest.mark.parametrize("degree", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("kind", ["real", "complex"])
def test_schur_cohn_matches_root_moduli_on_random_polynomials(degree, kind):
    rng = np.random.default_rng(degree)
    n = 3000
    c = rng.normal(size=(n, degree)) * rng.uniform(0.1, 1.2, size=(n, 1))
    if kind == "complex":
        c = c + 1j * rng.normal(size=(n, degree)) * 0.5
    coeffs = np.concatenate([rng.uniform(0.5, 2, size=(n, 1)), c], axis=1)  # not monic
    strict, marginal = schur_cohn(coeffs)
    rad = _reference_radius(coeffs)
    _assert_agrees(strict, rad)
    assert 0 < strict.mean() < 1 or degree >= 5
    np.testing.assert_array_equal(marginal[np.abs(rad - 1) > 1e-9], strict[np.abs(rad - 1) > 1e-9])


@pytest.mark.parametrize(
    "coeffs, strict, marginal",
    [
        (np.poly([1.0]), False, True),
        (np.poly([1.0, 1.0]), False, False),  # double root on the circle
        (np.poly([1j, -1j]), False, True),
        (np.poly([1j, -1j, 1j, -1j]), False, False),
        (np.poly([1.0, -0.5]), False, True),
        (np.poly([0.5, -0.5]), True, True),
        (np.poly([1j, -1j, 0.5]), False, True),
        (np.poly([2.0, 0.5]), False, False),
        (np.poly([1j]), False, True),
        (np.poly([np.exp(1j), np.exp(2j), 0.3 + 0.4j]), False, True),
        (np.poly([np.exp(1j), np.exp(1j), 0.1]), False, False),
        (np.array([0.0, 1.0, 0.5]), False, False),  # leading zero: a root at infinity
    ],
)
def test_schur_cohn_singular_cases(coeffs, strict, marginal):
    s, m = schur_cohn(coeffs)
    assert (s.item(), m.item()) == (strict, marginal)


def test_dense_structural_unit_roots_marginal():
    # (r - 1 - h lam)(r^2 + r + 1): marginal iff |1 + h lam| <= 1 (and 1 + h lam not a cube root of 1)
    lam = np.linspace(-3, 1, 81)[None, :] + 1j * np.linspace(-1.5, 1.5, 61)[:, None]
    strict, marginal = stability_mask(dense(k=3), lam=lam, h=1)
    assert not strict.any()
    mod = np.abs(1 + lam)
    far = np.abs(mod - 1) > 1e-9
    np.testing.assert_array_equal(marginal[far], (mod < 1)[far])


@pytest.mark.parametrize(
    "rec, kw, window",
    [
        (momentum(), dict(m=0.5, eta=1.0), (-4, 1, -3, 3)),
        (momentum(), dict(m=0.0, eta=2.0), (-2, 0.5, -1, 1)),
        (momentum(), dict(m=0.9, eta=0.5), (-9, 1, -2, 2)),
        # Adams methods: sigma has roots outside the unit disk (AM2: -1.72), so N_in(sigma) < p
        (general(rho="r**2 - r", sigma="(5*r**2 + 8*r - 1)/12"), {}, (-7, 1, -4, 4)),
        (general(rho="r**3 - r**2", sigma="(23*r**2 - 16*r + 5)/12"), {}, (-1, 0.2, -1, 1)),
        (general(rho="r**3 - r**2", sigma="(9*r**3 + 19*r**2 - 5*r + 1)/24"), {}, (-4, 0.5, -3, 3)),
    ]
    + [(_bdf(k), {}, (-10, 30, -20, 20)) for k in range(2, 7)],
    ids=lambda v: getattr(v, "name", None),
)
def test_region_matches_root_moduli(rec, kw, window):
    x0, x1, y0, y1 = window
    X, Y = np.linspace(x0, x1, 151), np.linspace(y0, y1, 121)
    lam = X[None, :] + 1j * Y[:, None]
    rad = _reference_radius(batch_coefficients(rec, lam=lam, **kw))
    auto = stability_region(rec, ("re(lam)", x0, x1, 151), ("im(lam)", y0, y1, 121), conditions=False, **kw)
    assert auto.method.startswith("boundary-locus")
    sc = stability_region(
        rec, ("re(lam)", x0, x1, 151), ("im(lam)", y0, y1, 121), method="schur-cohn", conditions=False, **kw
    )
    direct, _ = stability_mask(rec, lam=lam, **kw)
    for mask in (auto.strict, sc.strict, direct):
        _assert_agrees(mask, rad)
    np.testing.assert_array_equal(auto.marginal[np.abs(rad - 1) > 1e-9], auto.strict[np.abs(rad - 1) > 1e-9])


def test_region_handles_boundary_points_exactly():
    # lam = 0 lies on the boundary of every consistent scheme: r = 1 is a simple root there
    reg = stability_region(momentum(), ("re(lam)", -4, 1, 11), ("im(lam)", -1, 1, 11), m=0.5, eta=1)
    assert reg.x[8] == 0 and reg.y[5] == 0
    assert not reg.strict[5, 8] and reg.marginal[5, 8]


def test_momentum_region_over_lam_and_m_is_exact():
    reg = stability_region(momentum(), ("re(lam)", -5, 1, 241), ("m", 0, 0.99, 100), eta=1)
    lam, m = reg.x[None, :], reg.y[:, None]
    exact = (-2 * (1 + m) < lam) & (lam < 0)
    far = (np.abs(lam) > 1e-9) & (np.abs(lam + 2 * (1 + m)) > 1e-9)
    np.testing.assert_array_equal(reg.strict[far], exact[far])
    assert reg.conditions is not None and reg.agrees_with_conditions(40) == 0


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_smooth_nets_have_no_strict_region(k):
    reg = stability_region(smooth(k=k), ("re(lam)", -5, 1, 31), ("im(lam)", -1, 1, 21), h=1, conditions=False)
    assert not reg.strict.any()
    assert any("exact arithmetic" in note for note in reg.notes)
    if k == 2:  # roots on the circle, simple, exactly for real lam in (-4, 0)
        row = reg.marginal[10]
        assert reg.y[10] == 0
        np.testing.assert_array_equal(row, (reg.x > -4) & (reg.x < 0))
        assert not reg.marginal[np.arange(21) != 10].any()


def test_matrix_recurrence_region_uses_the_determinant():
    # entangled uniform Gamma + lam I: eigenvalues 1 + lam and 1 - gamma + lam (001 eq. 4)
    reg = stability_region(entangled(n=3), ("re(lam)", -2.5, 0.5, 61), ("im(lam)", -1.5, 1.5, 41), gamma=0.5)
    lam = reg.x[None, :] + 1j * reg.y[:, None]
    a, b = np.abs(1 + lam), np.abs(0.5 + lam)
    far = (np.abs(a - 1) > 1e-9) & (np.abs(b - 1) > 1e-9)
    np.testing.assert_array_equal(reg.strict[far], ((a < 1) & (b < 1))[far])
    strict, _ = stability_mask(entangled(n=3), lam=lam, gamma=0.5)
    np.testing.assert_array_equal(strict, reg.strict)


def test_boundary_locus_is_the_momentum_ellipse():
    (z,) = boundary_locus(momentum(), n=64, m=0.5, eta=2.0)
    t = np.linspace(0, 2 * np.pi, 65)
    t[-1] = 0
    want = ((1 + 0.5) * np.cos(t) - (1 + 0.5) + 1j * (1 - 0.5) * np.sin(t)) / 2.0
    np.testing.assert_allclose(z, want, atol=1e-14)
    quadratic_in_lam = from_coefficients([1, "-lam**2", "1/4"], params=["lam"], lam="lam")
    with pytest.raises(ParameterError, match="linear in lam"):
        boundary_locus(quadratic_in_lam)


def test_momentum_region_record():
    reg = stability_region(momentum(), ("re(lam)", -4, 1, 64), ("im(lam)", -2, 2, 48), m=0.5, eta=1)
    assert reg.strict.shape == (48, 64) and reg.extent == (-4.0, 1.0, -2.0, 2.0)
    assert len(reg.boundary) == 1 and reg.conditions is not None
    assert reg.agrees_with_conditions(30) == 0
    assert "momentum" in str(reg)


def test_chunking_does_not_change_the_result(monkeypatch):
    lam = np.linspace(-4, 1, 50)[None, :] + 1j * np.linspace(-2, 2, 40)[:, None]
    whole = stability_mask(_bdf(3), lam=lam)
    monkeypatch.setattr(masks, "_CHUNK", 7)
    parts = stability_mask(_bdf(3), lam=lam)
    np.testing.assert_array_equal(whole[0], parts[0])
    np.testing.assert_array_equal(whole[1], parts[1])


def test_region_errors():
    with pytest.raises(UnknownParameterError):
        stability_region(momentum(), ("q", 0, 1, 5), ("im(lam)", 0, 1, 5), m=0.5, eta=1)
    with pytest.raises(ParameterError, match="fix"):
        stability_region(momentum(), ("re(lam)", 0, 1, 5), ("im(lam)", 0, 1, 5), lam=1, m=0.5, eta=1)
    with pytest.raises(ParameterError, match=">= 2"):
        stability_region(momentum(), ("re(lam)", 0, 1, 1), ("im(lam)", 0, 1, 5), m=0.5, eta=1)
    with pytest.raises(ParameterError, match="missing"):
        stability_region(momentum(), ("re(lam)", 0, 1, 5), ("im(lam)", 0, 1, 5), m=0.5)
    with pytest.raises(ParameterError):
        stability_region(momentum(), ("re(lam)", 0, 1, 5), ("m", 0, 1.5, 5), eta=1)  # m >= 1
    with pytest.raises(ParameterError, match="method"):
        stability_region(momentum(), m=0.5, eta=1, method="fast")
    with pytest.raises(ParameterError, match="locus"):
        stability_region(momentum(), ("re(lam)", -1, 0, 5), ("m", 0, 0.5, 5), eta=1, method="locus")


def test_tangent_rows_are_decided_by_schur_cohn():
    # the locus of rho = r - 5/4, sigma = 1 - 5r/4 is the unit circle; the row Im(lam) = 1
    # only touches it, at lam = i, where the root r = (5/4 + lam)/(1 + 5 lam/4) has |r| = 1
    rec = general(rho="r - 5/4", sigma="1 - 5*r/4")
    reg = stability_region(rec, ("re(lam)", -3, 3, 87), ("im(lam)", -3, 3, 115), conditions=False)
    assert reg.method.startswith("boundary-locus")
    i, j = np.flatnonzero(reg.y == 1.0)[0], np.flatnonzero(reg.x == 0.0)[0]
    assert not reg.strict[i, j] and reg.marginal[i, j]


def test_locus_fill_equals_schur_cohn_on_random_families():
    import sympy as sp

    rng = np.random.default_rng(11)
    r, used = sp.Symbol("r"), 0
    for _ in range(25):
        p = int(rng.integers(1, 6))
        q = int(rng.integers(0, p + 1))
        rc = [sp.Integer(1)] + [sp.Rational(int(v), 4) for v in rng.integers(-8, 9, p)]
        sc = [sp.Rational(int(v), 4) or sp.Integer(1) for v in rng.integers(-8, 9, q + 1)]
        rho = sum(c * r ** (p - i) for i, c in enumerate(rc))
        sigma = sum(c * r ** (q - i) for i, c in enumerate(sc))
        rec = general(rho=sp.sstr(rho), sigma=sp.sstr(sigma))
        nx, ny = (int(v) for v in rng.integers(40, 120, 2))
        args = (("re(lam)", -3, 3, nx), ("im(lam)", -3, 3, ny))
        a = stability_region(rec, *args, conditions=False)
        b = stability_region(rec, *args, conditions=False, method="schur-cohn")
        used += a.method.startswith("boundary-locus")
        np.testing.assert_array_equal(a.strict, b.strict, err_msg=f"{rho} | {sigma}")
        np.testing.assert_array_equal(a.marginal, b.marginal, err_msg=f"{rho} | {sigma}")
    assert used >= 15
