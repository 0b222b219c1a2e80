"""Claims of source 001: Lechner et al., "Entangled Residual Mappings".

The entanglement matrix is taken from :func:`depthdyn.families.entangled` (``Gamma`` is the
block's skip matrix, ``x_{l+1} = (Gamma + lam I) x_l`` at ``lam = 0``); its eigenvalues come
from the family's exact roots, its singular values from ``Gamma^T Gamma``. The orthogonal
case is checked on the exactly orthogonal (Cayley) matrices of the family and, with a stated
tolerance, on the QR kernels of Fig. 3 (:func:`depthdyn.numeric.conv.conv_kernel`). The
Fig. 3 kernels are checked through their operator spectra (``conv_spectrum``, circular
padding). The sentences that summarise the experiment tables, and the Fig. 3 listing as
printed, are checked in :mod:`depthdyn.claims.tables`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..families import entangled
from ..numeric.conv import conv_kernel, conv_spectrum
from ..symbolic.polynomial import roots
from .base import Claim, Outcome, compare_exact, ensure, stated_expr, verdict, wrong_value
from .tables import CLAIMS as TABLE_CLAIMS

__all__ = ["SOURCE", "CLAIMS"]

SOURCE = "001_5f70fa795114e580.txt"
_CLAIMS: list[Claim] = []
_NS = range(2, 7)  # feature dimensions checked
_TOL = 1e-12  # numeric tolerance for the float (QR, FFT) checks


def _add(id, section, statement, stated, method, check, premises=None, mutant=None, reading_of="") -> None:
    if mutant is None and wrong_value(stated) is not None:
        mutant = {"stated": wrong_value(stated)}
    _CLAIMS.append(Claim(id, SOURCE, section, statement, stated, method, check, premises or {}, mutant,
                         reading_of))


def _gamma(rec) -> sp.ImmutableMatrix:
    """The skip matrix Gamma of an entangled family: ``-(coeffs[1])`` at ``lam = 0``."""
    return sp.ImmutableMatrix(-rec.coeffs[1].xreplace({rec.lam_symbol: 0}))


def _uniform(n: int):
    rec = entangled(n=n)
    return rec, rec.symbols["gamma"], _gamma(rec)


def _multiset(text: str, n: int, g) -> dict:
    """``"1: 1; 1 - gamma: n - 1"`` -> {value: multiplicity} at this n (gamma renamed to g)."""
    out: dict = {}
    for part in text.split(";"):
        val, mult = part.split(":")
        v = stated_expr(val, "gamma").xreplace({sp.Symbol("gamma"): g})
        out[v] = out.get(v, 0) + stated_expr(mult, "n").xreplace({sp.Symbol("n"): n})
    return out


def _sv_squared(G) -> dict:
    """Squared singular values of G with multiplicities (eigenvalues of G^T G)."""
    return {sp.factor(k): v for k, v in (G.T * G).eigenvals().items()}


# ============================================================== eq. 4: the uniform Gamma
def _eigenvalues(cl):
    bad, shown = [], []
    for n in _NS:
        rec, g, G = _uniform(n)
        got = {}
        for rt in roots(rec.subs(lam=0)):
            got[sp.factor(rt.value)] = got.get(sp.factor(rt.value), 0) + rt.multiplicity
        ensure(
            compare_exact(
                sp.factor(G.charpoly(sp.Symbol("r")).as_expr()), sp.factor(rec.subs(lam=0).charpoly())
            ).holds,
            "charpoly of Gamma",
        )
        want = _multiset(cl.stated, n, g)
        if not all(compare_exact(want.get(k, 0), v).holds for k, v in got.items()) or len(got) != len(want):
            bad.append(f"n = {n}: {got}")
        shown.append(f"n={n}: " + ", ".join(f"{sp.sstr(k)} (x{v})" for k, v in got.items()))
    return Outcome("; ".join(shown), verdict(not bad), "; ".join(bad))


_add(
    "001-eq4-eigenvalues",
    "eq. 4",
    "Gamma = (gamma/n) 1_n + (1 - gamma) I_n has one eigenvalue at 1 and n - 1 eigenvalues at 1 - gamma",
    "1: 1; 1 - gamma: n - 1",
    "exact roots of entangled(kind='uniform', n) at lam = 0 (symbolic gamma), n = 2..6",
    _eigenvalues,
    mutant={"stated": "1: 1; 1 - gamma: n"},
)


def _singular_below_one(cl):
    lines, counter = [], None
    for n in _NS:
        _, g, G = _uniform(n)
        sq = _sv_squared(G)
        lines.append(f"n={n}: sigma^2 in " + ", ".join(f"{sp.sstr(k)} (x{v})" for k, v in sq.items()))
        largest = [k for k in sq if sp.simplify(k - 1) == 0]
        if largest and n == 3:
            G3 = G.xreplace({g: sp.Rational(1, 2)})
            svs = sorted((sp.sqrt(k) for k, v in _sv_squared(G3).items() for _ in range(v)), reverse=True)
            counter = f"n = {n}, gamma = 1/2: singular values {sp.sstr(svs)}, the largest exactly 1"
    # the stated bound, literally: every singular value < 1 at gamma = 1/2, n = 3
    G3 = _uniform(3)[2].xreplace({_uniform(3)[1]: sp.Rational(1, 2)})
    svs = [sp.sqrt(k) for k, v in _sv_squared(G3).items() for _ in range(v)]
    strict = "<=" not in cl.stated
    bound = stated_expr(cl.stated.split("<")[1].lstrip("="))
    holds = all(bool(s < bound) if strict else bool(s <= bound) for s in svs)
    return Outcome(
        counter or "; ".join(lines),
        verdict(holds),
        "Gamma is symmetric, so its singular values are |eigenvalues|: 1 (singular vector "
        "1_n) and |1 - gamma| (x n-1); the largest is exactly 1 for every gamma. " + "; ".join(lines),
    )


_add(
    "001-eq4-singular-values",
    "eq. 4",
    "the uniform Gamma has all singular values strictly less than 1",
    "sigma < 1",
    "eigenvalues of Gamma^T Gamma for entangled(n), n = 2..6 (symbolic gamma); the literal bound at "
    "n = 3, gamma = 1/2",
    _singular_below_one,
    mutant={"stated": "sigma <= 1"},
)


def _endpoints(cl):
    ok, lines = True, []
    lo, hi = cl.premises["endpoints"]
    for n in _NS:
        _, g, G = _uniform(n)
        ident, full = G.xreplace({g: lo}), G.xreplace({g: hi})
        ok = ok and compare_exact(sp.eye(n), ident).holds
        ok = ok and compare_exact(sp.ones(n, n) / n, full).holds and full.rank() == 1
        ok = ok and compare_exact(G, G.T).holds
    lines.append(
        "gamma = 0: Gamma = I_n; gamma = 1: Gamma = (1/n) 1 1^T (rank 1: every output is the mean "
        "of x); Gamma symmetric for all gamma"
    )
    return Outcome(lines[0], verdict(ok))


_add(
    "001-eq4-endpoints",
    "eq. 4",
    "sweeping gamma spans the standard residual connection (gamma = 0) to a fully entangled one "
    "(gamma = 1), where x is distributed across all dimensions",
    "gamma = 0: I_n; gamma = 1: (1/n) 1_n",
    "Gamma of entangled(n) at gamma = 0 and 1, n = 2..6 (exact); rank at gamma = 1",
    _endpoints,
    premises={"endpoints": (0, 1)},
    mutant={"premises": {"endpoints": (0, sp.Rational(1, 2))}},
)


# ============================================================== orthogonal Gamma
def _orth_matrices():
    return [_gamma(entangled(kind="orthogonal", n=n, seed=s)) for n in (2, 3, 4) for s in (0, 1, 2)]


def _qr_kernels():
    return [conv_kernel("orthogonal", channels=c, seed=s)[0, 0] for c in (2, 4, 8) for s in (0, 1, 2)]


def _orth_singular(cl):
    target = stated_expr(cl.stated)
    exact = all(compare_exact(target**2 * sp.eye(Q.shape[0]), Q.T * Q).holds for Q in _orth_matrices())
    devs = [float(np.abs(np.linalg.svd(Q, compute_uv=False) - float(target)).max()) for Q in _qr_kernels()]
    ok = exact and max(devs) <= _TOL
    return Outcome(
        f"Q^T Q = I exactly for 9 Cayley matrices (n = 2..4); QR kernels: max |sigma - 1| = "
        f"{max(devs):.2e} (tolerance {_TOL:g})",
        verdict(ok),
    )


_add(
    "001-s3.1-orthogonal-singular",
    "§3.1",
    "all singular values of an orthogonal Gamma (Q of a QR decomposition) are 1",
    "1",
    "exact Q^T Q = I for entangled(kind='orthogonal'); numeric singular values of the Fig. 3 QR kernels",
    _orth_singular,
)


def _orth_eigen(cl):
    target = stated_expr(cl.stated)
    worst = 0.0
    for Q in _orth_matrices():
        for z in sp.Poly(Q.charpoly(sp.Symbol("r")).as_expr(), sp.Symbol("r")).nroots(n=30):
            worst = max(worst, float(abs(sp.Abs(z) - target)))
    for Q in _qr_kernels():
        worst = max(worst, float(np.abs(np.abs(np.linalg.eigvals(Q)) - float(target)).max()))
    return Outcome(
        f"max ||z| - 1| = {worst:.2e} over the eigenvalues of 9 Cayley and 9 QR matrices",
        verdict(worst <= _TOL),
        "an orthogonal matrix preserves norms, so Q v = z v gives |z| = 1",
    )


_add(
    "001-s3.1-orthogonal-eigenvalues",
    "§3.1",
    "all complex eigenvalues of an orthogonal Gamma have norm 1",
    "1",
    "eigenvalue moduli (30-digit roots of the exact charpoly; float eig of the QR kernels)",
    _orth_eigen,
)


# ============================================================== eq. 3: the Jacobian
def _jacobian(cl):
    n = 2
    xs = sp.Matrix(sp.symbols(f"x1:{n + 1}"))
    f = sp.Matrix([sp.Function(f"f{i + 1}")(*xs) for i in range(n)])
    G = _gamma(entangled(kind="orthogonal", n=n, seed=1))
    ensure(G != G.T, "the test Gamma must be non-symmetric")
    J = (f + G * xs).jacobian(xs)  # eq. 2 with column vectors: R_f(x) = f(x) + Gamma x
    stated = f.jacobian(xs) + (G.T if cl.stated.replace(" ", "").endswith("Gamma^T") else G)
    col = compare_exact(stated, J).holds
    row = compare_exact(f.jacobian(xs) + G, J).holds
    xr = sp.Matrix([list(xs)])  # row vectors, as eq. 6 writes c_t Gamma: R(x) = f(x) + x Gamma
    Jrow = (f.T + xr * G).jacobian(xs)  # d R_i / d x_j
    ensure(not row or col or compare_exact(f.jacobian(xs) + G.T, Jrow).holds, "the row-vector reading")
    return Outcome(
        f"Gamma x (column vectors): J = df/dx + Gamma = {sp.sstr(J)}",
        "holds" if col else "fails",  # eq. 2 as printed writes Gamma x (column vectors)
        "false for eq. 2 as printed (Gamma x): Gamma^T is right only for row vectors (x Gamma, as eq. 6 "
        "writes c_t Gamma) or a symmetric Gamma "
        "(the uniform one); eq. 2 writes Gamma x, whose Jacobian is df/dx + Gamma",
    )


_add(
    "001-eq3-jacobian",
    "eq. 3",
    "the Jacobian of R_f(x) = f(x) + Gamma x is df/dx + Gamma^T",
    "df/dx + Gamma^T",
    "SymPy Jacobian of f(x) + Gamma x with undefined f, non-symmetric orthogonal Gamma (n = 2)",
    _jacobian,
    mutant={"stated": "df/dx + Gamma"},
)


# ============================================================== Lemma 1
def _norm_one(cl):
    lines, ok = [], True
    for n in _NS:
        _, g, G = _uniform(n)
        sq = _sv_squared(G)
        top = sp.Max(*[sp.sqrt(k) for k in sq]).xreplace({g: sp.Symbol("t")})
        t = sp.Symbol("t")
        vals = {top.xreplace({t: sp.Rational(i, 8)}) for i in range(9)}  # gamma in [0, 1]
        ok = ok and vals == {stated_expr(cl.stated)}
    lines.append(
        "||Gamma||_2 = max(1, |1 - gamma|) = 1 for 0 <= gamma <= 1 (n = 2..6, gamma = 0, 1/8, .., 1)"
    )
    return Outcome(lines[0], verdict(ok))


_add(
    "001-lemma1-norm",
    "Lemma 1 proof",
    "the uniform Gamma has ||Gamma|| = 1",
    "1",
    "largest singular value of entangled(n) on a grid of gamma in [0, 1] (exact)",
    _norm_one,
)


def _lower_bound(cl):
    lines, ok = [], True
    for n in _NS:
        _, g, G = _uniform(n)
        # (1-gamma)^2 |x|^2 <= |Gamma x|^2  <=>  Gamma^T Gamma - (1-gamma)^2 I is PSD
        ev = (
            G.T * G - stated_expr(cl.stated, "gamma").xreplace({sp.Symbol("gamma"): g}) ** 2 * sp.eye(n)
        ).eigenvals()
        u = sp.Symbol("u", nonnegative=True)
        for e in ev:
            # nonnegative on [0, 1]: the set where it is negative must miss [0, 1]
            neg = sp.solveset(sp.expand(e.xreplace({g: u})) < 0, u, sp.Interval(0, 1))
            ok = ok and neg.is_empty
        if n == 3:
            lines.append(
                "eigenvalues of Gamma^T Gamma - (1-gamma)^2 I: "
                + ", ".join(sp.sstr(sp.factor(e)) for e in ev)
                + " (>= 0 for 0 <= gamma <= 1)"
            )
    return Outcome(lines[0], verdict(ok), "tight: equality for x orthogonal to 1_n")


_add(
    "001-lemma1-lower-bound",
    "Lemma 1 proof",
    "(1 - gamma) ||x|| <= ||Gamma x|| for the uniform Gamma",
    "1 - gamma",
    "Gamma^T Gamma - (1-gamma)^2 I positive semidefinite on 0 <= gamma <= 1 (exact eigenvalues, n = 2..6)",
    _lower_bound,
)


def _eigen_inference(cl):
    G = cl.premises["Gamma"]
    G = _uniform(3)[2] if isinstance(G, str) else sp.Matrix(G)  # "uniform": eq. 4's Gamma, n = 3
    g = sp.Symbol("gamma")
    G = G.xreplace({s: g for s in G.free_symbols})
    normal = compare_exact(G * G.T, G.T * G).holds
    at = G.xreplace({g: sp.Rational(1, 2)})  # a point of 0 < gamma < 1 for the numbers
    smin = sp.sqrt(min((at.T * at).eigenvals(), key=lambda e: sp.N(e)))
    min_eig = min(sp.Abs(v) for v in at.eigenvals())
    ok = bool(sp.N(smin - min_eig, 30) >= -sp.Float("1e-25"))  # min ||Ax||/||x|| = smallest singular value
    outcome = "fails" if not ok else "holds-with-caveat" if normal else "holds"
    return Outcome(
        f"Gamma = {sp.sstr(G)}: at gamma = 1/2, min |eigenvalue| = {sp.sstr(min_eig)}, min ||Gamma x||/||x|| = "
        f"{sp.sstr(sp.nsimplify(smin))} ≈ {sp.N(smin, 6)}; normal: {normal}",
        outcome,
        "the step 'minimum eigenvalue 1 - gamma, hence (1 - gamma)||x|| <= ||Gamma x||' needs a normal "
        "(here symmetric) Gamma, where singular values are |eigenvalues|, a condition the proof does not "
        "state; for a non-normal matrix with the same eigenvalues it fails (e.g. [[1, 1], [0, 1]])",
    )


_add(
    "001-lemma1-eigen-inference",
    "Lemma 1 proof",
    "since Gamma's minimum eigenvalue is 1 - gamma, (1 - gamma) ||x|| <= ||Gamma x|| holds",
    "min |eig| ||x|| <= ||Gamma x||",
    "the inference for the premise Gamma (eq. 4, n = 3): exact smallest singular value vs smallest "
    "|eigenvalue|, and whether Gamma is normal (the unstated condition of the step)",
    _eigen_inference,
    premises={"Gamma": "uniform"},
    mutant={"premises": {"Gamma": [[1, 1], [0, 1]]}},
)


def _refinement_bounds(cl):
    # ||f||^2/||Gamma x||^2 lies between ||f||^2/||x||^2 and ||f||^2/((1-gamma)^2 ||x||^2):
    # the Rayleigh quotient q = ||Gamma x||^2/||x||^2 lies in [(1-gamma)^2, 1]
    rng = np.random.default_rng(0)
    worst, singular = 0.0, None
    for n in _NS:
        _, g, G = _uniform(n)
        for gv in (sp.Rational(1, 10), sp.Rational(1, 2), sp.Rational(9, 10)):
            Gn = np.array(G.xreplace({g: gv}), dtype=float)
            X = rng.normal(size=(200, n))
            q = (np.linalg.norm(X @ Gn.T, axis=1) / np.linalg.norm(X, axis=1)) ** 2
            lo = float((1 - gv) ** 2)
            worst = max(worst, float(np.max(lo - q)), float(np.max(q - 1)))
        G1 = G.xreplace({g: 1})
        v = sp.Matrix([1, -1] + [0] * (n - 2))
        if singular is None and cl.premises["gamma_range"].contains(1) and G1 * v == sp.zeros(n, 1):
            singular = f"gamma = 1, n = {n}: Gamma x = 0 for x = {sp.sstr(list(v))}, an infinite ratio"
    ok = worst <= _TOL
    return Outcome(
        f"(1-gamma)^2 <= ||Gamma x||^2/||x||^2 <= 1 on 3000 random x (max violation {worst:.1e}); "
        + (singular or ""),
        ("holds-with-caveat" if singular else "holds") if ok else "fails",
        "the upper bound ||f||^2/((1-gamma)^2 ||x||^2) needs gamma < 1: at gamma = 1 Gamma is singular "
        "and the bound is undefined" if singular else "",
    )


_add(
    "001-lemma1-refinement-bounds",
    "Lemma 1 proof",
    "||f||^2/(||Gamma||^2 ||x||^2) <= ||f||^2/||Gamma x||^2 <= ||f||^2/((1 - gamma)^2 ||x||^2)",
    "||f||^2/||x||^2 <= ratio <= ||f||^2/((1-gamma)^2 ||x||^2)",
    "Rayleigh quotient ||Gamma x||^2/||x||^2 of entangled(n) on random x (n = 2..6, gamma = 0.1, 0.5, 0.9, "
    "tolerance 1e-12); the singular case gamma = 1 exactly",
    _refinement_bounds,
    premises={"gamma_range": sp.Interval(0, 1)},
    mutant={"premises": {"gamma_range": sp.Interval.Ropen(0, 1)}},
)


def _gamma_grows(cl):
    n = 3
    _, g, G = _uniform(n)
    grows, flat = [], []
    for x in cl.premises["xs"]:  # the refinement ratio ||f||^2/||Gamma x||^2 for fixed f, x
        x = sp.Matrix(x)
        ratio = 1 / sp.expand((G * x).dot(G * x))
        slope = sp.diff(ratio, g).xreplace({g: sp.Rational(1, 2)})
        ensure(compare_exact(1 / x.dot(x), ratio.xreplace({g: 0})).holds, "Gamma = I at gamma = 0")
        (grows if slope > 0 else flat).append(f"x = {list(x)}: d ratio/d gamma at 1/2 = {sp.sstr(slope)}")
    outcome = "holds" if grows and not flat else "holds-with-caveat" if grows else "fails"
    return Outcome(
        "; ".join(grows + flat),
        outcome,
        "at gamma = 0 the ratio is the residual one; it grows with gamma only for x with a component "
        "orthogonal to 1_n (Gamma 1_n = 1_n for every gamma, so along 1_n it does not change)",
    )


_add(
    "001-lemma1-gamma",
    "Lemma 1",
    "gamma close to 0 preserves the refinement ratio; larger gamma may make it larger",
    "ratio grows with gamma",
    "exact refinement ratio 1/||Gamma x||^2 of entangled(n=3) as a function of gamma, for x = e_1 and "
    "x = 1_n; its value at gamma = 0 and its slope",
    _gamma_grows,
    premises={"xs": ((1, 0, 0), (1, 1, 1))},
    mutant={"premises": {"xs": ((1, 1, 1),)}},
)


# ============================================================== Fig. 3 kernels, eq. 7
def _spatial_identity(cl):
    ok = True
    rng = np.random.default_rng(1)
    for k in (1, 3, 5):
        K = conv_kernel("spatial", gamma=cl.premises["gamma"], kernel_size=k, channels=3)
        z = conv_spectrum(K, 7, 6)
        ok = ok and np.abs(z - 1).max() <= _TOL
        # the kernel itself: I at the centre tap, zero elsewhere (the operator is I, not only its spectrum)
        centre = np.zeros_like(K)
        centre[k // 2, k // 2] = np.eye(3)
        ok = ok and np.array_equal(K, centre)
        x = rng.normal(size=(3, 7, 6))
        y = np.zeros_like(x)
        for a in range(k):
            for b in range(k):
                y += np.einsum(
                    "io,ihw->ohw", K[a, b], np.roll(x, (-(a - k // 2), -(b - k // 2)), axis=(1, 2))
                )
        ok = ok and np.abs(y - x).max() <= _TOL
    return Outcome(
        "sp_kernel(gamma = 0) is I_C at the centre tap, 0 elsewhere; its convolution returns x "
        "(k = 1, 3, 5; spectrum all 1)",
        verdict(ok),
    )


_add(
    "001-eq7-identity-kernel",
    "eq. 7, Fig. 3",
    "the standard residual connection is the convolution with the identity (a 1x1 convolution); the "
    "spatial kernel with gamma = 0 is that identity",
    "identity operator",
    "conv_kernel('spatial', gamma=0) entries, conv_spectrum, and a direct circular convolution of random x",
    _spatial_identity,
    premises={"gamma": 0.0},
    mutant={"premises": {"gamma": 0.5}},
)


def _kernel_spectra(cl):
    lines, ok = [], True
    H = W = 6
    all_one = True
    for kind in ("spatial", "channel"):
        for gv in cl.premises["gammas"]:
            z = conv_spectrum(conv_kernel(kind, gamma=gv, kernel_size=3, channels=4), H, W)
            has_one = np.abs(z - 1).min() <= _TOL
            radius = np.abs(z).max()
            ok = ok and has_one and abs(radius - 1) <= _TOL
            all_one = all_one and np.abs(z - 1).max() <= _TOL
            lines.append(f"{kind} gamma={gv}: eigenvalues in [{z.real.min():.4g}, {z.real.max():.4g}]")
    if cl.premises["orthogonal"]:
        zo = conv_spectrum(conv_kernel("orthogonal", channels=4, seed=0), H, W)
        ok = ok and np.abs(np.abs(zo) - 1).max() <= _TOL
        all_one = all_one and np.abs(zo - 1).max() <= _TOL
        lines.append("orthogonal: all |z| = 1")
    return Outcome(
        "eigenvalue 1 present, spectral radius 1 for every kernel; " + "; ".join(lines),
        ("holds" if all_one else "holds-with-caveat") if ok else "fails",
        "the kernels share the eigenvalue 1 and the norm bound with the identity, not 'all eigenvalues "
        "1': the other eigenvalues spread down to the minima listed (negative at gamma = 1), and the "
        "orthogonal kernel's lie on the unit circle away from 1",
    )


_add(
    "001-abstract-kernel-spectra",
    "abstract, Fig. 3",
    "entangled mappings share key attributes (eigenvalues, Jacobian norm) with identity mappings",
    "eigenvalue 1, spectral radius 1",
    "conv_spectrum of the Fig. 3 kernels (3x3, 4 channels, 6x6 circular grid, gamma = 0.1, 0.5, 1; tolerance "
    "1e-12)",
    _kernel_spectra,
    premises={"gammas": (0.1, 0.5, 1.0), "orthogonal": True},
    mutant={"premises": {"gammas": (0.0,), "orthogonal": False}},
)

CLAIMS: tuple[Claim, ...] = tuple(_CLAIMS) + TABLE_CLAIMS  # the tables' summaries: .tables
