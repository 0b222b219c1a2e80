"""Claims of source 003 (hyper-connections), part one: the state space, the residual flow, the
norms of §5.1 and the first properties of doubly stochastic matrices (§5.2).

The helpers here (the general doubly stochastic ``H_res`` of :func:`hres`, random doubly
stochastic matrices, Sinkhorn iterations) are shared with :mod:`depthdyn.claims.hyper`,
which holds the rest of the source's claims and the full ``CLAIMS`` tuple.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp

from ..families import hyper_connection
from ..parse import parse_expr
from .base import Claim, Outcome, compare_exact, ensure, stated_expr, stated_matrix, verdict, wrong_value
from .formula import formula

__all__ = ["CLAIMS", "claim", "SOURCE", "TOL", "constraint_rank", "hres", "n_symbol", "random_ds"]


SOURCE = "003_b990f2cca7ebb478.txt"
_CLAIMS: list[Claim] = []
TOL = 1e-12
n_symbol = sp.Symbol("n")


def claim(id, section, statement, stated, method, check, premises=None, mutant=None, reading_of="") -> Claim:
    """A claim of this source; without a ``mutant`` the stated value made wrong is the mutant."""
    if mutant is None and wrong_value(stated) is not None:
        mutant = {"stated": wrong_value(stated)}
    return Claim(id, SOURCE, section, statement, stated, method, check, premises or {}, mutant, reading_of)


def _add(*args, **kwargs) -> None:
    _CLAIMS.append(claim(*args, **kwargs))


def hres(n: int, tag: str = "") -> sp.ImmutableMatrix:
    """The general doubly stochastic H_res of hyper_connection(n) (free entries renamed by ``tag``)."""
    rec = hyper_connection(n=n)
    H = sp.ImmutableMatrix(-rec.coeffs[1].xreplace({rec.lam_symbol: 0}))
    if tag:
        H = H.xreplace({s: sp.Symbol(s.name + tag) for s in H.free_symbols})
    return H


def random_ds(rng, n: int, count: int) -> np.ndarray:
    """Random doubly stochastic matrices: convex combinations of random permutation matrices."""
    out = np.zeros((count, n, n))
    for c in range(count):
        w = rng.dirichlet(np.ones(4))
        for wk in w:
            out[c] += wk * np.eye(n)[rng.permutation(n)]
    return out


# ============================================================== §1 state space, eq. 6
def _ssm(cl):
    A, B, C, D = (sp.Symbol(s, commutative=False) for s in "ABCD")
    h, u0, u1 = (sp.Symbol(s, commutative=False) for s in ("h_t", "u_t", "u_t1"))
    h1 = A * h + B * u0
    y1 = sp.expand(C * h1 + D * u1)  # y_{t+1} = C h_{t+1} + D u_{t+1}
    names = {"A": A, "B": B, "C": C, "D": D, "h_t": h, "u_t": u0, "u_t1": u1}
    stated = sp.expand(parse_expr(cl.stated, names))
    ok = sp.expand(y1 - stated) == 0
    return Outcome(
        f"y_(t+1) = {sp.sstr(y1)}",
        verdict(ok),
        "" if ok else "the printed form holds only when D = 0 or u_(t+1) = u_t",
    )


_add(
    "003-eq6-ssm",
    "§1 eq. 6",
    "from h_(t+1) = A h_t + B u_t, y_t = C h_t + D u_t: y_(t+1) = C A h_t + (C B + D) u_t",
    "C*A*h_t + (C*B + D)*u_t",
    "substitution with non-commuting symbols",
    _ssm,
    mutant={"stated": "C*A*h_t + C*B*u_t + D*u_t1"},
)


# ============================================================== §2 residual flow, eq. 7-12
def _telescoping(cl):
    L = 7
    F = sp.symbols(f"F0:{L}")
    x = [sp.Symbol("x_0")]
    for i in range(L):
        x.append(x[-1] + cl.premises["step"] * F[i])  # eq. 2: x_{i+1} = x_i + F(x_i)
    ok = all(sp.expand(x[b] - (x[a] + sum(F[a:b]))) == 0 for a in range(L + 1) for b in range(a, L + 1))
    return Outcome("x_L - x_l = F_l + ... + F_(L-1) for all 0 <= l <= L <= 7", verdict(ok))


_add(
    "003-eq7-telescoping",
    "eq. 7",
    "x_L = x_l + sum_(i=l)^(L-1) F(x_i, W_i)",
    "x_L = x_l + sum F",
    "exact unrolling of x_(i+1) = x_i + F_i",
    _telescoping,
    premises={"step": 1}, mutant={"premises": {"step": 2}},
)


_SPELLING = (("dF/dx", "J"), ("H_post^T", "HpostT"), ("H_res", "Hres"), ("H_pre", "Hpre"), ("F'", "Fp"))


def _stated_matrix(text: str, names: dict) -> sp.Matrix:
    return stated_matrix(text, names, _SPELLING)


def _jacobians(cl):
    parts = [t.strip() for t in cl.stated.split(";")]
    xs = sp.Matrix(sp.symbols("x1 x2"))
    F = sp.Matrix([sp.Function("F1")(*xs), sp.Function("F2")(*xs)])
    J = F.jacobian(xs)
    plain, res = F.jacobian(xs), (xs + F).jacobian(xs)  # the layers x -> F(x) and x -> x + F(x)
    ok = compare_exact(_stated_matrix(parts[0], {"J": J, "I": sp.eye(2)}), plain).holds
    ok = ok and compare_exact(_stated_matrix(parts[1], {"J": J, "I": sp.eye(2)}), res).holds
    # s3: n = 3 streams, one channel; F a scalar function of H_pre x
    n = 3
    rec = hyper_connection(n=n)
    H = hres(n)
    pre = sp.Matrix([[rec.symbols[f"hpre_{i + 1}"] for i in range(n)]])
    post = sp.Matrix([[rec.symbols[f"hpost_{i + 1}"] for i in range(n)]])
    X = sp.Matrix(sp.symbols(f"y1:{n + 1}"))
    phi = sp.Function("phi")
    z = (pre * X)[0]
    s3 = (H * X + post.T * phi(z)).jacobian(X)
    dphi = sp.Matrix([[sp.Subs(sp.Derivative(phi(sp.Symbol("z")), sp.Symbol("z")), sp.Symbol("z"), z).doit()]])
    stated = _stated_matrix(parts[2], {"Hres": H, "HpostT": post.T, "Fp": dphi, "Hpre": pre})
    ok = ok and compare_exact(stated, s3).holds
    lam = rec.lam_symbol  # linearised, phi(z) = lam z: the family's step matrix
    lin = (H * X + post.T * lam * z).jacobian(X)
    ok = ok and compare_exact(-rec.coeffs[1], lin).holds
    return Outcome(
        "s1 = dF/dx; s2 = I + dF/dx; s3 = H_res + H_post^T phi'(H_pre x) H_pre (n = 3 streams); "
        "with phi ~ lam this is hyper_connection's step matrix",
        verdict(ok),
    )


_add(
    "003-eq8-10-jacobians",
    "eq. 8-10",
    "the layer Jacobians: s1 = dF/dx, s2 = I + dF/dx, s3 = H_res + H_post^T dF/d(H_pre x) H_pre",
    "dF/dx; I + dF/dx; H_res + H_post^T F' H_pre",
    "SymPy Jacobians with undefined F; hyper_connection(n=3)",
    _jacobians,
    mutant={"stated": "dF/dx; dF/dx; H_res + H_post^T F' H_pre"},
)


def _products(m: int):
    A = sp.symbols(f"A1:{m + 1}", commutative=False)
    prod = sp.Integer(1)
    for a in A:
        prod = (1 + a) * prod  # d x_L / d x = s_(L-1) ... s_(i+1): later layers on the left
    return A, sp.expand(prod)


def _expansion(cl):
    m = 3
    A, prod = _products(m)
    second = {
        "<=": sum(A[j2] * A[j1] for j1 in range(m) for j2 in range(m) if j1 <= j2),
        "<": sum(A[j2] * A[j1] for j1 in range(m) for j2 in range(m) if j1 < j2),
    }
    full = sp.Integer(1)
    for a in A:
        full = a * full
    build = {k: sp.expand(1 + sum(A) + s + full) for k, s in second.items()}
    rel = "<=" if "<=" in cl.stated else "<"
    ok = sp.expand(prod - build[rel]) == 0
    ensure(sp.expand(prod - build["<"]) == 0, "product of (I + A_j) expansion")
    extra = sp.expand(build["<="] - prod)
    return Outcome(
        "prod (I + A_j) = I + sum A_j + sum_(j1 < j2) A_j2 A_j1 + ... + J_1 (strict j1 < j2)",
        verdict(ok),
        f"three layers: the printed j1 <= j2 adds {sp.sstr(extra)}",
    )


_add(
    "003-eq12-expansion",
    "eq. 12",
    "J_2 = I + sum_j dF/dx_j + sum_(j1 <= j2) dF/dx_j2 dF/dx_j1 + ... + J_1",
    "sum over j1 <= j2",
    "expansion of (I + A_3)(I + A_2)(I + A_1) with non-commuting symbols",
    _expansion,
    mutant={"stated": "sum over j1 < j2"},
)


def _exp_identity(cl):
    A1, A2 = (sp.Matrix(cl.premises[k]) for k in ("A1", "A2"))
    J2 = (sp.eye(2) + A2) * (sp.eye(2) + A1)
    E = sp.simplify((A1 + A2).exp())
    ok = compare_exact(E, J2).holds
    return Outcome(
        f"A1 = {A1.tolist()}, A2 = {A2.tolist()}: (I + A2)(I + A1) = {sp.sstr(J2.tolist())}, "
        f"exp(A1 + A2) = {sp.sstr(E.rewrite(sp.exp).applyfunc(sp.simplify).tolist())} ≈ "
        f"{sp.sstr(E.evalf(5).tolist())}",
        verdict(ok),
        "not an identity even for one layer: (I + A) vs exp(A) differ by A^2/2 + ...",
    )


_add(
    "003-prop-exp-identity",
    "proposition (after eq. 12)",
    "J_2 = exp(sum_j dF/dx_j), read as an identity",
    "J_2 = exp(sum A_j)",
    "exact 2x2 counterexample",
    _exp_identity,
    premises={"A1": [[0, 1], [0, 0]], "A2": [[0, 0], [1, 0]]}, mutant={"premises": {"A2": [[0, 0], [0, 0]]}},
)


def _exp_order(cl):
    rng = np.random.default_rng(0)
    from scipy.linalg import expm

    B = rng.normal(size=(4, 3, 3))
    errs = []
    epss = [2.0**-k for k in range(4, 10)]
    for eps in epss:
        P = np.eye(3)
        for b in B:
            P = (np.eye(3) + eps * b) @ P
        errs.append(np.abs(P - expm(eps * B.sum(axis=0))).max())
    slope = float(np.polyfit(np.log(epss), np.log(errs), 1)[0])
    # commuting case: the second-order term is -sum A_j^2 / 2, not zero
    comm = np.diag([0.3, -0.2, 0.1])
    P = np.eye(3)
    for _ in range(4):
        P = (np.eye(3) + comm) @ P
    comm_err = float(np.abs(P - expm(4 * comm)).max())
    # many small steps of B_1 then of B_2 (ordered, non-commuting): no convergence to exp(sum)
    Ls = (100, 1000)
    ordered = []
    for L in Ls:
        P = np.eye(3)
        for j in range(L):
            P = (np.eye(3) + B[0 if j < L // 2 else 1] / L) @ P
        ordered.append(float(np.abs(P - expm((B[0] + B[1]) / 2)).max()))
    order = int(cl.stated.split("O(eps^")[1].rstrip(")")) if "O(eps^" in cl.stated else 2  # "≈": 1st order
    ok = abs(slope - order) < 0.2
    return Outcome(
        f"error of prod(I + eps B_j) vs exp(eps sum B_j), 4 random 3x3 B_j: slope {slope:.3f} in eps "
        f"(second order); commuting diag steps still differ by {comm_err:.3g}; ordered halves of L "
        f"small steps: error {ordered[0]:.3g} (L = {Ls[0]}), {ordered[1]:.3g} (L = {Ls[1]})",
        "holds-with-caveat" if ok else "fails",
        "J_2 and exp(sum A_j) agree to first order only: J_2 = exp(sum A_j) + O(||A||^2); the error term "
        "is sum_(j1<j2) [A_j2, A_j1]/2 - sum A_j^2/2 + O(||A||^3); for many small steps it vanishes only "
        "when the A_j commute (or alternate quickly, Lie-Trotter), not for an ordered sequence",
    )


_add(
    "003-prop-exp-order",
    "proposition (after eq. 12)",
    "J_2 ≈ exp(sum_j dF/dx_j)",
    "J_2 ≈ exp(sum A_j)",
    "convergence slope of the error for A_j = eps B_j (float64, scipy expm); commuting and ordered examples",
    _exp_order,
    mutant={"stated": "J_2 = exp(sum A_j) + O(eps^3)"},
)


# ============================================================== §5.1 norms
def _norm_inequality(cl):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(500, 5, 5)) * rng.uniform(0.1, 10, size=(500, 1, 1))
    A[:100] = np.abs(A[:100])
    A[100:200, :, 1:] = 0.0  # rank one, a column
    two = np.linalg.norm(A, 2, axis=(1, 2))
    one = np.abs(A).sum(axis=1).max(axis=1)
    inf = np.abs(A).sum(axis=2).max(axis=1)
    rhs = cl.stated.split("<=")[1].replace("||A||_1", "n1").replace("||A||_inf", "ninf").replace(" n", "*n")
    n1s, nis = sp.symbols("n1 ninf", nonnegative=True)
    bound = formula(rhs, {"n1": n1s, "ninf": nis})
    ratio = two / sp.lambdify((n1s, nis), bound, "numpy")(one, inf)
    # exact: a rational matrix, ||A||_1 ||A||_inf I - A^T A positive semidefinite
    M = sp.Matrix([[1, -2, 3], [0, 4, -1], [2, 1, 1]])
    n1 = max(sum(abs(v) for v in M.col(j)) for j in range(3))
    ni = max(sum(abs(v) for v in M.row(i)) for i in range(3))
    S = bound.subs({n1s: n1, nis: ni}) ** 2 * sp.eye(3) - M.T * M  # PSD iff all principal minors >= 0
    exact = all(
        S.extract(list(c), list(c)).det() >= 0
        for k in range(1, 4)
        for c in itertools.combinations(range(3), k)
    )
    ok = bool(ratio.max() <= 1 + TOL) and exact
    return Outcome(
        f"max ||A||_2 / ({rhs.strip()}) = {ratio.max():.6f} over 500 random 5x5 A (tolerance "
        f"1e-12); exact PSD check of bound^2 I - A^T A for a 3x3 rational A",
        verdict(ok),
        "Schur / Hoelder bound: ||A||_2^2 = rho(A^T A) <= ||A^T A||_1 <= ||A||_inf ||A||_1",
    )


_add(
    "003-thm5.1-norm-inequality",
    "Theorem 5.1",
    "||A||_2 <= sqrt(||A||_1 ||A||_inf)",
    "||A||_2 <= sqrt(||A||_1 ||A||_inf)",
    "batched spectral, 1- and inf-norms of random matrices; exact PSD check for a rational matrix",
    _norm_inequality,
    mutant={"stated": "||A||_2 <= sqrt(||A||_1 ||A||_inf)/2"},
)


# ============================================================== §5.2 doubly stochastic matrices
def _closure(cl):
    n = 3
    A, B = hres(n, "a"), hres(n, "b")
    P = (A * B).applyfunc(sp.expand)
    one = sp.ones(n, 1)
    ok = compare_exact(one, P * one).holds and compare_exact(one.T, one.T * P).holds
    E = {"I_n": sp.eye(n), "J_n": sp.ones(n, n) / n}[cl.stated.split("unit ")[1].strip()]  # the stated unit
    ok = ok and compare_exact(A, (E * A).applyfunc(sp.expand)).holds and compare_exact(A, (A * E).applyfunc(
        sp.expand)).holds and all(v >= 0 for v in E) and compare_exact(one, E * one).holds
    rng = np.random.default_rng(1)
    Ds = random_ds(rng, 4, 200)
    prods = Ds[:100] @ Ds[100:]
    num = (
        np.abs(prods.sum(1) - 1).max() <= TOL and np.abs(prods.sum(2) - 1).max() <= TOL and prods.min() >= 0
    )
    return Outcome(
        "AB 1 = 1 and 1^T AB = 1^T for general symbolic A, B in D_3; products of 100 random pairs in "
        "D_4 are nonnegative with unit row/column sums; I_n in D_n",
        verdict(ok and num),
    )


_add(
    "003-s5.2-monoid",
    "§5.2 property",
    "(D_n, ·) is a monoid under matrix multiplication with unit I_n",
    "closed, unit I_n",
    "symbolic product of two general doubly stochastic H_res (n = 3); random products (n = 4)",
    _closure,
    mutant={"stated": "closed, unit J_n"},
)


def constraint_rank(n: int) -> int:
    rows = []
    for i in range(n):
        rows.append([1 if a == i else 0 for a in range(n) for _ in range(n)])  # row sum i
        rows.append([1 if b == i else 0 for _ in range(n) for b in range(n)])  # column sum i
    return sp.Matrix(rows).rank()


def _dimension(cl):
    expr = stated_expr(cl.stated.split("=")[-1], "n")
    first = stated_expr(cl.stated.split("=")[0], "n")
    lines, ok = [], True
    for n in range(1, 7):
        dim = n * n - constraint_rank(
            n
        )  # the uniform matrix has all entries > 0: full dimension in the hull
        free = len(hyper_connection(n=n).symbols) - 1 - 2 * n  # H_res's free entries
        ok = ok and dim == expr.subs(n_symbol, n) == first.subs(n_symbol, n) and free == dim
        lines.append(f"{n}: {dim}")
    return Outcome("dim D_n = n^2 - rank(row/column-sum constraints): " + ", ".join(lines), verdict(ok))


_add(
    "003-s5.2-dimension",
    "§5.2 property",
    "dim(D_n) = n^2 - (2n - 1) = (n - 1)^2",
    "n**2 - (2*n - 1) = (n - 1)**2",
    "exact rank of the 2n linear constraints, n = 1..6; free entries of hyper_connection's H_res",
    _dimension,
    mutant={"stated": "n**2 - 2*n = (n - 1)**2"},
)


def _vertices(cl):
    counts = {}
    for n in (1, 2, 3, 4):
        bits = np.array(list(itertools.product((0, 1), repeat=n * n)), dtype=np.int8).reshape(-1, n, n)
        ds = (bits.sum(1) == 1).all(1) & (bits.sum(2) == 1).all(1)
        counts[n] = int(ds.sum())
    expr = formula(cl.stated, {"n": n_symbol})
    ok = all(c == expr.subs(n_symbol, n) for n, c in counts.items())
    return Outcome(
        f"0/1 doubly stochastic matrices: {counts}",
        verdict(ok),
        "the permutation matrices; each is a vertex (a 0/1 point of [0, 1]^(n x n) is extreme)",
    )


_add(
    "003-thm-birkhoff-vertices",
    "Birkhoff-von Neumann theorem",
    "D_n is the convex hull of Pi_n (0/1 matrices in D_n), a polytope with n! vertices",
    "n!",
    "enumeration of all 0/1 n x n matrices with unit row and column sums, n = 1..4",
    _vertices,
    mutant={"stated": "n**2"},
)


def _not_simplex(cl):
    rows = []
    simplex = {}
    for n in range(1, 9):
        d = n * n - constraint_rank(n) if n <= 5 else (n - 1) ** 2
        simplex[n] = math.factorial(n) == d + 1  # a d-simplex has exactly d + 1 vertices
        rows.append(f"n={n}: {math.factorial(n)} vertices, dim {d}")
    bound = int(cl.stated.split(">")[1])
    ok = all(simplex[n] == (n <= bound) for n in simplex)
    return Outcome("simplex exactly for n <= 2; " + "; ".join(rows[:4]), verdict(ok))


_add(
    "003-s5.2-not-simplex",
    "§5.2 property",
    "for n > 2, D_n is not a simplex",
    "n > 2",
    "vertex count n! vs dimension + 1, n = 1..8",
    _not_simplex,
    mutant={"stated": "n > 3"},
)

CLAIMS: tuple[Claim, ...] = tuple(_CLAIMS)
