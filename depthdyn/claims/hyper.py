"""Claims of source 003, a note (in Chinese) on residual connections and hyper-connections.

Doubly stochastic matrices are taken from :func:`depthdyn.families.hyper_connection`, whose
``H_res`` is the general doubly stochastic matrix with ``(n - 1)^2`` free entries; the
Birkhoff-polytope facts are checked by exact linear algebra and enumeration, the norm
statements exactly or on random samples with a stated tolerance, Sinkhorn by iteration, and
the Jacobian-product statements (eq. 7-12 and the ``exp`` proposition) with non-commuting
SymPy symbols and explicit matrices; the §5.1 norm definitions against the definition of the
induced norm; the DenseNet path count by powers of the DAG's adjacency matrix. The unfinished
fibre-bundle chapter states nothing checkable (see :mod:`depthdyn.claims.unchecked`).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp

from ..mixing import sinkhorn
from .base import Claim, Outcome, compare_exact, ensure, stated_expr, verdict
from .formula import formula
from .hyper_flow import (
    CLAIMS as FLOW_CLAIMS,
)
from .hyper_flow import (
    SOURCE,
    TOL,
    claim,
    constraint_rank,
    hres,
    n_symbol,
    random_ds,
)

__all__ = ["SOURCE", "CLAIMS"]


# the source's claims in document order: those of hyper_flow first
_CLAIMS: list[Claim] = list(FLOW_CLAIMS)


def _add(*args, **kwargs) -> None:
    _CLAIMS.append(claim(*args, **kwargs))


def _spectral_norm(cl):
    n = 3
    H = hres(n)
    # on D_n (entries >= 0) the column and row sums are the 1- and inf-norms: exactly 1
    sums = [sp.expand(sum(H.col(j))) for j in range(n)] + [sp.expand(sum(H.row(i))) for i in range(n)]
    ok = all(s == 1 for s in sums)
    rng = np.random.default_rng(2)
    Ds = np.concatenate([random_ds(rng, 5, 300), sinkhorn(rng.normal(size=(5, 5)), 300)[None]])
    top = np.linalg.norm(Ds, 2, axis=(1, 2))
    bound = float(stated_expr(cl.stated.split("<=")[1]))
    ok = ok and top.max() <= bound + TOL
    return Outcome(
        f"||A||_1 = ||A||_inf = 1 exactly on D_3; max ||A||_2 = {top.max():.15f} over 301 random "
        "doubly stochastic 5x5 (tolerance 1e-12)",
        verdict(ok),
        "by Theorem 5.1, ||A||_2 <= sqrt(1 * 1)",
    )


_add(
    "003-s5.2-spectral-norm",
    "§5.2 property",
    "for A in D_n the spectral norm ||A||_2 <= 1 (by Theorem 5.1)",
    "||A||_2 <= 1",
    "exact row/column sums of the general H_res (n = 3); spectral norms of random doubly stochastic matrices",
    _spectral_norm,
    mutant={"stated": "||A||_2 <= 0.9"},
)


def _singular_one(cl):
    n = 3
    H = hres(n)
    one = sp.ones(n, 1)
    sigma = stated_expr(cl.stated.split("=")[1].split(",")[0])
    ok = compare_exact(sigma**2 * one, (H.T * H * one).applyfunc(sp.expand)).holds
    return Outcome(
        "A^T A 1_n = 1_n for the general A in D_3: singular value 1 with right and left singular "
        "vector 1_n (the largest, by 003-s5.2-spectral-norm)",
        verdict(ok),
        "the note says 'eigenvector'; 1_n is also an eigenvector of A with eigenvalue 1",
    )


_add(
    "003-s5.2-singular-one",
    "§5.2 property",
    "every A in D_n has a singular value 1 with singular vector 1_n",
    "sigma = 1, vector 1_n",
    "exact A^T A 1_n for the general doubly stochastic H_res (n = 3)",
    _singular_one,
    mutant={"stated": "sigma = 2, vector 1_n"},
)


def _unit_group(cl):
    a = sp.Symbol("a", nonnegative=True)
    A = sp.Matrix([[a, 1 - a], [1 - a, a]])  # the general element of D_2
    inv = A.inv()
    ok_set = sp.Interval(0, 1)
    for e in inv:
        ok_set = ok_set.intersect(sp.solveset(sp.together(e) >= 0, a, sp.Interval(0, 1)))
    # invertible with an inverse in D_2 exactly at the permutation matrices (a = 0, 1); a = 1/2 is singular
    n2 = ok_set - sp.FiniteSet(sp.Rational(1, 2))
    # n = 3: a random invertible non-permutation element has an inverse with a negative entry
    M = sp.Matrix(
        [
            [sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(1, 6)],
            [sp.Rational(1, 6), sp.Rational(1, 2), sp.Rational(1, 3)],
            [sp.Rational(1, 3), sp.Rational(1, 6), sp.Rational(1, 2)],
        ]
    )
    Minv = M.inv()
    perms = [sp.eye(3).permute(list(p)) for p in itertools.permutations(range(3))]
    group = all(P.inv() == P.T and all(v >= 0 for v in P.T) for P in perms)
    units_are_perms = n2 == sp.FiniteSet(0, 1) and min(Minv) < 0 and group and len(perms) == math.factorial(3)
    ok = units_are_perms == (cl.stated.split("=")[1].strip() == "Pi_n")  # stated: Pi_n, or all of D_n
    return Outcome(
        f"D_2 elements [[a, 1-a], [1-a, a]] with inverse in D_2: a in {sp.sstr(n2)} (the permutations); "
        f"a circulant non-permutation in D_3 has inverse {sp.sstr(Minv.tolist())}",
        verdict(ok),
        "P^-1 = P^T in D_n for every permutation (n = 3); a nonnegative matrix with a nonnegative inverse "
        "is a scaled permutation",
    )


_add(
    "003-s5.2-unit-group",
    "§5.2 property",
    "the permutation matrices (≅ S_n) are the unit group of (D_n, ·)",
    "units = Pi_n",
    "exact inverses: all of D_2 (symbolic), a circulant in D_3, the 6 permutations of D_3",
    _unit_group,
    mutant={"stated": "units = D_n"},
)


def _interior(cl):
    n = cl.premises["n"]
    dim = n * n - constraint_rank(n)
    cons = []  # the tangent space of D_n's affine hull: zero row and column sums
    for i in range(n):
        cons.append([1 if a == i else 0 for a in range(n) for _ in range(n)])
        cons.append([1 if b == i else 0 for _ in range(n) for b in range(n)])
    basis = [sp.Matrix(n, n, list(v)) for v in sp.Matrix(cons).nullspace()]
    eps = sp.Rational(1, 10**6)
    third, perm = sp.Rational(1, 3), sp.eye(n).permute([1, 2, 0] if n == 3 else list(range(n))[::-1])
    points = [sp.ones(n, n) / n, (sp.eye(n) + perm) / 2, third * sp.eye(n) + 2 * third * perm, perm]
    stated = cl.stated.replace("A_ij", "a")
    rows = []
    for P in points:
        inside = all(min(P + t * eps * E) >= 0 for E in basis for t in (1, -1))  # a ball in the hull fits
        says = all(bool(formula(stated, {"a": v})) for v in P)
        rows.append((inside, says))
    agree = all(i == s_ for i, s_ in rows)
    outcome = ("holds-with-caveat" if dim < n * n else "holds") if agree else "fails"
    return Outcome(
        f"dim D_{n} = {dim} < {n * n}: the interior in R^(n x n) is empty; in the affine hull, at 4 test points "
        f"(uniform, two mixtures, a permutation): inside {[i for i, _ in rows]}, stated set {[s_ for _, s_ in rows]}",
        outcome,
        "true for the relative interior (in the affine hull), a condition the note leaves unstated; as a "
        "subset of R^(n x n) (n >= 2) the interior is empty",
    )


_add(
    "003-s5.2-interior",
    "§5.2 property",
    "the interior of D_n is {A in D_n : A_ij > 0}",
    "A_ij > 0",
    "dimension of D_n vs n^2 (exact rank); exact membership of test points in the relative interior "
    "(every tangent direction fits) vs the stated set",
    _interior,
    premises={"n": 3}, mutant={"stated": "A_ij >= 0"},
)


def _chebyshev_centre(n: int):
    """Centre and radius of the largest Frobenius ball inside D_n within its affine hull (linear programme).

    Maximise t subject to A_ij >= t ||proj(E_ij)|| (distance to the facet A_ij = 0 inside the hull)
    and unit row and column sums.
    """
    from scipy.optimize import linprog

    cons = []
    for i in range(n):
        cons.append([1.0 if a == i else 0.0 for a in range(n) for _ in range(n)])
        cons.append([1.0 if b == i else 0.0 for _ in range(n) for b in range(n)])
    C = np.array(cons)
    proj = np.eye(n * n) - np.linalg.pinv(C) @ C  # onto the tangent space
    norms = np.linalg.norm(proj, axis=0)
    c = np.zeros(n * n + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-np.eye(n * n), norms[:, None]])
    A_eq = np.hstack([C, np.zeros((2 * n, 1))])
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(n * n), A_eq=A_eq, b_eq=np.ones(2 * n),
                  bounds=[(0, None)] * (n * n + 1), method="highs")
    ensure(res.status == 0, "the inscribed-ball linear programme")
    return res.x[:-1].reshape(n, n), float(res.x[-1])


def _uniform_centre(cl):
    n = 3
    X = hres(n)
    U = stated_expr(cl.stated, "n").xreplace({n_symbol: n}) * sp.ones(n, n)
    # fixed point of the action A -> P A Q of all permutations (the symmetries of D_n)
    eqs = []
    for p in itertools.permutations(range(n)):
        P = sp.eye(n).permute(list(p))
        eqs += list(P * X - X) + list(X * P - X)
    sol = sp.solve(eqs, list(X.free_symbols), dict=True)
    unique = len(sol) == 1 and compare_exact(U, X.xreplace(sol[0])).holds
    absorbing = compare_exact(U, (hres(n, "b") * U).applyfunc(sp.expand)).holds  # A U = U for all A in D_n
    idempotents = [sp.eye(n), U]
    more = all(compare_exact(E, E * E).holds for E in idempotents)
    centre, radius = _chebyshev_centre(n)
    ball = np.abs(centre - float(U[0, 0])).max() <= 1e-9
    ok = unique and absorbing and ball
    return Outcome(
        "the only A in D_3 with P A = A Q = A for all permutations is (1/n) 1 1^T; A U = U A = U for every "
        f"A in D_3; the largest ball inside D_3 (in its affine hull, LP) has radius {radius:.6g} and centre "
        f"entries in [{centre.min():.6g}, {centre.max():.6g}]; but I_n is also a fixed point of A -> A^2",
        "holds-with-caveat" if ok and more else verdict(ok),
        "unique as the fixed point of the permutation symmetries (hence the centre) and as "
        "the absorbing element of the monoid; not the unique idempotent (I_n, permutation blocks)",
    )


_add(
    "003-s5.2-uniform-centre",
    "§5.2 property",
    "the uniform matrix (1/n) 1_n 1_n^T is the unique fixed point and the centre of the largest "
    "inscribed ball",
    "1/n",
    "exact solve of P X = X P = X over all permutations for the general X in D_3; absorption; idempotents; "
    "the largest inscribed ball by linear programming (scipy highs)",
    _uniform_centre,
    mutant={"stated": "1/(n + 1)"},
)


def _sinkhorn_claim(cl):
    rng = np.random.default_rng(3)
    errs = []
    for n in (3, 5, 8):
        M = rng.normal(size=(n, n)) * 2
        A = sinkhorn(M, cl.premises["steps"])
        errs.append(max(np.abs(A.sum(0) - 1).max(), np.abs(A.sum(1) - 1).max()))
    # a kernel without total support: the iterates approach D_n only as the scalings diverge
    # (logit -1e4: exp(-1e4) is 0 in float64, so the kernel is exactly [[1, 1], [0, 1]])
    A0 = sinkhorn(np.array([[0.0, 0.0], [-1e4, 0.0]]), 500)
    err0 = max(np.abs(A0.sum(0) - 1).max(), np.abs(A0.sum(1) - 1).max())
    ok = max(errs) <= TOL
    return Outcome(
        f"max row/column-sum error after 500 Sinkhorn steps: {max(errs):.1e} (K = exp(M), n = 3, 5, 8); "
        f"K = [[1, 1], [0, 1]]: error {err0:.1e} after 500 steps (slow, the limit loses K's support)",
        "holds-with-caveat" if ok else "fails",
        "converges (linearly) for a strictly positive K, as the exponential and softplus maps give; for "
        "a K with zeros it needs total support and may converge slowly",
    )


_add(
    "003-s5.2-sinkhorn",
    "§5.2.1 Sinkhorn",
    "Sinkhorn iterations produce a doubly stochastic A = diag(u) K diag(v)",
    "A in D_n",
    "the printed iteration in float64, tolerance 1e-12",
    _sinkhorn_claim,
    premises={"steps": 500}, mutant={"premises": {"steps": 2}},
)


def _softplus(cl):
    M, tau = sp.symbols("M tau", positive=True)
    Mr = sp.Symbol("M", real=True)
    K = {"softplus": sp.log(1 + sp.exp(tau * Mr)) / tau, "exponential": sp.exp(tau * Mr)}[cl.premises["map"]]
    d = sp.simplify(sp.diff(K, Mr))
    lo, hi = sp.limit(d, Mr, -sp.oo), sp.limit(d, Mr, sp.oo)
    ok = lo.is_finite and hi.is_finite and sp.simplify(sp.diff(d, Mr)) != 0  # monotone: bounded by its limits
    return Outcome(
        f"dK/dM = {sp.sstr(d)}, in ({lo}, {hi}) for every tau > 0",
        verdict(ok),
        "the exponential map's derivative tau e^(tau M) is unbounded",
    )


_add(
    "003-eq15-softplus",
    "eq. 15",
    "the derivative of the softplus map K = (1/tau) log(1 + e^(tau M)) is bounded",
    "bounded",
    "exact derivative and its limits (alpha = e)",
    _softplus,
    premises={"map": "softplus"}, mutant={"premises": {"map": "exponential"}},
)


def _entropy_uniform(cl):
    rng = np.random.default_rng(4)
    M = rng.normal(size=(4, 4))
    U = np.full((4, 4), 0.25)
    taus = cl.premises["taus"]
    dists = [float(np.abs(sinkhorn(t * M, 300) - U).max()) for t in taus]
    ok = all(b < a for a, b in zip(dists, dists[1:], strict=False)) and dists[-1] < 1e-3
    return Outcome(
        "max |A - U| for tau = " + ", ".join(f"{t:g}: {d:.2e}" for t, d in zip(taus, dists, strict=True)),
        "holds-with-caveat" if ok else "fails",
        "A tends to the uniform matrix as the temperature tau -> 0 (entropy weight eps -> oo); for fixed "
        "tau it is a pull toward U, not convergence to it",
    )


_add(
    "003-s5.2-entropy-uniform",
    "§5.2.1",
    "the entropy regulariser drives A toward the uniform A_Uni = (1/n) 1 1^T",
    "A -> (1/n) 1 1^T",
    "Sinkhorn on K = exp(tau M) for decreasing tau (n = 4)",
    _entropy_uniform,
    premises={"taus": (1.0, 0.1, 0.01, 0.001)}, mutant={"premises": {"taus": (1.0, 2.0)}},
)


def _activations(cl):
    x = sp.Symbol("x", real=True)
    acts = {"sigmoid": 1 / (1 + sp.exp(-x)), "tanh": sp.tanh(x), "SiLU": x / (1 + sp.exp(-x))}
    maxima = {}
    for name, f in acts.items():
        d = sp.diff(f, x)
        crit = sp.nsolve(sp.diff(d, x), x, 2.4 if name == "SiLU" else 0)
        maxima[name] = sp.N(d.subs(x, crit), 8)
    maxima["ReLU"] = sp.Integer(1)  # derivative 1 for every x > 0
    bound = stated_expr(cl.stated.split("<")[1])
    grid = np.linspace(-10, 10, 20001)  # where is f' >= the bound? (measure on [-10, 10])
    e = np.exp(-grid)
    deriv = {
        "sigmoid": e / (1 + e) ** 2,
        "tanh": 1 - np.tanh(grid) ** 2,
        "SiLU": 1 / (1 + e) + grid * e / (1 + e) ** 2,
        "ReLU": (grid > 0).astype(float),
    }
    frac = {k: float(np.mean(d >= float(bound))) for k, d in deriv.items()}
    below = [k for k in maxima if frac[k] < 1e-3]  # below the bound except on a null set
    ok = len(below) == len(maxima)
    return Outcome(
        "sup of the derivative: "
        + ", ".join(f"{k} {sp.sstr(v)}" for k, v in maxima.items())
        + "; fraction of [-10, 10] with f' >= 1: "
        + ", ".join(f"{k} {v:.3g}" for k, v in frac.items()),
        "holds" if ok else "holds-with-caveat" if 2 * len(below) >= len(maxima) else "fails",
        "true for sigmoid (sup 1/4) and tanh (f' < 1 except at x = 0); ReLU has f' = 1 on x > 0 and SiLU "
        "exceeds 1 for every x above about 1.28 (max ≈ 1.0998 near x ≈ 2.40)",
    )


_add(
    "003-s3-activation-derivative",
    "§3 remark",
    "pointwise activations (Sigmoid, Tanh, ReLU, SiLU) usually have derivatives less than 1",
    "f' < 1",
    "exact derivatives; maxima by nsolve of f'' = 0",
    _activations,
    mutant={"stated": "f' < 2"},
)


# ============================================================== §5.1 norm definitions and names
def _sample_matrices():
    """Exact integer test matrices: random entries, a rank-one column, a permutation."""
    rng = np.random.default_rng(5)
    mats = [sp.Matrix(rng.integers(-5, 6, size=(3, 3))) for _ in range(6)]
    return mats + [sp.Matrix([[1, 0, 0], [2, 0, 0], [-3, 0, 0]]), sp.eye(3).permute([2, 0, 1])]


def _induced_sup(A, p):
    """sup ||Ax||_p / ||x||_p from the definition: over the extreme points of the unit ball (p = 1, oo),
    or sqrt of the largest value of x^T A^T A x on the unit sphere (p = 2)."""
    n = A.shape[1]
    if p == 1:
        return max(sum(abs(v) for v in A * sp.eye(n).col(j)) for j in range(n))
    if p == "oo":
        return max(max(abs(v) for v in A * sp.Matrix(s_)) for s_ in itertools.product((1, -1), repeat=n))
    return sp.sqrt(max((A.T * A).eigenvals(), key=lambda e: sp.re(sp.N(e, 30))))


def _svals(A):
    return [sp.sqrt(v) for v, mult in (A.T * A).eigenvals().items() for _ in range(mult)]


_FORMULAS = {"max column sum": lambda A: max(sum(abs(v) for v in A.col(j)) for j in range(A.shape[1])),
             "max row sum": lambda A: max(sum(abs(v) for v in A.row(i)) for i in range(A.shape[0])),
             "largest singular value": lambda A: max(_svals(A), key=lambda e: sp.re(sp.N(e, 30))),
             "smallest singular value": lambda A: min(_svals(A), key=lambda e: sp.re(sp.N(e, 30)))}


def _induced(cl):
    p, bad = cl.premises["p"], []
    for A in _sample_matrices():
        sup, named = _induced_sup(A, p), _FORMULAS[cl.stated](A)
        if abs(sp.N(sup - named, 30)) > 1e-20:
            bad.append(f"A = {A.tolist()}: sup = {sp.sstr(sup)}, {cl.stated} = {sp.sstr(named)}")
    return Outcome(bad[0] if bad else f"equal on {len(_sample_matrices())} exact 3 x 3 matrices", verdict(not bad))


for _p, _name, _wrong in ((2, "largest singular value", "smallest singular value"),
                          (1, "max column sum", "max row sum"), ("oo", "max row sum", "max column sum")):
    _add(f"003-s5.1-induced-{_p}", "§5.1.1", f"the induced norm ||A||_p for p = {_p} is the {_name}", _name,
         "sup of ||Ax||_p/||x||_p over the unit ball's extreme points (exact), against the named formula",
         _induced, premises={"p": _p}, mutant={"stated": _wrong})


def _schatten(cl):
    bad, p = [], cl.premises["p"]
    for A in _sample_matrices()[:4]:
        sv = _svals(A)
        sch = max(sv, key=lambda e: sp.re(sp.N(e, 30))) if p == "oo" else sp.Add(*[v**p for v in sv]) ** sp.Rational(1, p)
        named = {"Frobenius": sp.sqrt(sum(v**2 for v in A)), "spectral": _induced_sup(A, 2),
                 "nuclear": sp.Add(*sv)}[cl.stated]
        if abs(sp.N(sch - named, 30)) > 1e-20:
            bad.append(f"A = {A.tolist()}: Schatten-{p} = {sp.re(sp.N(sch, 8))}, {cl.stated} = {sp.re(sp.N(named, 8))}")
    outcome = "fails" if bad else "holds-with-caveat" if p == "oo" else "holds"
    note = "the definition takes 1 <= p < oo; p = oo is its limit (the largest singular value)" if p == "oo" else ""
    return Outcome(bad[0] if bad else "equal on 4 exact 3 x 3 matrices", outcome,
                   note or ("the nuclear norm is the Schatten norm with p = 1 only" if cl.stated == "nuclear" else ""))


_add("003-s5.1-schatten-2", "§5.1.2", "the Schatten norm for p = 2 is the Frobenius norm", "Frobenius",
     "Schatten-2 from the exact singular values against sqrt(sum A_ij^2)", _schatten, premises={"p": 2},
     mutant={"stated": "nuclear"})
_add("003-s5.1-schatten-oo", "§5.1.2", "the Schatten norm for p = oo is the spectral norm", "spectral",
     "largest singular value against the induced 2-norm; the definition's range 1 <= p < oo", _schatten,
     premises={"p": "oo"}, mutant={"stated": "nuclear"})
_add("003-s5.1-schatten-name", "§5.1.2", "the Schatten norm is also called the nuclear norm", "nuclear",
     "Schatten-p against the nuclear norm (sum of singular values) at p = 2", _schatten,
     premises={"p": 2}, mutant={"premises": {"p": 1}})


# ============================================================== DenseNet paths
def _dense_paths(cl):
    L, reading = cl.premises["L"], cl.premises["reading"]
    adj = sp.Matrix(L + 1, L + 1, lambda i, j: 1 if i < j else 0)  # X_j takes every earlier X_i
    paths, power = sp.zeros(L + 1, L + 1), sp.eye(L + 1)
    for _ in range(L):
        power = power * adj
        paths += power
    bad = []
    for layer in range(1, L):
        got = paths[0, layer] if reading == "from the input" else paths[layer, L]
        want = stated_expr(cl.stated, "l", "L").subs({sp.Symbol("l"): layer, sp.Symbol("L"): L})
        if got != want:
            bad.append(f"l = {layer}: {got} paths, stated {want}")
    return Outcome("; ".join(bad[:3]) if bad else f"equal for l = 1..{L - 1}", verdict(not bad),
                   f"paths {reading} in the DAG X_i -> X_j (i < j) of a DenseNet with L = {L}, counted by "
                   "powers of its adjacency matrix")


_add("003-densenet-paths-input", "§3 DenseNet", "layer l receives 2^(l+1) gradient paths (read as paths from "
     "the input X_0 to X_l)", "2**(l + 1)", "exact path counts in the dense DAG, L = 6", _dense_paths,
     premises={"L": 6, "reading": "from the input"}, mutant={"stated": "2**(l - 1)"},
     reading_of="003-densenet-paths")
_add("003-densenet-paths-output", "§3 DenseNet", "layer l receives 2^(l+1) gradient paths (read as paths from "
     "X_l to the output X_L, along which gradients flow back)", "2**(l + 1)",
     "exact path counts in the dense DAG, L = 6", _dense_paths,
     premises={"L": 6, "reading": "to the output"}, mutant={"stated": "2**(L - l - 1)"},
     reading_of="003-densenet-paths")


def _sinkhorn_finite(cl):
    K = sp.Matrix(cl.premises["K"])
    n = K.shape[0]
    u, v = sp.ones(n, 1), sp.ones(n, 1)
    for _ in range(cl.premises["T"]):  # the printed loop, in exact arithmetic
        u = (K * v).applyfunc(lambda e: 1 / e)
        v = (K.T * u).applyfunc(lambda e: 1 / e)
    A = sp.diag(*u) * K * sp.diag(*v)
    rows, cols = [sum(A.row(i)) for i in range(n)], [sum(A.col(j)) for j in range(n)]
    exact = all(r == 1 for r in rows) and all(c == 1 for c in cols)
    return Outcome(f"T = {cl.premises['T']}: row sums {sp.sstr(rows)}, column sums {sp.sstr(cols)}",
                   verdict(exact), "after the final v update the columns sum to 1 exactly, the rows only in "
                   "the limit T -> oo (unless K has rank one, when one step is exact)")


_add("003-s5.2.1-sinkhorn-finite", "§5.2.1 algorithm", "the algorithm with T iterations outputs A = diag(u) K "
     "diag(v) in D_n (at the finite T it is run with)", "A in D_n",
     "the printed loop in exact rational arithmetic, T = 3, K = [[1, 2], [3, 1]]", _sinkhorn_finite,
     premises={"K": [[1, 2], [3, 1]], "T": 3}, mutant={"premises": {"K": [[1, 2], [2, 4]]}})

CLAIMS: tuple[Claim, ...] = tuple(_CLAIMS)
