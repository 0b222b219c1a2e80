"""Numeric bridge: batched monic coefficients vs exact SymPy substitution."""

import numpy as np
import pytest
import sympy as sp

from depthdyn import Param, Recurrence, dense, entangled, general, hyper_connection, momentum, smooth
from depthdyn.errors import DomainError, ParameterError, ShapeError, UnknownParameterError
from depthdyn.numeric.bridge import batch_coefficients, monic_columns


def _exact_monic(rec, point):
    """Exact monic coefficients at one point, by SymPy substitution and exact inversion."""
    sub = rec.subs(
        {
            k: sp.nsimplify(v, rational=True)
            if not isinstance(v, complex)
            else sp.nsimplify(v.real, rational=True) + sp.I * sp.nsimplify(v.imag, rational=True)
            for k, v in point.items()
        }
    )
    A0inv = sub.coeffs[0].inv()
    return [np.array((A0inv * A).evalf(30).tolist(), dtype=complex) for A in sub.coeffs]


def _random_points(rec, rng, n):
    pts = []
    for _ in range(n):
        pt = {}
        for p in rec.params:
            if p.name == rec.lam:
                pt[p.name] = complex(rng.normal(), rng.normal())
            elif p.domain.is_subset(sp.Interval(0, 1)):
                pt[p.name] = float(rng.uniform(0.05, 0.95))
            elif p.domain.is_subset(sp.Interval(0, sp.oo)):
                pt[p.name] = float(rng.uniform(0.1, 3))
            else:
                pt[p.name] = float(rng.normal())
        pts.append(pt)
    return pts


_c = Param("c").symbol

RECS = [
    momentum(),
    smooth(k=3),
    dense(k=4),
    general(rho="a*r**3 - r + b", sigma="r**2 + 1"),
    entangled(n=3),
    hyper_connection(n=2),
    Recurrence(
        coeffs=(sp.Matrix([[1, _c], [0, 2]]), sp.eye(2), sp.Matrix([[_c, 1], [1, 0]])), params=[Param("c")]
    ),
]


@pytest.mark.parametrize("rec", RECS, ids=lambda rc: f"{rc.name}{rc.order}x{rc.dim}")
def test_matches_exact_substitution(rec):
    rng = np.random.default_rng(1)
    pts = _random_points(rec, rng, 7)
    values = {name: np.array([pt[name] for pt in pts]) for name in rec.param_names}
    out = batch_coefficients(rec, values)
    p1 = rec.order + 1
    assert out.shape == ((7, p1) if rec.is_scalar else (7, p1, rec.dim, rec.dim))
    for i, pt in enumerate(pts):
        exact = _exact_monic(rec, pt)
        for j in range(p1):
            got = out[i, j] if rec.is_scalar else out[i, j]
            want = exact[j][0, 0] if rec.is_scalar else exact[j]
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_broadcasting_grid_and_dtype():
    lam = np.linspace(-3, 1, 5)[:, None]
    m = np.array([0.0, 0.25, 0.5])[None, :]
    out = batch_coefficients(momentum(), lam=lam, m=m, eta=2)
    assert out.shape == (5, 3, 3) and out.dtype == np.float64
    np.testing.assert_array_equal(out[..., 0], 1.0)
    np.testing.assert_allclose(out[..., 1], -(1 + m + 2 * lam))
    np.testing.assert_allclose(out[..., 2], np.broadcast_to(m, (5, 3)))
    cplx = batch_coefficients(momentum(), lam=lam + 1j, m=m, eta=2)
    assert cplx.dtype == np.complex128
    np.testing.assert_allclose(cplx[..., 1].imag, -2.0)


def test_non_monic_scalar_is_divided():
    rec = general(rho="a*r**2 - 3*r + 1", sigma="1")
    out = batch_coefficients(rec, lam=[0.0, 1.0], a=[2.0, 4.0])
    np.testing.assert_allclose(out, [[1, -1.5, 0.5], [1, -0.75, 0.0]])


def test_monic_columns_keeps_constants_small():
    cols, batch = monic_columns(momentum(), lam=np.zeros((4, 4)), m=0.5, eta=1)
    assert batch == (4, 4)
    assert np.ndim(cols[2]) == 0 and cols[0] == 1


def test_missing_and_unknown_names():
    with pytest.raises(ParameterError, match=r"missing \['m', 'eta'\]"):
        batch_coefficients(momentum(), lam=1.0)
    with pytest.raises(UnknownParameterError, match="'q'"):
        batch_coefficients(momentum(), lam=1.0, m=0.5, eta=1, q=2)


def test_domain_errors_count_and_first_value():
    with pytest.raises(DomainError, match=r"m must lie in \[0, 1\).*2 of 4 entries.*m=1\.0"):
        batch_coefficients(momentum(), lam=0.0, m=[0.1, 1.0, 0.2, 1.5], eta=1)
    with pytest.raises(DomainError, match="eta"):
        batch_coefficients(momentum(), lam=0.0, m=0.5, eta=-1e-3)
    with pytest.raises(DomainError, match="real"):
        batch_coefficients(momentum(), lam=0.0, m=0.5 + 0.1j, eta=1)
    # a complex array with zero imaginary part is accepted for a real parameter
    out = batch_coefficients(momentum(), lam=0.0, m=np.array([0.5 + 0j]), eta=1)
    assert out.dtype == np.float64


def test_non_finite_and_shape_errors():
    with pytest.raises(ParameterError, match="finite"):
        batch_coefficients(momentum(), lam=[0.0, np.nan], m=0.5, eta=1)
    with pytest.raises(ParameterError, match="finite"):
        batch_coefficients(momentum(), lam=np.inf, m=0.5, eta=1)
    with pytest.raises(ShapeError, match="broadcast"):
        batch_coefficients(momentum(), lam=np.zeros(3), m=np.zeros(4), eta=1)
    with pytest.raises(ParameterError, match="numeric"):
        batch_coefficients(momentum(), lam=[True], m=0.5, eta=1)


def test_singular_leading_coefficient():
    rec = general(rho="a*r**2 - r", sigma="r")
    with pytest.raises(ParameterError, match="singular at 1 point"):
        batch_coefficients(rec, lam=[1.0, 2.0], a=[1.0, 0.0])
    mat = Recurrence(coeffs=(sp.Matrix([[1, _c], [_c, 1]]), sp.eye(2)), params=[Param("c")])
    with pytest.raises(ParameterError, match="singular"):
        batch_coefficients(mat, c=[0.5, 1.0])


def test_numeric_recurrence_needs_no_values():
    out = batch_coefficients(momentum(lam=-1, m=sp.Rational(1, 2), eta=1))
    np.testing.assert_allclose(out, [1.0, -0.5, 0.5])
