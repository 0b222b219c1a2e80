"""Realisations and similarity transforms, including the binomial inversion of 002."""

import random

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

import depthdyn as dd
from depthdyn.recurrence import r
from depthdyn.symbolic.statespace import realisation, signed_pascal


def _backward_differences(seq, n):
    out = list(seq)
    for _ in range(n):
        out = [a - b for a, b in zip(out, out[1:], strict=False)]
    return out[0]


@pytest.mark.parametrize("k", range(1, 8))
def test_signed_pascal_is_binomial_inversion(k):
    P = signed_pascal(k)
    assert P * P == sp.eye(k)  # an involution: P^-1 = P
    rng = random.Random(k)
    w = [sp.Rational(rng.randint(-20, 20), rng.randint(1, 7)) for _ in range(k)]  # x_l, x_{l-1}, ...
    q = P * sp.Matrix(w)
    assert [q[n] for n in range(k)] == [_backward_differences(w, n) for n in range(k)]


@pytest.mark.parametrize("k", range(1, 7))
def test_smooth_hauser_matrix_is_similar_to_companion(k):
    rec = dd.smooth(k=k)
    for source, target in [("companion", "hauser"), ("companion", "difference"), ("difference", "hauser")]:
        sim = dd.similarity(rec, source, target)
        assert sim.verified, (k, source, target)
    sim = dd.similarity(rec, "companion", "hauser")
    assert sim.T == signed_pascal(k) and sim.T_inv == signed_pascal(k)
    # independent: det(rI - A) of the eq. 7 matrix is the characteristic polynomial
    A = realisation(rec, "hauser").A
    assert sp.expand((r * sp.eye(k) - A).det() - rec.charpoly()) == 0
    # and the difference realisation derived via eq. 10 is literally eq. 7
    assert realisation(rec, "difference").A == A


@pytest.mark.parametrize("k", range(1, 5))
def test_dense_difference_realisation(k):
    rec = dd.dense(k=k)
    sim = dd.similarity(rec, "companion", "difference")
    assert sim.verified and sim.T == signed_pascal(k)
    A = realisation(rec, "difference").A
    assert sp.expand((r * sp.eye(k) - A).det() - rec.charpoly()) == 0


def test_dense_eq15_collapse_is_not_a_realisation():
    # 002 eq. 15 with sigma ~ lam collapses to (1 + h lam) I; its spectrum differs from the
    # recurrence's for k >= 2, so it cannot be similar to the companion form
    for k in range(2, 5):
        rec = dd.dense(k=k)
        lam, h = rec.symbols["lam"], rec.symbols["h"]
        collapsed = (r - 1 - h * lam) ** k
        assert sp.expand(collapsed - rec.charpoly()) != 0


def test_momentum_block_and_conventions():
    rec = dd.momentum()
    assert dd.similarity(rec, "companion", "block").verified
    lam, m, eta = (rec.symbols[s] for s in ("lam", "m", "eta"))
    assert realisation(rec, "block").A == sp.Matrix([[1 + eta * lam, m], [eta * lam, m]])
    assert realisation(rec, "content_velocity").A.applyfunc(sp.expand) == realisation(rec, "block").A
    sim = dd.similarity(rec, "content_velocity", "content_velocity_forward")
    assert sim.verified


def test_explicit_oscillator_native_uses_forward_velocity():
    rec = dd.oscillator(form="explicit")
    assert realisation(rec, "explicit").shift == 1
    assert dd.similarity(rec, "companion", "explicit").verified
    assert dd.similarity(rec, "content_velocity_forward", "explicit").T == sp.eye(2)


def test_content_velocity_needs_order_two():
    with pytest.raises(dd.errors.RealisationError):
        dd.similarity(dd.smooth(k=3), "companion", "content_velocity")
    with pytest.raises(dd.errors.RealisationError, match="choose one of"):
        realisation(dd.momentum(), "jordan")


def test_matrix_family_realisations():
    rec = dd.hyper_connection(n=2)
    for name in ("difference",):
        assert dd.similarity(rec, "companion", name).verified
    ent = dd.entangled(n=3).kron(2)
    assert dd.similarity(ent, "companion", "difference").verified


def test_broken_native_realisation_is_detected():
    from dataclasses import replace

    rec = dd.momentum()
    real = rec.native[0]
    bad = replace(rec, native=(replace(real, A=real.A + sp.Matrix([[0, 0], [0, 1]])),))
    assert not dd.similarity(bad, "companion", "block").verified


coeff = st.fractions(min_value=-3, max_value=3, max_denominator=6).map(
    lambda f: sp.Rational(f.numerator, f.denominator)
)


@given(st.lists(coeff, min_size=1, max_size=4), st.lists(coeff, min_size=4, max_size=4))
def test_realisations_evolve_like_the_recurrence(tail, init):
    rec = dd.from_coefficients([1, *tail])
    p = rec.order
    xs = rec.iterate(init[:p], p + 4)
    for name, real in dd.realisations(rec).items():
        assert sp.expand((r * sp.eye(p) - real.A).det() - rec.charpoly()) == 0, name

        # s_l = T w_{l+shift} with w_l = (x_l, ..., x_{l-p+1}); step it with A
        def w(layer):
            return sp.Matrix([xs[layer - j] for j in range(p)])

        start = p - 1
        s = real.T * w(start + real.shift)
        for layer in range(start, start + 3):
            s = real.A * s
            assert (s - real.T * w(layer + 1 + real.shift)).applyfunc(sp.expand) == sp.zeros(p, 1), name
