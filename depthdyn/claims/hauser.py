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

import re
from functools import partial

import sympy as sp

from ..families import dense, residual, smooth
from ..recurrence import Param, Recurrence
from ..symbolic.statespace import realisation, signed_pascal, similarity
from .base import Claim, Outcome, compare_exact, ensure, stated_expr, verdict, wrong_value
from .formula import formula

__all__ = ["SOURCE", "CLAIMS"]

SOURCE = "002_1c9afe8adca9f537.txt"
_CLAIMS: list[Claim] = []
l = sp.Symbol("l", integer=True)  # noqa: E741 - the layer index
x, q, X, s = sp.Function("x"), sp.Function("q"), sp.Function("X"), sp.Function("s")
h = sp.Symbol("h", positive=True)
_r = sp.Symbol("r")
_KS = range(1, 7)


#: The stated value under which each claim's verdict must change (a wrong formula for one that holds, the
#: other reading for a garbled one); claims not listed use a premise mutant or ``wrong_value``.
_MUTANTS = {
    "002-eq4a": "x(l + 1) - 2*x(l)",
    "002-eq4b": "x(l + 1) - 2*x(l) - x(l - 1)",
    "002-eq4c": "Sum((-1)**i*binomial(k, i)*x(l - i), (i, 0, k))",
    "002-eq5": "Sum((-1)**j*binomial(n, j)*x(l - j), (j, 0, n - 1))",
    "002-eq6-recursion": "q_{n+1}^(l+1) = q_n^(l+1) + q_n^(l)",
    "002-eq13-inversion": "P^-1 = P^T",
    "002-eq13-printed": "x(l - n + 1) = Sum((-1)**j*binomial(n - 1, j)*q(j + 1), (j, 0, n - 1))",
    "002-eq13-reading": "x(l - n) = Sum((-1)**j*binomial(n - 1, j)*q(n), (j, 0, n - 1))",
    "002-eq18": "x(l+1) - x(l); x(l+1) - 2*x(l) + x(l-1); x(l+1) - 3*x(l) + 3*x(l-1) + x(l-2)",
    "002-eq20": "x(l); x(l) - x(l-1); x(l) - 2*x(l-1) - x(l-2)",
    "002-eq21": "[[1, 0, 0], [1, -1, 0], [1, -2, -1]]",
    "002-eq7": "Sum(q(j), (j, n, k)) + h**k*lam*q(n)",
    "002-eq8": "kron(I_d, eq. 7 matrix)",
    "002-fig1": "q1 + q2 + lam*q1; q2",
    "002-eq2": "residual with lam -> h**2*lam",
    "002-s2.3-k1": "residual with lam -> h**2*lam",
    "002-eq17": "sigma0(X1)*h + sigma1(X2)*h + sigma2(X3)*h + X3; sigma1(X2)*h + sigma2(X3)*h + X3; sigma2(X3)*h",
    "002-eq11-printed": "Sum((-1)**a*binomial(n, a)*Sum(s(b, X(b + 1))*h, (b, a, k - 1)), (a, 0, n))",
    "002-eq11-reading": "Sum((-1)**a*binomial(n, a)*Sum(s(b, X(a + 1))*h, (b, a, k - 1)), (a, 0, n))",
    "002-eq14-printed": "Sum((-1)**a*binomial(n, a)*Sum(s(b, Sum((-1)**c*binomial(b, c)*q(c + 1), (c, 0, b)))*h, (b, a, k - 1)), (a, 0, n))",
    "002-eq14-reading": "Sum((-1)**a*binomial(n, a)*Sum(s(b, Sum((-1)**c*binomial(a - 1, c)*q(a), (c, 0, a - 1)))*h, (b, a, k - 1)), (a, 0, n))",
    "002-s2.3-differences": "(delta^-)^n sigma^(l) Delta l^2",
    "002-eq19": "sigma0(X1)*h; sigma0(X1)*h - sigma1(X2)*h; sigma0(X1)*h - 2*sigma1(X2)*h - sigma2(X3)*h",
    "002-eq15": "q' = q + u",
    "002-eq16": "u_{n,k}(q_1..q_{n-1})",
    "002-eq22": "q1; q1 - q2; q1 - 2*q2 - q3",
    "002-s2-dimension": "d",
    "002-s2.3-dimension": "d",
}


def _add(id, section, statement, stated, method, check, premises=None, mutant=None, reading_of="") -> None:
    if not reading_of and id.endswith(("-printed", "-reading")):  # two readings of one garbled equation
        reading_of = id.rsplit("-", 1)[0]
    if mutant is None:
        mutant = {"stated": _MUTANTS[id]} if id in _MUTANTS else (
            {"stated": wrong_value(stated)} if wrong_value(stated) is not None else None)
    _CLAIMS.append(Claim(id, SOURCE, section, statement, stated, method, check, premises or {}, mutant,
                         reading_of))


def _sig(j: int):
    return sp.Function(f"sigma{j}")


def _sx(text: str) -> sp.Expr:
    """A transcribed formula (our own literal strings): x, q, X, s(j, y) = sigma^(l-j)(y), sigma_j."""
    names = {"x": x, "q": q, "X": X, "s": s, "l": l, "h": h, "lam": sp.Symbol("lam")}
    names.update({c: sp.Symbol(c, integer=True) for c in "abijkn"})
    names.update({f"sigma{j}": _sig(j) for j in range(8)})
    names.update({f"X{j}": sp.Symbol(f"X{j}") for j in range(8)})
    names.update({f"q{j}": sp.Symbol(f"q{j}") for j in range(1, 9)})
    return formula(text, names)


def _at(text: str, **values) -> sp.Expr:
    """A stated formula at concrete indices, sums done."""
    return _sx(text).subs({sp.Symbol(k, integer=True): v for k, v in values.items()}).doit()


def _sides(text: str, **values):
    left, right = text.split("=")
    return _at(left, **values), _at(right, **values)


def _dp(e):
    return sp.expand(e.subs(l, l + 1) - e)


def _dm(e, times: int = 1):
    for _ in range(times):
        e = sp.expand(e - e.subs(l, l - 1))
    return e


def _binom_sum(k: int, term) -> sp.Expr:
    return sp.Add(*[(-1) ** i * sp.binomial(k, i) * term(i) for i in range(k + 1)])


def _apply(e, window):
    """Replace X(i) by ``window[i]`` and s(j, y) by sigma_j(y)."""
    return e.replace(X, lambda i: window[int(i)]).replace(s, lambda j, y: _sig(int(j))(y))


# ============================================================== eq. 4, 5, 12, 13, 18, 20, 21
def _expansion(n, cl):
    computed = _dp(_dm(x(l), n - 1))
    return Outcome(computed, compare_exact(_sx(cl.stated), computed).verdict)


_add("002-eq4a", "eq. 4a", "delta^+ x^(l) = x^(l+1) - x^(l)", "x(l + 1) - x(l)",
     "finite-difference operators on x(l)", partial(_expansion, 1))
_add("002-eq4b", "eq. 4b", "delta^+ delta^- x^(l) = x^(l+1) - 2x^(l) + x^(l-1)",
     "x(l + 1) - 2*x(l) + x(l - 1)",
     "finite-difference operators on x(l)", partial(_expansion, 2))


def _eq4c(cl):
    bad = [k for k in _KS if not compare_exact(_at(cl.stated, k=k), _dp(_dm(x(l), k - 1))).holds]
    for k in _KS:  # the C^k family is this difference equation: rho = (r-1)^k, sigma = h^k r^(k-1)
        rho, sig = smooth(k=k).rho_sigma()
        ensure(compare_exact((_r - 1) ** k, rho).holds and compare_exact(h**k * _r ** (k - 1), sig).holds,
               f"smooth(k={k}) is not eq. 4c")
    return Outcome(f"equal for k = 1..{max(_KS)}" if not bad else f"differs for k = {bad}", verdict(not bad),
                   "x^(l+1) depends on the k layers x^(l), ..., x^(l-k+1): smooth(k) has order k")


_add("002-eq4c", "eq. 4c", "delta^+ (delta^-)^(k-1) x^(l) = sum_l' (-1)^l' C(k, l') x^(l+1-l')",
     "Sum((-1)**i*binomial(k, i)*x(l + 1 - i), (i, 0, k))", "operators on x(l), k = 1..6", _eq4c)


def _states(cl):
    bad = []
    for k in _KS:
        Pw = signed_pascal(k) * sp.Matrix([x(l - j) for j in range(k)])
        for n in range(1, k + 1):
            printed = _at(cl.stated, n=n)
            if not (compare_exact(printed, _dm(x(l), n - 1)) and compare_exact(printed, Pw[n - 1])):
                bad.append((k, n))
    return Outcome("q_n = (delta^-)^(n-1) x^(l) = (P w)_n, w = (x^(l), ..., x^(l-k+1))" if not bad
                   else f"differs at (k, n) = {bad}", verdict(not bad))


_add("002-eq5", "eq. 5, 12, 13 (left)",
     "the states q_n = (delta^-)^(n-1) x^(l) are sum_l' (-1)^l' C(n-1, l') "
     "x^(l-l')", "Sum((-1)**j*binomial(n - 1, j)*x(l - j), (j, 0, n - 1))",
     "operators on x(l), and signed_pascal(k) on the window, k = 1..6", _states)


def _recursion(cl):
    qs = {n: _dm(x(l), n - 1) for n in range(1, 8)}
    Q = sp.Function("Q")  # Q(j, i) = q_j^(i), read from the stated relation
    text = re.sub(r"q_\{?([^}^]+)\}?\^\(([^)]+)\)", r"Q(\1, \2)", cl.stated)
    lhs, rhs = (formula(t, {"Q": Q, "n": sp.Symbol("n"), "l": l}) for t in text.split("="))
    ok = all(compare_exact(0, (lhs - rhs).subs(sp.Symbol("n"), n).replace(
        Q, lambda j, i: qs[int(j)].subs(l, i))).holds for n in range(1, 7))
    return Outcome("q_(n+1)^(l+1) = q_n^(l+1) - q_n^(l) for n = 1..6", verdict(ok))


_add("002-eq6-recursion", "§2.2, eq. 6", "the states obey q_{n+1}^(l+1) = q_n^(l+1) - q_n^(l)",
     "q_{n+1}^(l+1) = q_n^(l+1) - q_n^(l)", "operators on x(l), n = 1..6", _recursion)


def _involution(cl):
    rhs = cl.stated.split("=")[1].strip()  # P, -P or P^T: the stated inverse
    form = {"P": lambda P: P, "-P": lambda P: -P, "P^T": lambda P: P.T}[rhs]
    bad = [k for k in range(1, 9) if signed_pascal(k).inv() != form(signed_pascal(k))]
    return Outcome("P^-1 = P for k = 1..8" if not bad else f"P^-1 != P for k = {bad}", verdict(not bad))


_add("002-eq13-inversion", "eq. 13, 21",
     "binomial inversion: the map from x^(l), x^(l-1), ... to the states is "
     "its own inverse", "P^-1 = P", "exact inverse of signed_pascal(k), k = 1..8", _involution)


def _inversion(reading: bool, cl):
    k = 6
    Pw = signed_pascal(k) * sp.Matrix([x(l - j) for j in range(k)])
    qs = sp.Matrix(sp.symbols(f"q1:{k + 1}"))
    back = signed_pascal(k).inv() * qs  # x^(l-n) in the states, from the computed inverse
    ensure(all(compare_exact(_binom_sum(n, lambda j: qs[j]), back[n]).holds for n in range(k)),
           "x^(l-n) = sum_j (-1)^j C(n, j) q_(j+1)")
    bad = []
    for n in range(1, k):
        lhs, rhs = _sides(cl.stated, n=n)
        if not compare_exact(lhs, rhs.replace(q, lambda i: Pw[int(i) - 1])).holds:
            shown = rhs.replace(q, lambda i: sp.Symbol(f"q_{i}"))
            bad.append(f"n = {n}: {sp.sstr(lhs).replace('x(', 'x^(')} vs {sp.sstr(shown)}")
    correct = "x^(l-n) = sum_{j=0}^{n} (-1)^j C(n, j) q_{j+1}^(l)"
    if bad:
        return Outcome(f"{correct}; printed: " + "; ".join(bad[:2]), "fails",
                       "the printed summand q_n ignores the summation index, so the sum is q_1 (n = 1) or 0")
    if reading:
        correct = "x^(l-n+1) = sum_{j=0}^{n-1} (-1)^j C(n-1, j) q_{j+1}^(l), n = 1..5"
    return Outcome(correct, "holds-with-caveat" if reading else "holds",
                   "holds with the summand q_{l'+1} and x^(l-n+1) on the left, not as printed"
                   if reading else "")


_add("002-eq13-printed", "eq. 13",
     "binomial inversion as printed: x^(l-n) = sum_{l'=0}^{n-1} (-1)^l' C(n-1, l') "
     "q_n^(l)", "x(l - n) = Sum((-1)**j*binomial(n - 1, j)*q(n), (j, 0, n - 1))",
     "the printed right side evaluated literally with the states in x, n = 1..5", partial(_inversion, False))
_add("002-eq13-reading", "eq. 13",
     "binomial inversion read with q_{l'+1} in the sum and x^(l-n+1) on the left",
     "x(l - n + 1) = Sum((-1)**j*binomial(n - 1, j)*q(j + 1), (j, 0, n - 1))",
     "both sides with the states in x, n = 1..5", partial(_inversion, True))


def _eq18(cl):
    computed = [_dp(_dm(x(l), n)) for n in range(3)]
    return Outcome(computed, compare_exact([_sx(t) for t in cl.stated.split(";")], computed).verdict)


_add("002-eq18", "eq. 18a-c", "delta^+ x, delta^+ delta^- x and delta^+ delta^- delta^- x at layer l",
     "x(l+1) - x(l); x(l+1) - 2*x(l) + x(l-1); x(l+1) - 3*x(l) + 3*x(l-1) - x(l-2)",
     "finite-difference operators on x(l)", _eq18)


def _eq20(cl):
    stated = [_sx(t) for t in cl.stated.split(";")]
    computed = [_dm(x(l), n) for n in range(3)]
    Pw = signed_pascal(3) * sp.Matrix([x(l), x(l - 1), x(l - 2)])
    ok = compare_exact(stated, computed).holds and compare_exact(stated, list(Pw)).holds
    return Outcome(computed, verdict(ok))


_add("002-eq20", "eq. 20a-c",
     "q_1 = x^(l), q_2 = delta^- x^(l), q_3 = delta^- delta^- x^(l) = x^(l) - 2x^(l-1) "
     "+ x^(l-2)", "x(l); x(l) - x(l-1); x(l) - 2*x(l-1) + x(l-2)",
     "operators on x(l), and signed_pascal(3)", _eq20)


def _eq21(cl):
    M = sp.Matrix(_sx(cl.stated))
    return Outcome(M.inv(), verdict(M == signed_pascal(3) and M.inv() == M),
                   "the printed matrix is signed_pascal(3), and its own inverse")


_add("002-eq21", "eq. 21",
     "q = P (x^(l), x^(l-1), x^(l-2)) and (x^(l), x^(l-1), x^(l-2)) = P q with the same P",
     "[[1, 0, 0], [1, -1, 0], [1, -2, 1]]", "exact inverse", _eq21)


# ============================================================== eq. 2, 6-8, Fig. 1, §3: the C^k state space
_EQ7 = "Sum(q(j), (j, n, k)) + h**k*lam*q(1)"  # eq. 7 with sigma(q_1) linearised as lam q_1


def _eq7_matrix(k: int, lam, text: str = _EQ7) -> sp.Matrix:
    qs = sp.symbols(f"q1:{k + 1}")
    rows = [_at(text, n=n, k=k).replace(q, lambda i: qs[int(i) - 1]).xreplace({sp.Symbol("lam"): lam})
            for n in range(1, k + 1)]
    return sp.Matrix(rows).jacobian(qs)


def _eq7(cl):
    bad = []
    for k in _KS:
        rec = smooth(k=k)
        derived = realisation(rec, "difference").A  # derived through eq. 10, not from eq. 7
        if not (compare_exact(_eq7_matrix(k, rec.lam_symbol, cl.stated), derived).holds
                and similarity(rec, "companion", "difference").verified):
            bad.append(k)
    shown = f"difference realisation = eq. 7 for k = 1..{max(_KS)}" if not bad else f"differs for k = {bad}"
    return Outcome(shown,
                   verdict(not bad), "sigma(q_1) Delta l^k enters every row; similar to the companion form")


_add("002-eq7", "eq. 6, 7", "the C^k state space is q_n' = sum_{j=n}^{k} q_j + sigma(q_1) Delta l^k, every n",
     _EQ7, "difference realisation of smooth(k) (derived through eq. 10) vs eq. 7, and similarity, k = 1..6",
     _eq7)


def _eq8(cl):
    first = cl.stated.replace(" ", "").startswith("kron(eq.7")  # the order of the Kronecker factors

    def block(M):
        return sp.kronecker_product(M, sp.eye(2)) if first else sp.kronecker_product(sp.eye(2), M)

    bad = [k for k in range(1, 5) if not compare_exact(
        block(_eq7_matrix(k, smooth(k=k).lam_symbol)),
        realisation(smooth(k=k).kron(2), "difference").A).holds]
    return Outcome("block form (d = 2) equal for k = 1..4" if not bad else f"differs for k = {bad}",
                   verdict(not bad),
                   "the extracted input matrix of eq. 8 is garbled; read as identity blocks times "
                   "sigma(q_1), the same in every row, as eq. 7 says")


_add("002-eq8", "eq. 8",
     "in block form the state matrix has d x d identity blocks on and above the diagonal and "
     "sigma(q_1) Delta l^k enters every row", "kron(eq. 7 matrix, I_d)",
     "difference realisation of smooth(k).kron(2), k = 1..4", _eq8)


def _fig1(cl):
    q1, q2 = sp.symbols("q1 q2")
    printed = sp.Matrix([_sx(t) for t in cl.stated.split(";")]).jacobian([q1, q2])
    derived = realisation(smooth(k=2, h=1), "difference").A
    return Outcome(derived, compare_exact(printed, derived).verdict,
                   "sigma(q_1) linearised as lam q_1; the caption drops Delta l^2 (h = 1), as its "
                   "equation does")


_add("002-fig1", "Fig. 1, §2.2", "C^2 state space: q_1' = q_1 + q_2 + sigma(q_1), q_2' = q_2 + sigma(q_1), "
     "q_2 = x^(l) - x^(l-1)", "q1 + q2 + lam*q1; q2 + lam*q1", "difference realisation of smooth(k=2, h=1)",
     _fig1)


def _as_residual(family, cl):
    rec, lam = family(k=1), residual().lam_symbol
    scaled = formula(cl.stated.split("->")[1], {"h": h, "lam": lam})
    want = residual().charpoly().xreplace({lam: scaled})
    return Outcome(rec.charpoly(), compare_exact(want, rec.charpoly()).verdict)


_add("002-eq2", "eq. 2, 4a", "the C^1 network is the residual network x^(l+1) = x^(l) + sigma(x^(l)) Delta l",
     "residual with lam -> h*lam", "charpoly of smooth(k=1) vs residual()", partial(_as_residual, smooth))


def _free_dimension(rec) -> int:
    """The number of initial values a recurrence's trajectories depend on: the degree of its
    characteristic polynomial less the multiplicity of the root 0 (a lag whose coefficient vanishes
    carries no state), at a generic rational point of the parameters."""
    point = {p.symbol: sp.Rational(3 + i, 7 + 2 * i) for i, p in enumerate(rec.params)}
    poly = sp.Poly(sp.expand(rec.charpoly().xreplace(point)), _r)
    zero = next((i for i, c in enumerate(reversed(poly.all_coeffs())) if c != 0), poly.degree())
    return poly.degree() - zero


def _dimension_check(family, cl):
    rows, bad = [], []
    for k in range(1, 5):
        for d in (1, 2):
            got = _free_dimension(family(k=k).kron(d))
            want = stated_expr(cl.stated, "k", "d").xreplace({sp.Symbol("k"): k, sp.Symbol("d"): d})
            rows.append(f"k={k}, d={d}: {got}")
            if got != want:
                bad.append(f"k = {k}, d = {d}: {got} initial values, stated {want}")
    return Outcome("; ".join(bad[:2]) if bad else "; ".join(rows), verdict(not bad),
                   "degree of det(sum_j A_j r^j) less the multiplicity of r = 0, at a generic point")


def _dimension(cl):
    return _dimension_check(smooth, cl)


_add("002-s2-dimension", "§2.2, abstract",
     "a C^k network with d nodes per layer has a state space of dimension k*d",
     "k*d", "number of initial values of smooth(k).kron(d) (charpoly degree less zero roots), k = 1..4, d = 1, 2",
     _dimension)


def _weights(k: int, d: int):
    """Difference state matrix of the C^k net with a free d x d weight W (sigma(x) ~ W x), and W."""
    names = [f"w_{i}_{j}" for i in range(1, d + 1) for j in range(1, d + 1)]
    W = sp.Matrix(d, d, [sp.Symbol(n, real=True) for n in names])
    coeffs = [(-1) ** j * sp.binomial(k, j) * sp.eye(d) for j in range(k + 1)]
    coeffs[1] = coeffs[1] - h**k * W
    rec = Recurrence(coeffs, params=[Param(n) for n in names] + [Param("h", sp.Interval.open(0, sp.oo))])
    return realisation(rec, "difference").A, W


def _parameters(cl):
    d, lines, ok, structured = cl.premises["d"], [], True, False
    for k in range(1, 5):
        A, W = _weights(k, d)
        dim = int(stated_expr(cl.premises["first_order_dim"], "k", "d").xreplace(
            {sp.Symbol("k"): k, sp.Symbol("d"): d}))
        B, V = _weights(1, dim)  # the first-order network with that embedding dimension
        free, size = len(A.free_symbols & set(W)), len(B.free_symbols & set(V))
        rank = (A - A.xreplace({w: 0 for w in W})).rank()
        ok = ok and compare_exact(_at(cl.stated, k=k), sp.Rational(free, size)).holds
        structured = structured or free < size
        lines.append(f"k={k}: {free} weights in the {k * d}x{k * d} state matrix (a first-order net of "
                     f"dimension {dim} has {size}), "
                     f"perturbation rank {rank}")
    return Outcome("; ".join(lines), "fails" if not ok else "holds-with-caveat" if structured else "holds",
                   "d = 2. The ratio d^2/(kd)^2 = 1/k^2 compares parameter counts at equal state "
                   "dimension kd; the C^k state matrix is not a free kd x kd weight but eq. 8's fixed 0/1 "
                   "matrix plus the weight in its first block column (a rank-d perturbation), so the two "
                   "are not equally expressive")


_add("002-s3-parameters", "§3, abstract, §5", "k-th order smoothness needs 1/k^2 as many parameters as a "
     "first-order network with the same embedding dimension k*d", "1/k**2",
     "weights in the difference state matrix of a C^k net with a d x d weight vs those of a first-order net "
     "with a free weight of dimension k*d, k = 1..4, d = 2", _parameters,
     premises={"d": 2, "first_order_dim": "k*d"}, mutant={"premises": {"first_order_dim": "d"}})


# ============================================================== eq. 9-11, 14-17, 19, 22: dense networks
def _generic(j, y):
    return _sig(j)(y) * h


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
    return Outcome(rows, compare_exact([_sx(t) for t in cl.stated.split(";")], rows).verdict,
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
            lhs, rhs = _at(_EQ10, n=n), _at(cl.stated, n=n, k=k)
            if not compare_exact(_apply(lhs, win), _apply(rhs, win)).holds:
                bad += 1
                shown = _apply(rhs, {i: X(i) for i in range(k + 1)})
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
    sums = {n: _binom_sum(n, lambda i: 1) for n in range(0, 9)}
    return Outcome(f"sum_l' (-1)^l' C(n, l') for n = 0..8: {list(sums.values())}",
                   verdict(all(sums[n] == stated_expr(cl.stated) for n in range(1, 9))),
                   "zero for n >= 1, which eq. 10 uses")


_add("002-eq11-base", "§2.3", "the base term drops out: sum_l' (-1)^l' C(n, l') x^(l+1-k) = 0", "0",
     "exact alternating binomial sums, n = 1..8", _zero_sum)


def _dense_differences(cl):
    power = int(cl.stated.split("Delta l")[1].lstrip("^") or 1)  # the stated power of the step Delta l
    ok = all(compare_exact(_apply(_at(_EQ10, n=n + 1), win),
                           h ** (power - 1) * _binom_sum(n, lambda i, w=win: _generic(i, w[i + 1])))
             for k in range(1, 6) for win in [_window(k)] for n in range(0, k))
    return Outcome("delta^+ (delta^-)^n x^(l) = (delta^-)^n sigma^(l) Delta l for n = 0..k-1, k = 1..5",
                   verdict(ok), "eq. 19a-c is the case k = 3")


_add("002-s2.3-differences", "§2.3, eq. 19", "dense networks have the form delta^+ (delta^-)^n x^(l) = "
     "(delta^-)^n sigma^(l) Delta l for n = 1..k-1", "(delta^-)^n sigma^(l) Delta l",
     "both sides on the eq. 9 window with generic sigma^(l-j)", _dense_differences)


def _eq19(cl):
    win = _window(3)
    stated = [_sx(t).xreplace({sp.Symbol(f"X{n}"): win[n] for n in range(4)}) for t in cl.stated.split(";")]
    computed = [_apply(_at(_EQ10, n=n), win) for n in range(1, 4)]
    return Outcome([_flat(3, _at(_EQ10, n=n)) for n in range(1, 4)], compare_exact(stated, computed).verdict,
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
            update = _at(cl.stated, n=n, k=k).replace(q, lambda i, qs=qs: qs[int(i) - 1])
            rhs = (qs[n - 1] + _apply(update, win)).xreplace(now)
            if not compare_exact(nxt[n - 1], rhs).holds:
                bad += 1
                first = first or (k, n, sp.expand(_apply(update, win)))
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
        eq15 = _eq15_matrix(k, lam).charpoly(_r).as_expr()
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
    args = [_sx(t) for t in cl.stated.split(";")]
    nxt, rhs = _update(3, args)
    return Outcome("q' - q = P (sigma^(l)(x^(l)), sigma^(l-1)(x^(l-1)), sigma^(l-2)(x^(l-2))) Dl on the "
                   "eq. 17 window",
                   compare_exact(nxt, rhs).verdict, "the printed arguments q1, q1 - q2, q1 - 2q2 + q3 are "
                   "x^(l), x^(l-1), x^(l-2) by binomial inversion")


_add("002-eq22", "eq. 22",
     "for k = 3, q' = I q + P (sigma^(l)(q1), sigma^(l-1)(q1 - q2), sigma^(l-2)(q1 - 2q2 + "
     "q3)) Dl", "q1; q1 - q2; q1 - 2*q2 + q3", "both sides on the eq. 17 window with generic sigma", _eq22)
_add("002-s2.3-k1", "§2.3", "for k = 1 the dense network collapses to the residual network of eq. 2",
     "residual with lam -> h*lam", "charpoly of dense(k=1) vs residual()", partial(_as_residual, dense))


def _dense_dimension(cl):
    out = _dimension_check(dense, cl)
    polys = "; ".join(sp.sstr(sp.factor(dense(k=k).charpoly())) for k in range(1, 5))
    return Outcome(out.computed, out.verdict,
                   f"{out.note}; charpolys {polys}: beside the residual mode r = 1 + h lam, k - 1 roots of unity")


_add("002-s2.3-dimension", "§2.3",
     "k lags increase the dense network's state dimension by a multiple of k", "k*d",
     "number of initial values of dense(k).kron(d) (charpoly degree less zero roots), k = 1..4, d = 1, 2",
     _dense_dimension)


# ============================================================== eq. 15 and eq. 23 as printed
_EQ15_LAST = "Sum((-1)**j*binomial(k - 1, j)*q(k), (j, 0, k - 1))"  # eq. 15's last argument as printed


def _eq15_last(cl):
    bad = []
    for k in range(2, 6):
        qs = sp.symbols(f"q1:{k + 1}")
        printed = _at(cl.stated, k=k).replace(q, lambda i, qs=qs: qs[int(i) - 1])
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
