"""Claims of source 002 (Hauser et al.), part one: the difference identities (eq. 4, 5, 12, 13,
18, 20, 21) and the C^k state space (eq. 2, 6-8, Fig. 1, §3).

The transcription helpers here (:func:`sx`, :func:`at`, the difference operators) are
shared with :mod:`depthdyn.claims.hauser`, which holds the dense networks' claims and the
full ``CLAIMS`` tuple.
"""

from __future__ import annotations

import re
from functools import partial

import sympy as sp

from ..families import residual, smooth
from ..recurrence import Param, Recurrence
from ..symbolic.statespace import realisation, signed_pascal, similarity
from .base import Claim, Outcome, compare_exact, ensure, stated_expr, verdict, wrong_value
from .formula import formula

__all__ = [
    "CLAIMS",
    "claim",
    "SOURCE",
    "apply",
    "as_residual",
    "at",
    "binom_sum",
    "dimension_check",
    "h",
    "r_symbol",
    "sigma_function",
    "sx",
    "q",
    "X",
]


SOURCE = "002_1c9afe8adca9f537.txt"
_CLAIMS: list[Claim] = []
l = sp.Symbol("l", integer=True)  # noqa: E741 - the layer index
x, q, X, s = sp.Function("x"), sp.Function("q"), sp.Function("X"), sp.Function("s")
h = sp.Symbol("h", positive=True)
r_symbol = sp.Symbol("r")
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
    "002-s2.3-dimension-printed": "d",
    "002-s2.3-dimension-reading": "d",
}


def claim(id, section, statement, stated, method, check, premises=None, mutant=None, reading_of="") -> Claim:
    """A claim of this source; without a ``mutant`` the stated value made wrong is the mutant."""
    if not reading_of and id.endswith(("-printed", "-reading")):  # two readings of one garbled equation
        reading_of = id.rsplit("-", 1)[0]
    if mutant is None:
        mutant = {"stated": _MUTANTS[id]} if id in _MUTANTS else (
            {"stated": wrong_value(stated)} if wrong_value(stated) is not None else None)
    return Claim(id, SOURCE, section, statement, stated, method, check, premises or {}, mutant, reading_of)


def _add(*args, **kwargs) -> None:
    _CLAIMS.append(claim(*args, **kwargs))


def sigma_function(j: int):
    return sp.Function(f"sigma{j}")


def sx(text: str) -> sp.Expr:
    """A transcribed formula (our own literal strings): x, q, X, s(j, y) = sigma^(l-j)(y), sigma_j."""
    names = {"x": x, "q": q, "X": X, "s": s, "l": l, "h": h, "lam": sp.Symbol("lam")}
    names.update({c: sp.Symbol(c, integer=True) for c in "abijkn"})
    names.update({f"sigma{j}": sigma_function(j) for j in range(8)})
    names.update({f"X{j}": sp.Symbol(f"X{j}") for j in range(8)})
    names.update({f"q{j}": sp.Symbol(f"q{j}") for j in range(1, 9)})
    return formula(text, names)


def at(text: str, **values) -> sp.Expr:
    """A stated formula at concrete indices, sums done."""
    return sx(text).subs({sp.Symbol(k, integer=True): v for k, v in values.items()}).doit()


def _sides(text: str, **values):
    left, right = text.split("=")
    return at(left, **values), at(right, **values)


def _dp(e):
    return sp.expand(e.subs(l, l + 1) - e)


def _dm(e, times: int = 1):
    for _ in range(times):
        e = sp.expand(e - e.subs(l, l - 1))
    return e


def binom_sum(k: int, term) -> sp.Expr:
    return sp.Add(*[(-1) ** i * sp.binomial(k, i) * term(i) for i in range(k + 1)])


def apply(e, window):
    """Replace X(i) by ``window[i]`` and s(j, y) by sigma_j(y)."""
    return e.replace(X, lambda i: window[int(i)]).replace(s, lambda j, y: sigma_function(int(j))(y))


# ============================================================== eq. 4, 5, 12, 13, 18, 20, 21
def _expansion(n, cl):
    computed = _dp(_dm(x(l), n - 1))
    return Outcome(computed, compare_exact(sx(cl.stated), computed).verdict)


_add("002-eq4a", "eq. 4a", "delta^+ x^(l) = x^(l+1) - x^(l)", "x(l + 1) - x(l)",
     "finite-difference operators on x(l)", partial(_expansion, 1))
_add("002-eq4b", "eq. 4b", "delta^+ delta^- x^(l) = x^(l+1) - 2x^(l) + x^(l-1)",
     "x(l + 1) - 2*x(l) + x(l - 1)",
     "finite-difference operators on x(l)", partial(_expansion, 2))


def _eq4c(cl):
    bad = [k for k in _KS if not compare_exact(at(cl.stated, k=k), _dp(_dm(x(l), k - 1))).holds]
    for k in _KS:  # the C^k family is this difference equation: rho = (r-1)^k, sigma = h^k r^(k-1)
        rho, sig = smooth(k=k).rho_sigma()
        ensure(compare_exact((r_symbol - 1) ** k, rho).holds and compare_exact(h**k * r_symbol ** (k - 1), sig).holds,
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
            printed = at(cl.stated, n=n)
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
    ensure(all(compare_exact(binom_sum(n, lambda j: qs[j]), back[n]).holds for n in range(k)),
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
    return Outcome(computed, compare_exact([sx(t) for t in cl.stated.split(";")], computed).verdict)


_add("002-eq18", "eq. 18a-c", "delta^+ x, delta^+ delta^- x and delta^+ delta^- delta^- x at layer l",
     "x(l+1) - x(l); x(l+1) - 2*x(l) + x(l-1); x(l+1) - 3*x(l) + 3*x(l-1) - x(l-2)",
     "finite-difference operators on x(l)", _eq18)


def _eq20(cl):
    stated = [sx(t) for t in cl.stated.split(";")]
    computed = [_dm(x(l), n) for n in range(3)]
    Pw = signed_pascal(3) * sp.Matrix([x(l), x(l - 1), x(l - 2)])
    ok = compare_exact(stated, computed).holds and compare_exact(stated, list(Pw)).holds
    return Outcome(computed, verdict(ok))


_add("002-eq20", "eq. 20a-c",
     "q_1 = x^(l), q_2 = delta^- x^(l), q_3 = delta^- delta^- x^(l) = x^(l) - 2x^(l-1) "
     "+ x^(l-2)", "x(l); x(l) - x(l-1); x(l) - 2*x(l-1) + x(l-2)",
     "operators on x(l), and signed_pascal(3)", _eq20)


def _eq21(cl):
    M = sp.Matrix(sx(cl.stated))
    return Outcome(M.inv(), verdict(M == signed_pascal(3) and M.inv() == M),
                   "the printed matrix is signed_pascal(3), and its own inverse")


_add("002-eq21", "eq. 21",
     "q = P (x^(l), x^(l-1), x^(l-2)) and (x^(l), x^(l-1), x^(l-2)) = P q with the same P",
     "[[1, 0, 0], [1, -1, 0], [1, -2, 1]]", "exact inverse", _eq21)


# ============================================================== eq. 2, 6-8, Fig. 1, §3: the C^k state space
_EQ7 = "Sum(q(j), (j, n, k)) + h**k*lam*q(1)"  # eq. 7 with sigma(q_1) linearised as lam q_1


def _eq7_matrix(k: int, lam, text: str = _EQ7) -> sp.Matrix:
    qs = sp.symbols(f"q1:{k + 1}")
    rows = [at(text, n=n, k=k).replace(q, lambda i: qs[int(i) - 1]).xreplace({sp.Symbol("lam"): lam})
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
    printed = sp.Matrix([sx(t) for t in cl.stated.split(";")]).jacobian([q1, q2])
    derived = realisation(smooth(k=2, h=1), "difference").A
    return Outcome(derived, compare_exact(printed, derived).verdict,
                   "sigma(q_1) linearised as lam q_1; the caption drops Delta l^2 (h = 1), as its "
                   "equation does")


_add("002-fig1", "Fig. 1, §2.2", "C^2 state space: q_1' = q_1 + q_2 + sigma(q_1), q_2' = q_2 + sigma(q_1), "
     "q_2 = x^(l) - x^(l-1)", "q1 + q2 + lam*q1; q2 + lam*q1", "difference realisation of smooth(k=2, h=1)",
     _fig1)


def as_residual(family, cl):
    rec, lam = family(k=1), residual().lam_symbol
    scaled = formula(cl.stated.split("->")[1], {"h": h, "lam": lam})
    want = residual().charpoly().xreplace({lam: scaled})
    return Outcome(rec.charpoly(), compare_exact(want, rec.charpoly()).verdict)


_add("002-eq2", "eq. 2, 4a", "the C^1 network is the residual network x^(l+1) = x^(l) + sigma(x^(l)) Delta l",
     "residual with lam -> h*lam", "charpoly of smooth(k=1) vs residual()", partial(as_residual, smooth))


def _free_dimension(rec) -> int:
    """The number of initial values a recurrence's trajectories depend on: the degree of its
    characteristic polynomial less the multiplicity of the root 0 (a lag whose coefficient vanishes
    carries no state), at a generic rational point of the parameters."""
    point = {p.symbol: sp.Rational(3 + i, 7 + 2 * i) for i, p in enumerate(rec.params)}
    poly = sp.Poly(sp.expand(rec.charpoly().xreplace(point)), r_symbol)
    zero = next((i for i, c in enumerate(reversed(poly.all_coeffs())) if c != 0), poly.degree())
    return poly.degree() - zero


def dimension_check(family, cl):
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
    return dimension_check(smooth, cl)


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
        ok = ok and compare_exact(at(cl.stated, k=k), sp.Rational(free, size)).holds
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

CLAIMS: tuple[Claim, ...] = tuple(_CLAIMS)
