"""Random recurrences of order 1..8 built from chosen roots (rational, huge, tiny, repeated,
on the unit circle) through the exact and numeric analyses. The roots are known by
construction, so every expected answer is independent of the code under test; the only
other allowed outcome is a typed depthdyn error."""

import time

import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import depthdyn as dd
from depthdyn.errors import DepthdynError
from depthdyn.numeric.simulate import SimulationOverflowError, final_state, trajectory
from depthdyn.recurrence import r
from depthdyn.symbolic.solve import closed_form
from depthdyn.symbolic.stability import root_condition

Q, I = sp.Rational, sp.I

# factors: (list of roots, where) with where = -1 inside, 0 on, +1 outside the circle
rational = st.builds(lambda p, q: ([Q(p, q)], -1 if abs(Q(p, q)) < 1 else 0 if abs(Q(p, q)) == 1 else 1),
                     st.integers(-9, 9), st.integers(1, 7))
huge = st.builds(lambda k, s: ([s * Q(10) ** k], 1), st.integers(3, 25), st.sampled_from([1, -1]))
tiny = st.builds(lambda k, s: ([s * Q(10) ** -k], -1), st.integers(3, 25), st.sampled_from([1, -1]))
near = st.builds(lambda k, s: ([1 + s * Q(10) ** -k], -1 if s < 0 else 1), st.integers(2, 40),
                 st.sampled_from([1, -1]))
pairs = st.sampled_from([
    ([I, -I], 0), ([(3 + 4 * I) / 5, (3 - 4 * I) / 5], 0), ([(-1 + sp.sqrt(3) * I) / 2, (-1 - sp.sqrt(3) * I) / 2], 0),
    ([Q(1, 2) + I / 3, Q(1, 2) - I / 3], -1), ([2 + I, 2 - I], 1), ([Q(3, 5) + Q(4, 5) * I * Q(99, 100),
                                                                     Q(3, 5) - Q(4, 5) * I * Q(99, 100)], -1),
])
factor = st.tuples(st.one_of(rational, huge, tiny, near, pairs), st.integers(1, 3))


@st.composite
def recurrences(draw):
    picks = draw(st.lists(factor, min_size=1, max_size=4, unique_by=lambda f: str(f[0][0])))
    roots, chosen = [], []
    for (rts, where), mult in picks:
        mult = min(mult, max(1, (8 - len(roots)) // len(rts)))
        if len(roots) + mult * len(rts) > 8:
            continue
        roots += rts * mult
        chosen.append((rts, where, mult))
    poly = sp.Poly(sp.expand(sp.prod([r - z for z in roots])), r)
    return poly, roots, chosen


def verdicts(chosen):
    strict = all(w < 0 for _, w, _ in chosen)
    marginal = all(w < 0 or (w == 0 and k == 1) for _, w, k in chosen)
    return strict, marginal


def margin(roots):
    return min(abs(abs(complex(z)) - 1) for z in roots)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(recurrences())
def test_exact_verdicts_and_closed_form(case):
    poly, roots, chosen = case
    start = time.perf_counter()
    rec = dd.from_coefficients(poly.all_coeffs())
    rc = root_condition(rec)
    assert (rc.strict, rc.marginal) == verdicts(chosen)
    assert sum(k for _, k, _ in rc.roots) == len(roots)
    init = [Q(j + 1, 3) * (-1) ** j for j in range(rec.order)]
    seq = rec.iterate(init, 10)
    cf = closed_form(rec, init)
    for k in (0, rec.order, 10):
        d = sp.expand(cf.at(k) - seq[k])
        assert d == 0 or sp.simplify(d) == 0
        got = cf.numeric(k, digits=30)
        assert abs(sp.N(got - seq[k], 30)) <= sp.Float(10) ** -20 * max(1, abs(sp.N(seq[k], 30)))
    assert time.perf_counter() - start < 60


@settings(max_examples=30, deadline=None, derandomize=True)
@given(recurrences())
def test_numeric_layer_against_the_constructed_roots(case):
    poly, roots, chosen = case
    rec = dd.from_coefficients(poly.all_coeffs())
    mods = [abs(complex(z)) for z in roots]
    try:
        rad = float(dd.spectral_radius(rec))
        spec = dd.spectrum(rec)
    except DepthdynError:  # e.g. roots past the float64 range; typed, never a bare failure
        assert max(mods) > 1e300
        return
    assert abs(rad - max(mods)) <= 1e-9 * max(mods)
    assert abs(float(spec.radius) - rad) <= 1e-12 * rad  # one refinement for both paths
    got = np.sort_complex(np.asarray(spec.refined).ravel())
    want = np.sort_complex(np.array([complex(z) for z in roots]))
    # match each constructed root to a computed one (sorting alone can pair conjugates crosswise)
    for z in want:
        assert np.min(np.abs(got - z)) <= 1e-9 * max(abs(z), 1e-300)
    strict, marginal = dd.stability_mask(rec)
    if margin(roots) > 1e-6:
        assert bool(strict) == verdicts(chosen)[0]


@settings(max_examples=25, deadline=None, derandomize=True)
@given(recurrences(), st.integers(0, 60))
def test_simulation_against_exact_iteration(case, L):
    poly, roots, _ = case
    coeffs = np.array([float(c) for c in poly.all_coeffs()])
    exact_c = [sp.Rational(c) for c in coeffs]  # the float coefficients, exactly
    p = len(coeffs) - 1
    init = np.array([(-1) ** j * (j + 1) / 4 for j in range(p)])
    xs = [sp.Rational(v) for v in init]
    for _ in range(p, L + 1):
        xs.append(-sum(exact_c[j] * xs[-j] for j in range(1, p + 1)) / exact_c[0])
    top = max(abs(float(x)) for x in xs[: L + 1]) if xs else 0.0
    try:
        fs = final_state(coeffs, init, L)
        tr = trajectory(coeffs, init, L)
    except SimulationOverflowError:
        assert top > 1e250  # overflow only where the exact values are that large
        return
    assert top < 1e300
    # float64 loop: error ~ L eps times the largest intermediate magnitude (and cancellation)
    scale = max(top, 1e-300) * 1e-9 * (1 + L) * max(1.0, float(np.abs(coeffs).sum())) ** 2
    assert abs(float(tr[-1]) - float(xs[L])) <= scale
    assert abs(float(fs) - float(xs[L])) <= scale
