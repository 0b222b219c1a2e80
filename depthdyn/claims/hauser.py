"""Claims of source 002: Hauser, Gunn, Saab and Ray, "State Space Representations of Deep
Neural Networks".

The printed formulas were extracted from a PDF and are partly garbled (eq. 8, 11, 13, 14,
15): each is re-derived from its definitions, the printed form is evaluated literally, and
the reading that holds is reported beside it. Stated formulas are transcribed as SymPy text
(``Sum``, ``binomial``) and evaluated for concrete ``k, n``. Finite differences act on an
undefined function ``x(l)``; the layer maps ``sigma^(l-j)`` are undefined functions
``sigma_j`` (identities then hold for any nonlinearity) or, for spectra, ``sigma(y) = lam y``.
In the dense network's window ``X_n = x^(l+1-n)`` (``n = 0..k``, ``X_k`` the base); ``h`` is
``Delta l``. The experimental numbers of §4 (perturbation ratios 0.0389 and 1.31,
accuracies) cannot be checked by computation and are left out.
"""

from __future__ import annotations

from functools import partial

import sympy as sp

from ..families import dense, smooth
from ..symbolic.statespace import realisation, signed_pascal
from .base import Claim, Outcome, compare_exact, ensure, stated_expr, verdict
from .hauser_smooth import (
    CLAIMS as SMOOTH_CLAIMS,
)
from .hauser_smooth import (
    SOURCE,
    X,
    apply,
    as_residual,
    at,
    binom_sum,
    claim,
    h,
    q,
    r_symbol,
    sigma_function,
    sx,
)

__all__ = ["SOURCE", "CLAIMS"]


# the source's claims in document order: those of hauser_smooth first
_CLAIMS: list[Claim] = list(SMOOTH_CLAIMS)


def _add(*args, **kwargs) -> None:
    _CLAIMS.append(claim(*args, **kwargs))


# ============================================================== eq. 9-11, 14-17, 19, 22: dense networks
def _generic(j, y):
    return sigma_function(j)(y) * h


def _window(k: int, layer=_generic) -> dict:
    """X_n = x^(l+1-n), n = 0..k, solved from the eq. 9 system (base X_k = b)."""
    win = {k: sp.Symbol("b")}
    for n in range(k - 1, -1, -1):
        win[n] = sp.Add(*[layer(j, win[j + 1]) for j in range(n, k)]) + win[k]
    return win


def _flat(k: int, e, rows: bool = True):
    """``e`` in symbols X_n; with ``rows`` the eq. 9 rows are put in once for X_0..X_(k-1) (as the paper
    does)."""
    Xs = sp.symbols(f"X0:{k + 1}")
    e = e.replace(X, lambda i: Xs[int(i)])
    if rows:
        rows_ = {Xs[n]: sp.Add(*[_generic(j, Xs[j + 1]) for j in range(n, k)]) + Xs[k] for n in range(k)}
        e = e.xreplace(rows_)
    return sp.expand(e)


_EQ10 = "Sum((-1)**a*binomial(n, a)*X(a), (a, 0, n))"  # delta^+ (delta^-)^(n-1) x^(l), eq. 10


def _eq17(cl):
    rows = [_flat(3, X(n)) for n in range(3)]
    return Outcome(rows, compare_exact([sx(t) for t in cl.stated.split(";")], rows).verdict,
                   "X_n = x^(l+1-n), sigma_j = sigma^(l-j)")


_add("002-eq17", "eq. 17a-c", "the dense network for k = 3 is the eq. 9 system at k = 3",
     "sigma0(X1)*h + sigma1(X2)*h + sigma2(X3)*h + X3; sigma1(X2)*h + sigma2(X3)*h + X3; sigma2(X3)*h + X3",
     "eq. 9 rows generated at k = 3", _eq17)


def _eq11(reading: bool, cl):
    bad, first = 0, None
    for k in range(1, 6):
        win = _window(k)
        ensure(all(sp.expand(win[n - 1] - win[n] - _generic(n - 1, win[n])) == 0 for n in range(1, k + 1)),
               "consecutive eq. 9 rows are residual steps")
        for n in range(1, k + 1):
            lhs, rhs = at(_EQ10, n=n), at(cl.stated, n=n, k=k)
            if not compare_exact(apply(lhs, win), apply(rhs, win)).holds:
                bad += 1
                shown = apply(rhs, {i: X(i) for i in range(k + 1)})
                first = first or (k, n, _flat(k, lhs), _flat(k, shown, rows=False))
    if first:
        k, n, lhs, rhs = first
        return Outcome(f"k = {k}, n = {n}: delta^+ (delta^-)^{n - 1} x^(l) = {sp.sstr(lhs)} but the "
                       f"printed right side is {sp.sstr(rhs)} (X_j = x^(l+1-j))", "fails",
                       f"{bad} of 15 (k, n) pairs differ; correct: the argument is x^(l-l''), the "
                       "layer of sigma")
    return Outcome("equal for k = 1..5, n = 1..k", "holds-with-caveat" if reading else "holds",
                   "holds with the argument x^(l-l'') in place of the printed x^(l-l')" if reading else "")


_add("002-eq11-printed", "eq. 11", "substituting eq. 9 into eq. 10 gives delta^+ (delta^-)^(n-1) x^(l) = "
     "sum_l' (-1)^l' C(n, l') sum_{l''>=l'} sigma^(l-l'')(x^(l-l')) Delta l",
     "Sum((-1)**a*binomial(n, a)*Sum(s(b, X(a + 1))*h, (b, a, k - 1)), (a, 0, n))",
     "both sides on the eq. 9 window with generic sigma^(l-j), k = 1..5, n = 1..k", partial(_eq11, False))
_add("002-eq11-reading", "eq. 11", "eq. 11 read with the argument x^(l-l'') (the layer of sigma)",
     "Sum((-1)**a*binomial(n, a)*Sum(s(b, X(b + 1))*h, (b, a, k - 1)), (a, 0, n))",
     "both sides on the eq. 9 window with generic sigma^(l-j), k = 1..5, n = 1..k", partial(_eq11, True))


def _zero_sum(cl):
    sums = {n: binom_sum(n, lambda i: 1) for n in range(0, 9)}
    return Outcome(f"sum_l' (-1)^l' C(n, l') for n = 0..8: {list(sums.values())}",
                   verdict(all(sums[n] == stated_expr(cl.stated) for n in range(1, 9))),
                   "zero for n >= 1, which eq. 10 uses")


_add("002-eq11-base", "§2.3", "the base term drops out: sum_l' (-1)^l' C(n, l') x^(l+1-k) = 0", "0",
     "exact alternating binomial sums, n = 1..8", _zero_sum)


def _dense_differences(cl):
    power = int(cl.stated.split("Delta l")[1].lstrip("^") or 1)  # the stated power of the step Delta l
    ok = all(compare_exact(apply(at(_EQ10, n=n + 1), win),
                           h ** (power - 1) * binom_sum(n, lambda i, w=win: _generic(i, w[i + 1])))
             for k in range(1, 6) for win in [_window(k)] for n in range(0, k))
    return Outcome("delta^+ (delta^-)^n x^(l) = (delta^-)^n sigma^(l) Delta l for n = 0..k-1, k = 1..5",
                   verdict(ok), "eq. 19a-c is the case k = 3")


_add("002-s2.3-differences", "§2.3, eq. 19", "dense networks have the form delta^+ (delta^-)^n x^(l) = "
     "(delta^-)^n sigma^(l) Delta l for n = 1..k-1", "(delta^-)^n sigma^(l) Delta l",
     "both sides on the eq. 9 window with generic sigma^(l-j)", _dense_differences)


def _eq19(cl):
    win = _window(3)
    stated = [sx(t).xreplace({sp.Symbol(f"X{n}"): win[n] for n in range(4)}) for t in cl.stated.split(";")]
    computed = [apply(at(_EQ10, n=n), win) for n in range(1, 4)]
    return Outcome([_flat(3, at(_EQ10, n=n)) for n in range(1, 4)], compare_exact(stated, computed).verdict,
                   "X_n = x^(l+1-n), sigma_j = sigma^(l-j)")


_add("002-eq19", "eq. 19a-c",
     "substituting eq. 17 into eq. 18 gives sigma^(l) Dl, sigma^(l) Dl - sigma^(l-1) Dl, "
     "sigma^(l) Dl - 2 sigma^(l-1) Dl + sigma^(l-2) Dl", "sigma0(X1)*h; sigma0(X1)*h - sigma1(X2)*h; "
     "sigma0(X1)*h - 2*sigma1(X2)*h + sigma2(X3)*h", "eq. 18 on the eq. 17 window, generic sigma", _eq19)


def _update(k: int, args=None, with_P: bool = True):
    """(q^(l+1), eq. 15's right side) on the eq. 9 window.

    u_i = sigma^(l-i)(arg_i) Dl with arg = P^-1 q (binomial inversion) unless ``args`` are given.
    """
    P, win = signed_pascal(k), _window(k)
    qs = sp.Matrix(sp.symbols(f"q1:{k + 1}"))
    now = dict(zip(qs, P * sp.Matrix([win[n] for n in range(1, k + 1)]), strict=True))
    args = args if args is not None else list(P.inv() * qs)
    rhs = qs + (P if with_P else sp.eye(k)) * sp.Matrix([_generic(i, a) for i, a in enumerate(args)])
    return list(P * sp.Matrix([win[n] for n in range(k)])), [e.xreplace(now) for e in rhs]


def _eq14(reading: bool, cl):
    """Eq. 14 row by row on the eq. 9 window: q_n^(l+1) from the window vs the stated right side."""
    bad, first = 0, None
    for k in range(1, 5):
        win, P = _window(k), signed_pascal(k)
        qs = sp.symbols(f"q1:{k + 1}")
        now = dict(zip(qs, P * sp.Matrix([win[n] for n in range(1, k + 1)]), strict=True))
        nxt = P * sp.Matrix([win[n] for n in range(k)])
        for n in range(1, k + 1):
            update = at(cl.stated, n=n, k=k).replace(q, lambda i, qs=qs: qs[int(i) - 1])
            rhs = (qs[n - 1] + apply(update, win)).xreplace(now)
            if not compare_exact(nxt[n - 1], rhs).holds:
                bad += 1
                first = first or (k, n, sp.expand(apply(update, win)))
    if first:
        k, n, upd = first
        return Outcome(
            f"k = {k}, n = {n}: the printed update is {sp.sstr(upd)} (in the states q), but "
            f"q_{n}^(l+1) - q_{n}^(l) = delta^+ (delta^-)^{n - 1} x^(l); correct: sigma^(l-l'') "
            "takes x^(l-l'') = sum_i (-1)^i C(l'', i) q_{i+1}^(l)",
            "fails",
            f"{bad} of 10 (k, n) pairs differ: the printed inner sum over l''' of "
            "(-1)^l''' C(l'-1, l''') q_l' is q_1 for l' = 1 and 0 otherwise",
        )
    return Outcome(
        "equal for k = 1..4, n = 1..k",
        "holds-with-caveat" if reading else "holds",
        "holds with sigma^(l-l'') applied to x^(l-l'') = sum_i (-1)^i C(l'', i) q_{i+1}, "
        "not to the printed argument" if reading else "",
    )


_EQ14_SUM = "Sum((-1)**a*binomial(n, a)*Sum(s(b, {arg})*h, (b, a, k - 1)), (a, 0, n))"
_add(
    "002-eq14-printed",
    "eq. 14",
    "the dense network's state update as printed: q_n^(l+1) = q_n^(l) + sum_l' (-1)^l' C(n, l') "
    "sum_{l''>=l'} sigma^(l-l'')(sum_l''' (-1)^l''' C(l'-1, l''') q_l') Delta l",
    _EQ14_SUM.format(arg="Sum((-1)**c*binomial(a - 1, c)*q(a), (c, 0, a - 1))"),
    "both sides on the eq. 9 window with generic sigma^(l-j), k = 1..4, n = 1..k",
    partial(_eq14, False),
)
_add(
    "002-eq14-reading",
    "eq. 14",
    "eq. 14 read with sigma^(l-l'') applied to x^(l-l'') written in the states",
    _EQ14_SUM.format(arg="Sum((-1)**c*binomial(b, c)*q(c + 1), (c, 0, b))"),
    "both sides on the eq. 9 window with generic sigma^(l-j), k = 1..4, n = 1..k",
    partial(_eq14, True),
)


def _eq15_matrix(k: int, lam) -> sp.Matrix:
    """Eq. 15's state matrix when every sigma^(l-i) is the same linear map lam."""
    qs, P = sp.Matrix(sp.symbols(f"q1:{k + 1}")), signed_pascal(k)
    return (qs + P * (lam * h * (P.inv() * qs))).jacobian(qs)


def _eq15(cl):
    ok = all(compare_exact(*_update(k, with_P="P u" in cl.stated)).holds for k in range(1, 5))
    lam = sp.Symbol("lam")
    mats = [_eq15_matrix(k, lam) for k in range(1, 5)]
    collapses = all(M == (1 + h * lam) * sp.eye(M.shape[0]) for M in mats)
    matrix = "(h*lam + 1)*I_k" if collapses else sp.sstr(mats[-1].tolist())
    outcome = "fails" if not ok else "holds-with-caveat" if collapses else "holds"
    return Outcome("q^(l+1) = q^(l) + P u^(l) holds for k = 1..4; with one linear sigma = lam the state "
                   f"matrix is {matrix}", outcome,
                   "an identity only where the whole eq. 9 system holds at layer l: its consecutive rows "
                   "force x^(j+1) = x^(j) + sigma^(j)(x^(j)) Delta l, residual steps inside the window")


_add("002-eq15", "eq. 14-16", "the dense network's state space: q^(l+1) = I q^(l) + P u^(l), "
     "u_i = sigma^(l-i)(sum_j (-1)^j C(i, j) q_{j+1}) Delta l", "q' = q + P u",
     "both sides on the eq. 9 window with generic sigma^(l-j), k = 1..4; its matrix for sigma = lam", _eq15)


def _eq15_recurrence(cl):
    lam, bad = dense().lam_symbol, []
    for k in cl.premises["ks"]:
        eq15 = _eq15_matrix(k, lam).charpoly(r_symbol).as_expr()
        row0 = dense(k=k).charpoly()
        if not compare_exact(eq15, row0).holds:
            bad.append((k, sp.factor(eq15), sp.factor(row0)))
    if not bad:
        return Outcome(f"equal characteristic polynomials for k in {list(cl.premises['ks'])}", "holds")
    k, a, b = bad[0]
    A = realisation(dense(k=k), "difference").A
    return Outcome(f"k = {k}: eq. 15 has charpoly {sp.sstr(a)}, the dense recurrence (eq. 9, n = 0 row) "
                   f"{sp.sstr(b)}; its difference-state matrix is {sp.sstr(A.tolist())}", "fails",
                   f"not similar for k = {[kk for kk, _, _ in bad]}: the row-0 recurrence has k - 1 extra "
                   "roots of unity, which eq. 15 (the whole eq. 9 system imposed) removes")


_add("002-eq15-recurrence", "eq. 15, §2.3",
     "eq. 15 is the state-space representation of the dense network with k lags, "
     "x^(l+1) = x^(l+1-k) + sum_j sigma^(l-j)(x^(l-j)) Delta l at every layer",
     "q' = q + P u realises the dense recurrence",
     "charpoly of eq. 15's matrix with sigma = lam vs dense(k), the n = 0 row of eq. 9 at every layer, "
     "k = 1..4", _eq15_recurrence, premises={"ks": (1, 2, 3, 4)}, mutant={"premises": {"ks": (1,)}})


def _eq16(cl):
    ok = True
    last = stated_expr(cl.stated.split("..q_")[1].strip(")").strip("{}"), "n")  # row n uses q_1..q_last
    for k in range(1, 6):
        qs, P = sp.Matrix(sp.symbols(f"q1:{k + 1}")), signed_pascal(k)
        step = P * sp.Matrix([_generic(i, a) for i, a in enumerate(P.inv() * qs)])
        ok = ok and all(not step[n].has(*qs[int(last.subs(sp.Symbol("n"), n + 1)):]) for n in range(k))
    return Outcome("row n of q' - q depends on q_1..q_n only (k = 1..5)" if ok else "depends on later states",
                   verdict(ok))


_add("002-eq16", "eq. 16", "q_n' = q_n + B_{n,k} u_{n,k}(q_1, ..., q_n): row n uses only the first n states",
     "u_{n,k}(q_1..q_n)", "states in each row of eq. 15's right side, generic sigma, k = 1..5", _eq16)


def _eq22(cl):
    args = [sx(t) for t in cl.stated.split(";")]
    nxt, rhs = _update(3, args)
    return Outcome("q' - q = P (sigma^(l)(x^(l)), sigma^(l-1)(x^(l-1)), sigma^(l-2)(x^(l-2))) Dl on the "
                   "eq. 17 window",
                   compare_exact(nxt, rhs).verdict, "the printed arguments q1, q1 - q2, q1 - 2q2 + q3 are "
                   "x^(l), x^(l-1), x^(l-2) by binomial inversion")


_add("002-eq22", "eq. 22",
     "for k = 3, q' = I q + P (sigma^(l)(q1), sigma^(l-1)(q1 - q2), sigma^(l-2)(q1 - 2q2 + "
     "q3)) Dl", "q1; q1 - q2; q1 - 2*q2 + q3", "both sides on the eq. 17 window with generic sigma", _eq22)
_add("002-s2.3-k1", "§2.3", "for k = 1 the dense network collapses to the residual network of eq. 2",
     "residual with lam -> h*lam", "charpoly of dense(k=1) vs residual()", partial(as_residual, dense))


def _eq9_dimension(k: int, d: int) -> int:
    """State dimension of eq. 9's row n = 0 built here from its text, not from :func:`dense`.

    ``x^(l+1) = x^(l+1-k) + h sum_j W_j x^(l-j)`` with a generic d x d weight ``W_j`` per lag
    (``sigma^(l-j)`` linearised): the update reads the lags ``l, ..., l+1-k``; the state needs
    every lag from the newest to the oldest whose coefficient matrix is not singular for
    generic weights (a singular oldest coefficient would let a smaller state do), d numbers each.
    """
    Ws = [sp.Matrix(d, d, lambda i, j, t=t: sp.Symbol(f"w{t}_{i}{j}")) for t in range(k)]
    coeff = {lag: sp.zeros(d, d) for lag in range(k)}  # lag t: the coefficient of x^(l-t)
    coeff[k - 1] += sp.eye(d)  # the skip from x^(l+1-k)
    for j, W in enumerate(Ws):
        coeff[j] += h * W
    used = [t for t in range(k) if coeff[t] != sp.zeros(d, d)]
    oldest = max(used)
    while oldest > 0 and sp.expand(coeff[oldest].det()) == 0:  # a singular oldest lag is not needed whole
        oldest -= 1
    return (oldest + 1) * d


def _dimension_table(cl, dimension, method: str) -> Outcome:
    """The stated dimension against ``dimension(k, d)`` for k = 1..4, d = 1, 2."""
    rows, bad = [], []
    for k in range(1, 5):
        for d in (1, 2):
            got = dimension(k, d)
            want = stated_expr(cl.stated, "k", "d").xreplace({sp.Symbol("k"): k, sp.Symbol("d"): d})
            rows.append(f"k={k}, d={d}: {got}")
            if got != want:
                bad.append(f"k = {k}, d = {d}: {got} state numbers, stated {want}")
    return Outcome("; ".join(bad[:2]) if bad else "; ".join(rows), verdict(not bad), method)


def _dense_dimension(cl):
    return _dimension_table(cl, _eq9_dimension,
                            "eq. 9's n = 0 row built from its text with a generic weight per lag: "
                            "k lags of d numbers, the oldest with the coefficient I + h W_(k-1), "
                            "invertible for generic W")


def _eq9_printed_dimension(k: int, d: int) -> int:
    """State dimension of eq. 9 as printed: all k rows, one function sigma^(m) per layer m.

    The rows ``x^(l+1-n) = sum_{l'=n}^{k-1} sigma^(l-l')(x^(l-l')) Dl + x^(l+1-k)``, ``n = 0..k-1``,
    linearised with a generic d x d matrix ``W_m`` for the layer's function ``sigma^(m)``, are k d
    linear equations in the window ``x^(l+1), ..., x^(l+1-k)`` ((k + 1) d numbers). The windows
    that satisfy them form a subspace of dimension (k + 1) d - rank: that many numbers are the
    state of an equivalent first-order system.
    """
    Ws = {m: sp.Matrix(d, d, lambda i, j, m=m: sp.Symbol(f"w{m}_{i}{j}")) for m in range(k)}  # sigma^(l-m)
    window = [sp.Matrix(sp.symbols(f"x{n}_0:{d}")) for n in range(k + 1)]  # window[n] = x^(l+1-n)
    rows = []
    for n in range(k):
        rhs = sum((h * Ws[j] * window[j + 1] for j in range(n, k)), sp.zeros(d, 1)) + window[k]
        rows.extend(window[n] - rhs)
    unknowns = [v for column in window for v in column]
    A = sp.Matrix([[sp.expand(e).coeff(v) for v in unknowns] for e in rows])
    return len(unknowns) - A.rank(simplify=True)


def _dense_printed_dimension(cl):
    return _dimension_table(cl, _eq9_printed_dimension,
                            "eq. 9 as printed, all k rows: row n minus row n + 1 is x^(l+1-n) - x^(l-n) = "
                            "sigma^(l-n)(x^(l-n)) Dl, a residual step, so the newest state fixes the whole "
                            "window and d numbers are the state; the k d of eq. 15 is one (non-minimal) "
                            "realisation")


_add("002-s2.3-dimension-printed", "§2.3, eq. 9",
     "k lags increase the dense network's state dimension by a multiple of k", "k*d",
     "eq. 9 as printed, its k rows with one generic d x d weight per layer's sigma^(l-l'), k = 1..4, "
     "d = 1, 2: the dimension of the windows x^(l+1..l+1-k) that satisfy every row",
     _dense_printed_dimension)
_add("002-s2.3-dimension-reading", "§2.3",
     "k lags increase the dense network's state dimension by a multiple of k (read as eq. 9's n = 0 row "
     "alone, a generic weight per lag: the dense family)", "k*d",
     "eq. 9's n = 0 row written out with generic d x d weights per lag, k = 1..4, d = 1, 2: lags read and "
     "the generic rank of the oldest lag's coefficient",
     _dense_dimension)


def _ck_unstable(cl):
    """Every lam != 0 puts a root of smooth(k)'s characteristic polynomial outside the unit circle.

    Two exact facts per k: the product of the roots has modulus |a_0/a_k| = 1, and the
    polynomial is self-inversive (a_j = c conj(a_(k-j)), |c| = 1; true whenever all roots lie on
    the unit circle) only at lam = 0. So for lam != 0 some root is off the circle, and with
    modulus product 1 one lies outside.
    """
    a, b = sp.symbols("a b", real=True)
    lam_c = a + sp.I * b
    bad, rows = [], []
    for k in cl.premises["ks"]:
        rec = smooth(k=k, h=1)
        p = sp.Poly(sp.expand(rec.charpoly().xreplace({rec.lam_symbol: lam_c})), r_symbol)
        c = [sp.expand(p.nth(j)) for j in range(k + 1)]  # c[j]: coefficient of r^j
        product = sp.simplify(sp.Abs(c[0] / c[k]))
        unit = c[k] / sp.conjugate(c[0])
        eqs = set()
        for j in range(k + 1):
            e = sp.expand(c[j] - unit * sp.conjugate(c[k - j]))
            eqs |= {sp.expand(sp.re(e)), sp.expand(sp.im(e))} - {0}
        sols = sp.solve(list(eqs), [a, b], dict=True) if eqs else [{}]
        nonzero = [sl for sl in sols if sl.get(a, a) != 0 or sl.get(b, b) != 0]
        rows.append(f"k = {k}: |root product| = {product}, self-inversive only at "
                    f"{'lam = 0' if not nonzero else sols}")
        if product != 1 or nonzero:
            bad.append(f"k = {k}: all roots can lie on the unit circle for lam != 0 ({nonzero})"
                       if nonzero else f"k = {k}: |root product| = {product}")
    import numpy as np

    small = smooth(k=3, h=1).charpoly().xreplace({smooth().lam_symbol: sp.Rational(-1, 1000)})
    radius = float(np.abs(np.roots([float(v) for v in sp.Poly(small, r_symbol).all_coeffs()])).max())
    return Outcome("; ".join(bad) if bad else "; ".join(rows), verdict(not bad),
                   "k = 2 differs: real lam in (-4/h^2, 0) keeps both roots on the circle (marginal); "
                   f"numerically, k = 3 at lam = -1/1000 has spectral radius {radius:.4f}")


_add("002-ck-unstable", "§2.2, §3 (the C^k network's spectrum)",
     "C^k smooth networks with k >= 3 are unstable for every lam != 0 (a characteristic root outside the "
     "unit circle); 002 states nothing about it: the sentence is ours, about 002's network",
     "unstable for every lam != 0", "exact, k = 3..6 (h = 1; h > 0 only rescales lam): |root product| = 1, "
     "and the self-inversive conditions on the coefficients, solved over lam = a + i b, allow only lam = 0",
     _ck_unstable, premises={"ks": (3, 4, 5, 6)}, mutant={"premises": {"ks": (2, 3)}}, reading_of="002-ck-spectrum")


# ============================================================== eq. 15 and eq. 23 as printed
_EQ15_LAST = "Sum((-1)**j*binomial(k - 1, j)*q(k), (j, 0, k - 1))"  # eq. 15's last argument as printed


def _eq15_last(cl):
    bad = []
    for k in range(2, 6):
        qs = sp.symbols(f"q1:{k + 1}")
        printed = at(cl.stated, k=k).replace(q, lambda i, qs=qs: qs[int(i) - 1])
        want = (signed_pascal(k).inv() * sp.Matrix(qs))[k - 1]  # x^(l-k+1) in the states
        if not compare_exact(want, printed).holds:
            bad.append(f"k = {k}: printed {sp.sstr(sp.expand(printed))}, x^(l-k+1) = {sp.sstr(want)}")
    return Outcome("; ".join(bad[:2]) if bad else "the argument is x^(l-k+1) for k = 2..5", verdict(not bad),
                   "the printed summand q_k ignores the summation index, so the sum is 0 for k >= 2")


_add("002-eq15-printed-argument", "eq. 15", "the last input of eq. 15 as printed is "
     "sigma^(l-k+1)(sum_n (-1)^n C(k-1, n) q_k) Delta l, i.e. sigma^(l-k+1) of x^(l-k+1)", _EQ15_LAST,
     "the printed argument at k = 2..5 against x^(l-k+1) = (P^-1 q)_k", _eq15_last,
     mutant={"stated": "Sum((-1)**j*binomial(k - 1, j)*q(j + 1), (j, 0, k - 1))"})


def _eq15_rows(cl):
    rows = [[int(v) for v in r.split(",")] for r in cl.stated.split(";")]
    P = signed_pascal(len(rows[-1]))
    bad = [f"row {i + 1}: printed {r}, P has {list(P.row(i)[:len(r)])}" for i, r in enumerate(rows)
           if list(P.row(i)[:len(r)]) != r]
    return Outcome("; ".join(bad) if bad else "rows equal P's", verdict(not bad), "P = signed_pascal(k)")


_add("002-eq15-printed-matrix", "eq. 15", "the input matrix of eq. 15 as printed has rows 1; 1, -1; 1, -21, 1",
     "1; 1, -1; 1, -21, 1", "the printed rows against signed_pascal(3)", _eq15_rows,
     mutant={"stated": "1; 1, -1; 1, -2, 1"})


def _eq23(cl):
    t = sp.Symbol("t")
    q1, q2, q3, q4 = (sp.Function(f"q{i}")(t) for i in range(1, 5))
    phi = sp.Function("varphi")
    system = {q1.diff(t): q2, q2.diff(t): q3, q3.diff(t): q4, q4.diff(t): phi(q1, q2, q3, q4)}  # eq. 24a-d
    deriv, order = q1, 0
    while not deriv.has(phi):
        deriv, order = deriv.diff(t).subs(system), order + 1
    return Outcome(f"eq. 24a-d give x^({order}) = varphi(x, x^(1), x^(2), x^(3)) (x = q_1)",
                   verdict(order == int(cl.stated)),
                   "a k = 4 system is fourth order: its highest derivative is x^(4); eq. 23 prints x^(3) on the "
                   "left, the same derivative as its last argument")


_add("002-eq23", "eq. 23, 24", "a k = 4 general nonlinear system has the form x^(3) = varphi(x, x^(1), x^(2), "
     "x^(3)) (the order of the derivative on the left)", "3",
     "derivatives of q_1 along eq. 24a-d until varphi appears (SymPy)", _eq23, mutant={"stated": "4"})

CLAIMS: tuple[Claim, ...] = tuple(_CLAIMS)
