"""Numeric radius/spectrum paths on ill-conditioned and badly scaled input, against
references computed independently (mpmath at high precision, or roots known in closed form)."""

import mpmath
import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.errors import ParameterError
from depthdyn.numeric import batch_coefficients, spectra
from depthdyn.numeric.masks import schur_cohn
from depthdyn.recurrence import r


def mp_radius(rec, digits=80, **values):
    """Largest root modulus of the exact characteristic polynomial at the floats' binary values."""
    exact = {rec.symbols[k]: sp.Rational(v) for k, v in values.items()}
    coeffs = sp.Poly(sp.expand(rec.charpoly().xreplace(exact)), r).all_coeffs()
    with mpmath.workdps(digits):
        cs = [mpmath.mpf(sp.Rational(c).p) / sp.Rational(c).q for c in coeffs]
        return max(abs(z) for z in mpmath.polyroots(cs, maxsteps=2000, extraprec=4 * digits))


@pytest.mark.parametrize("lam", [1e-30, -1e-12, 1e-6, 0.0])
def test_clustered_roots_radius_and_spectrum_agree_with_mpmath(lam):
    rec = dd.smooth(k=8)
    want = float(mp_radius(rec, lam=lam, h=1)) if lam else 1.0  # lam = 0: (r - 1)^8
    got = float(dd.spectral_radius(rec, lam=lam, h=1))
    spec = dd.spectrum(rec, lam=lam, h=1)
    assert abs(got - want) < 1e-13 * want
    assert abs(float(spec.radius) - got) < 1e-13 * want  # one refinement serves both
    if lam == 1e-30:  # the float companion alone is off by 2e-2 here
        assert abs(float(np.abs(spectra.roots(batch_coefficients(rec, lam=lam, h=1))).max()) - want) > 1e-3


def test_array_path_refines_from_the_coefficients():
    a = np.array([1.0, -4.0, 6.0, -4.0, 1.0 - 2.0**-40])  # (r - 1)^4 = 2^-40: radius 1 + 2^-10
    assert abs(float(dd.spectral_radius(a)) - (1 + 2.0**-10)) < 1e-15
    b = np.array([1.0, -4.0, 6.0, -4.0, 1.0 + 2.0**-40])  # mutated: roots 1 + 2^-10 e^(i pi/4 + k pi/2)
    want = abs(1 + 2.0**-10 * np.exp(1j * np.pi / 4))
    assert abs(float(dd.spectral_radius(b)) - want) < 1e-15


def test_near_critical_damping_quadratic_is_refined():
    rec = dd.momentum()
    for lam in (-0.25 + 1e-13, -0.25 - 1e-13, -2.25 + 1e-14):
        want = float(mp_radius(rec, m=0.25, eta=1, lam=lam))
        assert abs(float(dd.spectral_radius(rec, lam=lam, m=0.25, eta=1)) - want) < 1e-14


def test_widely_scaled_coefficients_refine_to_the_small_roots():
    rec = dd.from_coefficients([1, -6 * 10**150, 3 * 10**300, 6, -4, -8])
    got = np.sort_complex(dd.spectrum(rec).refined)
    # r^2 - 6e150 r + 3e300 = 0 up to 1e-300 relative: (3 +- sqrt 6) e150; and 3e300 r^3 = 8
    with mpmath.workdps(40):
        small = [complex(mpmath.cbrt(mpmath.mpf(8) / 3 * mpmath.mpf(10) ** -300) * mpmath.expjpi(2 * mpmath.mpf(k) / 3))
                 for k in range(3)]
    want = np.sort_complex(np.concatenate([small, [(3 - 6**0.5) * 1e150, (3 + 6**0.5) * 1e150]]))
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert np.abs(got[np.abs(got) < 1]).min() > 1e-101  # not the silent 0 of a failed refinement


def test_roots_of_coefficients_whose_quotients_overflow():
    got = np.sort_complex(spectra.roots([1e-300, 1.0, 1e300]))
    want = np.sort_complex(1e300 * (-1 + np.array([1j, -1j]) * 3**0.5) / 2)
    np.testing.assert_allclose(got, want, rtol=1e-15)
    np.testing.assert_allclose(spectra.roots([1.0, -3.0, 2.0]), [2, 1])  # ordinary input unchanged
    with pytest.raises(ParameterError, match="float64 range"):
        spectra.roots([1e-300, 1e300])  # a root at 1e600


def test_nan_coefficients_are_an_error_not_unstable():
    rec = dd.general(rho="r**2 + (a**2 - b**2)/2")
    with pytest.raises(ParameterError, match="NaN or infinite"):
        dd.stability_mask(rec, a=1e200, b=1e200)  # a**2 overflows: inf - inf
    strict, marginal = dd.stability_mask(rec, a=1e100, b=1e100)  # same point, in range: r^2, stable
    assert strict and marginal
    with pytest.raises(ParameterError, match="NaN or infinite"):
        schur_cohn([1.0, np.nan, 0.25])
    assert schur_cohn([1.0, 0.0, 0.25])[0]


def mp_final(coeffs, init, L, digits=60):
    """x_L from the exact binary coefficients: distinct roots at high precision, x_l = sum c_i r_i^l."""
    with mpmath.workdps(digits):
        cs = [mpmath.mpf(c) for c in coeffs]
        rts = mpmath.polyroots(cs, maxsteps=500, extraprec=4 * digits)
        V = mpmath.matrix([[z**j for z in rts] for j in range(len(rts))])
        amp = mpmath.lu_solve(V, mpmath.matrix([mpmath.mpf(x) for x in init]))
        return sum(a * z**L for a, z in zip(amp, rts)).real


@pytest.mark.parametrize("roots", [[0.999, 0.999], [0.999, 0.999, 0.999], [0.999, 0.998]])
def test_final_state_of_clustered_roots_matches_the_layer_loop(roots):
    from depthdyn.numeric.simulate import final_state, trajectory

    c, init, L = np.poly(roots), np.ones(len(roots)), 10**5
    fs = final_state(c, init, L)
    assert fs == trajectory(c, init, L)[-1]  # the same method where squaring loses digits
    if len(roots) == 2:  # the loop's own rounding stays at 5e-10 here; squaring gave 4e-8
        ref = mp_final(c, init, L)
        assert abs(fs - float(ref)) < 2e-9 * abs(float(ref))


def test_final_state_of_separated_roots_keeps_repeated_squaring_and_is_accurate():
    from depthdyn.numeric.powers import ill_conditioned
    from depthdyn.numeric.simulate import final_state, prepare_problem

    c, init, L = np.poly([0.9, -0.5, 0.3 + 0.2j, 0.3 - 0.2j]).real, np.array([1.0, 0.5, -1.0, 2.0]), 200
    assert not ill_conditioned(prepare_problem(c, init, False)).any()
    assert ill_conditioned(prepare_problem(np.poly([0.9, 0.9, -0.5]), init[:3], False)).all()
    ref = float(mp_final(c, init, L))
    assert abs(final_state(c, init, L) - ref) < 1e-12 * abs(ref)


def test_infinite_threshold_is_refused():
    from depthdyn.errors import ParameterError
    from depthdyn.numeric.simulate import final_state, trajectory

    for fn in (final_state, trajectory):
        with pytest.raises(ParameterError, match="finite"):
            fn([1.0, -2.0], [1.0], 2000, threshold=np.inf)
    with pytest.raises(ParameterError, match="finite"):
        dd.simulate(dd.residual(), [1.0], 10, threshold=float("nan"), lam=0.5)
    assert dd.simulate(dd.residual(), [1.0], 10, threshold=1e10, lam=1.0).final == 1024.0


def test_huge_grids_are_refused_up_front_with_the_size_and_the_way_out(monkeypatch):
    from depthdyn.errors import ArrayTooLargeError
    from depthdyn.numeric import bridge
    from depthdyn.numeric.simulate import trajectory

    grid = np.broadcast_to(0.0, (500_000_000,))  # 5e8 points without the memory
    with pytest.raises(ArrayTooLargeError, match=r"500000000 points needs .* GiB.*stability_mask"):
        dd.spectrum(dd.smooth(k=4), lam=grid, h=1)
    with pytest.raises(MemoryError, match="split the grid"):
        batch_coefficients(dd.smooth(k=4), lam=grid, h=1)
    with pytest.raises(ArrayTooLargeError, match="74.5 GiB.*memmap"):  # 1e5 x 1e5 float64
        trajectory([1.0, -0.5], np.ones((10**5, 1)), 10**5)
    # the limit is the only thing deciding: the same calls pass under a larger one, and a
    # small request fails under a smaller one
    small = np.linspace(-1, 0, 1000)
    assert batch_coefficients(dd.smooth(k=4), lam=small, h=1).shape == (1000, 5)
    monkeypatch.setattr(bridge, "MAX_BYTES", 1000)
    with pytest.raises(ArrayTooLargeError):
        batch_coefficients(dd.smooth(k=4), lam=small, h=1)
    # the chunked paths need no such limit
    assert dd.stability_mask(dd.smooth(k=1), lam=small, h=1)[0].shape == (1000,)


def test_exact_spellings_are_read_by_the_safe_parser():
    """"1/2" in the numeric layer means 0.5 (as in the symbolic layer); words are refused, never run."""
    from depthdyn import momentum, simulate
    from depthdyn.parse import ParseError

    exact = simulate(momentum(), [1, 1], 12, m="1/2", eta="1", lam="-sqrt(2)/2")
    floats = simulate(momentum(), [1, 1], 12, m=0.5, eta=1.0, lam=-(2**0.5) / 2)
    assert np.array_equal(exact.values, floats.values)
    swept = simulate(momentum(), [1, 1], 12, m=["0", "1/2", "9/10"], eta=1, lam=-1)
    from depthdyn.numeric.bridge import _as_array

    assert _as_array("m", ["0", "1/2"]).dtype == np.float64  # real spellings stay real, as floats do
    assert np.array_equal(swept.values, simulate(momentum(), [1, 1], 12, m=[0, 0.5, 0.9], eta=1, lam=-1).values)
    with pytest.raises(ParseError):
        simulate(momentum(), [1, 1], 5, m="__import__('os').getcwd()", eta=1, lam=-1)
    with pytest.raises(ParseError):
        simulate(momentum(), [1, 1], 5, m="m", eta=1, lam=-1)
    with pytest.raises(ParameterError):  # the domain still applies: m in [0, 1)
        simulate(momentum(), [1, 1], 5, m="3/2", eta=1, lam=-1)


def test_simulate_at_one_complex_lam():
    """A scalar complex lam (no batch) runs; the trajectory equals the closed form r^l of a first-order block."""
    from depthdyn import residual, simulate

    lam = -0.25 + 0.5j
    traj = simulate(residual(), [1], 20, lam=lam)
    assert traj.values.shape == (21,) and traj.values.dtype == np.complex128
    assert np.allclose(traj.values, (1 + lam) ** np.arange(21), rtol=1e-13, atol=0)
    assert simulate(residual(), [1], 20, lam=-0.25).values.dtype == np.float64  # real stays real
    assert simulate(residual(), [1], 20, lam=sp.Rational(-1, 4)).values.dtype == np.float64
