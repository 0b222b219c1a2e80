"""Forced recurrences: every constant-coefficient case of SymPy's own rsolve tests.

The cases are those of ``sympy/solvers/tests/test_recurr.py`` (SymPy 1.14) whose
coefficients do not depend on ``n``: homogeneous and forced, with the initial data used
there. Each closed form is checked against exact forward iteration of the forced
recurrence (written out here, independently of depthdyn), and against SymPy's stated
solution where the test file gives one (a second, independent derivation).
"""

from __future__ import annotations

import pytest
import sympy as sp

from depthdyn import closed_form, from_coefficients
from depthdyn.errors import InconsistentInitialDataError, ParameterError
from depthdyn.symbolic.forced import annihilator
from depthdyn.symbolic.solve import l

n = sp.Symbol("n", integer=True)
y = sp.Function("y")
a, b, rr, theta = sp.symbols("a b s theta")  # r is the characteristic variable: s for the modulus


def _split(eq):
    """``(coeffs highest first, forcing F(l), kmin)`` of ``sum c_k y(n+k) + rest = 0``."""
    eq = sp.expand(eq.lhs - eq.rhs if isinstance(eq, sp.Eq) else eq)
    calls = sorted((f for f in eq.atoms(sp.Function) if f.func == y), key=lambda f: -(f.args[0] - n))
    shifts = [int(f.args[0] - n) for f in calls]
    kmax, kmin = shifts[0], shifts[-1]
    coeffs = [sp.Integer(0)] * (kmax - kmin + 1)
    for f, k in zip(calls, shifts, strict=True):
        coeffs[kmax - k] = eq.coeff(f)
    rest = sp.expand(eq - sum(eq.coeff(f) * f for f in calls))
    return coeffs, -rest.subs(n, l - kmin), kmin


def _rec(coeffs):
    names = sorted({s.name for c in coeffs for s in sp.sympify(c).free_symbols})
    return from_coefficients([sp.sstr(c) for c in coeffs], params=names)  # strings: parameters by name


def _iterate(coeffs, forcing, first, values, upto):
    """Exact forward iteration of ``sum_j coeffs[j] x_{m+p-j} = F(m)``, independent of depthdyn."""
    p, xs = len(coeffs) - 1, list(values)
    while len(xs) <= upto - first:
        m = first + len(xs) - p
        xs.append(sp.expand((forcing.subs(l, m) - sum(coeffs[j] * xs[-j] for j in range(1, p + 1))) / coeffs[0]))
    return xs


# (equation, initial data {index: value} or None, SymPy's stated solution or None, parameter values)
C0, C1, C2 = sp.symbols("C0 C1 C2")
fib = sp.sqrt(5) * (sp.S.Half + sp.sqrt(5) / 2) ** n - sp.sqrt(5) * (sp.S.Half - sp.sqrt(5) / 2) ** n


def _lst(c, f):  # rsolve_poly / rsolve_hyper's list form: sum c_i y(n+i) = f
    return sum(ci * y(n + i) for i, ci in enumerate(c)) - f


BULK_FUNCS = [n, n + 1, n**2, n**3, n**4, n + n**2, 27 * n + 52 * n**2 - 3 * n**3 + 12 * n**4 - 52 * n**5]
BULK_COEFFS = [[-2, 1], [-2, -1, 1], [-1, 1, 1, -1, 1]]

CASES = [
    # test_rsolve_poly / test_rsolve_hyper (constant coefficients)
    (_lst([-1, -1, 1], 0), None, None, {}),
    (_lst([-1, -1, 1], 1), None, None, {}),
    (_lst([-1, 1], n), None, None, {}),
    (_lst([-1, 1], n**5 + n**3), None, None, {}),
    (_lst([-1, 1], 1 + n), None, None, {}),
    (_lst([-1, 1], 3 * (n + n**2)), None, None, {}),
    (_lst([-a, 1], 0), None, None, {"a": sp.Rational(3, 2)}),
    (_lst([-a, 0, 1], 0), None, None, {"a": 4}),
    (_lst([1, 1, 1], 0), None, None, {}),
    # test_rsolve
    (y(n + 2) - y(n + 1) - y(n), None, None, {}),
    (y(n + 2) - y(n + 1) - y(n), {0: 0, 1: 5}, fib, {}),
    (y(n) - y(n - 1) - y(n - 2), {0: 0, 1: 5}, fib, {}),
    (sp.Eq(y(n), y(n - 1) + y(n - 2)), {0: 0, 1: 5}, fib, {}),
    (y(n) - y(n - 1) - 2, {0: 0}, 2 * n, {}),
    (y(n) - y(n - 1) - 2, {0: 1}, 2 * n + 1, {}),
    (3 * y(n - 1) - y(n) - 1, {0: 0}, -(3**n) / 2 + sp.S.Half, {}),
    (3 * y(n - 1) - y(n) - 1, {0: 1}, 3**n / 2 + sp.S.Half, {}),
    (3 * y(n - 1) - y(n) - 1, {0: 2}, 3 * 3**n / 2 + sp.S.Half, {}),
    (sp.Eq(y(n + 1), a * y(n)), {1: a}, a**n, {"a": sp.Rational(-5, 3)}),
    (y(n) - a * y(n - 2), {1: sp.sqrt(a) * (a + b), 2: a * (a - b)}, a ** (n / 2 + 1) - b * (-sp.sqrt(a)) ** n,
     {"a": 9, "b": sp.Rational(2, 7)}),
    (y(n) + a * (y(n + 1) + y(n - 1)) / 2, None, None, {"a": sp.Rational(1, 3)}),
    (y(n) + y(n + 1) + 2**n + 3**n, None, None, {}),
    # test_rsolve_raises: SymPy refuses cos(n); it is cos(theta l) with theta = 1 here
    (y(n) + y(n + 1) + 2**n + sp.cos(n), {0: 1}, None, {}),
    # test_issue_6844
    (y(n + 2) - y(n + 1) + y(n) / 4, None, None, {}),
    (y(n + 2) - y(n + 1) + y(n) / 4, {0: 0, 1: 1}, 2 ** (1 - n) * n, {}),
    # test_issue_18751
    (y(n) - 2 * rr * sp.cos(theta) * y(n - 1) + rr**2 * y(n - 2), None, None, {"s": 2, "theta": sp.pi / 3}),
    # test_constant_naming / test_issue_8697
    (y(n + 3) - y(n + 2) - y(n + 1) + y(n), None, None, {}),
    (y(n + 3) + 3 * y(n + 2) + 3 * y(n + 1) + y(n), None, None, {}),
    (y(n) - 2 * y(n - 3) + 5 * y(n - 2) - 4 * y(n - 1), {0: 1, 1: 3, 2: 8}, 3 * 2**n - n - 2, {}),
    (y(n + 3) - 3 * y(n + 1) + 2 * y(n), {1: 0, 2: 8, 3: -2}, (-2) ** n + 2 * n, {}),
    (y(n) - 2 * y(n - 1) - n, {0: 1}, 3 * 2**n - n - 2, {}),
    # test_issue_15751 (order 8) and test_issue_17990 (a cubic)
    (y(n) + 21 * y(n + 1) - 273 * y(n + 2) - 1092 * y(n + 3) + 1820 * y(n + 4) + 1092 * y(n + 5)
     - 273 * y(n + 6) - 21 * y(n + 7) + y(n + 8), None, None, {}),
    (-10 * y(n) + 4 * y(n + 1) + 6 * y(n + 2) + 46 * y(n + 3), None, None, {}),
    # test_diofantissue_294
    (y(n) - y(n - 1) - 2 * y(n - 2) - 2 * n, None, None, {}),
    (y(n) - y(n - 1) - 2 * y(n - 2) - 2 * n, {0: -1, 1: 1},
     -((-1) ** n) / 2 + 2 * 2**n - n - sp.Rational(5, 2), {}),
    (-2 * y(n) + y(n + 1) + n - 1, None, None, {}),
    # test_issue_15553
    (sp.Eq(y(n), 2 * y(n - 1) + n), None, None, {}),
    (sp.Eq(y(n + 1), 2 * y(n) + n**2 + 1), None, None, {}),
    (sp.Eq(y(n + 1), 2 * y(n) + n**2 + 1), {1: 0}, 7 * 2**n / 2 - n**2 - 2 * n - 4, {}),
    (sp.Eq(y(n), 2 * y(n - 1) + 3 * n**2), None, None, {}),
    (sp.Eq(y(n), 2 * y(n - 1) + n**2), None, None, {}),
    (sp.Eq(y(n), 2 * y(n - 1) + n), {0: 1}, 3 * 2**n - n - 2, {}),
] + [(_lst(c, sum(ci * f.subs(n, n + i) for i, ci in enumerate(c))), None, None, {})
     for f in BULK_FUNCS for c in BULK_COEFFS]  # test_rsolve_bulk, constant coefficients


def test_case_count():
    forced = sum(1 for eq, *_ in CASES if _split(eq)[1] != 0)
    assert len(CASES) >= 62 and forced >= 40, (len(CASES), forced)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_sympy_rsolve_case(case):
    eq, initial, stated, values = CASES[case]
    coeffs, forcing, kmin = _split(eq)
    rec = _rec(coeffs)
    first = min(initial) if initial else 0
    cf = closed_form(rec, initial, forcing=forcing, start=first)
    point = {k: sp.sympify(v) for k, v in values.items()}
    sub = {sp.Symbol(k): v for k, v in point.items()}
    cs = [sp.sympify(c).subs(sub) for c in coeffs]
    if initial:
        start_vals = [sp.sympify(initial[first + k]).subs(sub) for k in range(len(coeffs) - 1)]
    else:
        start_vals = [sp.Symbol(f"x_{k}") for k in range(len(coeffs) - 1)]
    want = _iterate(cs, forcing.subs(sub), first, start_vals, first + 9)
    for k, w in enumerate(want):
        got = cf.at(first + k, **point)
        d = sp.simplify(sp.expand(got - w))
        if d != 0 and d.has(sp.cos, sp.sin):  # trig identities in cos(1), sin(1): SymPy's simplify stops short
            d = sp.N(d, 60)
            assert abs(d) < 1e-50, (case, first + k, d)
            continue
        assert d == 0, (case, first + k, got, w)
    if stated is not None:
        for k in range(first, first + 6):
            assert sp.simplify(stated.subs(sub).subs(n, k) - cf.at(k, **point)) == 0


def test_inconsistent_initial_data_is_an_error():
    coeffs, forcing, _ = _split(y(n) - y(n - 1) - 2)  # rsolve answers None for {y(0): 0, y(1): 1}
    with pytest.raises(InconsistentInitialDataError, match="x_1 = 1 contradicts"):
        closed_form(_rec(coeffs), {0: 0, 1: 1}, forcing=forcing)
    assert closed_form(_rec(coeffs), {0: 0, 1: 2}, forcing=forcing).at(5) == 10  # consistent extra value


def test_resonance_is_exact_and_a_wrong_forcing_fails():
    rec = from_coefficients([1, -3, 2])  # roots 1 and 2
    cf = closed_form(rec, [0, 0], forcing="2**l")
    assert cf.expr.has(l) and sp.simplify(cf.at(10) - _iterate([1, -3, 2], 2**l, 0, [0, 0], 10)[-1]) == 0
    wrong = _iterate([1, -3, 2], 3**l, 0, [0, 0], 10)[-1]
    assert cf.at(10) != wrong


def test_annihilator_and_bad_forcing():
    assert annihilator(l**2 * 3**l + sp.cos(2 * l)).as_expr().factor() == sp.factor(
        (sp.Symbol("r") - 3) ** 3 * (sp.Symbol("r") ** 2 - 2 * sp.cos(2) * sp.Symbol("r") + 1))
    rec = from_coefficients([1, -1])
    for bad in ("1/l", "l**l", "sqrt(l)", "cos(l**2)"):
        with pytest.raises(ParameterError):
            closed_form(rec, [0], forcing=bad)
    with pytest.raises(ParameterError, match="unknown names"):
        closed_form(rec, [0], forcing="q*l")
