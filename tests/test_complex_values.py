"""Exact complex parameter values (above all ``lam``) through every command and analysis.

Every registered family is built at small sizes with its example values, ``lam`` is given
an exact complex value (Gaussian rationals and an algebraic ``sqrt(2)*I/2``), and
``derive``, ``check``, ``solve`` and the analyses must answer (exit 0) or refuse in one
typed line (exit 2), never fail inside (exit 3). Verdicts are cross-checked against an
independent computation: the root moduli of ``numpy.roots`` at complex128 (away from
``|r| = 1``) for ``root_condition`` and the stability conditions, exact iteration of the
recurrence for the closed form. The same runs with the other parameters left symbolic.
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.cli import main
from depthdyn.families import FAMILIES
from depthdyn.parse import parse_expr
from depthdyn.recurrence import r
from depthdyn.symbolic.signs import cheap_to_factor

LAMS = ("I", "-1/2+I/2", "1/3+I/5", "-2+I/100", "sqrt(2)*I/2")
#: larger structural sizes on top of each family's example
SIZES = (("smooth", {"k": 3}), ("dense", {"k": 3}), ("entangled", {"n": 3}), ("adams_bashforth", {"k": 3}),
         ("bdf", {"k": 3}), ("adams_moulton", {"k": 2}), ("general", {"rho": "r**2-r", "sigma": "3*r/2-1/2"}))
#: numeric root moduli closer than this to 1 decide nothing
MARGIN = 1e-6


def _example(name: str, extra: dict, values: bool = True):
    """``(recurrence, CLI arguments)`` for family ``name``: example structure, and the example
    values of the other parameters unless ``values`` is false."""
    fam = FAMILIES[name]
    ex = {**fam.example, **extra}
    rec = fam(**{k: v for k, v in ex.items() if k in fam.structural})
    argv = []
    for k, v in ex.items():
        if k in ("rho", "sigma"):
            argv += [f"--{k}", str(v)]
        elif k in fam.structural or (values and k in rec.param_names):
            argv += ["-p", f"{k}={v}"]
    if values:
        rec = rec.subs({k: v for k, v in ex.items() if k not in fam.structural and k in rec.param_names})
    return rec, argv


CONFIGS = [(name, {}) for name in FAMILIES if _example(name, {})[0].lam is not None] + list(SIZES)
# every configuration gets one lam, all lams are used (rotating keeps the run short)
CASES = [(name, extra, LAMS[i % len(LAMS)]) for i, (name, extra) in enumerate(CONFIGS)]
BARE = [(name, extra, LAMS[(i + 2) % len(LAMS)]) for i, (name, extra) in enumerate(CONFIGS)]


def _id(case) -> str:
    name, extra, lam = case
    return "-".join([name, *(f"{k}={v}" for k, v in extra.items() if k not in ("rho", "sigma")), lam])


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _assert_answered(argv, code, err) -> None:
    assert code in (0, 2), f"depthdyn {' '.join(argv)} -> exit {code}: {err}"
    if code == 2:
        assert err.count("\n") == 1 and "internal error" not in err, err


# ------------------------------------------------------------------ independent numbers
def _numeric_roots(rec) -> np.ndarray:
    """Roots of the characteristic polynomial by ``numpy.roots`` at complex128."""
    coeffs = [complex(sp.N(c, 30)) for c in sp.Poly(sp.expand(rec.charpoly()), r).all_coeffs()]
    return np.roots(coeffs)


def _numeric_strict(rec) -> bool | None:
    """All roots strictly inside the unit circle by floats; ``None`` within MARGIN of it."""
    mods = np.abs(_numeric_roots(rec))
    if np.min(np.abs(mods - 1)) < MARGIN:
        return None
    return bool(np.max(mods) < 1)


def _roots_match(exact: list, numeric: np.ndarray, tol: float = 1e-7) -> bool:
    """Greedy matching of exact roots (with multiplicity) to float roots."""
    left = list(numeric)
    for v in exact:
        z = complex(sp.N(v, 30))
        i = int(np.argmin([abs(z - w) for w in left]))
        # an m-fold root is good only to eps**(1/m) in floats
        if abs(z - left[i]) > tol ** (1 / exact.count(v)) * max(1, abs(z)):
            return False
        left.pop(i)
    return not left


def _initial(rec) -> list:
    if rec.is_scalar:
        return [sp.Integer(1)] + [sp.Rational(-1, 3) * k for k in range(1, rec.order)]
    return [sp.Matrix([1 if i == k % rec.dim else 0 for i in range(rec.dim)]) for k in range(rec.order)]


def _closed_form_matches(cf, rec, initial, steps: int = 6) -> bool:
    """``cf.at(l)`` against exact iteration of ``rec`` from ``initial``, to 25 digits."""
    seq = rec.iterate(initial, steps)
    for k, want in enumerate(seq):
        got = sp.Matrix([cf.at(cf.start + k)])
        for a, b in zip(got, sp.Matrix([want]), strict=True):
            if abs(complex(sp.N(a - b, 40))) > 1e-25 * max(1, abs(complex(sp.N(b, 40)))):
                return False
    return True


# ------------------------------------------------------------------ the CLI
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_cli_derive_check_solve(case):
    name, extra, lam = case
    rec, argv = _example(name, extra)
    rec = rec.subs({rec.lam: parse_expr(lam)})
    base = [name, *argv, "-p", f"lam={lam}"]
    code, out, err = _run(["derive", *base, "--json"])
    assert code == 0, err
    rep = json.loads(out)
    st, verdict = rep["stability"], _numeric_strict(rec)
    if st["never"]:
        assert st["reason"], "a 'never' verdict must say why"
    if verdict is not None:  # the exact verdict against float root moduli
        truth = {"True": sp.true, "False": sp.false}
        conds = [truth[c] if c in truth else parse_expr(c) for c in st["conditions"]]
        assert all(c in (sp.true, sp.false) for c in conds), st
        assert (not st["never"] and all(c is sp.true for c in conds)) == verdict, (st, verdict)
    assert _roots_match([parse_expr(x["root"]) for x in rep["roots"] for _ in range(x["multiplicity"])],
                        _numeric_roots(rec))
    assert all(v["holds"] for v in rep["vieta"])
    code, out, err = _run(["check", *base, "--samples", "2"])
    assert code == 0, out + err
    # vector states (several streams) as bracketed vectors: --initial '[1,0],[0,1]'
    spell = (lambda v: sp.sstr(v)) if rec.is_scalar else (lambda v: "[" + ",".join(map(sp.sstr, v)) + "]")
    init = ["--initial", ",".join(spell(v) for v in _initial(rec))]
    code, out, err = _run(["solve", *base, *init, "--terms", "4", "--json"])
    assert code == 0, err
    seq = rec.iterate(_initial(rec), 3)  # the printed terms are the exact iterates
    for term, want in zip(json.loads(out)["terms"], seq, strict=True):
        x = term["x"]  # one string, or a list of the entries of a vector state
        got = sp.Matrix([parse_expr(e) for e in ([x] if isinstance(x, str) else x)])
        assert all(abs(complex(sp.N(a - b, 40))) < 1e-25 for a, b in zip(got, sp.Matrix([want]), strict=True))


@pytest.mark.parametrize("case", BARE, ids=_id)
def test_cli_derive_with_symbolic_parameters(case):
    """The other parameters stay symbolic: every part is derived or refused in one line."""
    name, extra, lam = case
    _, argv = _example(name, extra, values=False)
    full = ["derive", name, *argv, "-p", f"lam={lam}"]
    code, out, err = _run(full)
    _assert_answered(full, code, err)
    assert "never: \n" not in out  # a 'never' verdict always comes with its reason


# ------------------------------------------------------------------ the analyses
@pytest.mark.parametrize("case", CASES, ids=_id)
def test_analyses_against_numbers(case):
    name, extra, lam = case
    rec, _ = _example(name, extra)
    rec = rec.subs({rec.lam: parse_expr(lam)})
    numeric = _numeric_roots(rec)
    rts = dd.roots(rec)
    assert rts.degree == len(numeric) and _roots_match(rts.values(), numeric)
    assert dd.vieta(rec).holds
    disc = dd.discriminant(rec)
    structure = dd.root_structure(rec)
    if len(numeric) >= 2:  # a repeated root iff the discriminant vanishes (exact number here)
        assert disc.is_number
        repeated = any(rt.multiplicity > 1 for rt in rts)
        assert (disc == 0) == repeated
        assert [c for c, _ in structure.cases] == [sp.true]
        assert ("repeated" in structure.cases[0][1]) == repeated
    verdict = _numeric_strict(rec)
    rc = dd.root_condition(rec)
    sc = dd.stability_conditions(rec)
    assert sc.never or not sc.conditions or sc.holds() in (True, False)
    if verdict is not None:
        assert rc.strict == verdict
        assert (not sc.never and sc.holds()) == verdict
        if sc.never:
            assert sc.reason
    assert abs(rc.spectral_radius - np.max(np.abs(numeric))) < 1e-6
    initial = _initial(rec)
    cf = dd.closed_form(rec, initial)
    assert _closed_form_matches(cf, rec, initial)


@pytest.mark.parametrize("case", BARE, ids=_id)
def test_analyses_with_symbolic_parameters(case):
    name, extra, lam = case
    rec, _ = _example(name, extra, values=False)
    rec = rec.subs({rec.lam: parse_expr(lam)})
    for analysis in (dd.roots, dd.vieta, dd.discriminant, dd.root_structure, dd.stability_conditions):
        try:
            analysis(rec)
        except dd.errors.DepthdynError:  # a typed refusal (budget, degree) is an answer
            pass
    if rec.param_names:  # parameters left symbolic: the exact root condition needs numbers
        with pytest.raises(dd.errors.ParameterError, match="needs numbers"):
            dd.root_condition(rec)


# ------------------------------------------------------------------ the cross-checks can fail
def test_cross_checks_catch_wrong_inputs():
    rec = dd.momentum(m=sp.Rational(1, 2), eta=1, lam=-1 + sp.I / 5)
    assert _numeric_strict(rec) is True and dd.root_condition(rec).strict
    # a root moved off its place is not matched
    values = dd.roots(rec).values()
    assert _roots_match(values, _numeric_roots(rec))
    assert not _roots_match([values[0] + sp.Rational(1, 1000)] + values[1:], _numeric_roots(rec))
    # moving lam across the boundary flips the float verdict the exact one is compared with
    assert _numeric_strict(dd.momentum(m=sp.Rational(1, 2), eta=1, lam=1 + sp.I)) is False
    # a closed form from other initial values disagrees with the iteration
    cf = dd.closed_form(rec, [1, 0])
    assert _closed_form_matches(cf, rec, [1, 0])
    assert not _closed_form_matches(cf, rec, [1, sp.Rational(1, 10**6)])
    # a verdict within the margin of the circle decides nothing
    assert _numeric_strict(dd.from_coefficients([1, "-(1 - 10**-9)*I"])) is None


# ------------------------------------------------------------------ the bugs, one by one
def test_root_structure_of_complex_coefficients():
    """Complex discriminants are not compared with 0 (they were: TypeError, exit 3)."""
    rec = dd.general(rho="r**2 - r", sigma="3*r/2 - 1/2").subs(lam=sp.Rational(-1, 2) + sp.I / 2)
    assert dd.root_structure(rec).cases == ((sp.true, "distinct roots (non-real coefficients)"),)
    repeated = dd.from_coefficients([1, "-2*I", -1])  # (r - I)**2
    assert dd.root_structure(repeated).cases == ((sp.true, "a repeated root ((r - I)**2)"),)
    assert dd.root_structure(dd.from_coefficients([1, "-I"])).cases == ((sp.true, "one root"),)
    assert dd.root_structure(dd.from_coefficients([1, -2])).cases == ((sp.true, "one real root"),)
    code, _, err = _run(["derive", "general", "--rho", "r**2-r", "--sigma", "3*r/2-1/2", "-p", "lam=-1/2+I/2"])
    assert code == 0, err


def test_complex_discriminant_cases_pruned_on_the_domains():
    # smooth k=3 at lam = I: disc = h**6 * (27 + 4*I*h**3) has no zero for h > 0
    cases = dd.root_structure(dd.smooth(k=3, lam=sp.I)).cases
    assert [type(c) for c, _ in cases] == [sp.Ne]
    # entangled at lam = I: the square-free part's discriminant gamma**2 vanishes at gamma = 0
    cases = dd.root_structure(dd.entangled(n=3, lam=sp.I)).cases
    assert [type(c) for c, _ in cases] == [sp.Ne, sp.Eq]
    assert "a repeated root" in cases[0][1] and "collide" in cases[1][1]
    # momentum at lam = I: disc = (m - 1)**2 - eta**2 + 2*I*eta*(m + 1); the imaginary part
    # vanishes only at eta = 0, where the real part is (m - 1)**2 > 0 for m < 1: never repeated
    cases = dd.root_structure(dd.momentum(lam=sp.I)).cases
    assert [type(c) for c, _ in cases] == [sp.Ne]
    # ... but where m may reach 1 (a mutated domain), m = 1, eta = 0 is a repeated root
    loose = dd.from_coefficients([1, "-(I*eta + m + 1)", "m"], params=("eta", "m"))
    assert [type(c) for c, _ in dd.root_structure(loose).cases] == [sp.Ne, sp.Eq]
    # a common zero off the linear factor's line is not ruled out: (a - 1) + I*a*(b - 2)
    common = dd.from_coefficients([1, 0, "-(a - 1) - I*a*(b - 2)"], params=("a", "b"))
    assert [type(c) for c, _ in dd.root_structure(common).cases] == [sp.Ne, sp.Eq]


def test_gaussian_parameter_values_with_symbols_left():
    """A Gaussian lam with h symbolic: rational sample points in ``ZZ_I`` (CoercionFailed before)."""
    rec = dd.smooth(k=3, lam=sp.I)
    assert dd.vieta(rec).holds
    code, out, err = _run(["derive", "smooth", "-p", "k=3", "-p", "lam=I"])
    assert code == 0, err
    # 27 + 4*I*h**3 has no real zero: only the distinct-roots case remains
    assert "Eq(" not in out and "distinct roots (non-real coefficients)" in out


def test_algebraic_coefficients():
    """Radicals in the coefficients factor over their algebraic field (EX could not: exit 3)."""
    for lam in (sp.sqrt(2) * sp.I / 2, sp.sqrt(2)):
        rec = dd.momentum(m=sp.Rational(1, 2), eta=1, lam=lam)
        assert _roots_match(dd.roots(rec).values(), _numeric_roots(rec))
        assert dd.root_condition(rec).strict is _numeric_strict(rec)
    rec = dd.smooth(k=3, h=1, lam=sp.sqrt(2) * sp.I / 2)
    assert [rt.multiplicity for rt in dd.roots(rec)] == [1, 1, 1]
    code, _, err = _run(["solve", "momentum", "-p", "m=1/2", "-p", "eta=1", "-p", "lam=sqrt(2)*I/2",
                         "--initial", "1,0"])
    assert code == 0, err


def test_never_verdict_states_its_reason():
    code, out, err = _run(["derive", "entangled", "-p", "n=3", "-p", "lam=1/3+I/5"])
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.strip().startswith("never:"))
    assert "product of the roots" in line  # |1 + lam| > 1 here
    sc = dd.stability_conditions(dd.entangled(n=3, lam=sp.Rational(1, 3) + sp.I / 5))
    assert sc.never and sc.to_json()["reason"] == sc.reason != ""
    # and a family that can be stable says no 'never' at all
    assert not dd.stability_conditions(dd.entangled(n=3, lam=sp.Rational(-1, 3) + sp.I / 5)).never


def test_complex_coefficients_in_many_symbols_are_not_factored():
    a, b, c = sp.symbols("a b c")
    assert cheap_to_factor(a * b * c + a**2)
    assert not cheap_to_factor(sp.I * a * b * c + a**2)  # Trager over QQ<I>: minutes at this size
    assert cheap_to_factor(sp.I * a * b + a**2)
