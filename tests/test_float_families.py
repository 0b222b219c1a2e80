"""Families built from float64 data: read exactly by one rule, decided without float residues.

References are derived here: the eigenvalue ``1 + lam s`` of ``H + lam u v^T`` on the
all-ones vector (``H`` doubly stochastic, ``u``, ``v`` multiples of it) gives the interval
``-2/s < lam < 0``; the other eigenvalues of ``H`` are checked inside the unit circle with
NumPy; fractions are checked with :class:`fractions.Fraction`.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from depthdyn import hyper_connection
from depthdyn.cli import main
from depthdyn.families import hc_static, kromhc, mhc, mhc_lite
from depthdyn.families.common import FLOAT_TOLERANCE, exact_float, stochastic_from_floats
from depthdyn.mixing import sinkhorn
from depthdyn.symbolic.intervals import Interval
from depthdyn.symbolic.stability import root_condition, stability_conditions


# ----------------------------------------------------------------- reading a float
@pytest.mark.parametrize("p, q", [(1, 3), (2, 3), (1, 7), (22, 7), (-5, 11), (999_999, 1_000_000 - 3)])
def test_a_float_of_a_small_fraction_reads_back_as_it(p, q):
    x = p / q
    assert exact_float(x) == sp.Rational(p, q)
    assert float(Fraction(p, q)) == x  # the rule's premise: x is the double nearest p/q


def test_floats_that_are_no_small_fraction_keep_their_decimal():
    x = 1 / 3
    neighbour = np.nextafter(x, 1.0)  # one ulp off 1/3: a residue, not 1/3
    assert exact_float(neighbour) != sp.Rational(1, 3)
    assert exact_float(neighbour) == sp.Rational(repr(float(neighbour)))
    assert exact_float(1 / 1_000_003) != sp.Rational(1, 1_000_003)  # past the denominator bound
    assert exact_float(0.1) == sp.Rational(1, 10) and exact_float(0.25) == sp.Rational(1, 4)
    assert exact_float(np.float32(0.5)) == sp.Rational(1, 2)


def test_float_entries_of_a_matrix_argument_are_read_by_the_rule():
    rec = hc_static(n=2, A_r=[[2 / 3, 1 / 3], [1 / 3, 2 / 3]])
    at0 = (-rec.coeffs[1]).subs(rec.lam_symbol, 0)
    assert at0 == sp.Matrix([[sp.Rational(2, 3), sp.Rational(1, 3)], [sp.Rational(1, 3), sp.Rational(2, 3)]])


# ----------------------------------------------------------------- sums that mean 1
def _sums(H):
    n = H.shape[0]
    return [sum(H.row(i)) for i in range(n)], [sum(H.col(j)) for j in range(n)]


@pytest.mark.parametrize("n, seed", [(2, 0), (3, 0), (4, 0), (4, 1), (6, 0), (8, 0)])
def test_a_converged_sinkhorn_matrix_is_made_doubly_stochastic_exactly(n, seed):
    K = sinkhorn(np.random.default_rng(seed).normal(size=(n, n)), 20)  # converged: rows within 1e-15
    H, residual = stochastic_from_floats(K)
    rows, cols = _sums(H)
    assert all(s == 1 for s in rows + cols)
    moved = max(abs(float(H[i, j]) - K[i, j]) for i in range(n) for j in range(n))
    assert residual <= FLOAT_TOLERANCE and moved <= 4 * residual + 1e-16


@pytest.mark.parametrize("n, seed, iterations", [(3, 0, 1), (3, 2, 20), (6, 3, 20)])
def test_a_sinkhorn_run_stopped_early_keeps_its_row_residual(n, seed, iterations):
    K = sinkhorn(np.random.default_rng(seed).normal(size=(n, n)), iterations)
    H, residual = stochastic_from_floats(K)
    rows, cols = _sums(H)
    assert residual > 1e-11  # not converged: rows off 1 by more than the tolerance
    assert all(s == 1 for s in cols)  # its last step normalised the columns: exact to a residue
    assert max(abs(s - 1) for s in rows) > 1e-11
    # mutant: the same matrix with a column pushed off by more than the tolerance stays as read
    K2 = K.copy()
    K2[0, 0] += 1e-9
    H2, _ = stochastic_from_floats(K2)
    assert sum(H2.col(0)) != 1


def test_mhc_lite_float_weights_summing_to_one_up_to_rounding():
    w = np.exp([0.3, -1.2, 0.7, 0.1, 2.0, -0.4])
    w = list(w / w.sum())
    assert sum(Fraction(v) for v in w) != 1  # the floats themselves do not sum to 1
    rec = mhc_lite(n=3, weights=w)
    rows, cols = _sums((-rec.coeffs[1]).subs(rec.lam_symbol, 0))
    assert all(s == 1 for s in rows + cols)
    with pytest.raises(ValueError):  # far from a convex combination: still refused
        mhc_lite(n=2, weights=[0.5, 0.6])


# ----------------------------------------------------------------- conditions of float families
def _expected_interval(n):
    """mHC's gates at logit 0: u = H_post^T = 1, v = H_pre = 1/2: s = n * (n/2) / n = n/2."""
    s = sp.Rational(n, 2)
    return Interval(-2 / s, sp.Integer(0))


@pytest.mark.parametrize("n, seed", [(2, 0), (3, 0), (3, 2), (4, 1), (6, 3)])
def test_mhc_interval_by_the_all_ones_eigenvalue(n, seed):
    K = sinkhorn(np.random.default_rng(seed).normal(size=(n, n)), 20)
    others = np.sort(np.abs(np.linalg.eigvals(K)))[:-1]  # drop the eigenvalue 1
    assert others.max() < 1 - 1e-6  # so only the root 1 + lam s bounds the set
    sc = stability_conditions(mhc(n=n, seed=seed))
    assert sc.intervals.intervals == (_expected_interval(n),)
    assert sc.tolerance_note == ""
    # brute force with floats on both sides of each end
    u, v = np.ones((n, 1)), np.full((1, n), 0.5)
    for end in (-4 / n, 0.0):
        for d in (1e-3, -1e-3):
            lam = end + d
            inside = bool(_expected_interval(n).contains(sp.Rational(lam)))
            radius = np.abs(np.linalg.eigvals(K + lam * u @ v)).max()
            assert (radius < 1) == inside


def _numbers(text: str) -> list[float]:
    return [float(m) for m in re.findall(r"(?<![\w.])-?\d+\.?\d*(?:e[+-]?\d+)?", text)]


@pytest.mark.parametrize("spec", [["mhc", "-p", "n=3"], ["mhc"], ["mhc", "-p", "n=4"],
                                  ["mhc", "-p", "n=3", "-p", "iterations=3"],
                                  ["mhc_lite", "-p", "weights=[0.25,0.75]"], ["kromhc", "-p", "factors=1"],
                                  ["hc_static", "-p", "n=3"]])
def test_derive_prints_no_scaled_or_residue_numbers(spec, capsys):
    main(["derive", *spec])
    out = capsys.readouterr().out
    stability = out[out.index("\nstability"):]
    assert "e+" not in stability and "e-" not in stability
    assert all(abs(x) < 1e15 for x in _numbers(out))
    assert not [x for x in _numbers(stability) if 0 < abs(x) < 1e-9]


def test_derive_mhc_3_conditions(capsys):
    main(["derive", "mhc", "-p", "n=3"])
    out = capsys.readouterr().out
    lines = out[out.index("\nstability"):].splitlines()[2:4]
    assert [ln.strip() for ln in lines] == ["-4/3 < lam < 0", "from: 3*lam + 4 > 0, -lam > 0"]


def test_python_float_data_gives_conditions_at_the_data_scale():
    K = sinkhorn(np.random.default_rng(0).normal(size=(3, 3)), 20)
    raw = hyper_connection(H_res=K, H_pre=[0.5] * 3, H_post=[1.0] * 3, doubly_stochastic=False)
    sc = stability_conditions(raw)
    for c in sc.conditions:
        coeffs = sp.Poly(c.lhs, *sorted(c.lhs.free_symbols, key=str)).coeffs()
        assert max(abs(float(x)) for x in coeffs) < 1e3  # scaled by 1e48 before
    # the family's own reading (doubly stochastic, the default) is exact
    own = stability_conditions(hyper_connection(H_res=K, H_pre=[0.5] * 3, H_post=[1.0] * 3))
    assert own.intervals.intervals == (_expected_interval(3),)


# ----------------------------------------------------------------- marginal within tolerance
def _raw_mhc3():
    K = sinkhorn(np.random.default_rng(0).normal(size=(3, 3)), 20)
    return hyper_connection(H_res=K, H_pre=[0.5] * 3, H_post=[1.0] * 3, doubly_stochastic=False)


def test_a_residue_end_is_marginal_within_tolerance():
    sc = stability_conditions(_raw_mhc3())
    (iv,) = sc.intervals.intervals
    assert iv.hi != 0 and abs(float(iv.hi)) < 1e-15  # the exact answer for the rationals read
    assert "marginal within tolerance 1e-12" in sc.tolerance_note and "of 0" in sc.tolerance_note
    assert sc.tolerance_note in str(sc) and sc.to_json()["tolerance_note"] == sc.tolerance_note


def test_a_root_on_the_circle_up_to_a_residue_is_not_a_verdict():
    rc = root_condition(_raw_mhc3().subs({"lam": 0}))
    assert rc.marginal is False  # exact for the rationals: 1 + 1.7e-16 outside
    assert "marginal within tolerance 1e-12" in rc.tolerance_note
    assert "not decided" in str(rc) and "marginal (root condition): False" not in str(rc)
    # exact data: a verdict, no note
    exact = root_condition(hyper_connection(H_res=[[sp.Rational(1, 3)] * 3] * 3, H_pre=[1] * 3,
                                            H_post=[0] * 3).subs({"lam": 0}))
    assert exact.marginal is True and exact.tolerance_note == ""


def test_a_genuine_gap_is_decided_not_excused():
    # mutant: the same raw matrix with a row pushed 1e-6 off: a real effect, not a residue
    K = sinkhorn(np.random.default_rng(0).normal(size=(3, 3)), 20)
    K[0] *= 1 + 1e-6
    rec = hyper_connection(H_res=K, H_pre=[0.5] * 3, H_post=[1.0] * 3, doubly_stochastic=False)
    assert stability_conditions(rec).tolerance_note == ""
    rc = root_condition(rec.subs({"lam": 0}))
    assert rc.tolerance_note == "" and rc.marginal is False and "marginal (root condition): False" in str(rc)


def test_kromhc_with_float_values_stays_exact():
    rec = kromhc(factors=1, a_1=0.3)
    assert stability_conditions(rec).intervals.intervals == (Interval(sp.Integer(-2), sp.Integer(0)),)


def _two_step(x, x_plus_1):
    """rho(r) - lam sigma(r) with rho = (r - 1)(r - x): consistent when 1 + x is exact."""
    from depthdyn.families import from_coefficients
    from depthdyn.families.common import LAM

    lam = LAM.symbol
    return from_coefficients([1, -x_plus_1 - lam * sp.Rational(3, 2), x + lam / 2], [LAM], lam="lam")


def test_zero_stability_from_a_float_residue_is_not_a_verdict():
    from depthdyn.recurrence import to_exact
    from depthdyn.symbolic.numbers import stability_numbers

    x = 0.1234567890123456
    assert Fraction(1 + x) != 1 + Fraction(x)  # 1 + x rounds: rho(1) = -1e-16, not 0
    sn = stability_numbers(_two_step(to_exact(x), to_exact(1 + x)))
    assert sn.zero_stable is False  # exact for the rationals read
    assert "marginal within tolerance 1e-12" in sn.tolerance_note
    assert "zero-stable:        not decided" in str(sn) and sn.to_json()["tolerance_note"]
    # mutant: the same method with rho(1) = 0 exactly is zero-stable, decided, no note
    exact = stability_numbers(_two_step(to_exact(x), 1 + to_exact(x)))
    assert exact.zero_stable is True and exact.tolerance_note == ""
    assert exact.real_interval.hi == 0


def test_data_scale_rewrites_only_float_sized_factors():
    from depthdyn.symbolic.floats import at_data_scale, scale_free

    lam = sp.Symbol("lam")
    small = sp.factor(4 * lam**2 + 4)  # 4*(lam**2 + 1): exact data, kept as factored
    assert at_data_scale(small) is small and sp.sstr(at_data_scale(small)) == "4*(lam**2 + 1)"
    big = sp.Rational(1, 10**40) * (3 * 10**20 * lam + 10**20) ** 2
    assert at_data_scale(big) == 9 * (lam + sp.Rational(1, 3)) ** 2
    assert sp.expand(at_data_scale(big) - big) == 0
    assert scale_free(-(10**20 * lam + 3 * 10**20)) == -(lam + 3)  # the sign of the condition stays
