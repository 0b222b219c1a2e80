"""Readable default output: roots of long radical form as the roots of their factor, polynomials in
descending powers of r, parameters summarised, a short Recurrence repr, and the depth limit of
the C^3 smooth network (whose Cardano roots SymPy's series cannot expand)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.cli import main
from depthdyn.errors import ParameterError
from depthdyn.families.registry import FAMILIES
from depthdyn.printing import sstr

r, lam, h, m, eta = sp.symbols("r lam h m eta")


def run(capsys, *args) -> str:
    code = main(["derive", *args])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def block(text: str, title: str) -> list[str]:
    """The indented lines under the line that starts with ``title``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    out = []
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        out.append(line)
    return out


# ------------------------------------------------------------------ polynomials
def top_terms(text: str) -> list[str]:
    """The top-level terms of a printed sum, each with its sign."""
    terms, depth, cur = [], 0, ""
    i = 0
    while i < len(text):
        ch = text[i]
        depth += (ch in "([") - (ch in ")]")
        if depth == 0 and text[i:i + 3] in (" + ", " - "):
            terms.append(cur)
            cur = text[i + 1]
            i += 3
            continue
        cur += ch
        i += 1
    return [*terms, cur]


def descending(text: str, exact: sp.Expr) -> None:
    """``text`` reads back as ``exact`` and its terms have strictly falling degree in r."""
    names = {s.name: s for s in exact.free_symbols}
    back = sp.sympify(text, locals=names)
    assert sp.expand(back - exact) == 0
    degrees = [sp.degree(sp.sympify(t.replace(" ", ""), locals=names), r) for t in top_terms(text)]
    assert degrees == sorted(set(degrees), reverse=True), (text, degrees)


def test_the_term_splitter_and_the_order_check_can_fail():
    assert top_terms("r**2 - (a + b)*r + 1") == ["r**2", "-(a + b)*r", "+1"]
    with pytest.raises(AssertionError):  # SymPy's own order: the constant first
        descending(sp.sstr(m + r**2 - (eta * lam + m + 1) * r), r**2 - (eta * lam + m + 1) * r + m)
    with pytest.raises(AssertionError):  # r**2 twice: not collected
        descending("r**2 + m*r**2 - r", (1 + m) * r**2 - r)


@pytest.mark.parametrize("family,exact", [
    (("momentum",), r**2 - (eta * lam + m + 1) * r + m),
    (("smooth", "-p", "k=3"), (r - 1) ** 3 - h**3 * lam * r**2),
    (("momentum", "-p", "m=1/2"), r**2 - (eta * lam + sp.Rational(3, 2)) * r + sp.Rational(1, 2)),
    # BDF3: 11/6 y_{n+3} - 3 y_{n+2} + 3/2 y_{n+1} - 1/3 y_n = h f_{n+3} (Hairer & Wanner I, III.1)
    (("bdf", "-p", "k=3"),
     (sp.Rational(11, 6) - lam) * r**3 - 3 * r**2 + sp.Rational(3, 2) * r - sp.Rational(1, 3)),
])
def test_the_characteristic_polynomial_prints_in_descending_powers(capsys, family, exact):
    line = next(x for x in run(capsys, *family).splitlines() if x.startswith("characteristic polynomial:"))
    descending(line.split(": ", 1)[1], sp.expand(exact))
    assert not line.split(": ", 1)[1].startswith("-(")  # a leading sum of mixed signs keeps them


def test_a_float_matrix_family_prints_its_structured_pieces_in_descending_powers(capsys):
    # mHC's H_res is doubly stochastic: the structured form is (r - 1 - lam s) q(r), q with float coefficients
    out = run(capsys, "mhc", "-p", "n=3")
    line = next(x for x in out.splitlines() if x.startswith("  charpoly = "))
    texts = re.findall(r"\((r\*\*\d[^()]*)\)", line)
    assert texts, line
    for text in texts:
        poly = sp.Poly(sp.sympify(text, locals={"r": r}), r)
        degrees = [sp.degree(sp.sympify(t.replace(" ", ""), locals={"r": r}), r) for t in top_terms(text)]
        assert degrees == list(range(poly.degree(), -1, -1))
        assert not text.startswith("1.0*")  # a leading 1 stays 1 beside float coefficients


def test_sstr_keeps_everything_else_as_sympy_prints_it():
    assert sstr(lam**2 + 3 * lam + 1) == sp.sstr(lam**2 + 3 * lam + 1)
    assert sstr((r - 1) * sp.Function("q")(r) + 1) == sp.sstr((r - 1) * sp.Function("q")(r) + 1)
    assert sstr(sp.Rational(3, 2) * r**2 - r) == "3*r**2/2 - r"
    assert sstr(-2 * r**3 + r) == "-2*r**3 + r"


# ------------------------------------------------------------------------ roots
def test_symbolic_cardano_roots_are_the_roots_of_their_factor(capsys):
    out = run(capsys, "smooth", "-p", "k=3")
    roots = block(out, "roots:")
    assert len(roots) == 1 and max(map(len, out.splitlines())) < 250
    text = roots[0]
    assert "**(1/3)" not in text and "--radicals" in text and "each of the 3 roots of" in text
    factor = re.search(r"roots of (.*?)  \(", text).group(1)
    descending(factor, sp.expand((r - 1) ** 3 - h**3 * lam * r**2))


def test_radicals_on_request_and_in_the_json(capsys):
    out = run(capsys, "smooth", "-p", "k=3", "--radicals")
    lines = block(out, "roots:")
    assert len(lines) == 3 and all("**(1/3)" in x for x in lines)
    P = (r - 1) ** 3 - h**3 * lam * r**2
    point = {lam: sp.Rational(-7, 5), h: sp.Rational(3, 4)}
    texts = [x.split("r = ", 1)[1].split("  (")[0] for x in lines]
    values = [sp.N(sp.sympify(t, locals={"h": h, "lam": lam}).subs(point), 30) for t in texts]
    assert all(abs(sp.N(P.subs(point).subs(r, v), 30)) < 1e-20 for v in values)
    assert abs(sp.N(P.subs(point).subs(r, values[0] + sp.Rational(1, 10**6)))) > 1e-8  # the check can fail
    rep = json.loads(run(capsys, "smooth", "-p", "k=3", "--json"))
    assert all("**(1/3)" in rt["root"] for rt in rep["roots"])
    assert rep["root_factors"][0]["degree"] == 3 and rep["root_factors"][0]["values"] is None


def test_numeric_cubic_roots_print_as_crootof_with_values_that_numpy_confirms(capsys):
    out = run(capsys, "smooth", "-p", "k=3", "-p", "h=1", "-p", "lam=-1")
    lines = block(out, "roots:")
    assert len(lines) == 3 and all("CRootOf(r**3 - 2*r**2 + 3*r - 1, " in x for x in lines)
    got = sorted((complex(sp.sympify(x.split("≈ ", 1)[1].split("  (")[0])) for x in lines),
                 key=lambda z: (round(z.real, 6), z.imag))
    want = sorted(np.roots([1, -2, 3, -1]), key=lambda z: (round(z.real, 6), z.imag))  # (r-1)^3 = r^2
    assert np.allclose(got, want, atol=1e-9)
    assert not np.allclose(got, sorted(np.roots([1, -2, 3, -2]), key=lambda z: (round(z.real, 6), z.imag)))


def test_short_radicals_stay_radicals(capsys):
    lines = block(run(capsys, "momentum"), "roots:")
    assert len(lines) == 2 and all("sqrt(" in x and "RootOf" not in x for x in lines)


def test_a_stability_block_that_says_never_has_no_stray_false_line(capsys):
    out = run(capsys, "smooth", "-p", "k=3")
    stab = block(out, "stability")
    assert any(x.strip().startswith("never:") for x in stab)
    assert not any(x.strip() == "False" for x in stab)


# ------------------------------------------------------------------- parameters
def test_indexed_parameters_are_summarised_and_listed_under_full(capsys):
    n = 8
    out = run(capsys, "hyper_connection", "-p", f"n={n}")
    params = out.split("\n\n")[0].splitlines()[4:]
    assert len(params) == 4, params  # lam, hres_i_j, hpre_i, hpost_i
    hres = next(x for x in params if x.strip().startswith("hres_i_j"))
    assert f"{(n - 1) ** 2} parameters" in hres and f"i = 1..{n - 1}, j = 1..{n - 1}" in hres
    assert any(f"hpre_i in Reals: {n} parameters" in x for x in params)
    rep = json.loads(run(capsys, "hyper_connection", "-p", f"n={n}", "--json"))
    assert len(rep["params"]) == 1 + (n - 1) ** 2 + 2 * n  # the JSON keeps every parameter


def test_full_lists_every_parameter(capsys):
    out = run(capsys, "hyper_connection", "-p", "n=3", "--full")
    params = [x for x in out.split("\n\n")[0].splitlines() if x.startswith("  ") and " in " in x]
    assert len(params) == 1 + 4 + 3 + 3
    short = run(capsys, "hyper_connection", "-p", "n=3")
    assert len([x for x in short.split("\n\n")[0].splitlines() if x.startswith("  ")]) == 4


# ------------------------------------------------------------------------- repr
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_family_has_a_short_repr(name):
    fam = FAMILIES[name]
    rec = fam(**fam.example_structural())  # symbolic parameters left open
    text = repr(rec)
    assert text.startswith("Recurrence(") and text.endswith(")") and len(text) <= 200, text
    assert f"name={rec.name!r}" in text and f"order={rec.order}" in text


def test_the_repr_polynomial_reads_back_and_a_long_one_is_cut():
    text = repr(dd.momentum())
    poly = text.split("char_poly=", 1)[1][:-1]
    rec = dd.momentum()
    assert sp.expand(sp.sympify(poly, locals={**rec.symbols, "r": r}) - rec.charpoly()) == 0
    long = dd.general(rho=" + ".join(f"{k + 1}*a{k}*r**{k}" for k in range(12)))
    assert len(repr(long)) <= 200 and "...)" in repr(long)
    assert len(repr(dd.momentum())) < len(str(dd.momentum().__dict__))  # the dataclass dump it replaces


# ------------------------------------------------------------------- depth limit
def smooth_over_depth(k: int):
    L = sp.Symbol("L", positive=True)
    return dd.smooth(k=k).subs(h=1 / L), L


def iterate(k: int, lam_value: complex, L: int) -> complex:
    """``x_L`` of ``(r - 1)^k x = lam / L^k r^(k-1) x`` from ``x_0 = ... = x_{k-1} = 1`` (float)."""
    a = [math.comb(k, i) * (-1) ** (i + 1) for i in range(1, k + 1)]
    a[0] += lam_value / L**k
    xs = [1.0 + 0j] * k
    for _ in range(L - k + 1):
        xs.append(sum(a[i] * xs[-1 - i] for i in range(k)))
    return xs[L]


def test_the_depth_limit_of_the_c3_smooth_network():
    rec, L = smooth_over_depth(3)
    res = dd.depth_limit(rec, [1, 1, 1])
    lam_s = rec.lam_symbol
    for value in (-1, sp.Rational(1, 2) + sp.I, 2):
        limit = complex(sp.N(res.limit.xreplace({lam_s: value}), 20))
        # y''' = lam y, y(0) = 1, y'(0) = y''(0) = 0: y(1) = sum_n lam^n / (3n)!
        series = sum(complex(value) ** n / math.factorial(3 * n) for n in range(30))
        assert abs(limit - series) < 1e-12
        c1 = complex(sp.N((res.leading_term * res.depth).xreplace({lam_s: value}), 20))
        for depth in (300, 600):  # the 1/L term: what is left is O(1/L^2)
            x = iterate(3, complex(value), depth)
            assert abs(x - limit - c1 / depth) * depth**2 < 5
        assert abs(iterate(3, complex(value), 600) - limit) * 600 > 0.1  # without the 1/L term: off
    assert res.order == 1


def test_the_puiseux_expansion_agrees_with_the_radical_one_on_a_quadratic():
    from depthdyn.symbolic.puiseux import expansion

    rec, L = smooth_over_depth(2)
    res = dd.depth_limit(rec, [1, 1])  # (r - 1)^2 = lam r / L^2: square roots, SymPy's series
    eps = sp.Symbol("eps", positive=True)
    lam_s = rec.lam_symbol
    P = sp.expand((r - 1) ** 2 * 1 - lam_s * eps**2 * r)
    a = sp.Poly(P, r).all_coeffs()
    N = a[0] * r + (a[0] + a[1])  # x_0 = x_1 = 1
    got = expansion(P, N, r, eps, 0, 2)
    for k in (0, 1):
        want = res.expansion[k]
        for value in (-3, sp.Rational(1, 3) + 2 * sp.I):
            assert abs(complex(sp.N((got.get(k, 0) - want).xreplace({lam_s: value}), 30))) < 1e-20
    assert abs(complex(sp.N(got[0].xreplace({lam_s: -3}) - sp.exp(-3)))) > 1e-3  # not e^lam


def test_a_cube_root_speed_has_no_limit_and_compare_says_so():
    from dataclasses import replace

    rec = dd.smooth(k=3, h=1)
    Lp = dd.Param("L", sp.Interval.open(0, sp.oo))
    lam_s = rec.lam_symbol
    scaled = replace(rec, coeffs=tuple(c.xreplace({lam_s: lam_s / Lp.symbol}) for c in rec.coeffs),
                     params=rec.params + (Lp,), native=())
    with pytest.raises(ParameterError, match="no limit"):
        dd.depth_limit(scaled, [1, 1, 1])
    # iteration agrees: lam -> lam/L grows like exp(c L^(2/3))
    assert abs(iterate_scaled_once(-1, 1000)) > 1e10
    from depthdyn.compare import compare

    row = compare("smooth:k=3", n=21).rows[0]
    assert row.depth_limit.startswith("no finite limit") and row.limit is None


def iterate_scaled_once(lam_value: float, L: int) -> complex:
    a = [3 + lam_value / L, -3, 1]
    xs = [1.0, 1.0, 1.0]
    for _ in range(L - 2):
        xs.append(sum(a[i] * xs[-1 - i] for i in range(3)))
    return xs[L]


def test_the_cli_page_shows_what_derive_prints(capsys):
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    shown = page.split("$ depthdyn derive smooth -p k=3\n", 1)[1].split("```", 1)[0]
    first, second = shown.split("$ depthdyn derive smooth -p k=3 -p h=1 -p lam=-1\n")
    for text, args in ((first, ("smooth", "-p", "k=3")), (second, ("smooth", "-p", "k=3", "-p", "h=1",
                                                                   "-p", "lam=-1"))):
        out = run(capsys, *args).splitlines()
        lines = [x for x in text.splitlines() if x != "..."]
        assert lines and all(x in out for x in lines), [x for x in lines if x not in out]


def test_a_plain_cube_root_stays_a_radical_and_cardano_does_not(capsys):
    from depthdyn.derivation import RADICAL_CHARS, _cube_of_sqrt

    lines = block(run(capsys, "general", "--rho", "r**3 - a"), "roots:")
    assert len(lines) == 3 and all("a**(1/3)" in x for x in lines)  # a**(1/3)*(-1/2 + sqrt(3)*I/2)
    cardano = "(q/2 + sqrt(q**2/4 + 1))**(1/3) - 1"  # short, yet a cube root of a square root
    assert len(cardano) < RADICAL_CHARS and _cube_of_sqrt(cardano)
    assert not _cube_of_sqrt("a**(1/3)*(-1/2 + sqrt(3)*I/2)") and not _cube_of_sqrt("sqrt(a)**(1/3)")
    assert _cube_of_sqrt("3/(sqrt(q) + 1)**(2/3)")
    lines = block(run(capsys, "general", "--rho", "r**3 + 3*r - q"), "roots:")
    assert len(lines) == 1 and "each of the 3 roots of r**3 + 3*r - q" in lines[0]


def test_the_depth_limit_of_the_c4_smooth_network_is_the_series_of_its_ode():
    rec, _ = smooth_over_depth(4)  # quartic: radicals of radicals; expanded from the polynomial
    res = dd.depth_limit(rec, [1, 1, 1, 1])
    for value in (sp.Rational(-3, 2), 2 * sp.I):
        got = complex(sp.N(res.limit.xreplace({rec.lam_symbol: value}), 20))
        series = sum(complex(value) ** n / math.factorial(4 * n) for n in range(25))  # y'''' = lam y
        assert abs(got - series) < 1e-12
        assert abs(got - sum(complex(value) ** n / math.factorial(3 * n) for n in range(25))) > 1e-3
