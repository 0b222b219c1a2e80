"""Claims that published papers make about their own blocks, checked with depthdyn.

Each claim names its paper in ``section``; the stated value is what the paper asserts (an
input, parsed and compared), the computed value comes from the families of
:mod:`depthdyn.literature` and depthdyn's symbolic and numeric layers. The statements are
paraphrased; where a paper's wording is qualitative ("stable", "invertible", "exactly doubly
stochastic") the stated value is the quantity that makes it precise.
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from ..families.literature import (
    antisymmetric,
    hc_static,
    kromhc,
    leapfrog,
    lm_resnet,
    mhc_lite,
    momentum_sander,
    revnet,
)
from ..recurrence import r
from .base import Claim, Outcome, compare_exact, ensure, show, stated_expr, verdict

__all__ = ["SOURCE", "CLAIMS"]

SOURCE = "literature"
_CLAIMS: list[Claim] = []


def _add(id, section, statement, stated, method, check, mutant) -> None:
    _CLAIMS.append(Claim(id, SOURCE, section, statement, stated, method, check, {}, mutant))


def _rho(rec):
    return rec.rho_sigma()[0]


# ------------------------------------------------------------------ LM-ResNet
def _modified_equation(cl):
    rec = lm_resnet()
    dt = sp.Symbol("dt", positive=True)
    u = sp.symbols("u0:4")  # u and its first three derivatives at t_n

    def at(s):  # Taylor polynomial of u(t_n + s)
        return sum(u[j] * s**j / sp.factorial(j) for j in range(4))

    # rho(r) acts on u_{n+1}, u_n, u_{n-1}; the step is dt f(u_n) = dt u'(t_n) to leading order
    coeffs = sp.Poly(_rho(rec), r).all_coeffs()  # r^2, r^1, r^0  <->  t_n + dt, t_n, t_n - dt
    lhs = sp.expand(sum(c * at((1 - j) * dt) for j, c in enumerate(coeffs)) / dt)
    computed = sp.expand(sum(lhs.coeff(dt, j) * dt**j for j in range(2)))  # up to O(dt^2)
    stated = stated_expr(cl.stated, "k", "dt", "u1", "u2").subs(
        {sp.Symbol("u1"): u[1], sp.Symbol("u2"): u[2]})
    cmp_ = compare_exact(stated, computed)
    return Outcome(sp.collect(computed, dt), cmp_.verdict,
                   "" if cmp_.holds else f"difference {sp.sstr(cmp_.difference)}")


_add("lit-lu2018-modified-equation", "Lu et al. 2018 (ICML), LM-architecture, modified equation",
     "the LM-architecture u_(n+1) = (1 - k) u_n + k u_(n-1) + dt f(u_n) is, to O(dt^2), the ODE "
     "(1 + k) u' + (1 - k) dt/2 u'' = f(u)",
     "(1 + k)*u1 + (1 - k)*dt/2*u2",
     "Taylor expansion of lm_resnet's rho(r) applied to u(t + dt), u(t), u(t - dt), divided by dt",
     _modified_equation, {"stated": "(1 + k)*u1 + (1 + k)*dt/2*u2"})


# ------------------------------------------------------------------ RevNet, Momentum ResNets
def _revnet_volume(cl):
    rec = revnet()
    det = sp.expand(rec.native[0].A.det())
    # the nonlinear inverse the paper gives, with undefined branches: x2 = y2 - G(y1), x1 = y1 - F(x2)
    F, G = sp.Function("F"), sp.Function("G")
    x1, x2 = sp.symbols("x1 x2")
    y1 = x1 + F(x2)
    y2 = x2 + G(y1)
    back2 = y2 - G(y1)
    ensure(sp.simplify(y1 - F(back2) - x1) == 0 and sp.simplify(back2 - x2) == 0, "RevNet inverse")
    cmp_ = compare_exact(stated_expr(cl.stated, "lam"), det)
    return Outcome(det, cmp_.verdict, "the nonlinear inverse x2 = y2 - G(y1), x1 = y1 - F(x2) composes "
                   "to the identity for undefined F, G")


_add("lit-gomez2017-reversible", "Gomez et al. 2017 (NeurIPS), reversible block",
     "RevNet blocks are exactly invertible (activations are reconstructed, not stored): the block "
     "preserves volume, its linearised determinant is 1 for any F, G",
     "1", "det of revnet's block matrix (lam = F'G'); the stated inverse composed with undefined F, G",
     _revnet_volume, {"stated": "2"})


def _sander_volume(cl):
    rec = momentum_sander()
    det = sp.expand(rec.native[0].A.det())
    cmp_ = compare_exact(stated_expr(cl.stated, "gamma"), det)
    caveat = cmp_.holds and det.subs(rec.symbols["gamma"], 0) == 0
    return Outcome(det, "holds-with-caveat" if caveat else cmp_.verdict,
                   "invertible only for gamma != 0: at gamma = 0 the block forgets v (determinant 0)"
                   if caveat else "")


_add("lit-sander2021-invertible", "Sander et al. 2021 (ICML), Momentum ResNet, invertibility",
     "Momentum ResNets are invertible: v_n = (v_(n+1) - (1 - gamma) f(x_n)) / gamma, x_n = x_(n+1) - v_(n+1); "
     "the block scales volume by gamma",
     "gamma", "det of momentum_sander's block matrix on (x, v)", _sander_volume, {"stated": "1 - gamma"})


def _sander_resnet(cl):
    g = stated_expr(cl.stated)
    rec = momentum_sander(gamma=g)
    res = sp.expand(r * (r - 1 - rec.lam_symbol))  # the ResNet x' = x + f(x) and a root 0
    cmp_ = compare_exact(res, rec.charpoly())
    return Outcome(rec.charpoly(), cmp_.verdict,
                   "r (r - 1 - lam): the ResNet's root 1 + lam and a root 0 (v carries nothing)"
                   if cmp_.holds else "not the ResNet recurrence")


_add("lit-sander2021-gamma0-resnet", "Sander et al. 2021 (ICML), Momentum ResNet, gamma = 0",
     "with gamma = 0 a Momentum ResNet is a ResNet", "0",
     "momentum_sander at the stated gamma against r (r - 1 - lam)", _sander_resnet, {"stated": "1/2"})


# ------------------------------------------------------------------ leapfrog / Hamiltonian
def _leapfrog_stable(cl):
    from ..symbolic.numbers import stability_numbers

    sn = stability_numbers(leapfrog(h=1))
    marginal = sn.marginal_sets["real"]
    lo, hi = (stated_expr(v) for v in cl.stated.strip("()").split(","))
    ok = len(marginal.intervals) == 1 and compare_exact([lo, hi], [marginal.intervals[0].lo,
                                                                     marginal.intervals[0].hi]).holds
    strict_empty = sn.real_set.intervals == ()
    computed = f"root condition exactly for {marginal} (h = 1, lam real); strictly stable for no lam"
    if ok and strict_empty:
        return Outcome(computed, "holds-with-caveat",
                       "stable only marginally: both roots stay on the unit circle (product 1), so "
                       "nothing decays; the growth is bounded, not damped")
    return Outcome(computed, "fails" if not ok else "holds")


_add("lit-chang2018-leapfrog-stable", "Chang et al. 2018 (AAAI); Haber & Ruthotto 2017, leapfrog network",
     "the leapfrog network Y_(j+1) = 2 Y_j - Y_(j-1) + h^2 s(K Y_j) is stable for small enough steps: "
     "for each eigenvalue h^2 lam of the linearised layer in (-4, 0)",
     "(-4, 0)", "exact root-condition set of leapfrog(h=1) on the real lam axis (stability_numbers)",
     _leapfrog_stable, {"stated": "(-2, 0)"})


# ------------------------------------------------------------------ AntisymmetricRNN
def _antisymmetric_euler(cl):
    from ..symbolic.stability import stability_conditions

    g = stated_expr(cl.stated)
    rec = antisymmetric(gamma=g)
    conds = stability_conditions(rec, lam="complex")
    syms = {s.name: s for s, _ in conds.domains}
    # probe: purely imaginary lam = i omega, omega != 0, eps over (0, 2]: any stable point?
    omega = np.linspace(0.05, 4.0, 80)
    eps = np.linspace(0.01, 2.0, 200)
    E, W = np.meshgrid(eps, omega)
    values = {"lam_re": np.zeros_like(E), "lam_im": W, "eps": E}
    f = [sp.lambdify([syms[n] for n in ("lam_re", "lam_im", "eps") if n in syms], c.lhs, "numpy")
         for c in conds.conditions]
    args = [values[n] for n in ("lam_re", "lam_im", "eps") if n in syms]
    stable = np.all([np.broadcast_to(fn(*args), E.shape) > 0 for fn in f], axis=0)
    count = int(stable.sum())
    return Outcome(f"{count} of {stable.size} points (omega in [0.05, 4], eps in [0.01, 2]) strictly stable "
                   f"at gamma = {g}", verdict(count == 0),
                   "" if count == 0 else "with this diffusion some steps are stable: the statement is about "
                   "gamma = 0")


_add("lit-chang2019-euler-unstable", "Chang et al. 2019 (ICLR), AntisymmetricRNN, diffusion",
     "forward Euler on the antisymmetric system is unstable for every step (|1 + i eps omega| > 1), "
     "so a diffusion gamma is added; the statement is about gamma = 0",
     "0", "exact Schur-Cohn conditions of antisymmetric(gamma=stated) on lam = i omega, sampled", _antisymmetric_euler,
     {"stated": "1/2"})


# ------------------------------------------------------------------ hyper-connection variants
def _residual_matrix(rec):
    return sp.ImmutableMatrix(-rec.coeffs[1]).subs(rec.lam_symbol, 0)


def _row_col_sums(cl, rec, what):
    H = _residual_matrix(rec)
    n = H.shape[0]
    sums = [sp.expand(s) for s in list(H * sp.ones(n, 1)) + list(sp.ones(1, n) * H)]
    stated = stated_expr(cl.stated)
    cmp_ = compare_exact([stated] * len(sums), sums)
    return Outcome(f"row and column sums of {what}: {sorted(set(map(sp.sstr, sums)))}", cmp_.verdict)


_add("lit-yang2026-exact-birkhoff", "Yang & Gao 2026 (mHC-lite), Birkhoff-von Neumann reparametrisation",
     "mHC-lite's H_res = sum_k w_k P_k is exactly doubly stochastic (every row and column sums to 1)",
     "1", "symbolic row and column sums of mhc_lite(n=3) with free weights",
     lambda cl: _row_col_sums(cl, mhc_lite(n=3), "sum_k w_k P_k (n = 3, five free weights)"), {"stated": "2"})

_add("lit-zhou2026-kronecker", "Zhou et al. 2026 (KromHC), Kronecker-product residual matrix",
     "a Kronecker product of doubly stochastic factors is exactly doubly stochastic",
     "1", "symbolic row and column sums of kromhc(factors=3) (8 streams, free a_1, a_2, a_3)",
     lambda cl: _row_col_sums(cl, kromhc(factors=3), "U_1 (x) U_2 (x) U_3"), {"stated": "2"})


def _sinkhorn_gap(cl):
    steps = int(stated_expr(cl.stated))
    rng = np.random.default_rng(0)
    with mpmath.workdps(60):  # far below float64's rounding, so the gap seen is the method's own
        K = mpmath.matrix(np.exp(2.5 * rng.normal(size=(4, 4))).tolist())
        for _ in range(steps):
            for i in range(4):
                s = sum(K[i, j] for j in range(4))
                for j in range(4):
                    K[i, j] /= s
            for j in range(4):
                s = sum(K[i, j] for i in range(4))
                for i in range(4):
                    K[i, j] /= s
        gap = max(abs(sum(K[i, j] for j in range(4)) - 1) for i in range(4))
        gap = float(gap)
    exact = gap < 1e-40
    return Outcome(f"largest row-sum error after {steps} steps: {gap:.3g} (columns exact after the last step)",
                   "holds" if exact else "holds-with-caveat",
                   "" if exact else "doubly stochastic only approximately: the residual is the finite "
                   "Sinkhorn-Knopp gap that mHC-lite and KromHC remove")


_add("lit-xie2025-sinkhorn", "Xie et al. 2025 (mHC), Sinkhorn-Knopp projection",
     "t_max = 20 Sinkhorn-Knopp iterations project exp(H) onto the doubly stochastic matrices",
     "20", "Sinkhorn-Knopp at 60 digits on exp(2.5 N(0, 1)) logits (4 x 4, seed 0), row-sum error",
     _sinkhorn_gap, {"stated": "400"})


def _prenorm_as_hc(cl):
    from ..parse import parse_value

    M = sp.Matrix(parse_value(cl.stated))  # a stated matrix, parsed safely
    ensure(M.shape == (2, 2), "a 1-stream HC matrix is 2 x 2")
    rec = hc_static(n=1, A_r=[[M[1, 1]]], A_m=[M[1, 0]], B=[M[0, 1]])
    lam = rec.lam_symbol
    residual = r - 1 - lam  # x' = x + F(x): the pre-norm residual, LN inside F
    cmp_ = compare_exact(residual, rec.charpoly())
    return Outcome(rec.charpoly(), cmp_.verdict, "" if cmp_.holds else f"this HC is {show(rec.charpoly())} = 0")


_add("lit-zhu2025-prenorm", "Zhu et al. 2025 (ICLR), Hyper-Connections, Pre-Norm as HC",
     "the Pre-Norm residual is the hyper-connection with n = 1 and matrix [[0, 1], [1, 1]]",
     "[[0, 1], [1, 1]]", "hc_static(n=1) with the stated [[0, B], [A_m, A_r]] against x' = x + F(x)",
     _prenorm_as_hc, {"stated": "[[0, 1], [1, 2]]"})

CLAIMS: tuple[Claim, ...] = tuple(_CLAIMS)
